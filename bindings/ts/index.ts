// attention-wasm: multi-head attention in WebAssembly. Entry point of the npm package.
import { instantiate } from './loader.js';
import type { LoadOptions, Variant } from './loader.js';
import { MultiHeadAttention } from './multi_head_attention.js';
import type { MultiHeadAttentionConfig } from './multi_head_attention.js';
import { LanguageModel, fetchModelFiles } from './language_model.js';
import type { ModelFiles } from './language_model.js';
import { ScaledDotProductAttention } from './scaled_dot_product_attention.js';
import type { ScaledDotProductAttentionOptions, ScaledDotProductAttentionResult } from './scaled_dot_product_attention.js';
import type { FloatInput } from './validate.js';
import type { WasmModule } from './wasm_module.js';

export { AttentionError } from './errors.js';
export { simdSupported, MAX_THREADS } from './loader.js';
export type { LoadOptions, Variant } from './loader.js';
export { MultiHeadAttention } from './multi_head_attention.js';
export type { ForwardOptions, ForwardResult, MultiHeadAttentionConfig, MultiHeadAttentionWeights, MultiHeadTrace, ResolvedConfig } from './multi_head_attention.js';
export type { AttentionTrace, ScaledDotProductAttentionOptions, ScaledDotProductAttentionResult } from './scaled_dot_product_attention.js';
export { weightsFromPyTorch } from './pytorch.js';
export { LanguageModel } from './language_model.js';
export type { Gpt2Config, ModelFiles, Prediction, RunOptions, RunResult } from './language_model.js';
export { BpeTokenizer } from './bpe_tokenizer.js';
export type { TokenizerFiles } from './bpe_tokenizer.js';
export { parseSafetensors } from './safetensors.js';
export type { SafetensorsEntry, SafetensorsFile } from './safetensors.js';
export type { PyTorchMultiheadAttentionState } from './pytorch.js';
export type { AttnMask, BoolInput, FloatInput } from './validate.js';

/** One instantiated WebAssembly module. Layers created from it share its memory. */
export class AttentionModule {
  /** Which build runs: 'simd' (WebAssembly SIMD128), 'scalar', or 'simd-threads'. */
  readonly variant: Variant;
  /** Threads one call may use (1 except in the threaded build). */
  readonly threads: number;
  private sdpa: ScaledDotProductAttention | null = null;

  /** @internal use loadAttention() */
  constructor(private readonly mod: WasmModule, variant: Variant, threads: number) {
    this.variant = variant;
    this.threads = threads;
  }

  /** A multi-head attention layer; set its weights before calling forward(). */
  createMultiHeadAttention(config: MultiHeadAttentionConfig): MultiHeadAttention {
    return new MultiHeadAttention(this.mod, config);
  }

  /**
   * softmax(Q K^T * scale + M) V on given tensors: q is B x H x S_q x dK, k is B x H x S_k x dK,
   * v is B x H x S_k x dV (row-major); the output is B x H x S_q x dV.
   */
  scaledDotProductAttention(q: FloatInput, k: FloatInput, v: FloatInput, options: ScaledDotProductAttentionOptions): ScaledDotProductAttentionResult {
    this.sdpa ??= new ScaledDotProductAttention(this.mod);
    return this.sdpa.run(q, k, v, options);
  }

  /**
   * Loads a GPT-2-style model: a folder (URL, or a path in Node) holding config.json,
   * model.safetensors (F32/F16/BF16, Hugging Face GPT-2 tensor names) and vocab.json + merges.txt
   * (or tokenizer.json); or the files themselves, already in memory.
   */
  async loadModel(source: string | URL | ModelFiles): Promise<LanguageModel> {
    const files = typeof source === 'string' || source instanceof URL ? await fetchModelFiles(source) : source;
    return new LanguageModel(this.mod, files);
  }

  /** Bytes of WebAssembly memory in use (grows with the largest call; never shrinks). */
  get memoryBytes(): number {
    return this.mod.HEAPU8.byteLength;
  }
}

/**
 * Loads the library. In Node the .wasm is read from the package; in browsers it is fetched
 * next to this script, or from `wasmUrl`. Several calls give independent modules.
 */
export async function loadAttention(options: LoadOptions = {}): Promise<AttentionModule> {
  const { mod, variant, threads } = await instantiate(options);
  return new AttentionModule(mod, variant, threads);
}
