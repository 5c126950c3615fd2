// The few Node built-ins platform_node.ts uses, declared here so the build needs no @types/node
// (and the shipped .d.ts files never reference Node's types).
declare module 'node:fs/promises' {
  export function readFile(path: string): Promise<Uint8Array>;
}
declare module 'node:module' {
  export function createRequire(from: string): (id: string) => unknown;
}
declare module 'node:os' {
  export const availableParallelism: (() => number) | undefined;
  export function cpus(): unknown[];
}
declare module 'node:path' {
  export function resolve(...paths: string[]): string;
}
declare module 'node:url' {
  export function fileURLToPath(url: string | URL): string;
  export function pathToFileURL(path: string): URL;
}
