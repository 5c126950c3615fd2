// AttentionModule: one instantiated WebAssembly module and what is made from it (layers, models).
// Shared by both entry points; the Platform they pass says how files are read (Node or browser).
import { instantiate } from './runtime/loader.js';
import type { LoadOptions, Variant } from './runtime/loader.js';
import { MultiHeadAttention } from './attention/multi_head_attention.js';
import type { MultiHeadAttentionConfig } from './attention/multi_head_attention.js';
import type { BartModel } from './models/bart_model.js';
import type { BertModel } from './models/bert_model.js';
import type { Gpt2Model } from './models/gpt2_model.js';
import type { LlamaModel } from './models/llama_model.js';
import { modelFamily, readerFor } from './models/registry.js';
import type { Model, ModelFiles } from './models/registry.js';
import { AttentionError } from './errors.js';
import { HUB_OPTION_RULES, HubError } from './hub/hub.js';
import type { HubOptions } from './hub/hub.js';
import { fetchHubFile, fetchHubModelFiles } from './hub/hub_model.js';
import { fetchModelFiles, filesInMemory } from './loading/model_files.js';
import type { Platform } from './runtime/platform.js';
import { ScaledDotProductAttention } from './attention/scaled_dot_product_attention.js';
import { fetchShippedModelFiles, isShippedModel } from './loading/shipped_models.js';
import type { ShippedModel } from './loading/shipped_models.js';
import type { ScaledDotProductAttentionOptions, ScaledDotProductAttentionResultFor } from './attention/scaled_dot_product_attention.js';
import { checkOptions, checkString, show } from './validate.js';
import type { FloatInput } from './validate.js';
import type { WasmModule } from './runtime/wasm_module.js';
import { MODEL_LOAD_OPTION_RULES } from './loading/weight_dtype.js';
import type { ModelLoadOptions } from './loading/weight_dtype.js';

export type { Model } from './models/registry.js';

/** One instantiated WebAssembly module. Layers created from it share its memory. */
export class AttentionModule {
  /** Which build runs: 'simd' (WebAssembly SIMD128), 'scalar', or 'simd-threads'. */
  readonly variant: Variant;
  /** Threads one call may use (1 except in the threaded build). */
  readonly threads: number;
  private sdpa: ScaledDotProductAttention | null = null;

  /** @internal use loadAttention() */
  constructor(private readonly mod: WasmModule, variant: Variant, threads: number, private readonly platform: Platform) {
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
   * Loads a model from a folder laid out as on the Hugging Face Hub (a URL, or a path in Node), from
   * the Hub itself ("hf:owner/name" or "hf:owner/name@revision", see HubOptions), a model shipped in
   * the package (`import brownGpt2 from 'attention-wasm/models/brown-gpt2'`), or its files already in
   * memory. config.json's model_type picks the class (models/registry.ts):
   * - "gpt2" -> Gpt2Model: model.safetensors + vocab.json/merges.txt (or tokenizer.json);
   * - "bert" -> BertModel: model.safetensors + vocab.txt (+ tokenizer_config.json) or tokenizer.json,
   *   and sentence-transformers' modules.json / 1_Pooling/config.json when present;
   * - "bart" -> BartModel (encoder-decoder): model.safetensors + vocab.json (+ merges.txt);
   * - "llama", "qwen2", "mistral" -> LlamaModel: model.safetensors (Hugging Face's names) +
   *   tokenizer.json (+ tokenizer_config.json, generation_config.json).
   * Sharded checkpoints (model.safetensors.index.json) load too. Weights may be F32, F16 or BF16;
   * `dtype` says how the model holds them: 'auto' (as stored), 'f32', 'f16', 'q8' or 'q4'.
   * Narrow the result with `model.type` (a shipped model's import already says which class it loads).
   * Hub failures are HubErrors (an AttentionError with a `code`).
   */
  loadModel(source: ShippedModel<'gpt2'>, options?: HubOptions & ModelLoadOptions): Promise<Gpt2Model>;
  loadModel(source: ShippedModel<'bert'>, options?: HubOptions & ModelLoadOptions): Promise<BertModel>;
  loadModel(source: ShippedModel<'bart'>, options?: HubOptions & ModelLoadOptions): Promise<BartModel>;
  loadModel(source: ShippedModel<'llama'>, options?: HubOptions & ModelLoadOptions): Promise<LlamaModel>;
  loadModel(source: string | URL | ShippedModel | ModelFiles, options?: HubOptions & ModelLoadOptions): Promise<Model>;
  async loadModel(source: string | URL | ShippedModel | ModelFiles, options: HubOptions & ModelLoadOptions = {}): Promise<Model> {
    options = checkOptions('loadModel', options, { ...HUB_OPTION_RULES, ...MODEL_LOAD_OPTION_RULES });
    if (typeof source !== 'string' && !(source instanceof URL) && (typeof source !== 'object' || source === null || Array.isArray(source)))
      throw new AttentionError(`loadModel: source must be a folder's path or URL, 'hf:owner/name', a shipped model or the model's files { config, weights, tokenizer }, got ${show(source)}`);
    const files = typeof source === 'string' && source.startsWith('hf:') ? await fetchHubModelFiles(source.slice(3), options, this.platform.hub)
      : typeof source === 'string' || source instanceof URL ? await fetchModelFiles(source, this.platform, readerFor)
        : isShippedModel(source) ? await fetchShippedModelFiles(source, this.platform, readerFor) : filesInMemory(source);
    return modelFamily(files.config).create(this.mod, files, { dtype: options.dtype });
  }

  /**
   * One file of a Hub model ("hf:owner/name[@revision]"), through the same cache, progress and
   * errors as loadModel: for files the model itself does not read.
   */
  async hubFile(source: string, file: string, options: HubOptions = {}): Promise<Uint8Array> {
    options = checkOptions('hubFile', options, HUB_OPTION_RULES);
    checkString('hubFile', 'source', source);
    checkString('hubFile', 'file', file);
    if (!source.startsWith('hf:')) throw new HubError(`hubFile: "${source}" is not a Hub model (write hf:owner/name)`, 'bad-id');
    return fetchHubFile(source.slice(3), file, options, this.platform.hub);
  }

  /** Bytes of WebAssembly memory in use (grows with the largest call; never shrinks). */
  get memoryBytes(): number {
    return this.mod.HEAPU8.byteLength;
  }
}

/** @internal What loadAttention() does, on a given platform (each entry point passes its own). */
export async function openAttention(platform: Platform, options: LoadOptions): Promise<AttentionModule> {
  const { mod, variant, threads } = await instantiate(platform, options);
  return new AttentionModule(mod, variant, threads, platform);
}
