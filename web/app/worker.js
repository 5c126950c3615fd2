// The Web Worker that does all the computing: one WebAssembly instance, the models it has loaded,
// and the seed preset's 2-dimensional layer. The page (and every <attention-view> on it) talks to
// it through compute_client.js, so typing never blocks the main thread. The talking is the
// package's own worker protocol: this worker serves it (bindings/ts/worker_serve.ts, as the
// package's worker entry does) with a ComputeService as its root object, and the page calls that
// through the package's Connection (bindings/ts/worker_connection.ts): callbacks (progress, each
// generated token), AbortSignals and transferred results cross the way they do for
// loadAttentionWorker().
//
// Which model a folder holds comes from its config.json (model_type); what to do with it lives in
// one file per model (models/gpt2.js, models/bert.js), each answering "run" in the same shape
// (tokens, attention L x H x n x n, one layer's trace), so the views never ask which model it was.
//
// ComputeService.request(type, payload, channel): within one channel only the newest pending
// request runs: while a sentence is being computed, the keystrokes that arrive meanwhile collapse
// into one (the others resolve to null).
import { BROWSER_CACHE_NAME, MODEL_FAMILIES, ggufQuantization, hubFileUrl, listHubGgufFiles, loadAttention, modelFamily, parseGgufHeader, simdSupported } from '../../dist/index.js';
import { loadGpt2 } from './models/gpt2.js';
import { loadBert } from './models/bert.js';
import { loadBart } from './models/bart.js';
import { loadLlama, llamaRunner } from './models/llama.js';
import { serveInWorker } from '../../bindings/ts/worker_serve.ts';

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
const listed = new Map(); // folder URL -> the optional files it holds, when the page said (a manifest)

// Files a folder may lack. When the page lists which of them a folder holds (the widget's files
// attribute, or its own models' lists), the others are not asked for: no 404 in the console.
const OPTIONAL_FILES = ['quality.json', 'heads.json', 'generation_config.json', 'tokenizer_config.json'];

/** fetchFile for a folder, skipping (as absent, without a request) the optional files its list leaves out. */
function listedFetch(fetchFile, url) {
  return (file, as) => {
    const holds = listed.get(url);
    if (holds && OPTIONAL_FILES.includes(file) && !holds.includes(file)) return Promise.reject(new Error(`${file}: not among the folder's files`));
    return fetchFile(file, as);
  };
}

// GGUF files (llama.cpp's format) load through the library's loadModel, which reads the file's
// metadata as config.json and its tokenizer; the model URLs that name one:
//   'hf:owner/repo[@rev]/path/file.gguf'  a file of a Hub repository (the Hub panel's picker);
//   'hf:owner/repo[@rev]#quant=Q4_K_M'    the repository's file of that quantization (the widget's quant attribute);
//   'https://…/file.gguf'                 a file on the web (the widget's model attribute);
//   'gguf-file:<n>:<name>'                a File the page handed over (the Hub panel's file picker).
const GGUF_FILE = /\.gguf$/i;
const HUB_GGUF = /^hf:([\w.-]+\/[\w.-]+)(?:@([^/#]+))?(?:\/(.+\.gguf)|#quant=(.+))$/i;
const isGgufUrl = (url) => url.startsWith('gguf-file:') || HUB_GGUF.test(url) || (!url.startsWith('hf:') && GGUF_FILE.test(new URL(url).pathname));

/** Loads a model folder (or a Hub model, 'hf:owner/name[@rev]', or a GGUF file: above) once, with
 * the loader its config.json's model_type names. onProgress hears the Hub downloads of the first
 * request; dtype (loadModel's: 'auto', 'f16', 'q8', 'q4'), when given and not the one loaded, loads
 * it again; file: the File a 'gguf-file:' URL names. */
function model(folder, { hubUrl, onProgress, dtype, file, files } = {}) {
  const hub = folder.startsWith('hf:');
  const local = folder.startsWith('gguf-file:');
  const url = hub || local ? folder : GGUF_FILE.test(new URL(folder, self.location.href).pathname) ? new URL(folder, self.location.href).href
    : new URL(folder.endsWith('/') ? folder : folder + '/', self.location.href).href;
  if (hub && hubUrl && hubUrls.has(url) && hubUrls.get(url) !== hubUrl) models.delete(url); // another Hub: load again
  if (hub && hubUrl) hubUrls.set(url, hubUrl);
  if (dtype && dtypes.has(url) && dtypes.get(url) !== dtype) models.delete(url); // another precision: load again
  if (dtype) dtypes.set(url, dtype);
  if (Array.isArray(files) && !models.has(url)) listed.set(url, files);
  if (local && file) models.delete(url); // (a new File under a name already used)
  if (!models.has(url) && local && !file) return Promise.reject(new Error(`${url.replace(/^gguf-file:\d+:/, '')} is no longer loaded: choose the file again`));
  if (!models.has(url) && isGgufUrl(url)) {
    const entry = loadGguf(url, { hubUrl: hubUrls.get(url), onProgress, dtype: dtypes.get(url) ?? 'auto', file });
    models.set(url, entry);
    entry.catch(() => models.delete(url));
  }
  if (!models.has(url)) {
    const entry = (async () => {
      const fetchFile = hub ? hubFetcher(url, hubUrls.get(url), onProgress) : listedFetch((file, as) => fetchOk(new URL(file, url), as), url);
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

/** A GGUF model (see isGgufUrl) through loadModel, with its file's tensor types read from the header. */
async function loadGguf(url, { hubUrl, onProgress, dtype, file }) {
  const attn = await library();
  const hub = HUB_GGUF.exec(url);
  let lm, name, bytes = 0, header = null, fileName, hubPage = null;
  if (file) {
    // A File from the page: the header from its first bytes, then the whole file.
    fileName = name = file.name;
    bytes = file.size;
    header = await ggufHeader((n) => file.slice(0, n).arrayBuffer(), file.size);
    lm = await attn.loadModel(file, { dtype });
  } else if (hub) {
    const [, repo, revision = 'main', path, quant] = hub;
    const hubAddress = (hubUrl ?? 'https://huggingface.co').replace(/\/+$/, '');
    const sizes = new Map();
    const progress = (p) => { if (GGUF_FILE.test(p.file)) sizes.set(p.file, p.total ?? p.loaded); onProgress?.(p); };
    const source = `hf:${repo}${hub[2] ? `@${revision}` : ''}`;
    lm = await attn.loadModel(path ? `${source}/${path}` : source, { hubUrl: hubAddress, onProgress: progress, dtype, ...(quant ? { quant } : {}) });
    fileName = path ?? [...sizes.keys()][0] ?? `${quant} file`;
    name = `${repo}/${fileName}`;
    bytes = [...sizes.values()].reduce((a, b) => a + b, 0);
    // The header from the copy the library's Hub cache keeps (the Cache API), when there is one
    // (not for a split file: its first shard holds only some of the tensors).
    if (!/-\d{5}-of-\d{5}\.gguf$/i.test(fileName)) header = await cachedHeader(hubFileUrl(hubAddress, repo, revision, fileName)).catch(() => null);
    hubPage = `${hubAddress}/${repo}`;
  } else {
    fileName = name = decodeURIComponent(new URL(url).pathname.split('/').pop());
    lm = await attn.loadModel(url, { dtype });
    header = await streamHeader(fetch(url)).catch(() => null);
    bytes = header?.fileSize ?? 0;
  }
  await lm.loading; // (weights that stream in)
  if (lm.type !== 'llama') throw new Error(`${name}: a ${lm.type} model; the demo runs GGUF files of the Llama family`);
  const runner = llamaRunner(lm, { name, modelBytes: bytes, gguf: { file: fileName, quant: ggufQuantization(fileName), ...tensorTypes(header?.header, lm.config.num_hidden_layers) } });
  runner.info.dtype = dtype;
  runner.info.variant = attn.variant;
  if (hubPage) runner.info.hubPage = hubPage;
  performance.mark(`model ready: ${name}`);
  return runner;
}

/** A GGUF header from the first bytes of a file: readPrefix(n) gives its first n bytes. */
async function ggufHeader(readPrefix, fileSize) {
  for (let n = 1 << 20; ; ) {
    const prefix = new Uint8Array(await readPrefix(Math.min(n, fileSize)));
    const read = parseGgufHeader(prefix, fileSize);
    if (read.complete) return { header: read.header, fileSize };
    if (n >= fileSize) return null;
    n = Math.max(n * 2, read.bytesNeeded ?? 0);
  }
}

/** A GGUF header from a response's body, read until the header is whole (the rest is not read). */
async function streamHeader(responsePromise) {
  const response = await responsePromise;
  if (!response?.ok || !response.body) return null;
  const size = Number(response.headers.get('x-attention-size') || response.headers.get('content-length')) || undefined;
  const reader = response.body.getReader();
  let buffer = new Uint8Array(1 << 16), length = 0, needed = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (value) {
        if (length + value.length > buffer.length) {
          const grown = new Uint8Array(Math.max(buffer.length * 2, length + value.length));
          grown.set(buffer.subarray(0, length));
          buffer = grown;
        }
        buffer.set(value, length);
        length += value.length;
      }
      // Parsed again only once the bytes the last try asked for are in.
      if (length >= needed || done) {
        const read = parseGgufHeader(buffer.subarray(0, length), size);
        if (read.complete) return { header: read.header, fileSize: size ?? 0 };
        needed = read.bytesNeeded;
      }
      if (done) return null;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** The header of a file the library's Hub cache holds (keyed by its Hub address), or null. */
async function cachedHeader(address) {
  if (!self.caches) return null;
  const response = await (await caches.open(BROWSER_CACHE_NAME)).match(address);
  return response ? streamHeader(Promise.resolve(response)) : null;
}

/** From a GGUF header: each layer's { q, k, v, o } storage types, and how many tensors of each type. */
function tensorTypes(header, layers) {
  if (!header) return { layerTypes: null, types: null };
  const typeOf = (name) => header.tensors.get(name)?.type ?? null;
  const layerTypes = Array.from({ length: layers }, (_, l) => ({
    q: typeOf(`blk.${l}.attn_q.weight`), k: typeOf(`blk.${l}.attn_k.weight`), v: typeOf(`blk.${l}.attn_v.weight`), o: typeOf(`blk.${l}.attn_output.weight`),
  }));
  const types = {};
  for (const t of header.tensors.values()) types[t.type] = (types[t.type] ?? 0) + 1;
  return { layerTypes, types };
}

const handlers = {
  /** hubUrl (Hub models only): the Hub's address; the download's progress goes to onProgress;
   * dtype: the weights' precision (the Hub panel's choice, the widget's dtype attribute); files: the
   * optional files a folder holds (OPTIONAL_FILES; the others are not asked for). */
  async model({ modelUrl, hubUrl, dtype, file, files }, onProgress) {
    return (await model(modelUrl, { hubUrl, dtype, file, files, onProgress: onProgress ?? undefined })).info;
  },

  /** A Hub repository's GGUF files, each with its quantization (the Hub panel's picker). */
  async ggufFiles({ repo, hubUrl }) {
    return listHubGgufFiles(repo, { hubUrl });
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

// Latest-wins queue per channel.
const pending = [];
let draining = false;

async function drain() {
  while (pending.length) {
    const request = pending.shift();
    if (request.channel && pending.some((r) => r.channel === request.channel)) {
      request.resolve(null);
      continue;
    }
    try {
      const handler = handlers[request.type];
      if (!handler) throw new Error(`unknown request ${request.type}`);
      request.resolve(await handler(request.payload ?? {}, request.onProgress));
    } catch (e) {
      request.reject(e);
    }
    // Let newer messages in before picking the next request.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  draining = false;
}

/** The root object the page calls (compute_client.js), each method's result a promise there. */
class ComputeService {
  /** A handler's result (`type`: model, run, compare, seed, ggufFiles, metrics). channel: of the
   * requests pending in one channel only the newest runs, the others resolve to null. onProgress:
   * a model's download progress. */
  request(type, payload, channel = null, onProgress = null) {
    return new Promise((resolve, reject) => {
      pending.push({ type, payload, channel, onProgress, resolve, reject });
      if (!draining) {
        draining = true;
        // A macrotask, so that messages already queued behind this one arrive before we choose.
        setTimeout(drain, 0);
      }
    });
  }

  /** Streams a generation beside the queue (the model yields between tokens, so the page's run
   * requests for the growing text get in): onToken hears each token; signal stops it. */
  async generate(payload, onToken, signal) {
    const runner = await model(payload.modelUrl);
    if (!runner.generate) throw new Error(`${runner.info.name} does not generate text`);
    return runner.generate({ ...payload, signal, onToken });
  }
}

serveInWorker(() => new ComputeService());

// index.html's head, before the page's connection: start loading its model, and take the weights
// it downloaded (messages of this worker's own, beside the protocol's).
self.addEventListener('message', (event) => {
  const { type, payload } = event.data ?? {};
  if (type === 'preload') preload(payload);
  else if (type === 'file') handed.get(payload.url)?.resolve(payload.bytes);
});
