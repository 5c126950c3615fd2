// Finds, fetches and instantiates the right .wasm: the SIMD build where the engine supports
// WebAssembly SIMD, else the scalar one. Works in Node (ESM and CommonJS), browsers and bundlers.
import createSimd from 'attention-glue:simd';
import createScalar from 'attention-glue:scalar';
import { AttentionError } from './errors.js';
import type { WasmModule } from './wasm_module.js';

/** Which WebAssembly build runs. 'simd-threads' is the SIMD build with pthreads (Node). */
export type Variant = 'simd' | 'scalar' | 'simd-threads';

export interface LoadOptions {
  /** true: require SIMD, false: force the scalar build, 'auto' (default): detect. */
  simd?: boolean | 'auto';
  /** Where to fetch the .wasm (for bundlers that do not copy it next to the script). */
  wasmUrl?: string | URL;
  /** The .wasm bytes themselves: nothing is fetched. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Threads for one call's work (heads and GEMM column panels run in parallel). 'auto'
   * (default): in Node, the threaded build with min(4, CPU cores) threads; in browsers, 1.
   * Threads need Node 18+; the threaded build is not offered to browsers yet.
   */
  threads?: number | 'auto';
}

/** The most threads the threaded build runs (its pre-spawned pool is 3 workers + the caller). */
export const MAX_THREADS = 4;

// A minimal module whose one function uses i8x16.splat: valid only where SIMD128 is supported.
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type: () -> v128
  0x03, 0x02, 0x01, 0x00, // one function of type 0
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b, // code: i32.const 0; i8x16.splat; end
]);

/** Whether this engine runs WebAssembly SIMD128. */
export function simdSupported(): boolean {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

function chooseVariant(simd: LoadOptions['simd']): Variant {
  const supported = simdSupported();
  if (simd === true && !supported) throw new AttentionError('simd: true was requested but this engine has no WebAssembly SIMD');
  if (simd === false) return 'scalar';
  return supported ? 'simd' : 'scalar';
}

function defaultWasmUrl(variant: Variant): URL {
  // The CommonJS bundle defines import.meta.url from __filename (scripts/bundle.mjs).
  return new URL(`./attention_${variant}.wasm`, import.meta.url);
}

/** Bytes of a file: URL (Node) or an http(s) URL. */
export async function readBytes(url: URL | string): Promise<ArrayBuffer | Uint8Array> {
  const href = url.toString();
  if (href.startsWith('file:')) {
    // Node: read from disk. The specifier is a variable so bundlers for browsers leave it alone.
    const fsModule = 'node:fs/promises';
    const urlModule = 'node:url';
    const [{ readFile }, { fileURLToPath }] = await Promise.all([import(fsModule), import(urlModule)]);
    return readFile(fileURLToPath(href));
  }
  const response = await fetch(href);
  if (!response.ok) throw new AttentionError(`could not fetch ${href}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

const nodeProcess = (globalThis as { process?: { versions?: { node?: string } } }).process;
const isNode = !!nodeProcess?.versions?.node;

async function cpuCount(): Promise<number> {
  const osName = 'node:os';
  const os = await import(osName);
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

async function chooseThreads(options: LoadOptions): Promise<number> {
  const requested = options.threads ?? 'auto';
  if (requested === 'auto') {
    // wasmUrl / wasmBinary name a single-threaded build's bytes: honour them as given.
    const explicit = options.wasmUrl !== undefined || options.wasmBinary !== undefined;
    return isNode && !explicit && options.simd !== false && simdSupported() ? Math.min(MAX_THREADS, await cpuCount()) : 1;
  }
  if (!Number.isInteger(requested) || requested < 1 || requested > MAX_THREADS)
    throw new AttentionError(`threads must be 'auto' or an integer from 1 to ${MAX_THREADS}, got ${String(requested)}`);
  if (requested > 1 && !isNode) throw new AttentionError('threads > 1 needs Node: the threaded build is not offered to browsers yet');
  if (requested > 1 && options.simd === false) throw new AttentionError('threads > 1 comes with the SIMD build only: drop simd: false');
  return requested;
}

// The pthreads build stays a set of files beside dist/ (its workers load the glue by path), so
// it is required at run time rather than bundled.
async function instantiateThreaded(threads: number): Promise<WasmModule> {
  const moduleName = 'node:module', urlName = 'node:url', fsName = 'node:fs/promises';
  const [{ createRequire }, { fileURLToPath }, { readFile }] = await Promise.all([import(moduleName), import(urlName), import(fsName)]);
  const file = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));
  const factory = createRequire(import.meta.url)(file('attention_threads.cjs')) as (m: Record<string, unknown>) => Promise<WasmModule>;
  const bytes: Uint8Array = await readFile(file('attention_threads.wasm'));
  const mod = await factory({
    locateFile: (path: string) => file(path.endsWith('.worker.js') ? 'attention_threads.worker.cjs' : path),
    instantiateWasm(imports: WebAssembly.Imports, done: (i: WebAssembly.Instance, m: WebAssembly.Module) => void) {
      WebAssembly.instantiate(bytes as BufferSource, imports).then((r) => done(r.instance, r.module));
      return {};
    },
  });
  const effective = mod.setNumThreads(threads);
  // The pool's workers must not keep Node alive once the program is done.
  const pool = (mod as unknown as { PThread?: { unusedWorkers: { unref?(): void }[]; runningWorkers: { unref?(): void }[] } }).PThread;
  for (const w of [...(pool?.unusedWorkers ?? []), ...(pool?.runningWorkers ?? [])]) w.unref?.();
  if (effective !== threads) throw new AttentionError(`could not start ${threads} threads (got ${effective})`);
  return mod;
}

/** Instantiates one build; resolves when its runtime is ready. */
export async function instantiate(options: LoadOptions): Promise<{ mod: WasmModule; variant: Variant; threads: number }> {
  const threads = await chooseThreads(options);
  if (threads > 1) {
    try {
      return { mod: await instantiateThreaded(threads), variant: 'simd-threads', threads };
    } catch (e) {
      if (e instanceof AttentionError) throw e;
      throw new AttentionError(`could not load the threaded build: ${(e as Error).message}. Pass { threads: 1 } to use one thread`);
    }
  }
  const variant = chooseVariant(options.simd ?? 'auto');
  let bytes: ArrayBuffer | Uint8Array;
  try {
    bytes = options.wasmBinary ?? await readBytes(options.wasmUrl ?? defaultWasmUrl(variant));
  } catch (e) {
    if (e instanceof AttentionError) throw e;
    throw new AttentionError(`could not load attention_${variant}.wasm: ${(e as Error).message}. Pass { wasmUrl } or { wasmBinary } to loadAttention()`);
  }
  const factory = variant === 'simd' ? createSimd : createScalar;
  let failed: (e: unknown) => void = () => {};
  const failure = new Promise<never>((_, reject) => { failed = reject; });
  const ready = factory({
    // Emscripten 3.1.6 would fetch() a path, which fails in Node; we always instantiate ourselves.
    instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
      WebAssembly.instantiate(bytes as BufferSource, imports)
        .then((r) => done(r.instance, r.module))
        .catch((e) => failed(new AttentionError(`attention_${variant}.wasm failed to instantiate: ${(e as Error).message}`)));
      return {};
    },
    onAbort(what: unknown) {
      failed(new AttentionError(`the WebAssembly module aborted: ${String(what)}`));
    },
  });
  const mod = await Promise.race([ready, failure]);
  return { mod, variant, threads: 1 };
}
