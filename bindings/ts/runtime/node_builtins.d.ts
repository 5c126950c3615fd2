// The few Node built-ins platform_node.ts uses, declared here so the build needs no @types/node
// (and the shipped .d.ts files never reference Node's types).
declare module 'node:fs/promises' {
  export function readFile(path: string): Promise<Uint8Array>;
  // Used by hub_cache_node.ts.
  export function writeFile(path: string, data: Uint8Array | string): Promise<void>;
  export function rename(from: string, to: string): Promise<void>;
  export function rm(path: string, options?: { force?: boolean; recursive?: boolean }): Promise<void>;
  export function mkdir(path: string, options?: { recursive?: boolean }): Promise<string | undefined>;
  export function stat(path: string): Promise<{ size: number; isDirectory(): boolean }>;
  // A file read in chunks, with progress and a signal checked between them (platform_node.ts).
  export interface FileHandle {
    stat(): Promise<{ size: number; isDirectory(): boolean }>;
    read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
    close(): Promise<void>;
  }
  export function open(path: string, flags: string): Promise<FileHandle>;
}
declare module 'node:crypto' {
  // hub_cache_node.ts: a URL's cache entry is named by its hash.
  export function createHash(algorithm: string): { update(data: string): { digest(encoding: 'hex'): string } };
}
declare module 'node:module' {
  export function createRequire(from: string): (id: string) => unknown;
}
declare module 'node:os' {
  export const availableParallelism: (() => number) | undefined;
  export function cpus(): unknown[];
  export function homedir(): string;
}
declare module 'node:path' {
  export function resolve(...paths: string[]): string;
  export function join(...paths: string[]): string;
  export function dirname(path: string): string;
}
declare module 'node:url' {
  export function fileURLToPath(url: string | URL): string;
  export function pathToFileURL(path: string): URL;
}
