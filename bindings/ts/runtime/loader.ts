// Finds, fetches and instantiates the right .wasm: the relaxed-SIMD build where the engine has
// relaxed SIMD (browsers), else the SIMD build where it has WebAssembly SIMD, else the scalar one,
// or the threaded build. What differs between Node and
// browsers (reading files, threads) comes from the Platform the entry point passes in.
import createSimd from 'attention-glue:simd';
import createScalar from 'attention-glue:scalar';
import { AttentionError } from '../errors.js';
import { wasmUrl } from './package_files.js';
import type { Platform } from './platform.js';
import { checkOptions, is } from '../validate.js';
import type { Rules } from '../validate.js';
import type { GlueFactory, WasmModule } from './wasm_module.js';

/** Which WebAssembly build runs. 'simd-threads' is the SIMD build with pthreads; 'relaxed' the SIMD
 * build whose 4-bit and 5-bit products use relaxed SIMD's integer dot product (one thread). */
export type Variant = 'simd' | 'scalar' | 'simd-threads' | 'relaxed';

export interface LoadOptions {
  /**
   * 'auto' (default): detect: in browsers the relaxed-SIMD build where the engine has relaxed SIMD
   * (Chrome/Edge 114+, Firefox 145+) and one thread runs, else the SIMD build, else the scalar one.
   * true: the SIMD build (an error without SIMD); 'relaxed': the relaxed-SIMD build (an error
   * without relaxed SIMD; one thread); false: the scalar build.
   */
  simd?: boolean | 'auto' | 'relaxed';
  /** Where to fetch the .wasm (for bundlers that do not copy it next to the script). */
  wasmUrl?: string | URL;
  /** The .wasm bytes themselves: nothing is fetched. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Threads for one call's work (heads and GEMM column panels run in parallel). 'auto'
   * (default): the threaded build with min(4, CPU cores) threads in Node, and in browsers when
   * the page is cross-origin isolated (COOP/COEP headers); else 1 thread.
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

// The relaxed build's instruction, run once on known lanes: f() = lane 0 of
// i32x4.relaxed_dot_i8x16_i7x16_add_s(splat(-127), splat(127), splat(0)) = 4 x -127 x 127 = -64516,
// as the spec defines it for a second operand in 0..127, the only way the kernels use it. Invalid
// where relaxed SIMD is not supported; Node 20's flagged pre-standard version returns -129032.
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
  0x03, 0x02, 0x01, 0x00,
  0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export "f"
  0x0a, 0x18, 0x01, 0x16, 0x00,
  0x41, 0x81, 0x7f, 0xfd, 0x0f, 0x41, 0xff, 0x00, 0xfd, 0x0f, 0x41, 0x00, 0xfd, 0x0f, // splat -127, 127, 0
  0xfd, 0x93, 0x02, 0xfd, 0x1b, 0x00, 0x0b, // relaxed dot (0xfd 275); i32x4.extract_lane 0; end
]);
const RELAXED_DOT = -64516;

function validates(probe: Uint8Array<ArrayBuffer>): boolean {
  try {
    return WebAssembly.validate(probe);
  } catch {
    return false;
  }
}

/** Whether this engine runs WebAssembly SIMD128. */
export function simdSupported(): boolean {
  return validates(SIMD_PROBE);
}

let relaxedDot: boolean | undefined;
/** Whether this engine runs WebAssembly relaxed SIMD (the 'relaxed' build): its integer dot
 * product validates and gives the sum the build's kernels rely on. */
export function relaxedSimdSupported(): boolean {
  if (relaxedDot === undefined) {
    try {
      const f = new WebAssembly.Instance(new WebAssembly.Module(RELAXED_PROBE)).exports.f as () => number;
      relaxedDot = validates(RELAXED_PROBE) && f() === RELAXED_DOT;
    } catch {
      relaxedDot = false;
    }
  }
  return relaxedDot;
}

/** autoRelaxed: whether 'auto' may pick the relaxed build here (the platform allows it and no
 * wasmUrl / wasmBinary names another build's bytes). */
function chooseVariant(simd: LoadOptions['simd'], autoRelaxed: boolean): Variant {
  const supported = simdSupported();
  if (simd === 'relaxed') {
    if (!relaxedSimdSupported())
      throw new AttentionError("simd: 'relaxed' was requested but this engine has no WebAssembly relaxed SIMD (Chrome/Edge 114+, Firefox 145+), or its dot product is not the standard one");
    return 'relaxed';
  }
  if (simd === true && !supported) throw new AttentionError('simd: true was requested but this engine has no WebAssembly SIMD');
  if (simd === false || !supported) return 'scalar';
  return simd !== true && autoRelaxed && relaxedSimdSupported() ? 'relaxed' : 'simd';
}

async function chooseThreads(platform: Platform, options: LoadOptions): Promise<number> {
  const requested = options.threads ?? 'auto';
  if (requested === 'auto') {
    // wasmUrl / wasmBinary name a single-threaded build's bytes: honour them as given.
    const explicit = options.wasmUrl !== undefined || options.wasmBinary !== undefined;
    return platform.threadsAvailable() && !explicit && options.simd !== false && options.simd !== 'relaxed' && simdSupported()
      ? Math.min(MAX_THREADS, platform.cpuCount()) : 1;
  }
  if (!Number.isInteger(requested) || requested < 1 || requested > MAX_THREADS)
    throw new AttentionError(`threads must be 'auto' or an integer from 1 to ${MAX_THREADS}, got ${String(requested)}`);
  if (requested > 1 && !platform.threadsAvailable())
    throw new AttentionError('threads > 1 needs shared memory: in browsers, serve the page cross-origin isolated (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp)');
  if (requested > 1 && (options.simd === false || options.simd === 'relaxed'))
    throw new AttentionError(`threads > 1 comes with the SIMD build only: drop simd: ${String(options.simd === 'relaxed' ? "'relaxed'" : false)}`);
  return requested;
}

async function instantiateThreaded(platform: Platform, threads: number): Promise<WasmModule> {
  const build = await platform.threadedBuild();
  let mod: WasmModule;
  try {
    mod = await instantiateWith(build.factory, build.bytes, 'attention_threads.wasm', {
      locateFile: (path: string) => (path.endsWith('.worker.js') ? build.worker : path),
      ...(build.main ? { mainScriptUrlOrBlob: build.main } : {}),
    });
  } finally {
    // The pool's workers have loaded by now (or never will).
    build.release();
  }
  const effective = mod.setNumThreads(threads);
  // The pool's workers must not keep Node alive once the program is done.
  const pool = (mod as unknown as { PThread?: { unusedWorkers: { unref?(): void }[]; runningWorkers: { unref?(): void }[] } }).PThread;
  for (const w of [...(pool?.unusedWorkers ?? []), ...(pool?.runningWorkers ?? [])]) w.unref?.();
  if (effective !== threads) throw new AttentionError(`could not start ${threads} threads (got ${effective})`);
  return mod;
}

/**
 * Runs an Emscripten factory on given bytes (Emscripten 3.1.6 would fetch() a path, which fails
 * in Node, so we always instantiate ourselves). Rejects instead of hanging when the bytes do not
 * instantiate or the runtime aborts.
 */
async function instantiateWith(factory: GlueFactory, bytes: ArrayBuffer | Uint8Array,
  name: string, extra: Record<string, unknown>): Promise<WasmModule> {
  let failed: (e: unknown) => void = () => {};
  const failure = new Promise<never>((_, reject) => { failed = reject; });
  failure.catch(() => {});  // an abort after the module is ready must not become an unhandled rejection
  const ready = factory({
    ...extra,
    instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
      WebAssembly.instantiate(bytes as BufferSource, imports)
        .then((r) => done(r.instance, r.module))
        .catch((e) => failed(new AttentionError(`${name} failed to instantiate: ${(e as Error).message}`)));
      return {};
    },
    onAbort(what: unknown) {
      failed(new AttentionError(`the WebAssembly module aborted: ${String(what)}`));
    },
  });
  return Promise.race([ready, failure]);
}

const LOAD_OPTIONS: Rules<LoadOptions> = {
  simd: is.oneOf(true, false, 'auto', 'relaxed'),
  wasmUrl: is.any,  // a string or URL, checked where it is read
  wasmBinary: (v, name) => {
    if (!(v instanceof ArrayBuffer) && !(v instanceof Uint8Array)) throw new AttentionError(`${name} must be an ArrayBuffer or a Uint8Array of the .wasm file`);
  },
  threads: is.either(is.oneOf('auto'), is.int(1, MAX_THREADS), `'auto' or an integer from 1 to ${MAX_THREADS}`),
};

/** Instantiates one build; resolves when its runtime is ready. */
export async function instantiate(platform: Platform, options: LoadOptions): Promise<{ mod: WasmModule; variant: Variant; threads: number }> {
  options = checkOptions('loadAttention', options, LOAD_OPTIONS);
  if (options.wasmUrl !== undefined && typeof options.wasmUrl !== 'string' && !(options.wasmUrl instanceof URL))
    throw new AttentionError('loadAttention: wasmUrl must be a string or a URL');
  const threads = await chooseThreads(platform, options);
  if (threads > 1) {
    try {
      return { mod: await instantiateThreaded(platform, threads), variant: 'simd-threads', threads };
    } catch (e) {
      // 'auto' falls back to one thread (e.g. a bundler did not copy the threaded files).
      if ((options.threads ?? 'auto') !== 'auto') {
        if (e instanceof AttentionError) throw e;
        throw new AttentionError(`could not load the threaded build: ${(e as Error).message}. Pass { threads: 1 } to use one thread`);
      }
    }
  }
  const explicit = options.wasmUrl !== undefined || options.wasmBinary !== undefined;
  const variant = chooseVariant(options.simd ?? 'auto', platform.relaxedByDefault && !explicit);
  let bytes: ArrayBuffer | Uint8Array;
  try {
    bytes = options.wasmBinary ?? await platform.readBytes(options.wasmUrl ?? wasmUrl[variant as 'simd' | 'scalar' | 'relaxed']());
  } catch (e) {
    // A bundler that did not copy the .wasm beside the script lands here too (a 404): say what to do.
    throw new AttentionError(`could not load attention_${variant}.wasm: ${(e as Error).message}. Pass { wasmUrl } or { wasmBinary } to loadAttention(), or copy the .wasm files of attention-wasm/dist next to the bundle`);
  }
  const factory = variant === 'relaxed' ? await platform.relaxedGlue() : variant === 'simd' ? createSimd : createScalar;
  const mod = await instantiateWith(factory, bytes, `attention_${variant}.wasm`, {});
  return { mod, variant, threads: 1 };
}
