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
import { ggufModelFiles, ggufStreamFiles, modelFamily, readerFor } from './models/registry.js';
import type { Model, ModelFamily, ModelFiles } from './models/registry.js';
import { AttentionError } from './errors.js';
import { HUB_OPTION_RULES, HubError, WASM_MEMORY_LIMIT } from './hub/hub.js';
import type { HubOptions } from './hub/hub.js';
import { fetchHubFile, fetchHubGguf, fetchHubModelFiles, hubGgufSource } from './hub/hub_model.js';
import { fetchModelFiles, filesInMemory, resolveIn } from './loading/model_files.js';
import { fetchFile, openFileCache } from './loading/file_fetch.js';
import type { FetchContext } from './loading/file_fetch.js';
import { openCachedStream } from './loading/cached_stream.js';
import { withLoadTasks } from './loading/load_tasks.js';
import type { LoadTasks } from './loading/load_tasks.js';
import type { CheckpointFiles } from './loading/model_files.js';
import { ggufShardNames, isGgufBytes, isGgufName, readGgufFiles } from './loading/gguf_files.js';
import { openGgufStream } from './loading/gguf_stream.js';
import { parseGguf } from './loading/gguf.js';
import { checkModelFile } from './loading/model_file_check.js';
import { stoppedReading, streamChunks } from './runtime/platform.js';
import type { ByteStream, Platform } from './runtime/platform.js';
import { ScaledDotProductAttention } from './attention/scaled_dot_product_attention.js';
import { fetchShippedModelFiles, isShippedModel } from './loading/shipped_models.js';
import type { ShippedModel } from './loading/shipped_models.js';
import type { ScaledDotProductAttentionOptions, ScaledDotProductAttentionResultFor } from './attention/scaled_dot_product_attention.js';
import { checkOptions, checkString, is, show } from './validate.js';
import type { Rules } from './validate.js';
import type { FloatInput } from './validate.js';
import type { WasmModule } from './runtime/wasm_module.js';
import { MODEL_LOAD_OPTION_RULES } from './loading/weight_dtype.js';
import type { ModelLoadOptions } from './loading/weight_dtype.js';
import { decodeWeights, encodeWeights } from './loading/weight_codec.js';
import type { WeightTypeName } from './loading/weight_codec.js';

const CODEC_RULES: Rules<{ type: WeightTypeName; cols: number }> = { type: is.string, cols: is.int(1, 2 ** 30) };

function checkFloat32(what: string, values: unknown): Float32Array {
  if (!(values instanceof Float32Array)) throw new AttentionError(`${what}: values must be a Float32Array, got ${show(values)}`);
  return values;
}

export type { Model } from './models/registry.js';

/** The error for a load the caller's signal stopped before it began (or once the files were read):
 * a HubError for a Hub model, as its downloads' are. */
function stoppedBefore(signal: AbortSignal, hub: boolean, when = 'before loading began'): AttentionError {
  const e = stoppedReading('the model', signal);
  const message = `loadModel: the signal passed to loadModel ${e.code === 'timeout' ? 'timed out (AbortSignal.timeout)' : 'was aborted'} ${when}`;
  return hub ? new HubError(message, e.code as 'aborted' | 'timeout') : new AttentionError(message, e.code);
}

/** What loadModel reads a model from: a folder's path or URL (or a .gguf file's), 'hf:owner/name'
 * (or 'hf:owner/name/file.gguf'), a shipped model, its files in memory, or a GGUF file as bytes or a
 * Blob (a File from an <input type="file">). */
export type ModelSource = string | URL | ShippedModel | ModelFiles | Uint8Array | ArrayBuffer | Blob;

/** One instantiated WebAssembly module. Layers created from it share its memory. */
export class AttentionModule {
  /** Which build runs: 'simd' (WebAssembly SIMD128), 'relaxed' (SIMD128 with relaxed SIMD's integer dot product), 'scalar', or 'simd-threads'. */
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
  loadModel(source: ModelSource, options?: HubOptions & ModelLoadOptions): Promise<Model>;
  async loadModel(source: ModelSource, options: HubOptions & ModelLoadOptions = {}): Promise<Model> {
    options = checkOptions('loadModel', options, { ...HUB_OPTION_RULES, ...MODEL_LOAD_OPTION_RULES });
    const hub = typeof source === 'string' && source.startsWith('hf:');
    // An aborted signal stops the load before its first request (or its first byte of a cache).
    if (options.signal?.aborted) throw stoppedBefore(options.signal, hub);
    return withLoadTasks(options.signal, async (tasks) => {
      const model = await this.load(source, options, tasks);
      // Aborted while the weights went into the model: the caller has given up on it.
      if (options.signal?.aborted) {
        model.dispose();
        throw stoppedBefore(options.signal, hub, 'while the model was being built');
      }
      return model;
    });
  }

  /** loadModel's work, every read one of `tasks`. */
  private async load(source: ModelSource, options: HubOptions & ModelLoadOptions, tasks: LoadTasks): Promise<Model> {
    const ctx: FetchContext = { platform: this.platform, signal: tasks.signal, onProgress: options.onProgress, cache: openFileCache(this.platform, options.cache, options.cacheDir) };
    if (source instanceof Uint8Array || source instanceof ArrayBuffer) return this.fromGguf(source instanceof Uint8Array ? source : new Uint8Array(source), options);
    if (typeof Blob !== 'undefined' && source instanceof Blob)
      return this.fromGgufStream({ size: source.size, chunks: streamChunks(source.stream()) }, (source as { name?: string }).name ?? 'the Blob', options, ctx);
    if (typeof source !== 'string' && !(source instanceof URL) && (typeof source !== 'object' || source === null || Array.isArray(source)))
      throw new AttentionError(`loadModel: source must be a folder's path or URL, a .gguf file's, 'hf:owner/name', a shipped model, the model's files { config, weights, tokenizer }, or a GGUF file's bytes or Blob, got ${show(source)}`);
    const hubGguf = typeof source === 'string' && source.startsWith('hf:') ? hubGgufSource(source.slice(3), options) : undefined;
    if (hubGguf) return this.create(ggufModelFiles(await fetchHubGguf(hubGguf, options, this.platform.hub, tasks)), options);
    if (typeof source === 'string' && source.startsWith('hf:')) return this.create(await fetchHubModelFiles(source.slice(3), options, this.platform.hub, tasks), options);
    if ((typeof source === 'string' || source instanceof URL) && isGgufName(source instanceof URL ? source.pathname : source)) return this.fromGgufPath(source, options, ctx, tasks);
    const files = typeof source === 'string' || source instanceof URL ? await fetchModelFiles(source, ctx, readerFor, tasks)
      : isShippedModel(source) ? await fetchShippedModelFiles(source, ctx, readerFor, tasks) : filesInMemory(source);
    return this.create(files, options);
  }

  /** A model from its files, by the family config.json names (or the one given). */
  private async create(files: CheckpointFiles | { family: ModelFamily; files: CheckpointFiles }, options: ModelLoadOptions): Promise<Model> {
    const { family, files: f } = 'family' in files ? files : { family: modelFamily(files.config), files };
    return family.create(this.mod, f, { dtype: options.dtype });
  }

  /** A model from a GGUF file's bytes. */
  private fromGguf(bytes: Uint8Array, options: ModelLoadOptions): Promise<Model> {
    if (!isGgufBytes(bytes)) throw new AttentionError(`loadModel: bytes given as the source must be a GGUF file (starting "GGUF"), got ${bytes.length} bytes starting ${show([...bytes.subarray(0, 4)])}`);
    return this.create(ggufModelFiles(parseGguf(bytes)), options);
  }

  /** A model from a GGUF file being read: each tensor goes into the heap as it arrives. `readToEnd`:
   * the stream is read to its last byte (the caller keeps a copy for the cache). */
  private async fromGgufStream(stream: ByteStream, name: string, options: HubOptions & ModelLoadOptions, ctx: FetchContext, readToEnd = false): Promise<Model> {
    const file = name.slice(name.lastIndexOf('/') + 1);
    const gguf = await openGgufStream(stream, {
      name, signal: ctx.signal, readToEnd,
      onProgress: options.onProgress && (({ loaded, total }) => options.onProgress!({ file, loaded, total, done: false })),
    });
    try {
      // Held as stored (dtype 'auto'), the weights take their bytes in the heap: a file that cannot
      // fit is refused before its data is read.
      const weights = [...gguf.header.tensors.values()].reduce((sum, t) => sum + t.byteLength, 0);
      const room = WASM_MEMORY_LIMIT - this.mod.HEAPU8.byteLength;
      if ((options.dtype ?? 'auto') === 'auto' && weights > room)
        throw new AttentionError(`loadModel: ${name} holds ${(weights / 2 ** 20).toFixed(0)} MiB of weights, more than the ${(room / 2 ** 20).toFixed(0)} MiB the WebAssembly memory can still grow by (its limit is ${WASM_MEMORY_LIMIT / 2 ** 30} GiB); nothing was read past its header`, 'too-large');
      const model = await this.create(await ggufStreamFiles(gguf), options);
      options.onProgress?.({ file, loaded: stream.size ?? 0, total: stream.size, done: true });
      return model;
    } finally {
      await gguf.close();
    }
  }

  /** A .gguf path or URL: streamed (through the cache when asked), or every shard of a split file
   * read and merged. */
  private async fromGgufPath(source: string | URL, options: HubOptions & ModelLoadOptions, ctx: FetchContext, tasks: LoadTasks): Promise<Model> {
    // The file's folder, so that a split file's other shards are found beside it.
    const path = (source instanceof URL ? source.href : source).replace(/[?#].*$/, '');
    const slash = path.lastIndexOf('/');
    const folder = slash < 0 ? '.' : path.slice(0, slash + 1), name = path.slice(slash + 1);
    const where = (at: URL) => (at.protocol === 'file:' ? decodeURIComponent(at.pathname) : at.href);
    if (ggufShardNames(name).length === 1) {
      const at = resolveIn(this.platform, folder, name);
      const opened = await openCachedStream(ctx, at, name);
      if (!opened.keep) return this.fromGgufStream(opened.stream, where(at), options, ctx);
      const model = await this.fromGgufStream(opened.stream, where(at), options, ctx, true);
      await opened.keep();
      return model;
    }
    return this.create(ggufModelFiles(await readGgufFiles(name, async (file) => {
      const at = resolveIn(this.platform, folder, file), view = await fetchFile(ctx, at, file, where(at));
      checkModelFile(file, view, where(at));
      return view;
    }, tasks)), options);
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

  /**
   * Rows of `cols` float32 values encoded in a GGUF weight type ('Q4_K', 'Q8_0', 'F16', ...), row
   * after row as a GGUF file stores a tensor (ggml's blocks, by this library's encoders: a valid
   * encoding, not necessarily llama.cpp's choice of scales). cols must be whole blocks (32 values,
   * 256 for the K-quants).
   */
  encodeWeights(values: Float32Array, options: { type: WeightTypeName; cols: number }): Uint8Array {
    options = checkOptions('encodeWeights', options, CODEC_RULES);
    return encodeWeights(this.mod, checkFloat32('encodeWeights', values), options.cols, options.type);
  }

  /** GGUF rows of a weight type back to float32 (what the model computes with). */
  decodeWeights(bytes: Uint8Array, options: { type: WeightTypeName; cols: number }): Float32Array {
    options = checkOptions('decodeWeights', options, CODEC_RULES);
    if (!(bytes instanceof Uint8Array)) throw new AttentionError(`decodeWeights: bytes must be a Uint8Array, got ${show(bytes)}`);
    return decodeWeights(this.mod, bytes, options.cols, options.type);
  }

  /** Bytes of WebAssembly memory in use (grows with the largest call; never shrinks). */
  get memoryBytes(): number {
    return this.mod.HEAPU8.byteLength;
  }

  /** Bytes of that memory allocated and not yet freed (the allocator's count): a disposed model
   * gives back all it took, so a load/dispose loop returns this to where it started, while
   * memoryBytes stays at its high-water mark. */
  get heapBytesInUse(): number {
    return this.mod.heapBytesInUse();
  }
}

/** @internal What loadAttention() does, on a given platform (each entry point passes its own). */
export async function openAttention(platform: Platform, options: LoadOptions): Promise<AttentionModule> {
  const { mod, variant, threads } = await instantiate(platform, options);
  return new AttentionModule(mod, variant, threads, platform);
}
