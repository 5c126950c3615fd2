// The Emscripten glue files are injected at bundle time (scripts/bundle.mjs resolves these names
// to build/wasm/attention_<variant>.js).
declare module 'attention-glue:simd' {
  import type { GlueFactory } from './wasm_module';
  const factory: GlueFactory;
  export default factory;
}
declare module 'attention-glue:scalar' {
  import type { GlueFactory } from './wasm_module';
  const factory: GlueFactory;
  export default factory;
}
