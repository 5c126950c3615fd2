import * as ort from 'onnxruntime-web';
import { WORKLOADS, makeData } from '/work/main/bench/workloads.mjs';
import { fusedAttentionModel, plainGraphModel } from '/work/main/bench/onnx_models.mjs';
import { loadAttention } from '/work/main/dist/index.js';
const nt = Number(process.argv[2] || 1);
ort.env.wasm.numThreads = nt;
const wl = WORKLOADS[Number(process.argv[3]||1)];
const d = makeData(wl);
const attn = await loadAttention({ simd: true });
console.log('attn keys', Object.keys(attn), attn.threads, attn.variant);
const mha = attn.createMultiHeadAttention({ dModel: wl.dModel, numHeads: wl.numHeads, bias: true });
mha.setWeights(d);
const ref = mha.forward(d.x, { batch: wl.batch, seqLen: wl.seqLen, causal: wl.causal }).output;
for (const [n, m] of [['fused', fusedAttentionModel(wl, d)], ['plain', plainGraphModel(wl, d)]]) {
  const t0 = performance.now();
  const s = await ort.InferenceSession.create(m, { executionProviders: ['wasm'] });
  const t1 = performance.now();
  const x = new ort.Tensor('float32', d.x, [wl.batch, wl.seqLen, wl.dModel]);
  let r;
  for (let i = 0; i < 5; i++) { const a = performance.now(); r = await s.run({ x }); console.log(n, 'call', (performance.now() - a).toFixed(2)); }
  const y = r.y.data;
  let md = 0, mx = 0; for (let i = 0; i < y.length; i++) { md = Math.max(md, Math.abs(y[i] - ref[i])); mx = Math.max(mx, Math.abs(ref[i])); }
  console.log(n, 'create', (t1 - t0).toFixed(1), 'maxdiff', md, 'scale', mx);
}
