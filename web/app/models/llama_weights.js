// A Llama-style layer's attention weights as the step view prints them (worker side). The step view
// (views/steps_model.js) takes query head h's block of columns h·d … (h+1)·d from W^Q, W^K and W^V,
// in the library's row-vector layout (y = x W, W is in x out). q_proj, k_proj, v_proj and o_proj
// are nn.Linear (out x in), so they are turned. k_proj and v_proj hold only the K/V heads' columns;
// here each query head's block is its K/V head's (Hugging Face's repeat_kv), as the step view's K
// and V already are, so the slice printed beside "W^K of K/V head g" is that head's own columns.

/** nn.Linear's weight (out x in) as in x out. */
function turned({ shape: [rows, cols], data }) {
  const out = new Float32Array(rows * cols);
  for (let o = 0; o < rows; o++) for (let i = 0; i < cols; i++) out[i * rows + o] = data[o * cols + i];
  return out;
}

/** in x (KV·d) columns -> in x (H·d): query head h's block is K/V head kvHeadOf[h]'s. */
function perQueryHead(w, rows, kvHeadOf, d) {
  const from = w.length / rows, to = kvHeadOf.length * d;
  const out = new Float32Array(rows * to);
  for (let r = 0; r < rows; r++)
    kvHeadOf.forEach((g, h) => out.set(w.subarray(r * from + g * d, r * from + (g + 1) * d), r * to + h * d));
  return out;
}

/**
 * Layer `layer`'s { wQ, wK, wV (in x H·d), wO (H·d x out) } and, when the model has them
 * (attention_bias: Qwen2), bQ, bK, bV (per query head's columns too). tensors: CheckpointTensors.
 */
export function llamaAttentionWeights(tensors, layer, { kvHeadOf, headDim: d, dModel: D, bias }) {
  const get = (p, part = 'weight') => tensors.get(`layers.${layer}.self_attn.${p}_proj.${part}`);
  const weights = {
    wQ: turned(get('q')), wK: perQueryHead(turned(get('k')), D, kvHeadOf, d), wV: perQueryHead(turned(get('v')), D, kvHeadOf, d),
    wO: turned(get('o')),
  };
  if (bias) {
    weights.bQ = get('q', 'bias').data;
    weights.bK = perQueryHead(get('k', 'bias').data, 1, kvHeadOf, d);
    weights.bV = perQueryHead(get('v', 'bias').data, 1, kvHeadOf, d);
  }
  return weights;
}
