// The browser half of bench/layers/browser.mjs: one page runs one thread count (onnxruntime-web's
// numThreads is global and fixed when its wasm starts, so the driver opens a fresh page per
// thread count). For each layer workload it runs this library (SIMD build at 1 thread, the
// threaded build at N) and onnxruntime-web (fused and plain graphs, N threads) with the same data,
// models and timing policy as the Node bench. Every output is checked against this library's
// 1-thread SIMD build (the Node bench's reference), which the N-thread page runs untimed.
// Served from the repository root by scripts/static_server.cjs (COOP/COEP: crossOriginIsolated).
import { loadAttention } from '../../../dist/index.js';
import { fusedAttentionModel, plainGraphModel, startOrtWasm } from '../../layers/onnx_models.mjs';
import { POLICY, timeCalls } from '../../common/timing.mjs';
import { compareOutputs, kindOf, makeData, nominalFlops, REL_TOLERANCE, selectWorkloads } from '../../common/workloads.mjs';

const ORT_DIR = '/node_modules/onnxruntime-web/dist/';
const MAX_THREADS = 4;  // the library's threaded build runs at most 4 (loader.ts MAX_THREADS)

const state = { threads: null, ort: null, attn: new Map(), engines: new Map() };

const oursId = (t) => (t === 1 ? 'ours-simd' : `ours-simd-${t}t`);

/** This library at `threads` threads, loaded once per page (the threaded build's pool is reused). */
async function attention(threads) {
  if (!state.attn.has(threads)) {
    const t = performance.now();
    const attn = await loadAttention({ simd: true, threads });
    state.attn.set(threads, { attn, loadMs: performance.now() - t });
  }
  return state.attn.get(threads);
}

/** onnxruntime-web with numThreads fixed for this page; wasm started with a one-node model. */
async function ortModule(threads) {
  if (!state.ort) {
    const t0 = performance.now();
    const ort = await import(`${ORT_DIR}ort.wasm.min.mjs`);
    ort.env.wasm.wasmPaths = ORT_DIR;
    ort.env.wasm.numThreads = threads;
    ort.env.logLevel = 'error';
    await startOrtWasm(ort);
    // ORT drops to 1 thread without SharedArrayBuffer; what it reports here is what it runs.
    state.ort = { ort, loadMs: performance.now() - t0, numThreads: ort.env.wasm.numThreads, version: ort.env.versions?.web };
  }
  return state.ort;
}

async function ours(threads, wl, d) {
  const { attn, loadMs } = await attention(threads);
  const t = performance.now();
  const mha = attn.createMultiHeadAttention({ dModel: wl.dModel, numHeads: wl.numHeads, bias: true });
  // The weights only: setWeights refuses unknown keys, and d also holds the input x.
  const { x: _input, ...weights } = d;
  mha.setWeights(weights);
  const opts = { batch: wl.batch, seqLen: wl.seqLen, causal: wl.causal };
  return {
    info: { role: 'ours', label: `attention-wasm SIMD${threads > 1 ? ` ${threads} threads` : ''}`, variant: attn.variant, libThreads: attn.threads, loadMs },
    sessionMs: performance.now() - t, isAsync: false,
    run: () => mha.forward(d.x, opts).output,
    dispose: () => mha.dispose(),
  };
}

async function ortEngine(threads, graph, wl, d) {
  const { ort, loadMs, numThreads, version } = await ortModule(threads);
  const t = performance.now();
  const build = graph === 'fused' ? fusedAttentionModel : plainGraphModel;
  const session = await ort.InferenceSession.create(build(wl, d), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const x = new ort.Tensor('float32', d.x, [wl.batch, wl.seqLen, wl.dModel]);
  return {
    info: { role: 'peer', label: `onnxruntime-web ${graph === 'fused' ? 'Attention op' : 'MatMul/Softmax graph'}`, version, numThreads, loadMs },
    sessionMs: performance.now() - t, isAsync: true,
    run: async () => (await session.run({ x })).y.data,
    dispose: () => session.release(),
  };
}

/** Which page this is: what the driver needs to pick N and to check cross-origin isolation. */
window.pageInfo = () => ({
  userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated,
  hardwareConcurrency: navigator.hardwareConcurrency, maxThreads: Math.min(navigator.hardwareConcurrency || 1, MAX_THREADS),
});

/** The engines this page ran: id, role, threads, load time (first use), variant / numThreads. */
window.pageEngines = () => [...state.engines.values()];

/** One layer workload on every engine at `threads` threads; rows as the Node bench's. */
window.runWorkload = async ({ workload, threads = 1, quick = false }) => {
  if (state.threads != null && state.threads !== threads) throw new Error(`this page runs ${state.threads} thread(s); open a fresh page for ${threads}`);
  state.threads = threads;
  const wl = selectWorkloads([workload])[0];
  if (kindOf(wl) !== 'layer') throw new Error(`${workload} is an ${kindOf(wl)} workload: Node only`);
  const d = makeData(wl);
  const policy = quick ? POLICY.quick : POLICY.full;

  // The reference: this library's 1-thread SIMD build (timed below when this is the 1-thread page).
  const refEngine = await ours(1, wl, d);
  const ref = Float32Array.from(refEngine.run());
  refEngine.dispose();

  const engines = [
    [oursId(threads), () => ours(threads, wl, d)],
    [`ort-fused-${threads}t`, () => ortEngine(threads, 'fused', wl, d)],
    [`ort-plain-${threads}t`, () => ortEngine(threads, 'plain', wl, d)],
  ];
  const rows = [];
  for (const [engine, make] of engines) {
    const row = { engine, workload: wl.name, threads, nominalFlops: nominalFlops(wl) };
    let e = null;
    try {
      e = await make();
      if (!state.engines.has(engine)) state.engines.set(engine, { id: engine, threads, ...e.info });
      const t = performance.now();
      const out = e.isAsync ? await e.run() : e.run();
      Object.assign(row, { sessionMs: e.sessionMs, firstCallMs: performance.now() - t });
      if (engine === 'ours-simd') row.isReference = true;
      else {
        const a = compareOutputs(ref, out);
        row.agreement = { ...a, kind: 'rel', value: a.rel, tolerance: REL_TOLERANCE, ok: a.rel <= REL_TOLERANCE, against: 'ours-simd' };
        row.agrees = row.agreement.ok;
      }
      Object.assign(row, await timeCalls(e.run, e.isAsync, policy));
      row.gflops = row.nominalFlops / row.medianMs / 1e6;
    } catch (err) {
      row.error = String(err?.message ?? err);
    } finally {
      try { await e?.dispose(); } catch { /* already gone */ }
    }
    rows.push(row);
    document.getElementById('log').textContent += `\n${JSON.stringify(row)}`;
  }
  return rows;
};
document.getElementById('log').textContent = 'ready';
