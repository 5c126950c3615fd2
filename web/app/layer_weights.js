// A checkpoint's tensors read straight from model.safetensors (worker side), and the check that the
// X a layer trace reports is the X the layer projected. Each model's file (models/*.js) turns its
// own tensor names and layout into the library's (row vectors: y = x W + b, W is in x out).

/** The tensors of one checkpoint as float32, decoded on first use; `prefixes` are tried in turn. */
export class CheckpointTensors {
  constructor(file, prefixes = ['']) {
    this.file = file;
    this.prefixes = prefixes;
    this.cache = new Map();
  }

  get(name) {
    let t = this.cache.get(name);
    if (!t) {
      const entry = this.prefixes.map((p) => this.file.tensors.get(p + name)).find(Boolean);
      if (!entry) throw new Error(`model.safetensors has no tensor ${name}`);
      t = { shape: entry.shape, data: entry.toFloat32() };
      this.cache.set(name, t);
    }
    return t;
  }
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
      let s = weights.bQ[col];
      for (let r = 0; r < C; r++) s += x[i * C + r] * weights.wQ[r * C + col];
      const h = Math.floor(col / dK), d = col % dK;
      worst = Math.max(worst, Math.abs(s - q[(h * n + i) * dK + d]));
    }
  return worst;
}

/** Copies of a layer's weight arrays, to hand to the page: a worker's answer transfers its typed
 * arrays' buffers, which would detach the checkpoint's cached tensors. */
export function weightCopies(weights) {
  return Object.fromEntries(Object.entries(weights).map(([k, v]) => [k, v.slice()]));
}
