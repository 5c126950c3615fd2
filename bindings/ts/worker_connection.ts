// The page's side of the worker protocol (worker_protocol.ts): one worker and the calls waiting on
// it. Calls post { type: 'call' } messages; functions and AbortSignals in their arguments cross as
// markers (callbacks, abort messages), and results come back as values or as proxies of objects
// that stay in the worker. loadAttentionWorker() (worker.ts) connects to the package's worker entry
// with it; the project's demo and widget connect to their compute worker, built on the same
// serving side (worker_serve.ts), with it too.
import { AttentionError } from './errors.js';
import { isRemote } from './worker_protocol.js';
import type { RemoteMarker, Reply, Request } from './worker_protocol.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyFunction = (...args: any[]) => any;

const env = globalThis as { location?: { href: string; origin: string }; document?: { baseURI: string } };
/** The page's address, against which relative URLs are resolved. */
export const pageUrl = (): string | undefined => env.document?.baseURI ?? env.location?.href;
const sameOrigin = (url: URL): boolean => env.location !== undefined && url.origin === env.location.origin;

/** A module worker running `url` from any origin: a blob: URL of the page's origin imports it
 * when it is elsewhere (it is then fetched as a module script, with CORS, as a CDN serves it). */
export function workerAt(url: URL): Worker {
  if (sameOrigin(url)) return new Worker(url, { type: 'module' });
  const shim = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' }));
  const worker = new Worker(shim, { type: 'module' });
  setTimeout(() => URL.revokeObjectURL(shim), 60000);  // (after the worker has fetched it)
  return worker;
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
export class Connection {
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

