// onnxruntime-web, wasm execution provider, with the bench's generated models: the fused
// com.microsoft.Attention graph or the plain MatMul/Softmax graph (bench/layers/onnx_models.mjs) for
// layer workloads; graph 'export' runs the encoder workload's torch.onnx.export file
// (bench/encoder/workload.mjs) as a user would: read the .onnx, default (full) graph optimization.
// Graph 'kv' runs the generate workload's export with past key/values (bench/generate/workload.mjs) in a
// greedy loop the way transformers.js generates: prefill with empty past, then one token per
// session.run, each step's presents fed back as the next step's past. Graphs 'kv8' and 'kvnbits8'
// run the same loop on that export with 8-bit weights (bench/generate/quantize8.py): int8
// MatMulInteger per tensor, or MatMulNBits bits=8 in blocks of 32.
import { readFileSync } from 'node:fs';

import { fusedAttentionModel, plainGraphModel, startOrtWasm } from '../layers/onnx_models.mjs';

const SESSION_OPTIONS = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };

// The generate workload's graphs: float32, int8 MatMulInteger (transformers.js's q8), MatMulNBits 8-bit.
const GENERATE_GRAPHS = { kv: (d) => `${d.dir}/model.onnx`, kv8: (d) => d.int8Onnx, kvnbits8: (d) => d.nbits8Onnx };

async function prepareEncoder(ort, wl, d) {
  const t = performance.now();
  const session = await ort.InferenceSession.create(readFileSync(`${d.dir}/model.onnx`), SESSION_OPTIONS);
  const sessionMs = performance.now() - t;
  const dims = [wl.batch, wl.seqLen];
  const feeds = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(d.ids, BigInt), dims),
    attention_mask: new ort.Tensor('int64', BigInt64Array.from(d.mask, BigInt), dims),
  };
  return {
    isAsync: true,
    sessionMs,
    run: async () => (await session.run(feeds)).embeddings.data,
    dispose: () => session.release(),
  };
}

async function prepareGenerate(ort, wl, d, file) {
  const t = performance.now();
  const session = await ort.InferenceSession.create(readFileSync(file), SESSION_OPTIONS);
  const sessionMs = performance.now() - t;
  const dk = wl.dModel / wl.numHeads;
  const names = [];
  for (let i = 0; i < wl.layers; i++) names.push(`key.${i}`, `value.${i}`);
  const ids = (tokens) => new ort.Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, tokens.length]);
  const argmax = (x) => {
    let best = 0;
    for (let v = 1; v < x.length; v++) if (x[v] > x[best]) best = v;  // first of equals, as torch
    return best;
  };
  const prefillFeeds = (prompt) => {
    const feeds = { input_ids: ids(prompt) };
    for (const n of names) feeds[`past_${n}`] = new ort.Tensor('float32', new Float32Array(0), [1, wl.numHeads, 0, dk]);
    return feeds;
  };
  const firstToken = [];  // per call: time to the first token (prefill + argmax), and the whole call
  async function run() {
    const t0 = performance.now();
    const feeds = prefillFeeds(d.prompt);
    const tokens = [];
    let ttftMs = 0;
    for (;;) {
      const out = await session.run(feeds);
      tokens.push(argmax(out.logits.data));  // logits: [1, vocab], the last position's
      if (tokens.length === 1) ttftMs = performance.now() - t0;
      if (tokens.length === wl.newTokens) break;
      feeds.input_ids = ids([tokens.at(-1)]);
      for (const n of names) feeds[`past_${n}`] = out[`present_${n}`];
    }
    firstToken.push({ ttftMs, runMs: performance.now() - t0 });
    return tokens;
  }
  return { isAsync: true, sessionMs, firstToken, run, prefill: async () => (await session.run(prefillFeeds(d.prompt))).logits.data, dispose: () => session.release() };
}

export async function load({ graph, threads }) {
  const t0 = performance.now();
  const ort = await import('onnxruntime-web');
  const t1 = performance.now();
  // Fixed for the life of the process: ORT sizes its thread pool once, at wasm init. That is
  // why 1 and 2 threads are separate engines (separate processes).
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  // Force the wasm init now with a one-node model, so loadMs is the instantiate cost and the
  // first real session measures only model load.
  await startOrtWasm(ort);
  const t2 = performance.now();
  const build = graph === 'fused' ? fusedAttentionModel : plainGraphModel;
  return {
    loadMs: t2 - t0,
    info: { importMs: t1 - t0, instantiateMs: t2 - t1, version: ort.env.versions?.web, numThreads: ort.env.wasm.numThreads },
    async prepare(wl, d) {
      if (graph in GENERATE_GRAPHS) {
        if (wl.kind !== 'generate') throw new Error(`graph '${graph}' runs only the generate workload, not ${wl.name}`);
        const file = GENERATE_GRAPHS[graph](d);
        if (!file) throw new Error(`not built: no 8-bit graph (${d.int8Skip})`);
        return prepareGenerate(ort, wl, d, file);
      }
      if (graph === 'export') {
        if (wl.kind !== 'encoder') throw new Error(`graph 'export' runs only encoder workloads, not ${wl.name}`);
        return prepareEncoder(ort, wl, d);
      }
      const t = performance.now();
      const session = await ort.InferenceSession.create(build(wl, d), SESSION_OPTIONS);
      const sessionMs = performance.now() - t;
      const x = new ort.Tensor('float32', d.x, [wl.batch, wl.seqLen, wl.dModel]);
      return {
        isAsync: true,
        sessionMs,
        run: async () => (await session.run({ x })).y.data,
        dispose: () => session.release(),
      };
    },
  };
}
