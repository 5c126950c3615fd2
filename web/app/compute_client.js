// The main-thread side of worker.js: one Worker per page, shared by the demo and by every
// <attention-view> element (so the WASM instance and the loaded model exist once), with
// promise-based requests. A request superseded in its channel resolves to null.

const KEY = Symbol.for('attention-wasm.compute-client');

class ComputeClient {
  constructor(workerUrl) {
    const early = adoptEarlyWorker(workerUrl);
    this.worker = early ?? createWorker(workerUrl);
    this.nextId = 1;
    this.waiting = new Map();
    this.worker.onmessage = (event) => {
      const { id, ok, stale, result, error, progress } = event.data;
      const w = this.waiting.get(id);
      if (!w) return;
      if (progress !== undefined) return void w.onProgress?.(progress);
      this.waiting.delete(id);
      if (stale) w.resolve(null);
      else if (ok) w.resolve(result);
      else w.reject(new Error(error));
    };
    this.worker.onerror = (event) => this.fail(workerUrl, event.message);
    if (early?.startFailed) this.fail(workerUrl, early.startError);
  }

  async fail(workerUrl, message) {
    // A worker that cannot start says nothing about why; the usual cause is a file not hosted
    // beside the script, so look for it and name it.
    const why = message ?? await missingFile(workerUrl) ?? 'could not start';
    const error = new Error(`the compute worker failed: ${why}`);
    for (const w of this.waiting.values()) w.reject(error);
    this.waiting.clear();
    this.failed = error;
  }

  /** type: 'model' | 'run' | 'seed' | 'metrics'; channel: requests sharing one keep only the newest. */
  request(type, payload, channel = null, onProgress = null) {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    this.lastId = id;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, type, payload, channel });
    });
  }

  /** Streams a generation: onToken gets each new token as the worker makes it. */
  generate(payload, onToken) {
    const done = this.request('generate', payload, null, onToken);
    const target = this.lastId;
    return { done, stop: () => this.request('stop', { target }) };
  }
}

/** Why `url` cannot be loaded (HTTP status or network error), or null when it can. */
async function missingFile(url) {
  try {
    const r = await fetch(url, { method: 'HEAD', cache: 'no-store' });
    if (r.ok) return null;
    return `${url} answers HTTP ${r.status}: host worker.js, the .wasm files and models/ beside attention-view.js`;
  } catch (e) {
    return `${url} could not be fetched (${e.message}): host worker.js beside attention-view.js, with CORS if on another origin`;
  }
}

/**
 * A module worker from `url`. Browsers only start workers from the page's own origin, so when this
 * script was loaded from elsewhere (a tutorial embedding it from another host) the worker is a
 * same-origin blob that imports the real one (which then needs CORS, like any module script).
 */
function createWorker(url) {
  if (new URL(url).origin === self.location.origin) return new Worker(url, { type: 'module' });
  const shim = new Blob([`import ${JSON.stringify(String(url))};`], { type: 'text/javascript' });
  return new Worker(URL.createObjectURL(shim), { type: 'module' });
}

/** The worker the demo page's head started for `url` (index.html), if any: taken once. */
function adoptEarlyWorker(url) {
  const w = globalThis.__attentionWorker;
  if (!w || w.scriptUrl !== url) return null;
  delete globalThis.__attentionWorker;
  return w;
}

/** The page's one client (created on first use). */
export function computeClient(workerUrl) {
  globalThis[KEY] ??= new ComputeClient(workerUrl);
  return globalThis[KEY];
}
