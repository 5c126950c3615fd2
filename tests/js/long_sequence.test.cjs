// Without attention weights the library runs the tiled (online-softmax) path: memory linear in
// the sequence length. S = 8192, D = 256 would need 8192^2 * 4 B = 256 MiB per head for scores.
const { api, randomArray } = require('./helpers.cjs');

test('S = 8192, D = 256, 4 heads, causal: runs in a small heap with the right first row', async () => {
  const attn = await api.loadAttention();
  const S = 8192, D = 256, H = 4;
  const w = { wQ: randomArray(D * D, 1), wK: randomArray(D * D, 2), wV: randomArray(D * D, 3), wO: randomArray(D * D, 4),
    bQ: randomArray(D, 5), bK: randomArray(D, 6), bV: randomArray(D, 7), bO: randomArray(D, 8) };
  const layer = attn.createMultiHeadAttention({ dModel: D, numHeads: H });
  layer.setWeights(w);
  const x = randomArray(S * D, 9);
  const { output } = layer.forward(x, { causal: true });
  layer.dispose();
  // Inputs, outputs, Q/K/V and K^T are each S*D floats = 8 MiB; scores would be 256 MiB a head.
  expect(attn.memoryBytes).toBeLessThan(128 * 2 ** 20);
  expect(output.every(Number.isFinite)).toBe(true);
  // Query 0 sees only key 0, so each head's output row is V's row 0: out_0 = (x_0 W^V + b^V) W^O + b^O.
  const v0 = new Float64Array(D);
  for (let o = 0; o < D; o++) { v0[o] = w.bV[o]; for (let i = 0; i < D; i++) v0[o] += x[i] * w.wV[i * D + o]; }
  for (let o = 0; o < D; o++) {
    let want = w.bO[o];
    for (let i = 0; i < D; i++) want += v0[i] * w.wO[i * D + o];
    expect(Math.abs(output[o] - want)).toBeLessThan(1e-5 + 1e-4 * Math.abs(want));
  }
});
