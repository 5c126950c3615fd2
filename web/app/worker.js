// The Web Worker that does all the computing: one WebAssembly instance, the models it has loaded,
// and the seed preset's 2-dimensional layer. The page (and every <attention-view> on it) talks to
// it through compute_client.js, so typing never blocks the main thread.
//
// Which model a folder holds comes from its config.json (model_type); what to do with it lives in
// one file per model (models/gpt2.js, models/bert.js), each answering "run" in the same shape
// (tokens, attention L x H x n x n, one layer's trace), so the views never ask which model it was.
//
// Requests are { id, channel, type, payload }. Within one channel only the newest pending request
// runs: while a sentence is being computed, the keystrokes that arrive meanwhile collapse into one.
import { MODEL_FAMILIES, loadAttention, modelFamily, simdSupported } from '../../dist/index.js';
import { loadGpt2 } from './models/gpt2.js';
import { loadBert } from './models/bert.js';
import { loadBart } from './models/bart.js';
import { loadLlama } from './models/llama.js';

// By the library's model family (its registry, MODEL_FAMILIES, maps config.json's model_types to
// families: qwen2 and mistral are llama's).
const LOADERS = { gpt2: loadGpt2, bert: loadBert, bart: loadBart, llama: loadLlama };
const DEMO_TYPES = MODEL_FAMILIES.filter((f) => LOADERS[f.name]).flatMap((f) => f.modelTypes);

/** The demo's loader for a config.json, or undefined when the library or the demo does not run it. */
function loaderFor(config) {
  try {
    return LOADERS[modelFamily(config).name];
  } catch {
    return undefined;
  }
}

let attnPromise = null;
const models = new Map(); // folder URL -> Promise<{ info, run, compare? }>

// Where the .wasm files are, relative to this script: beside it in the demo site (build/web); the
// npm package's widget (dist/widget/worker.js) uses the package's own, one folder up
// (scripts/build_widget.mjs defines WIDGET_WASM_DIR as '../').
const WASM_DIR = typeof WIDGET_WASM_DIR === 'string' ? WIDGET_WASM_DIR : './';

function library() {
  // The SIMD build wherever the engine supports it.
  attnPromise ??= loadAttention({ wasmUrl: new URL(`${WASM_DIR}attention_${simdSupported() ? 'simd' : 'scalar'}.wasm`, import.meta.url) })
    .then((attn) => { performance.mark('library ready'); return attn; });
  return attnPromise;
}

// Files the page started downloading before this worker ran (index.html's head): URL -> a promise
// of its bytes (null: the page's download failed, fetch it here).
const handed = new Map();

/** index.html's head: load this model now, and wait for the page's download of `handed` files. */
function preload({ modelUrl, handed: urls }) {
  for (const url of urls) {
    let resolve;
    handed.set(url, { bytes: new Promise((r) => { resolve = r; }), resolve });
  }
  model(modelUrl).catch(() => {}); // (a failure is reported to the page's own request)
}

async function fetchOk(url, as) {
  const early = handed.get(String(url));
  if (early) {
    const bytes = await early.bytes;
    handed.delete(String(url));
    if (bytes) return as === 'arrayBuffer' ? bytes : as === 'json' ? JSON.parse(new TextDecoder().decode(bytes)) : new TextDecoder().decode(bytes);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not fetch ${url}: HTTP ${response.status}`);
  return response[as]();
}

/** A Hub model's files through the library's Hub client (its cache, progress and named errors). */
function hubFetcher(modelUrl, hubUrl, onProgress) {
  const decode = (bytes) => new TextDecoder().decode(bytes);
  return async (file, as) => {
    const bytes = await (await library()).hubFile(modelUrl, file, { hubUrl, onProgress });
    if (as === 'json') return JSON.parse(decode(bytes));
    if (as === 'text') return decode(bytes);
    // A view of a whole buffer is that buffer; else copy (what parseSafetensors and transfers want).
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
  };
}

const hubUrls = new Map(); // 'hf:owner/name[@rev]' -> the Hub address it was loaded from
const dtypes = new Map(); // model URL -> the weight precision it was loaded at (loadModel's dtype)

/** Loads a model folder (or a Hub model, 'hf:owner/name[@rev]') once, with the loader its
 * config.json's model_type names. onProgress hears the Hub downloads of the first request; dtype
 * (loadModel's: 'auto', 'f16', 'q8', 'q4'), when given and not the one loaded, loads it again. */
function model(folder, { hubUrl, onProgress, dtype } = {}) {
  const hub = folder.startsWith('hf:');
  const url = hub ? folder : new URL(folder.endsWith('/') ? folder : folder + '/', self.location.href).href;
  if (hub && hubUrl && hubUrls.has(url) && hubUrls.get(url) !== hubUrl) models.delete(url); // another Hub: load again
  if (hub && hubUrl) hubUrls.set(url, hubUrl);
  if (dtype && dtypes.has(url) && dtypes.get(url) !== dtype) models.delete(url); // another precision: load again
  if (dtype) dtypes.set(url, dtype);
  if (!models.has(url)) {
    const entry = (async () => {
      const fetchFile = hub ? hubFetcher(url, hubUrls.get(url), onProgress) : (file, as) => fetchOk(new URL(file, url), as);
      // config.json first: a model type the demo does not run is refused before the weights download.
      // The library loads meanwhile; the loaders await it only after their downloads have started,
      // so the weights do not wait for the WebAssembly module to compile.
      const attnReady = library();
      attnReady.catch(() => {}); // (a failure is reported where it is awaited)
      const config = await fetchFile('config.json', 'json');
      const load = loaderFor(config);
      if (!load) throw new Error(`${hub ? url : url + 'config.json'}: model_type ${JSON.stringify(config?.model_type)} is not one the demo runs (${DEMO_TYPES.join(', ')})`);
      const name = hub ? url.slice(3) : decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? 'model');
      // Optional: the model's measured quality (tools/quality/measure_quality.mjs), fetched meanwhile.
      const quality = hub ? null : fetchFile('quality.json', 'json').catch(() => null);
      const runner = await load({ attn: attnReady, config, name, fetchFile, dtype: dtypes.get(url) ?? 'auto' });
      runner.info.dtype = dtypes.get(url) ?? 'auto';
      runner.info.quality = await quality;
      performance.mark(`model ready: ${name}`);
      runner.info.variant = (await attnReady).variant;
      if (hub) runner.info.hubPage = `${(hubUrls.get(url) ?? 'https://huggingface.co').replace(/\/+$/, '')}/${url.slice(3).split('@')[0]}`;
      return runner;
    })();
    models.set(url, entry);
    entry.catch(() => models.delete(url)); // let a later request retry
  }
  return models.get(url);
}

const handlers = {
  /** hubUrl (Hub models only): the Hub's address; the download's progress goes to request `id`;
   * dtype: the weights' precision (the Hub panel's choice). */
  async model({ modelUrl, hubUrl, dtype }, id) {
    return (await model(modelUrl, { hubUrl, dtype, onProgress: (progress) => self.postMessage({ id, progress }) })).info;
  },

  /** payload: { modelUrl, text, layer, topK, ... } plus what the model's features take
   * (crossText for cross-attention; pair, batchWith for sentence pairs and padded batches). */
  async run({ modelUrl, ...payload }) {
    const runner = await model(modelUrl);
    const t0 = performance.now();
    const result = runner.run(payload);
    result.model = runner.info.type;
    result.ms = performance.now() - t0;
    return result;
  },

  /** Sentence embeddings' similarity matrix (models with the "compare" feature). */
  async compare({ modelUrl, sentences, pooling }) {
    const runner = await model(modelUrl);
    if (!runner.compare) throw new Error(`${runner.info.name} does not make sentence embeddings`);
    const t0 = performance.now();
    const result = runner.compare({ sentences, pooling });
    result.ms = performance.now() - t0;
    return result;
  },

  async seed({ x, y = null, wQ, wK, wV, wO, causal, heads = { numHeads: 1, dK: 2, dV: 2 } }) {
    const attn = await library();
    // One head, d_model = d_k = 2, no biases: exactly the tutorial's setting. W^O defaults to the
    // identity there (a single head needs no mixing), but it is editable like the others. heads:
    // the "two heads, d_k ≠ d_v" variant's shape.
    const mha = attn.createMultiHeadAttention({ dModel: 2, numHeads: heads.numHeads, dK: heads.dK, dV: heads.dV, bias: false });
    try {
      mha.setWeights({ wQ, wK, wV, wO });
      const options = { causal: !!causal, trace: true, returnAttention: true };
      if (y) Object.assign(options, { key: Float32Array.from(y), value: Float32Array.from(y) });
      const out = mha.forward(Float32Array.from(x), options);
      return { trace: out.trace, attention: out.attention, output: out.output };
    } finally {
      mha.dispose();
    }
  },

  async metrics() {
    // Resource timings of what this worker fetched (the page cannot see them) and its marks, in ms
    // since timeOrigin (the worker's start; the page's performance.timeOrigin lines them up).
    return {
      timeOrigin: performance.timeOrigin,
      resources: performance.getEntriesByType('resource').map((e) => ({
        name: e.name, transferSize: e.transferSize, encodedBodySize: e.encodedBodySize, decodedBodySize: e.decodedBodySize,
        startTime: e.startTime, responseEnd: e.responseEnd, duration: e.duration,
      })),
      marks: performance.getEntriesByType('mark').map((e) => ({ name: e.name, startTime: e.startTime })),
    };
  },
};

// Text generation streams: it runs beside the queue (the model yields between tokens, so the
// page's run requests for the growing text get in), posting each token as { id, progress }.
// { type: 'stop', payload: { target } } aborts generation `target`.
const generations = new Map(); // request id -> AbortController

async function generate({ id, payload }) {
  const ac = new AbortController();
  generations.set(id, ac);
  try {
    const runner = await model(payload.modelUrl);
    if (!runner.generate) throw new Error(`${runner.info.name} does not generate text`);
    const result = await runner.generate({ ...payload, signal: ac.signal, onToken: (e) => self.postMessage({ id, progress: e }) });
    self.postMessage({ id, ok: true, result });
  } catch (e) {
    self.postMessage({ id, ok: false, error: String(e?.message ?? e) });
  } finally {
    generations.delete(id);
  }
}

// Latest-wins queue per channel.
const pending = [];
let draining = false;

self.onmessage = (event) => {
  const { type, id, payload } = event.data;
  if (type === 'preload') return void preload(payload);
  if (type === 'file') return void handed.get(payload.url)?.resolve(payload.bytes);
  if (type === 'generate') return void generate(event.data);
  if (type === 'stop') {
    generations.get(payload?.target)?.abort();
    return void self.postMessage({ id, ok: true, result: null });
  }
  pending.push(event.data);
  if (!draining) {
    draining = true;
    // A macrotask, so that messages already queued behind this one arrive before we choose.
    setTimeout(drain, 0);
  }
};

async function drain() {
  while (pending.length) {
    const request = pending.shift();
    if (request.channel && pending.some((r) => r.channel === request.channel)) {
      self.postMessage({ id: request.id, stale: true });
      continue;
    }
    try {
      const handler = handlers[request.type];
      if (!handler) throw new Error(`unknown request ${request.type}`);
      const result = await handler(request.payload ?? {}, request.id);
      self.postMessage({ id: request.id, ok: true, result }, transferables(result));
    } catch (e) {
      self.postMessage({ id: request.id, ok: false, error: String(e?.message ?? e) });
    }
    // Let newer messages in before picking the next request.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  draining = false;
}

function transferables(value, out = [], seen = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (!seen.has(value.buffer)) { seen.add(value.buffer); out.push(value.buffer); }
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) transferables(v, out, seen);
  }
  return out;
}
