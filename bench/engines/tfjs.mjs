// @tensorflow/tfjs-core with @tensorflow/tfjs-backend-wasm (XNNPACK), one thread, SIMD or not. The layer
// is written as a tfjs user would: fused matMul+bias for projections, batched matMul per head.
import { createRequire } from 'node:module';

export async function load({ simd = true } = {}) {
  const t0 = performance.now();
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  const t1 = performance.now();
  // The backend locates its .wasm relative to a prefix; in Node that is a directory path.
  const require = createRequire(import.meta.url);
  const dir = require.resolve('@tensorflow/tfjs-backend-wasm/package.json').replace(/package\.json$/, 'dist/');
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);  // a single-thread .wasm
  // simd: false loads tfjs-backend-wasm.wasm (no SIMD) instead of tfjs-backend-wasm-simd.wasm.
  if (!simd) tf.env().set('WASM_HAS_SIMD_SUPPORT', false);
  wasm.setWasmPaths(dir);
  wasm.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();
  const t2 = performance.now();
  return {
    loadMs: t2 - t0,
    info: { importMs: t1 - t0, instantiateMs: t2 - t1, version: tf.version_core, backend: tf.getBackend(), simd: tf.env().getBool('WASM_HAS_SIMD_SUPPORT'), threads: wasm.getThreadsCount() },
    prepare(wl, d) {
      const { batch: B, seqLen: S, dModel: D, numHeads: H } = wl;
      const dk = D / H;
      const keep = [];
      const k = (t) => { keep.push(t); return t; };
      const W = { q: k(tf.tensor2d(d.wQ, [D, D])), k: k(tf.tensor2d(d.wK, [D, D])), v: k(tf.tensor2d(d.wV, [D, D])), o: k(tf.tensor2d(d.wO, [D, D])) };
      const b = { q: k(tf.tensor1d(d.bQ)), k: k(tf.tensor1d(d.bK)), v: k(tf.tensor1d(d.bV)), o: k(tf.tensor1d(d.bO)) };
      let mask = null;
      if (wl.causal) {
        const m = new Float32Array(S * S);
        for (let i = 0; i < S; i++) for (let j = i + 1; j < S; j++) m[i * S + j] = -1e9;
        mask = k(tf.tensor2d(m, [S, S]));
      }
      const scale = k(tf.scalar(1 / Math.sqrt(dk)));
      const layer = () => tf.tidy(() => {
        const x = tf.tensor2d(d.x, [B * S, D]);
        const heads = (name) => tf.transpose(tf.reshape(tf.fused.matMul({ a: x, b: W[name], bias: b[name] }), [B, S, H, dk]), [0, 2, 1, 3]);
        const q = tf.mul(heads('q'), scale);  // scaling Q (S x D) is cheaper than the scores (S x S per head)
        let scores = tf.matMul(q, heads('k'), false, true);
        if (mask) scores = tf.add(scores, mask);
        const z = tf.matMul(tf.softmax(scores), heads('v'));
        const concat = tf.reshape(tf.transpose(z, [0, 2, 1, 3]), [B * S, D]);
        return tf.fused.matMul({ a: concat, b: W.o, bias: b.o });
      });
      return {
        isAsync: false,
        run: () => { const y = layer(); const out = y.dataSync(); y.dispose(); return out; },
        dispose: () => keep.forEach((t) => t.dispose()),
      };
    },
  };
}
