// attention-wasm: multi-head attention in WebAssembly. Entry point of the npm package.
import { instantiate } from './loader.js';
import type { LoadOptions, Variant } from './loader.js';
import { MultiHeadAttention } from './multi_head_attention.js';
import type { MultiHeadAttentionConfig } from './multi_head_attention.js';
import { BartModel } from './bart_model.js';
import { BertModel } from './bert_model.js';
import { Gpt2Model } from './gpt2_model.js';
import { fetchModelFiles, modelType } from './model_files.js';
import type { BartFiles, BertFiles, Gpt2Files, ModelFiles } from './model_files.js';
import { ScaledDotProductAttention } from './scaled_dot_product_attention.js';
import type { ScaledDotProductAttentionOptions, ScaledDotProductAttentionResultFor } from './scaled_dot_product_attention.js';
import type { FloatInput } from './validate.js';
import type { WasmModule } from './wasm_module.js';

export { AttentionError } from './errors.js';
export { simdSupported, MAX_THREADS } from './loader.js';
export type { LoadOptions, Variant } from './loader.js';
export { MultiHeadAttention } from './multi_head_attention.js';
export type { ForwardOptions, ForwardResult, ForwardResultFor, MultiHeadAttentionConfig, MultiHeadAttentionWeights, MultiHeadTrace, ResolvedConfig } from './multi_head_attention.js';
export type { AttentionTrace, ScaledDotProductAttentionOptions, ScaledDotProductAttentionResult, ScaledDotProductAttentionResultFor } from './scaled_dot_product_attention.js';
export { weightsFromPyTorch } from './pytorch.js';
export { Gpt2Model, Gpt2Model as LanguageModel } from './gpt2_model.js';
export type { GenerateOptions, GenerateResult, Gpt2Config, RunOptions, RunResult, TokenEvent } from './gpt2_model.js';
export { BartModel } from './bart_model.js';
export type { BartConfig, Pronunciation, Seq2SeqOptions, Seq2SeqResult, Seq2SeqRunResult } from './bart_model.js';
export { arpabetToIpa } from './arpabet.js';
export { SymbolTokenizer } from './symbol_tokenizer.js';
export type { SamplingOptions } from './decoding.js';
export { BertModel, cosineSimilarity, similarityMatrix } from './bert_model.js';
export type { BertConfig, BertInput, BertRunOptions, BertRunResult, EmbedOptions, Embeddings, FillMaskResult } from './bert_model.js';
export { MODEL_TYPES } from './model_files.js';
export type { BartFiles, BertFiles, Gpt2Files, ModelFiles, ModelType, SentenceEmbeddingConfig } from './model_files.js';
export type { Prediction } from './predictions.js';
export { BpeTokenizer } from './bpe_tokenizer.js';
export type { TokenizerFiles } from './bpe_tokenizer.js';
export { WordPieceTokenizer } from './wordpiece_tokenizer.js';
export type { Encoding, WordPieceFiles } from './wordpiece_tokenizer.js';
export { parseSafetensors } from './safetensors.js';
export type { SafetensorsEntry, SafetensorsFile } from './safetensors.js';
export type { PyTorchMultiheadAttentionState } from './pytorch.js';
export type { AttnMask, BoolInput, FloatInput } from './validate.js';

/** Any model loadModel() returns; `type` tells which. */
export type Model = Gpt2Model | BertModel | BartModel;

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
  scaledDotProductAttention<O extends ScaledDotProductAttentionOptions>(q: FloatInput, k: FloatInput, v: FloatInput, options: O): ScaledDotProductAttentionResultFor<O> {
    this.sdpa ??= new ScaledDotProductAttention(this.mod);
    return this.sdpa.run(q, k, v, options);
  }

  /**
   * Loads a model from a folder laid out as on the Hugging Face Hub (a URL, or a path in Node), or
   * from its files already in memory. config.json's model_type picks the class:
   * - "gpt2" -> Gpt2Model: model.safetensors + vocab.json/merges.txt (or tokenizer.json);
   * - "bert" -> BertModel: model.safetensors + vocab.txt (+ tokenizer_config.json) or tokenizer.json,
   *   and sentence-transformers' modules.json / 1_Pooling/config.json when present;
   * - "bart" -> BartModel (encoder-decoder): model.safetensors + vocab.json (+ merges.txt).
   * Weights may be F32, F16 or BF16. Narrow the result with `model.type`.
   */
  async loadModel(source: string | URL | ModelFiles): Promise<Model> {
    const files = typeof source === 'string' || source instanceof URL ? await fetchModelFiles(source) : source;
    const type = modelType(files.config);
    if (type === 'bert') return new BertModel(this.mod, files as BertFiles);
    if (type === 'bart') return new BartModel(this.mod, files as BartFiles);
    return new Gpt2Model(this.mod, files as Gpt2Files);
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
