// The browser half of bench/browser.mjs: runs one workload for this library (SIMD) and
// onnxruntime-web (both graphs, 1 thread) in the page, with the same data, models and timing
// policy as the Node bench. Served from the repository root by scripts/static_server.cjs.
import { loadAttention } from '../../dist/index.js';
import { fusedAttentionModel, plainGraphModel } from '../onnx_models.mjs';
import { POLICY, timeCalls } from '../timing.mjs';
import { compareOutputs, makeData, nominalFlops, selectWorkloads } from '../workloads.mjs';

const ORT_DIR = '/node_modules/onnxruntime-web/dist/';

async function ours(wl, d) {
  const t = performance.now();
  const attn = await loadAttention({ simd: true, threads: 1 });
  const loadMs = performance.now() - t;
  const mha = attn.createMultiHeadAttention({ dModel: wl.dModel, numHeads: wl.numHeads, bias: true });
  mha.setWeights(d);
  const opts = { batch: wl.batch, seqLen: wl.seqLen, causal: wl.causal };
  return { loadMs, variant: attn.variant, isAsync: false, run: () => mha.forward(d.x, opts).output };
}

async function ortEngine(ort, build, wl, d) {
  const t = performance.now();
  const session = await ort.InferenceSession.create(build(wl, d), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const loadMs = performance.now() - t;
  const x = new ort.Tensor('float32', d.x, [wl.batch, wl.seqLen, wl.dModel]);
  return { loadMs, isAsync: true, run: async () => (await session.run({ x })).y.data };
}

window.runBench = async ({ workload = 'bert', quick = false } = {}) => {
  const wl = selectWorkloads([workload])[0];
  const d = makeData(wl);
  const policy = quick ? POLICY.quick : POLICY.full;
  const ort = await import(`${ORT_DIR}ort.wasm.min.mjs`);
  ort.env.wasm.wasmPaths = ORT_DIR;
  ort.env.wasm.numThreads = 1;
  const engines = [
    ['ours-simd', () => ours(wl, d)],
    ['ort-fused-1t', () => ortEngine(ort, fusedAttentionModel, wl, d)],
    ['ort-plain-1t', () => ortEngine(ort, plainGraphModel, wl, d)],
  ];
  const rows = [];
  let ref = null;
  for (const [engine, make] of engines) {
    const row = { engine, workload: wl.name };
    try {
      const e = await make();
      const t = performance.now();
      const out = e.isAsync ? await e.run() : e.run();
      Object.assign(row, { loadMs: e.loadMs, firstCallMs: performance.now() - t });
      if (!ref) ref = Float32Array.from(out); else row.rel = compareOutputs(ref, out).rel;
      Object.assign(row, await timeCalls(e.run, e.isAsync, policy));
      row.gflops = nominalFlops(wl) / row.medianMs / 1e6;
    } catch (err) {
      row.error = String(err?.message ?? err);
    }
    rows.push(row);
    document.getElementById('log').textContent = JSON.stringify(rows, null, 1);
  }
  return { userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated, rows };
};
document.getElementById('log').textContent = 'ready';
