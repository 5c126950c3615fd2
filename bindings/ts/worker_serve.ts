// The serving side of the worker protocol (worker_protocol.ts), for a module worker: the page's
// calls run on the objects of the worker, which the page holds by id. The root object (id 0) is
// what `init(options)` makes when the page's 'init' arrives: the AttentionModule in the package's
// worker entry (worker_entry.ts); the project's demo and widget serve their own compute service on
// top of the library the same way (web/app/worker.js). Objects with methods (the module, models,
// layers, tokenizers) stay here; results go back with their buffers transferred.
import { isCallback, isSignal, isSmallData, transferables } from './worker_protocol.js';
import type { RemoteMarker, Reply, Request } from './worker_protocol.js';

interface WorkerScope {
  postMessage(message: Reply, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<Request>) => void): void;
}
const scope = globalThis as unknown as WorkerScope;

/** The objects the page holds by id: 0 is the root (the AttentionModule) once 'init' has run. */
const objects = new Map<number, object>();
/** The ids of each object's nested objects (released with it). */
const nestedIds = new Map<number, number[]>();
let nextId = 1;
/** The AbortController of each running call that was given a signal. */
const controllers = new Map<number, AbortController>();

/** The WebAssembly memory's size (the root's memoryBytes): a buffer that large is the heap, never transferred. */
function heapBytes(): number {
  const root = objects.get(0) as { memoryBytes?: number } | undefined;
  return root?.memoryBytes ?? -1;
}

/** Own properties of a value that are class instances with methods worth a proxy of their own. */
const NESTED = ['tokenizer'];

/** Names of the functions on an object's prototype chain (its methods), and of its getters. */
function members(obj: object): { methods: string[]; getters: string[] } {
  const methods = new Set<string>(), getters = new Set<string>();
  for (let p = Object.getPrototypeOf(obj); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(p))) {
      if (name === 'constructor') continue;
      if (d.get) getters.add(name);
      else if (typeof d.value === 'function') methods.add(name);
    }
  }
  return { methods: [...methods], getters: [...getters] };
}

/** The current values of an object's getters that are small data (memoryBytes, disposed, ...). */
function getterState(obj: object): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  for (const name of members(obj).getters) {
    try {
      const v = (obj as Record<string, unknown>)[name];
      if (isSmallData(v)) state[name] = v;
    } catch {
      // (a getter that fails on a disposed object: left out)
    }
  }
  return state;
}

const hasMethods = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v)
  && Object.getPrototypeOf(v) !== Object.prototype && !(v instanceof Map) && !(v instanceof Set) && !(v instanceof Date)
  && !(v instanceof RegExp) && !(v instanceof Error) && !(typeof Blob === 'function' && v instanceof Blob) && members(v).methods.length > 0;

/** Registers an object with methods and describes it for the page. */
function remote(obj: object, id = nextId++): RemoteMarker {
  objects.set(id, obj);
  const props: Record<string, unknown> = {}, nested: Record<string, RemoteMarker> = {};
  for (const [name, v] of Object.entries(obj)) {
    if (NESTED.includes(name) && hasMethods(v)) nested[name] = remote(v as object);
    else if (typeof v !== 'function' && isSmallData(v)) props[name] = v;
  }
  nestedIds.set(id, Object.values(nested).map((n) => n.__attnRemote));
  return { __attnRemote: id, props: { ...props, ...getterState(obj) }, nested, methods: members(obj).methods };
}

/** A result as it crosses: objects with methods become proxies, functions in plain data are left
 * out (the page rebuilds Embeddings.row), the rest is cloned. */
function describe(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (hasMethods(value)) return remote(value);
  if (Array.isArray(value)) return value.map((v) => describe(v, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v !== 'function') out[k] = describe(v, depth + 1);
  return out;
}

/** Arguments as the library takes them: markers back into callbacks and signals. */
function revive(value: unknown, call: number, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (isCallback(value)) {
    const callback = value.__attnCallback;
    // An event's arrays are copied, not transferred: the library may keep them (generate's
    // tokenAttention holds the rows onToken's events carried).
    return (...args: unknown[]) => scope.postMessage({ type: 'callback', id: call, callback, args: args.map((a) => describe(a)) });
  }
  if (isSignal(value)) {
    const controller = new AbortController();
    if (value.aborted) controller.abort();
    controllers.set(call, controller);
    return controller.signal;
  }
  if (Array.isArray(value)) return value.map((v) => revive(v, call, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revive(v, call, depth + 1)]));
}

/** Forgets an object and its nested ones (after dispose(), or when the page lets go of it). */
function release(id: number): void {
  for (const n of nestedIds.get(id) ?? []) release(n);
  objects.delete(id);
  nestedIds.delete(id);
}

async function call(target: number, method: string, args: unknown[], id: number): Promise<{ value: unknown; state: Record<string, unknown> }> {
  const obj = objects.get(target) as Record<string, unknown> | undefined;
  if (!obj) throw new Error(`this object is no longer in the worker (disposed)`);
  const fn = obj[method];
  if (typeof fn !== 'function' || method === 'constructor') throw new Error(`${method} is not a method of this object`);
  const value = await fn.apply(obj, args.map((a) => revive(a, id)));
  const state = getterState(obj);
  if (method === 'dispose') release(target);
  return { value: describe(value), state };
}

function fail(id: number, e: unknown): void {
  const err = e as { name?: string; message?: string; code?: string; url?: string; status?: number };
  scope.postMessage({ type: 'error', id, error: { name: String(err?.name ?? 'Error'), message: String(err?.message ?? e), code: err?.code, url: err?.url, status: err?.status } });
}

// The page's messages this protocol defines; a worker script built on it may have others of its own.
const PROTOCOL = new Set<string>(['init', 'call', 'abort', 'release']);

/**
 * Serves the page's calls (loadAttentionWorker's, or a Connection's) in this worker: `init(options)`
 * makes the root object on the page's 'init' message. Call once, at the worker script's start.
 */
export function serveInWorker(init: (options: Record<string, unknown>) => object | Promise<object>): void {
  scope.addEventListener('message', (event) => {
    const m = event.data;
    if (!m || !PROTOCOL.has(m.type)) return;
    if (m.type === 'abort') return void controllers.get(m.id)?.abort();
    if (m.type === 'release') return void release(m.target);
    const work = m.type === 'init'
      ? Promise.resolve().then(() => init(m.options)).then((root) => ({ value: remote(root, 0), state: {} }))
      : call(m.target, m.method, m.args, m.id);
    work.then(({ value, state }) => scope.postMessage({ type: 'result', id: m.id, value, state }, transferables(value, heapBytes())))
      .catch((e) => fail(m.id, e))  // (a failed call, or a result that cannot be cloned)
      .finally(() => controllers.delete(m.id));
  });
  scope.postMessage({ type: 'ready' });
}
