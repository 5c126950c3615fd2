// Rotary position embeddings as the library's core applies them (Hugging Face's rotate-half
// convention): within each head, dimension i and i + d/2 form a pair that is turned by the angle
// position × frequency_i. The step view uses it to turn one query and one key to other positions
// and show that their score depends only on how far apart they are. The browser test checks these
// rotations against the library's trace (Q and K before and after the rotation).

/** The d/2 frequencies θ^(−2i/d) over the rotated values (rotaryDim: Phi-4-mini's partial
 * rotation turns only the first ones), with rope_scaling (as the library reads config.json: type
 * '' | 'linear' | 'llama3' | 'longrope', whose short factors hold within the original context)
 * applied as transformers computes it. */
export function inverseFrequencies({ theta, headDim, rotaryDim, scaling }) {
  const d = rotaryDim || headDim;
  const base = Array.from({ length: d / 2 }, (_, i) => theta ** (-2 * i / d));
  const type = scaling?.type ?? '';
  if (type === 'linear') return base.map((f) => f / scaling.factor);
  if (type === 'longrope') return base.map((f, i) => f / scaling.shortFactor[i]);
  if (type !== 'llama3') return base;
  // Llama 3: long wavelengths slowed by `factor`, short ones kept, a blend between.
  const { factor, lowFreqFactor: low, highFreqFactor: high, originalMaxPositionEmbeddings: old } = scaling;
  const lowWavelen = old / low, highWavelen = old / high;
  return base.map((f) => {
    const wavelen = 2 * Math.PI / f;
    if (wavelen < highWavelen) return f;
    if (wavelen > lowWavelen) return f / factor;
    const smooth = (old / wavelen - low) / (high - low);
    return (1 - smooth) * f / factor + smooth * f;
  });
}

/** One head's row turned to position `pos`: x·cos + rotate_half(x)·sin on its first
 * 2 × freqs.length values (the rest pass unturned); cos and sin times `scale` (longrope's factor). */
export function rotate(row, pos, freqs, scale = 1) {
  const half = freqs.length, out = Float64Array.from(row);
  for (let i = 0; i < half; i++) {
    const a = row[i], b = row[i + half], c = scale * Math.cos(pos * freqs[i]), s = scale * Math.sin(pos * freqs[i]);
    out[i] = a * c - b * s;
    out[i + half] = b * c + a * s;
  }
  return out;
}

export const dot = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/** The scaled score of query row q (before rotation) at position qPos with key row k at kPos;
 * rotary.scoreScale (Gemma's query_pre_attn_scalar^-1/2) else 1/sqrt(d), rotary.ropeScale
 * (longrope's attention factor) else 1. */
export const scoreAt = (q, k, qPos, kPos, freqs, rotary = {}) => {
  const r = rotary.ropeScale ?? 1;
  return dot(rotate(q, qPos, freqs, r), rotate(k, kPos, freqs, r)) * (rotary.scoreScale ?? 1 / Math.sqrt(q.length));
};
