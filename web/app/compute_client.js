// The main-thread side of worker.js: one Worker per page, shared by the demo and by every
// <attention-view> element (so the WASM instance and the loaded model exist once), with
// promise-based requests over the package's worker protocol (the Connection loadAttentionWorker()
// uses). A request superseded in its channel resolves to null.
import { Connection, workerAt } from '../../bindings/ts/worker_connection.ts';

const KEY = Symbol.for('attention-wasm.compute-client');

class ComputeClient {
  constructor(workerUrl) {
    const early = adoptEarlyWorker(workerUrl);
    const worker = early ?? workerAt(new URL(workerUrl));
    // Listening before the connection does, so that a call the failure ends hears why (fail()).
    worker.addEventListener('error', (event) => this.fail(workerUrl, event.message));
    this.connection = new Connection(worker);
    this.connection.ready.catch(() => {}); // (a worker that cannot start is reported through the calls)
    // Sent at once: a worker queues the messages posted before it runs (index.html's worker may
    // have said it was ready before this connection listened).
    this.service = this.connection.send({ type: 'init', options: {} });
    this.service.catch(() => {});
    if (early?.startFailed) this.fail(workerUrl, early.startError);
  }

  fail(workerUrl, message) {
    // A worker that cannot start says nothing about why; the usual cause is a file not hosted
    // beside the script, so look for it and name it.
    this.failed ??= (async () => new Error(`the compute worker failed: ${message || await missingFile(workerUrl) || 'could not start'}`))();
    this.failed.then((error) => this.connection.fail(error)); // (a worker that failed before this client: its calls end here)
  }

  /** Calls the worker's ComputeService; a worker that failed rejects with why. */
  async call(method, args) {
    try {
      if (this.failed) throw await this.failed;
      return await (await this.service)[method](...args);
    } catch (e) {
      throw this.failed ? await this.failed : e;
    }
  }

  /** type: 'model' | 'run' | 'compare' | 'seed' | 'ggufFiles' | 'metrics'; channel: requests sharing one keep only the newest. */
  request(type, payload, channel = null, onProgress = null) {
    return this.call('request', [type, payload, channel, onProgress]);
  }

  /** Streams a generation: onToken gets each new token as the worker makes it; stop() ends it. */
  generate(payload, onToken) {
    const controller = new AbortController();
    return { done: this.call('generate', [payload, onToken, controller.signal]), stop: () => controller.abort() };
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
