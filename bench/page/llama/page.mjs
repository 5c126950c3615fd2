// The browser half of bench/llama/browser.mjs: one random SmolLM2-135M-shaped Llama (or the tests'
// tiny one) generating the same 64 prompt ids + N greedy tokens in llama.cpp's WebAssembly build
// (wllama) and in this library, both from the GGUF file the driver wrote (ours also, at Q8_0 and
// Q4_0, from a safetensors checkpoint of the same values built here), plus the page's memory bandwidth. The driver opens a fresh page per run so that each run's
// renderer memory is its own. Served from the repository root by scripts/static_server.cjs
// (COOP/COEP: crossOriginIsolated, so both can start threads).
import { Wllama } from '../../../node_modules/@wllama/wllama/esm/index.js';
import { decode, encode, GGML_TYPE } from '../../../tools/gguf/ggml_quant.mjs';
import { ggufName, K_MIXES, matrixTypes, textIds, tokenText } from '../../llama/gguf.mjs';
import { llamaOnnxModel, ortGenerate } from '../../llama/onnx.mjs';
import { idsOnlyTokenizer, llamaShapes, llamaTensor, safetensorsF32 } from '../../llama/weights.mjs';

const WLLAMA_WASM = '/node_modules/@wllama/wllama/esm/wasm/wllama.wasm';
// The package as the driver copied it at the start (?dist=...): other work may rebuild dist/ meanwhile.
const { loadAttention } = await import(new URLSearchParams(location.search).get('dist') ?? '../../../dist/index.js');
const log = (s) => { document.getElementById('log').textContent += `\n${s}`; };

window.pageInfo = () => ({
  crossOriginIsolated: self.crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency, userAgent: navigator.userAgent,
});

// One worker of the n-thread read stream: its own instance of the probe and `bytes` of memory, each
// repetition started together with the others' (a barrier on shared memory), its times posted back.
const READ_WORKER = `onmessage = ({ data: { module, bytes, reps, sab, n } }) => {
  const { bw_alloc: alloc, bw_read: read } = new WebAssembly.Instance(module, {}).exports;
  const src = alloc(bytes), sync = new Int32Array(sab), times = [];
  if (src) read(src, bytes, 1);
  for (let r = 0; r < reps; r++) {
    if (Atomics.add(sync, 0, 1) + 1 === n * (r + 1)) { Atomics.store(sync, 1, r + 1); Atomics.notify(sync, 1); }
    else while (Atomics.load(sync, 1) < r + 1) Atomics.wait(sync, 1, r);
    const t = performance.now();
    if (src) read(src, bytes, 1);
    times.push(src ? performance.now() - t : null);
  }
  postMessage(times);
};`;

/**
 * GB/s of n workers reading at once, each its own `bytes` (bench/peak/bandwidth.cpp's v128.load
 * stream): per repetition n x the bytes over the slowest worker's time, best repetition. What a
 * decode step's weights could stream on n threads of this page. Null if a worker could not grow its memory.
 */
async function parallelRead(module, n, bytes, reps) {
  const url = URL.createObjectURL(new Blob([READ_WORKER], { type: 'text/javascript' }));
  const sab = new SharedArrayBuffer(8);
  try {
    const times = await Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
      const w = new Worker(url);
      w.onmessage = ({ data }) => { resolve(data); w.terminate(); };
      w.onerror = (e) => reject(new Error(e.message));
      w.postMessage({ module, bytes, reps, sab, n });
    })));
    if (times.some((t) => t.includes(null))) return null;
    let top = 0;
    for (let r = 0; r < reps; r++) top = Math.max(top, (n * bytes) / Math.max(...times.map((t) => t[r])) / 1e6);
    return top;
  } finally {
    URL.revokeObjectURL(url);
  }
}

/**
 * Best GB/s over `reps` of memory.copy and of a v128.load read stream on one thread, and of the
 * read stream on two workers at once (bench/peak/bandwidth.cpp): the walls a decode step meets at 1
 * and 2 threads.
 */
window.bandwidth = async ({ reps = 5, bytes = 128 << 20 } = {}) => {
  const module = await WebAssembly.compileStreaming(fetch('/build/bench-peak/bandwidth.wasm'));
  const instance = await WebAssembly.instantiate(module, {});
  const { bw_alloc: alloc, bw_copy: copy, bw_read: read } = instance.exports;
  const src = alloc(bytes), dst = alloc(bytes);
  if (!src || !dst) return { skip: `could not grow WebAssembly memory by 2 x ${bytes >> 20} MiB` };
  const best = (f) => {
    f();
    let top = 0;
    for (let r = 0; r < reps; r++) { const t = performance.now(); f(); top = Math.max(top, bytes / (performance.now() - t) / 1e6); }
    return top;
  };
  const copyGBs = best(() => copy(dst, src, bytes, 1)), readGBs = best(() => read(src, bytes, 1));
  const read2GBs = self.crossOriginIsolated ? await parallelRead(module, 2, bytes, reps) : null;
  return { copyGBs, readGBs, read2GBs };
};

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

// Each engine loads in one call (loadEngine) and generates in the next (generateRuns), so that the
// driver can take the renderer's memory peak of each phase apart: loading holds transient copies
// (our checkpoint, the GGUF blob, the ONNX bytes), generating only what the engine keeps.
// An engine: { generate(n) -> one run's record, summary(runs) -> its figures, dispose() }.

/**
 * llama.cpp (wllama) on a GGUF file. A generation: `n` greedy tokens after the prompt (no prompt
 * cache, end-of-text ignored). The prompt goes in as text whose characters are the prompt ids
 * (llama/gguf.mjs tokenText); the generated ids come back with their two most likely tokens'
 * log-probabilities (n_probs), whose difference is the top-2 logit margin. kvCache: the cache's
 * type (default llama.cpp's, f16).
 */
async function loadWllama({ file, threads, promptIds, kvCache }) {
  const messages = [];
  const logger = { debug: (...a) => messages.push(a.join(' ')), log: (...a) => messages.push(a.join(' ')), warn: (...a) => messages.push(a.join(' ')), error: (...a) => messages.push(`ERROR ${a.join(' ')}`) };
  const wllama = new Wllama({ default: WLLAMA_WASM }, { logger });
  // (llama.cpp's own reason is in its log; the error wllama throws often says less)
  const llamaErrors = () => `llama.cpp: ${messages.filter((m) => m.startsWith('ERROR')).slice(0, 3).join(' | ')}`;
  const blob = await (await fetch(file)).blob();
  // kvCache 'f32' (the agreement check): keys and values kept as computed, not rounded to
  // llama.cpp's default f16 (a 2^-11 relative error that moves near-tied logits apart).
  const cache = kvCache ? { cache_type_k: kvCache, cache_type_v: kvCache } : {};
  try {
    await wllama.loadModel([blob], { n_threads: threads, n_ctx: 256, n_batch: 512, n_ubatch: 512, n_gpu_layers: 0, warmup: false, ...cache });
  } catch (e) {
    throw new Error(`${e.message}; ${llamaErrors()}`);
  }
  const prompt = promptIds.map(tokenText).join('');
  return {
    async generate(n) {
      const res = await wllama.createCompletion({ prompt, max_tokens: n, temperature: 0, top_k: 1, cache_prompt: false, ignore_eos: true, n_probs: 2, seed: 1 })
        .catch((e) => { throw new Error(`${e.message}; ${llamaErrors()}`); });
      const steps = res.choices[0].logprobs?.content ?? [];
      return {
        timings: res.timings, tokens: steps.map((x) => x.id), textIds: textIds(res.choices[0].text),
        margins: steps.map((x) => (x.top_logprobs.length > 1 ? x.top_logprobs[0].logprob - x.top_logprobs[1].logprob : null)),
      };
    },
    summary(runs) {
      const t = runs.map((x) => x.timings);
      return {
        prefillMs: median(t.map((x) => x.prompt_ms)), decodeTokPerS: median(t.map((x) => x.predicted_per_second)),
        promptN: t.map((x) => x.prompt_n), predictedN: t.map((x) => x.predicted_n), cacheN: t.map((x) => x.cache_n),
        multithread: messages.find((m) => /Multithread enabled/.test(m)) ?? null, errors: messages.filter((m) => m.startsWith('ERROR')),
        kvCacheLines: messages.filter((m) => /llama_kv_cache|flash_attn|swa/i.test(m)),
      };
    },
    dispose: () => wllama.exit(),
  };
}

/**
 * A safetensors checkpoint with the values of a GGUF type's file. F32 and F16 load the original
 * (bfloat16-exact) weights; Q8_0 and Q4_0 load the floats ggml's blocks hold, from which our
 * quantizer re-makes the very same blocks (tests/js/gguf_writer.test.cjs). For the K mixes
 * (`mod`: the package, whose encodeWeights wrote those tensors) each matrix as the floats its
 * type's blocks hold, to be held as f32: the file's network without quantized activations.
 */
function checkpointFor(config, type, mod = null) {
  const types = matrixTypes(config, type);
  const tensors = {};
  for (const [name, shape] of llamaShapes(config)) {
    let x = llamaTensor(config, name, shape);
    const t = shape.length === 2 ? types[ggufName(name, config)] : 'F32';
    if (t === 'Q8_0' || t === 'Q4_0') x = decode(GGML_TYPE[t], encode(GGML_TYPE[t], x), x.length);
    else if (t !== 'F32' && t !== 'F16') x = mod.decodeWeights(mod.encodeWeights(x, { type: t, cols: shape[1] }), { type: t, cols: shape[1] });
    tensors[name] = [shape, x];
  }
  return safetensorsF32(tensors);
}

const DTYPE = { F32: 'f32', F16: 'f16', Q8_0: 'q8', Q4_0: 'q4' };
/** The GGUF file's address for loadModel (a URL ending in .gguf: read as the file's own types, streamed). */
const fileUrl = (file) => new URL(file, location.href).href;

/**
 * This library at `threads` threads (SIMD build, threaded above 1) on the same weights: the GGUF
 * file llama.cpp loads (engine 'ours'), or (`from: 'safetensors'`, Q8_0 and Q4_0) the checkpoint
 * of the same values with loadModel's dtype, as before the GGUF loader.
 */
async function loadOurs({ config, type, threads, promptIds, file }, from = 'gguf', simd = true) {
  const mod = await loadAttention({ simd, threads });
  const model = from === 'gguf' ? await mod.loadModel(fileUrl(file))
    : await mod.loadModel({ config, weights: checkpointFor(config, type), tokenizer: idsOnlyTokenizer() }, { dtype: DTYPE[type] });
  // The file names an end-of-text id (</s> = 2), at which generate() stops; llama.cpp runs with
  // ignore_eos and the safetensors config has none, and generate() has no option for it: so the
  // model forgets it (a renamed field would show as fewer tokens than asked, a listed problem).
  if (from === 'gguf' && 'eosId' in model) model.eosId = undefined;
  return {
    async generate(n) {
      const out = await model.generate(promptIds, { maxNewTokens: n, temperature: 0 });
      return { tokens: out.tokens, ttftMs: out.timeToFirstTokenMs, tokPerS: out.tokensPerSecond, finishReason: out.finishReason };
    },
    summary: (runs) => ({
      variant: mod.variant, libThreads: mod.threads, heapBytes: mod.memoryBytes,
      prefillMs: median(runs.map((x) => x.ttftMs)), decodeTokPerS: median(runs.map((x) => x.tokPerS)),
    }),
    dispose: () => model.dispose(),
  };
}

/**
 * onnxruntime-web (issue 23's peer) on the same weights: the graph of llama/onnx.mjs with past
 * key/values, in float32 or (weights 'int8') as transformers.js's 8-bit files (int8 weights per
 * tensor, activations quantized at run time), numThreads fixed for the page, greedy as
 * transformers.js decodes.
 */
async function loadOrt({ config, threads, promptIds }, weights = 'float32') {
  const dir = '/node_modules/onnxruntime-web/dist/';
  const ort = await import(`${dir}ort.wasm.min.mjs`);
  Object.assign(ort.env.wasm, { wasmPaths: dir, numThreads: threads });
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(llamaOnnxModel(config, { weights }), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  return {
    async generate(n) {
      const { promptLogits, ...run } = await ortGenerate(ort, session, config, promptIds, n);  // not the logits: each run goes back to the driver
      return run;
    },
    summary: (runs) => ({
      numThreads: ort.env.wasm.numThreads, version: ort.env.versions?.web,
      prefillMs: median(runs.map((x) => x.prefillMs)), decodeTokPerS: median(runs.map((x) => x.decodeTokPerS)),
    }),
    dispose: () => session.release(),
  };
}

const LOADERS = { 'llama.cpp': loadWllama, ours: loadOurs, 'ours (safetensors)': (args) => loadOurs(args, 'safetensors'), 'ours (relaxed)': (args) => loadOurs(args, 'gguf', 'relaxed'), 'onnxruntime-web': loadOrt, 'onnxruntime-web 8-bit': (args) => loadOrt(args, 'int8') };
let loaded = null;

/** Loads `engine` for `args` (the page keeps it for generateRuns). */
window.loadEngine = async (engine, args) => {
  const t0 = performance.now();
  loaded = await LOADERS[engine](args);
  return { loadMs: performance.now() - t0 };
};

/**
 * One untimed warm-up, then `reps` generations of `newTokens`; the engine is disposed after. With
 * `expect` (PyTorch's greedy ids) the warm-up is a whole generation checked against them first: an
 * engine whose tokens differ is not timed ({ refused }).
 */
window.generateRuns = async ({ newTokens, reps, expect }) => {
  const first = await loaded.generate(expect ? newTokens : 4);
  const step = expect ? expect.findIndex((id, i) => first.tokens[i] !== id) : -1;
  if (step >= 0) {
    await loaded.dispose();
    loaded = null;
    return { refused: { step, got: first.tokens[step] ?? null, expected: expect[step], tokens: first.tokens } };
  }
  const runs = [];
  for (let r = 0; r < reps; r++) runs.push(await loaded.generate(newTokens));
  const result = { runs, ...(await loaded.summary(runs)) };
  await loaded.dispose();
  loaded = null;
  return result;
};

/** The top two ids of a logits row, their margin, the row's range, and the logits of `picks`. */
function logitFacts(logits, picks) {
  const order = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a]);
  let lo = Infinity, hi = -Infinity;
  for (const v of logits) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  return {
    top: order.slice(0, 2), topLogits: [logits[order[0]], logits[order[1]]], margin: logits[order[0]] - logits[order[1]], range: hi - lo,
    picks: picks.filter((id) => id != null).map((id) => ({ id, logit: logits[id] })),
  };
}

/**
 * Our logits after the prompt and the first `k` of `tokens` (the step where the two sides first
 * chose differently), from the GGUF file as engine 'ours' loads it: the top two ids, their margin,
 * the logits' range, and the logits of both sides' choices. For the quantized types also `exact`:
 * the same from the file's weights dequantized and held as float32 (no quantized activations on
 * either side), which says which choice the weights themselves make.
 */
window.ourLogitsAt = async ({ config, type, promptIds, tokens, k, llamaToken, file }) => {
  const mod = await loadAttention({ simd: true, threads: 1 });
  const ids = [...promptIds, ...tokens.slice(0, k)], picks = [llamaToken, tokens[k]];
  const facts = async (model) => {
    const { logits } = model.run(ids, { logitsToKeep: 1 });
    model.dispose();
    return logitFacts(logits, picks);
  };
  const quantized = type === 'Q8_0' || type === 'Q4_0' || K_MIXES.includes(type);
  const exact = quantized
    ? await facts(await mod.loadModel({ config, weights: checkpointFor(config, type, mod), tokenizer: idsOnlyTokenizer() }, { dtype: 'f32' }))
    : undefined;
  return { ...(await facts(await mod.loadModel(fileUrl(file)))), exact };
};

/**
 * Our top-2 logit margin before each of `tokens` (after the prompt and the tokens before it), from
 * the GGUF file, in one run over the whole text: beside llama.cpp's margins (its top-2
 * log-probabilities' difference) at the same steps, how far apart the two sides' logits are where
 * they chose alike. Also the logits' range at each step.
 */
window.ourMargins = async ({ promptIds, tokens, file }) => {
  const mod = await loadAttention({ simd: true, threads: 1 });
  const model = await mod.loadModel(fileUrl(file));
  const { logits } = model.run([...promptIds, ...tokens.slice(0, -1)], { logitsToKeep: tokens.length });
  const V = logits.length / tokens.length;
  model.dispose();
  return tokens.map((_, i) => {
    const { margin, range } = logitFacts(logits.subarray(i * V, (i + 1) * V), []);
    return { margin, range };
  });
};

log('ready');
