// The messages between loadAttentionWorker() (worker.ts, on the page) and the module worker it
// starts (worker_entry.ts), and how values cross: what structured clone cannot carry (functions,
// an AbortSignal, a URL, an object with methods) is replaced by a marker the other side turns back
// into a callback, an abort message, a string or a proxy. Results travel with their ArrayBuffers
// transferred, not copied.

/** A callback option (onToken, onProgress): the worker calls it by posting its number. */
export interface CallbackMarker { readonly __attnCallback: number }
/** An AbortSignal option: the page posts { type: 'abort' } for the call when it aborts. */
export interface SignalMarker { readonly __attnSignal: true; readonly aborted: boolean }
/** An object of the worker that has methods (a model, a layer, a tokenizer): called by its id. */
export interface RemoteMarker {
  readonly __attnRemote: number;
  /** Its data properties and getters, as they were when it was described. */
  readonly props: Record<string, unknown>;
  /** Its nested objects with methods (model.tokenizer). */
  readonly nested: Record<string, RemoteMarker>;
  readonly methods: string[];
}

/** Page -> worker. */
export type Request =
  | { type: 'init'; id: number; options: Record<string, unknown> }
  | { type: 'call'; id: number; target: number; method: string; args: unknown[] }
  | { type: 'abort'; id: number }
  | { type: 'release'; target: number };

/** Worker -> page. `state` refreshes the target's getters (memoryBytes, disposed) after a call. */
export type Reply =
  | { type: 'ready' }
  | { type: 'result'; id: number; value: unknown; state?: Record<string, unknown> }
  | { type: 'error'; id: number; error: { name: string; message: string; code?: string; url?: string; status?: number } }
  | { type: 'callback'; id: number; callback: number; args: unknown[] };

/** The ArrayBuffers a value holds that may be transferred: whole, unshared buffers only (a view
 * into a WebAssembly memory must never be transferred: it would detach the heap). */
export function transferables(value: unknown, heapBytes: number, out: Set<ArrayBuffer> = new Set(), depth = 0): ArrayBuffer[] {
  if (depth > 8 || value === null || typeof value !== 'object') return [...out];
  if (ArrayBuffer.isView(value)) {
    const b = value.buffer;
    if (b instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === b.byteLength && b.byteLength !== heapBytes) out.add(b);
  } else if (Array.isArray(value)) {
    for (const v of value) transferables(v, heapBytes, out, depth + 1);
  } else if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) transferables(v, heapBytes, out, depth + 1);
  }
  return [...out];
}

/** Whether a value is plain data of at most `budget` nodes (a config, a list of ids): sent with a
 * proxy. Larger data (a vocabulary) and objects of the runtime stay in the worker. */
export function isSmallData(value: unknown, budget = { left: 2000 }): boolean {
  if (--budget.left < 0) return false;
  if (value === null || ['string', 'number', 'boolean', 'undefined', 'bigint'].includes(typeof value)) return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.every((v) => isSmallData(v, budget));
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every((v) => isSmallData(v, budget));
}

export const isCallback = (v: unknown): v is CallbackMarker => typeof v === 'object' && v !== null && '__attnCallback' in v;
export const isSignal = (v: unknown): v is SignalMarker => typeof v === 'object' && v !== null && '__attnSignal' in v;
export const isRemote = (v: unknown): v is RemoteMarker => typeof v === 'object' && v !== null && '__attnRemote' in v;
