// The seeds' worked examples (../shared/seeds), through the public API.
const { variants, load, expectClose } = require('./helpers.cjs');

// Seed 002, "write a poem": 2-number embeddings and 2x2 weight matrices.
// Printed typos, found by redoing the arithmetic:
// - W^Q's top-left entry is printed 2.54, but every printed Q value (0.76, 1.11, 1.11 in the first
//   column) follows from 0.54: 1.16*0.54 + 0.23*0.59 = 0.762. We use 0.54.
// - K for "write" is printed [-0.14, -0.36]; the truth (and the seed's own K^T) is [-0.14, -0.30].
//   K for "a" is printed [-0.1, 0.38]; the truth (and K^T) is [0.10, 0.38].
// - V for "poem" is printed 2.86 in the final product; it is 3.86 (as printed for V itself).
// With those, every printed step matches the math to the printed 2 decimals.
const X = [1.16, 0.23, 0.57, 1.36, 4.41, -2.16];
const W_Q = [0.54, -0.17, 0.59, 0.65];
const W_K = [-0.15, -0.34, 0.14, 0.42];
const W_V = [0.62, 0.61, -0.52, 0.13];
const IDENTITY = [1, 0, 0, 1];

// Truth computed in float64 (numpy) from the values above.
const TRUTH = {
  q: [0.7621, -0.0477, 1.1102, 0.7871, 1.107, -2.1537],
  k: [-0.1418, -0.2978, 0.1049, 0.3774, -0.9639, -2.4066],
  v: [0.5996, 0.7375, -0.3538, 0.5245, 3.8574, 2.4093],
  rawScores: [-0.09386, 0.06194, -0.61979, -0.39182, 0.41351, -2.96436, 0.4844, -0.69668, 4.11606],
  scaledScores: [-0.06637, 0.0438, -0.43826, -0.27706, 0.2924, -2.09612, 0.34252, -0.49263, 2.91049],
  weights: [0.35639, 0.3979, 0.24571, 0.34136, 0.60328, 0.05536, 0.06909, 0.02997, 0.90093],
  output: [1.02071, 1.06352, 0.20478, 0.70155, 3.50608, 2.2373],
  causalWeights: [1, 0, 0, 0.36136, 0.63864, 0, 0.06909, 0.02997, 0.90093],
  causalOutput: [0.5996, 0.7375, -0.00928, 0.60147, 3.50608, 2.2373],
};

// What the seed prints (2 decimals), checked to half a unit in the last printed place.
const PRINTED = {
  q: [0.76, -0.05, 1.11, 0.79, 1.11, -2.15],
  rawScores: [-0.09, 0.06, -0.61, -0.39, 0.41, -2.97, 0.49, -0.71, 4.12],
  scaledScores: [-0.06, 0.04, -0.43, -0.28, 0.29, -2.10, 0.35, -0.5, 2.91],
  weights: [0.36, 0.40, 0.24, 0.34, 0.60, 0.06, 0.07, 0.03, 0.90],
  output: [1.0, 1.1, 0.2, 0.7, 3.5, 2.2],
  causalWeights: [1, 0, 0, 0.36, 0.64, 0, 0.07, 0.03, 0.90],
};

describe.each(variants)('%s build', (variant) => {
  async function poem(causal) {
    const attn = await load(variant);
    const layer = attn.createMultiHeadAttention({ dModel: 2, numHeads: 1, bias: false });
    layer.setWeights({ wQ: W_Q, wK: W_K, wV: W_V, wO: IDENTITY });
    try {
      return layer.forward(Float32Array.from(X), { causal, trace: true, returnAttention: true });
    } finally {
      layer.dispose();
    }
  }

  test('seed 002 "write a poem": every step of self-attention', async () => {
    const { output, trace } = await poem(false);
    const tol = { abs: 6e-5, rel: 0 }; // the truth above is rounded to 4-5 decimals
    expectClose(trace.x, X, { abs: 1e-6, rel: 0 }, 'X');
    for (const step of ['q', 'k', 'v', 'rawScores', 'scaledScores', 'weights']) expectClose(trace[step], TRUTH[step], tol, step);
    expectClose(output, TRUTH.output, tol, 'output');
    expectClose(trace.z, TRUTH.output, tol, 'z'); // W^O = I: the head output is the output
    // The seed sometimes truncates rather than rounds (0.2457 is printed 0.24 so the row sums to 1).
    const printed = { abs: 0.01, rel: 0 };
    expectClose(trace.q, PRINTED.q, printed, 'printed Q');
    // The seed multiplied its rounded Q and K: e.g. 1.11*0.10 - 2.15*0.38 = -0.71 vs the exact -0.697.
    expectClose(trace.rawScores, PRINTED.rawScores, { abs: 0.015, rel: 0 }, 'printed QK^T');
    expectClose(trace.scaledScores, PRINTED.scaledScores, { abs: 0.011, rel: 0 }, 'printed scaled');
    expectClose(trace.weights, PRINTED.weights, printed, 'printed softmax');
    expectClose(output, PRINTED.output, { abs: 0.051, rel: 0 }, 'printed output');
    for (let i = 0; i < 3; i++) expect(trace.weights[i * 3] + trace.weights[i * 3 + 1] + trace.weights[i * 3 + 2]).toBeCloseTo(1, 6);
  });

  test('seed 002 masked self-attention: -inf above the diagonal', async () => {
    const { output, attention, trace } = await poem(true);
    expect(Array.from(trace.maskedScores).filter((x) => x === -Infinity).length).toBe(3);
    expect(trace.maskedScores[1]).toBe(-Infinity);
    expect(trace.maskedScores[2]).toBe(-Infinity);
    expect(trace.maskedScores[5]).toBe(-Infinity);
    expectClose(attention, TRUTH.causalWeights, { abs: 6e-5, rel: 0 }, 'causal weights');
    expectClose(attention, PRINTED.causalWeights, { abs: 0.01, rel: 0 }, 'printed causal weights');
    expectClose(output, TRUTH.causalOutput, { abs: 6e-5, rel: 0 }, 'causal output');
  });

  test('seed 001: scores [32, 88, 56, 72] / sqrt(64) through softmax', async () => {
    // Printed: [0.0008, 0.87, 0.015, 0.011]. The last entry is a typo (0.117: e^(9-11) / sum),
    // and 0.015 rounds 0.01586. The printed row sums to 0.897, not 1.
    const attn = await load(variant);
    const dK = 64;
    const q = new Float32Array(dK); q[0] = 1;
    const k = new Float32Array(4 * dK);
    [32, 88, 56, 72].forEach((s, j) => { k[j * dK] = s; });
    const v = Float32Array.from([1, 0, 0, 1, 0, 0, 0, 0]); // 4 keys x dV 2
    const r = attn.scaledDotProductAttention(q, k, v, { dK, returnAttention: true, trace: true });
    expectClose(r.trace.scaledScores, [4, 11, 7, 9], { abs: 1e-6, rel: 0 }, 'scaled');
    expectClose(r.attention, [0.0007898, 0.8661287, 0.0158637, 0.1172178], { abs: 2e-7, rel: 1e-6 }, 'softmax');
    expectClose(r.attention, [0.0008, 0.87, 0.015, 0.011].map((x, j) => (j === 3 ? 0.117 : x)), { abs: 0.005, rel: 0 }, 'printed');
    expectClose(r.output, [0.0007898, 0.8661287], { abs: 2e-7, rel: 1e-6 }, 'weighted sum of V');
  });

  test('seed 001: concatenating head outputs h1, h2, h3 gives the printed 3x9 matrix', async () => {
    // One-hot tokens (X = I) and Q = K = 10 X make each token attend only to itself (weights
    // e^-57 elsewhere), so Z_i = V_i = W_i^V: choosing W_i^V = h_i makes head i output h_i.
    const attn = await load(variant);
    const layer = attn.createMultiHeadAttention({ dModel: 3, numHeads: 3, dK: 3, dV: 3, bias: false });
    const h = [[1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18], [19, 20, 21, 22, 23, 24, 25, 26, 27]];
    const wQK = new Float32Array(3 * 9), wV = new Float32Array(3 * 9);
    for (let r = 0; r < 3; r++)
      for (let head = 0; head < 3; head++) {
        wQK[r * 9 + head * 3 + r] = 10;
        for (let c = 0; c < 3; c++) wV[r * 9 + head * 3 + c] = h[head][r * 3 + c];
      }
    layer.setWeights({ wQ: wQK, wK: wQK, wV, wO: new Float32Array(27) });
    const { trace } = layer.forward(Float32Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]), { trace: true });
    layer.dispose();
    expectClose(trace.concat, [1, 2, 3, 10, 11, 12, 19, 20, 21, 4, 5, 6, 13, 14, 15, 22, 23, 24, 7, 8, 9, 16, 17, 18, 25, 26, 27],
      { abs: 1e-5, rel: 0 }, 'h_concatenate');
    expect(trace.shapes.concat).toEqual([1, 3, 9]);
  });
});
