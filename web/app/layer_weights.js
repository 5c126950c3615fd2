// A layer's attention weights as the step view prints them (worker side), asked of the loaded model
// (model.headWeights: the values it computes with, decoded from whatever precision it holds, for
// any checkpoint format), and the check that the X a layer trace reports is the X the layer projected.

/**
 * Layer `layer`'s { wQ (D x H·dK), wK, wV (rows x H·dK: each query head's block is its K/V head's,
 * as the step view's K and V are), wO (H·dV x D), and bQ, bK, bV, bO when the layer has biases },
 * in the library's row-vector layout (y = x W + b), from every head's headWeights. `part`: BART's
 * attention ('self' | 'decoder' | 'cross'), else omitted.
 */
export function layerWeights(model, layer, heads, part) {
  const per = Array.from({ length: heads }, (_, h) => (part ? model.headWeights(layer, h, part) : model.headWeights(layer, h)));
  const { dModel: D, kdim, vdim, dK, dV } = per[0];
  // Head h's rows x cols block, side by side: rows x (H·cols).
  const columns = (key, rows, cols) => {
    const out = new Float32Array(rows * heads * cols);
    per.forEach((w, h) => {
      for (let r = 0; r < rows; r++) out.set(w[key].subarray(r * cols, (r + 1) * cols), r * heads * cols + h * cols);
    });
    return out;
  };
  const wO = new Float32Array(heads * dV * D);
  per.forEach((w, h) => wO.set(w.wO, h * dV * D)); // head h's dV rows of W^O
  const weights = { wQ: columns('wQ', D, dK), wK: columns('wK', kdim, dK), wV: columns('wV', vdim, dV), wO };
  for (const [key, cols] of [['bQ', dK], ['bK', dK], ['bV', dV]])
    if (per[0][key].length) weights[key] = columns(key, 1, cols);
  if (per[0].bO.length) weights.bO = per[0].bO;
  return weights;
}

/**
 * Largest |X W^Q_h + b^Q_h - Q_h| over all heads: checks that the X we show is the X the library
 * used (it should agree to float32 rounding). weights: { wQ (C x C, in x out), bQ }.
 */
export function checkAgainstQ(x, weights, q, n, C, H) {
  const dK = C / H;
  let worst = 0;
  for (let i = 0; i < n; i++)
    for (let col = 0; col < C; col++) {
      let s = weights.bQ ? weights.bQ[col] : 0;
      for (let r = 0; r < C; r++) s += x[i * C + r] * weights.wQ[r * C + col];
      const h = Math.floor(col / dK), d = col % dK;
      worst = Math.max(worst, Math.abs(s - q[(h * n + i) * dK + d]));
    }
  return worst;
}
