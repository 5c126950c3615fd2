// attention-wasm/worker: the library in a dedicated module worker, so that loading a model and
// generating never block the page. loadAttentionWorker() starts the worker (dist/worker-entry.js)
// and returns the same API as loadAttention() with every call returning a promise; models and
// layers stay in the worker, the page holds proxies (worker_protocol.ts says how values cross).
import { AttentionError } from './errors.js';
import type { AttentionModule, ModelSource } from './attention_module.js';
import type { LoadOptions } from './runtime/loader.js';
import type { BartModel, Seq2SeqOptions, Seq2SeqResultFor, Seq2SeqRunOptions, Seq2SeqRunResult, Seq2SeqTraced } from './models/bart_model.js';
import type { BertInput, BertModel, BertRunOptions, BertRunResultFor } from './models/bert_model.js';
import type { Gpt2Model } from './models/gpt2_model.js';
import type { LlamaModel, LlamaRunResult } from './models/llama_model.js';
import type { ChatOptions, ChatResult, GenerateOptions, GenerateResult, RunOptions, RunResult, RunResultFor, WithTokenAttention } from './models/decoder_model.js';
import type { ChatMessage } from './models/chat.js';
import type { ForwardOptions, ForwardResultFor, MultiHeadAttention, MultiHeadAttentionConfig } from './attention/multi_head_attention.js';
import type { HubOptions } from './hub/hub.js';
import type { ModelLoadOptions } from './loading/weight_dtype.js';
import type { ShippedModel } from './loading/shipped_models.js';
import type { ScaledDotProductAttentionOptions, ScaledDotProductAttentionResultFor } from './attention/scaled_dot_product_attention.js';
import type { FloatInput } from './validate.js';
import { Connection, pageUrl, workerAt } from './worker_connection.js';
import { checkOptions, is } from './validate.js';
import type { Rules } from './validate.js';

export { AttentionError } from './errors.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyFunction = (...args: any[]) => any;

/** What a call of the worker resolves to: an object with dispose() (a model, a layer) as a proxy. */
export type RemoteResult<R> = R extends { dispose(): void } ? Remote<R> : R;

/** A method called in the worker: the same arguments, its result as a promise. */
export type RemoteMethod<F extends AnyFunction> = (...args: Parameters<F>) => Promise<RemoteResult<Awaited<ReturnType<F>>>>;

/**
 * An object that lives in the worker, as the page holds it: its data properties (`type`, `config`,
 * `variant`, ...) read as they are, `memoryBytes` and `disposed` as of the last call on it, its
 * tokenizer a proxy too, and each method returning a promise. dispose() frees it in the worker.
 */
export type Remote<T> = {
  readonly [K in keyof T]: T[K] extends AnyFunction ? RemoteMethod<T[K]> : K extends 'tokenizer' ? Remote<T[K]> : T[K];
};

// The methods whose result the options shape (forward, run, generate with attention) keep their
// narrowing across the worker: a mapped type would see only their widest signature.

/** A decoder (GPT-2, Llama family) in the worker. */
export type RemoteDecoder<M extends Gpt2Model | LlamaModel, R extends RunResult> = Omit<Remote<M>, 'run' | 'generate' | 'chat'> & {
  run<O extends RunOptions = RunOptions>(input: string | number[], opts?: O): Promise<RunResultFor<O, R>>;
  generate(prompt: string | number[], opts: WithTokenAttention<GenerateOptions>): Promise<GenerateResult & { tokenAttention: Float32Array[] }>;
  generate(prompt: string | number[], opts?: GenerateOptions): Promise<GenerateResult>;
  chat(messages: ChatMessage[], opts: WithTokenAttention<ChatOptions>): Promise<ChatResult & { tokenAttention: Float32Array[] }>;
  chat(messages: ChatMessage[], opts?: ChatOptions): Promise<ChatResult>;
};
export type RemoteGpt2Model = RemoteDecoder<Gpt2Model, RunResult>;
/** (saveStream() stays with models on the page: a stream is not posted; save() returns the bytes.) */
export type RemoteLlamaModel = Omit<RemoteDecoder<LlamaModel, LlamaRunResult>, 'saveStream'>;
export type RemoteBertModel = Omit<Remote<BertModel>, 'run'> & {
  run<O extends BertRunOptions = BertRunOptions>(input: BertInput, options?: O): Promise<BertRunResultFor<O>>;
};
export type RemoteBartModel = Omit<Remote<BartModel>, 'run' | 'generate'> & {
  generate<O extends Seq2SeqOptions = Seq2SeqOptions>(source: string | number[], options?: O): Promise<Seq2SeqResultFor<O>>;
  run<O extends Seq2SeqRunOptions = Seq2SeqRunOptions>(source: string | number[], decoderInput: number[], options?: O): Promise<Seq2SeqTraced<Seq2SeqRunResult, O>>;
};
export type RemoteMultiHeadAttention = Omit<Remote<MultiHeadAttention>, 'forward'> & {
  forward<O extends ForwardOptions = ForwardOptions>(query: FloatInput, opts?: O): Promise<ForwardResultFor<O>>;
};

/** A model loaded in the worker; narrow it with `model.type` as a model on the page. */
export type RemoteModel = RemoteGpt2Model | RemoteBertModel | RemoteBartModel | RemoteLlamaModel;

/** loadAttention()'s API, in a worker. */
export interface WorkerAttention extends Omit<Remote<AttentionModule>, 'loadModel' | 'scaledDotProductAttention' | 'createMultiHeadAttention'> {
  loadModel(source: ShippedModel<'gpt2'>, options?: HubOptions & ModelLoadOptions): Promise<RemoteGpt2Model>;
  loadModel(source: ShippedModel<'bert'>, options?: HubOptions & ModelLoadOptions): Promise<RemoteBertModel>;
  loadModel(source: ShippedModel<'bart'>, options?: HubOptions & ModelLoadOptions): Promise<RemoteBartModel>;
  loadModel(source: ShippedModel<'llama'>, options?: HubOptions & ModelLoadOptions): Promise<RemoteLlamaModel>;
  loadModel(source: ModelSource, options?: HubOptions & ModelLoadOptions): Promise<RemoteModel>;
  createMultiHeadAttention(config: MultiHeadAttentionConfig): Promise<RemoteMultiHeadAttention>;
  scaledDotProductAttention<O extends ScaledDotProductAttentionOptions>(q: FloatInput, k: FloatInput, v: FloatInput, options: O): Promise<ScaledDotProductAttentionResultFor<O>>;
  /** Ends the worker and everything in it; calls still running (and later ones) reject. */
  terminate(): void;
}

export interface WorkerLoadOptions extends LoadOptions {
  /**
   * The worker script (dist/worker-entry.js). By default the one beside this file: bundlers
   * (Vite, webpack 5) see `new Worker(new URL('./worker-entry.js', import.meta.url))` and emit it;
   * from another origin (a CDN) the worker is a same-origin blob: that imports it, the way
   * browsers let a cross-origin script start a worker.
   */
  workerUrl?: string | URL;
}

function startWorker(workerUrl: string | URL | undefined): Worker {
  if (workerUrl !== undefined) return workerAt(new URL(String(workerUrl), pageUrl()));
  try {
    // The literal form, which bundlers recognise and bundle as a worker of its own (written once:
    // bundlers emit every literal new URL('./file', import.meta.url) as an asset, and webpack
    // makes import.meta.url a file: URL, so it cannot tell the origin).
    return new Worker(new URL('./worker-entry.js', import.meta.url), { type: 'module' });
  } catch (e) {
    // Browsers refuse (SecurityError) a worker script of another origin: this script came from a
    // CDN, unbundled, with worker-entry.js beside it there.
    if ((e as Error)?.name !== 'SecurityError') throw e;
    const script = import.meta.url;
    return workerAt(new URL('./worker-entry.js', script));
  }
}

/**
 * loadAttention() in a dedicated module worker: the same API with every call returning a promise
 * (`await model.run(...)`, `await model.generate(..., { onToken, signal })`). Loading and
 * generating run off the page's main thread; results arrive with their buffers transferred.
 * The worker gets the threaded build when the page is cross-origin isolated.
 */
export async function loadAttentionWorker(options: WorkerLoadOptions = {}): Promise<WorkerAttention> {
  // The names are checked here (a misspelt workerUrl is named as such); loadAttention checks the
  // values in the worker.
  const { workerUrl, ...load } = checkOptions('loadAttentionWorker', options, WORKER_OPTION_RULES);
  if (typeof Worker !== 'function')
    throw new AttentionError('loadAttentionWorker: this environment has no Web Worker (it is for browsers); in Node, use loadAttention()');
  if (workerUrl !== undefined && typeof workerUrl !== 'string' && !(workerUrl instanceof URL))
    throw new AttentionError('loadAttentionWorker: workerUrl must be a string or a URL');
  if (load.wasmUrl !== undefined && (typeof load.wasmUrl === 'string' || load.wasmUrl instanceof URL))
    load.wasmUrl = new URL(String(load.wasmUrl), pageUrl()).href;
  const connection = new Connection(startWorker(workerUrl));
  try {
    await connection.ready;
    const attn = await connection.send({ type: 'init', options: load as Record<string, unknown> }) as Record<string, unknown>;
    attn.terminate = () => connection.terminate();
    return attn as unknown as WorkerAttention;
  } catch (e) {
    connection.terminate();  // (a worker that could not load the library is of no further use)
    throw e;
  }
}

const WORKER_OPTION_RULES: Rules<WorkerLoadOptions> = { simd: is.any, wasmUrl: is.any, wasmBinary: is.any, threads: is.any, workerUrl: is.any };
