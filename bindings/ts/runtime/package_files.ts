// The files that ship beside dist/index.js, each named by ONE literal
// `new URL('./file', import.meta.url)`: the form every bundler understands (webpack and Vite emit
// exactly these files as assets; Vite's dev pre-bundler rewrites them to the package's folder).
// A computed name (`./${name}`) would make webpack copy all of dist/ and Vite's dev server 404.
// The CommonJS bundle defines import.meta.url from __filename (scripts/bundle.mjs).

export const wasmUrl = {
  simd: (): URL => new URL('./attention_simd.wasm', import.meta.url),
  scalar: (): URL => new URL('./attention_scalar.wasm', import.meta.url),
  relaxed: (): URL => new URL('./attention_relaxed.wasm', import.meta.url),
};

/** The relaxed-SIMD build's glue: a file of its own (CommonJS, hence .cjs), loaded only where that
 * build runs, so that the bundles carry one glue less. */
export const relaxedGlueUrl = (): URL => new URL('./attention_relaxed.cjs', import.meta.url);

/** The pthreads build: its .wasm, its glue and its worker (CommonJS scripts, hence .cjs). */
export const threadedUrl = {
  wasm: (): URL => new URL('./attention_threads.wasm', import.meta.url),
  glue: (): URL => new URL('./attention_threads.cjs', import.meta.url),
  worker: (): URL => new URL('./attention_threads.worker.cjs', import.meta.url),
};
