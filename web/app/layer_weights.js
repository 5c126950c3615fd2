// A GPT-2 attention layer's weights in the library's layout, read straight from model.safetensors
// (worker side): for cross-attention with a layer's own weights, and to check that the X the
// trace reports is the X the layer projected.

/** The tensors of one GPT-2 checkpoint as float32, decoded on first use. */
export class CheckpointTensors {
  constructor(file) {
    this.file = file;
    this.cache = new Map();
  }

  get(name) {
    let t = this.cache.get(name);
    if (!t) {
      const entry = this.file.tensors.get(name) ?? this.file.tensors.get('transformer.' + name);
      if (!entry) throw new Error(`model.safetensors has no tensor ${name}`);
      t = { shape: entry.shape, data: entry.toFloat32() };
      this.cache.set(name, t);
    }
    return t;
  }
}

/**
 * A layer's attention weights in the library's row-vector layout (y = x W + b). GPT-2's c_attn is
 * Conv1D, stored in x out = C x 3C with [Q | K | V] side by side and heads in column blocks:
 * exactly wQ/wK/wV's layout once the three blocks are split apart.
 */
export function layerAttentionWeights(tensors, config, layer) {
  const C = config.n_embd;
  const W = tensors.get(`h.${layer}.attn.c_attn.weight`).data, b = tensors.get(`h.${layer}.attn.c_attn.bias`).data;
  const block = (k) => {
    const out = new Float32Array(C * C);
    for (let r = 0; r < C; r++) out.set(W.subarray(r * 3 * C + k * C, r * 3 * C + (k + 1) * C), r * C);
    return out;
  };
  return {
    wQ: block(0), wK: block(1), wV: block(2),
    bQ: b.slice(0, C), bK: b.slice(C, 2 * C), bV: b.slice(2 * C, 3 * C),
    wO: tensors.get(`h.${layer}.attn.c_proj.weight`).data, bO: tensors.get(`h.${layer}.attn.c_proj.bias`).data,
  };
}

/**
 * Largest |X W^Q_h + b^Q_h - Q_h| over all heads: checks that the X we show is the X the library
 * used (it should agree to float32 rounding).
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
