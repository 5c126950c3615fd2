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
import { isRemote } from './worker_protocol.js';
import { checkOptions, is } from './validate.js';
import type { Rules } from './validate.js';
import type { RemoteMarker, Reply, Request } from './worker_protocol.js';

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

const env = globalThis as { location?: { href: string; origin: string }; document?: { baseURI: string } };
const pageUrl = (): string | undefined => env.document?.baseURI ?? env.location?.href;
const sameOrigin = (url: URL): boolean => env.location !== undefined && url.origin === env.location.origin;

/** A module worker running `url` from any origin: a blob: URL of the page's origin imports it
 * when it is elsewhere (it is then fetched as a module script, with CORS, as a CDN serves it). */
function workerAt(url: URL): Worker {
  if (sameOrigin(url)) return new Worker(url, { type: 'module' });
  const shim = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' }));
  const worker = new Worker(shim, { type: 'module' });
  setTimeout(() => URL.revokeObjectURL(shim), 60000);  // (after the worker has fetched it)
  return worker;
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

/** An error from the worker, rebuilt on the page with its name, code (and a HubError's url, status). */
function rebuildError(e: Extract<Reply, { type: 'error' }>['error']): Error {
  const error = e.name === 'AttentionError' || e.name === 'HubError' ? new AttentionError(e.message, e.code) : new Error(e.message);
  error.name = e.name;
  if (e.url !== undefined) (error as { url?: string }).url = e.url;
  if (e.status !== undefined) (error as { status?: number }).status = e.status;
  return error;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  callbacks: AnyFunction[];
  /** Applies the target's refreshed getters (memoryBytes, disposed). */
  refresh?(state: Record<string, unknown>): void;
}

/** A request as send() takes it (the id is its own). */
type Outgoing = { type: 'init'; options: Record<string, unknown> } | { type: 'call'; target: number; method: string; args: unknown[] };

/** One worker and the calls waiting on it. */
class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private failed: Error | null = null;
  readonly ready: Promise<void>;

  constructor(private readonly worker: Worker) {
    let started: () => void = () => {};
    let startFailed: (e: Error) => void = () => {};
    this.ready = new Promise((resolve, reject) => { started = resolve; startFailed = reject; });
    worker.addEventListener('message', (event: MessageEvent<Reply>) => {
      if (event.data.type === 'ready') started();
      else this.receive(event.data);
    });
    worker.addEventListener('error', (event: ErrorEvent) => {
      event.preventDefault?.();
      const error = new AttentionError(`the attention-wasm worker failed: ${event.message || 'it could not start (is dist/worker-entry.js served beside dist/worker.js, with CORS from another origin?)'}`);
      startFailed(error);
      this.fail(error);
    });
  }

  private receive(m: Exclude<Reply, { type: 'ready' }>): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'callback') return void p.callbacks[m.callback]?.(...m.args.map((a) => this.revive(a)));
    this.pending.delete(m.id);
    if (m.type === 'error') return p.reject(rebuildError(m.error));
    if (m.state) p.refresh?.(m.state);
    p.resolve(this.revive(m.value));
  }

  /** Ends every waiting call with `error`; later calls get it too. */
  fail(error: Error): void {
    this.failed ??= error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  terminate(): void {
    this.worker.terminate();
    this.fail(new AttentionError('the attention-wasm worker was terminated', 'aborted'));
  }

  /** Posts a request; functions and AbortSignals in its arguments become markers. */
  send(request: Outgoing, refresh?: Pending['refresh']): Promise<unknown> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    const callbacks: AnyFunction[] = [], cleanups: (() => void)[] = [];
    const encode = (v: unknown, depth: number): unknown => {
      if (typeof v === 'function') return { __attnCallback: callbacks.push(v as AnyFunction) - 1 };
      if (typeof AbortSignal === 'function' && v instanceof AbortSignal) {
        const abort = () => this.worker.postMessage({ type: 'abort', id } satisfies Request);
        v.addEventListener('abort', abort, { once: true });
        cleanups.push(() => v.removeEventListener('abort', abort));
        return { __attnSignal: true, aborted: v.aborted };
      }
      if (v instanceof URL) return v.href;
      if (depth > 3 || v === null || typeof v !== 'object') return v;
      if (Array.isArray(v)) return v.map((x) => encode(x, depth + 1));
      if (Object.getPrototypeOf(v) !== Object.prototype) return v;
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x, depth + 1)]));
    };
    const message: Request = request.type === 'init' ? { ...request, id, options: encode(request.options, 0) as Record<string, unknown> }
      : { ...request, id, args: request.args.map((a: unknown) => encode(a, 0)) };
    const done = new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, callbacks, refresh });
      try {
        this.worker.postMessage(message);
      } catch (e) {
        this.pending.delete(id);
        reject(new AttentionError(`${request.type === 'call' ? request.method : 'loadAttentionWorker'}: an argument cannot be sent to the worker: ${(e as Error).message}`));
      }
    });
    const cleanup = () => { for (const c of cleanups) c(); };
    done.then(cleanup, cleanup);
    return done;
  }

  /** A value from the worker: markers back into proxies, Embeddings given back their row(). */
  revive(value: unknown): unknown {
    if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
    if (isRemote(value)) return this.proxy(value);
    if (Array.isArray(value)) return value.map((v) => this.revive(v));
    if (Object.getPrototypeOf(value) !== Object.prototype) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = this.revive(v);
    if (out.data instanceof Float32Array && typeof out.count === 'number' && typeof out.dim === 'number') {
      const { data, dim } = out as { data: Float32Array; dim: number };
      out.row = (i: number) => data.subarray(i * dim, (i + 1) * dim);
    }
    return out;
  }

  /** The page's side of an object in the worker. */
  proxy(m: RemoteMarker): Record<string, unknown> {
    const obj: Record<string, unknown> = { ...m.props };
    for (const [name, nested] of Object.entries(m.nested)) obj[name] = this.proxy(nested);
    const refresh = (state: Record<string, unknown>) => Object.assign(obj, state);
    for (const method of m.methods) {
      obj[method] = (...args: unknown[]) => {
        // A folder given relative to the page is the page's, not the worker script's.
        if (m.__attnRemote === 0 && method === 'loadModel' && typeof args[0] === 'string' && !/^[a-z][a-z\d+.-]*:/i.test(args[0]))
          args[0] = new URL(args[0], pageUrl()).href;
        return this.send({ type: 'call', target: m.__attnRemote, method, args }, refresh);
      };
    }
    return obj;
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
