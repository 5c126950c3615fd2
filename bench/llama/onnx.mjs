// The random Llama of weights.mjs as an ONNX graph for onnxruntime-web (issue 23's peer), in
// float32, with past key/values the way transformers.js runs a decoder: inputs input_ids [1, S],
// position_ids [1, S], an additive mask [1, 1, 1, S, T] (T = past + S) and past_key_l / past_value_l
// [1, KV, past, d]; outputs the last position's logits [1, 1, V] and present_key_l / present_value_l.
// Plain opset-17 operators (a framework exporter's graph; ORT fuses what it can at load): RMSNorm
// as Mul/ReduceMean/Add/Sqrt/Div/Mul, rotate-half rotary from cos/sin tables gathered by position,
// grouped-query attention by broadcasting each K/V head over its query group ([1, KV, G, S, d] x
// [1, KV, 1, d, T]), SwiGLU.
// With { weights: 'int8' } the same graph as transformers.js's default 8-bit files (q8) are, i.e.
// onnxruntime's dynamic quantization as bench/generate/quantize8.py writes it for GPT-2: every
// product with a weight (q/k/v/o, gate/up/down, the LM head) is DynamicQuantizeLinear(x) ->
// MatMulInteger(x_q uint8, W_q int8, x_zero, 0) -> Cast -> Mul by x_scale * W_scale, W_q one
// symmetric scale per tensor (max |W| / 127); the embedding Gather reads an int8 table and
// DequantizeLinear's the rows. Norms, rotary, attention and the past key/values stay float32.
// Browser-safe.
import { DataType, encodeModel } from '../common/onnx_proto.mjs';
import { llamaShapes, llamaTensor } from './weights.mjs';

const i64 = (values) => BigInt64Array.from(values.map(BigInt));

/** W^T (in x out) of an nn.Linear weight (out x in): MatMul(x, W^T) = x W^T. */
function transpose(w, rows, cols) {
  const t = new Float32Array(w.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = w[r * cols + c];
  return t;
}

/** Round half to even, as numpy's rint (quantize8.py) and ONNX's quantizers round. */
function roundEven(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** onnxruntime's symmetric int8 quantization of a whole tensor: w ~ q * scale, q in [-127, 127]. */
export function quantizeInt8(w) {
  let max = 0;
  for (const v of w) max = Math.max(max, Math.abs(v));
  const scale = Math.fround(max > 0 ? max / 127 : 1);
  const q = new Int8Array(w.length);
  // The quotient in float32, as numpy's float32 w / scale: these bfloat16 weights hit x.5 exactly
  // often, where a float64 quotient would land a hair off and round the other way.
  for (let i = 0; i < w.length; i++) q[i] = Math.max(-127, Math.min(127, roundEven(Math.fround(w[i] / scale))));
  return { q, scale };
}

/** Hugging Face's rotary tables for positions [0, P): cos / sin of p * theta^(-2i/d), each half repeated. */
function rotaryTables(P, d, theta) {
  const cos = new Float32Array(P * d), sin = new Float32Array(P * d);
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < d / 2; i++) {
      const a = p * theta ** (-(2 * i) / d);
      cos[p * d + i] = cos[p * d + i + d / 2] = Math.cos(a);
      sin[p * d + i] = sin[p * d + i + d / 2] = Math.sin(a);
    }
  }
  return { cos, sin };
}

/**
 * The ONNX model (bytes) of config `c`; rotary tables cover `maxPositions` positions. `weights`:
 * 'float32', or 'int8' for the dynamically quantized graph (see the top of this file).
 */
export function llamaOnnxModel(c, { maxPositions = 256, weights = 'float32', values = (name, shape) => llamaTensor(c, name, shape) } = {}) {
  if (weights !== 'float32' && weights !== 'int8') throw new Error(`llamaOnnxModel: weights ${weights} (known: float32, int8)`);
  const D = c.hidden_size, H = c.num_attention_heads, KV = c.num_key_value_heads, G = H / KV, V = c.vocab_size;
  const d = c.head_dim ?? D / H;
  const shapes = new Map(llamaShapes(c));
  const nodes = [], init = [];
  const node = (op, inputs, outputs, attrs) => { nodes.push({ op, inputs, outputs, attrs }); return outputs[0]; };
  const constant = (name, dims, data) => { init.push({ name, dims, data }); return name; };
  const int8 = weights === 'int8';
  if (int8) constant('int8_zero', [], Int8Array.of(0));
  // `out` = x W^T for the weight `name` (nn.Linear's out x in): a MatMul on W^T, or at int8 the
  // five nodes onnxruntime's dynamic quantizer writes (its loader fuses them into one kernel).
  const product = (x, name, out) => {
    const [o, i] = shapes.get(name);
    const wt = transpose(values(name, [o, i]), o, i);
    if (!int8) return node('MatMul', [x, constant(`${name}.T`, [i, o], wt)], [out]);
    const { q, scale } = quantizeInt8(wt);
    const wq = constant(`${name}.T_quantized`, [i, o], q), ws = constant(`${name}.T_scale`, [], Float32Array.of(scale));
    node('DynamicQuantizeLinear', [x], [`${out}.xq`, `${out}.xs`, `${out}.xz`]);
    node('MatMulInteger', [`${out}.xq`, wq, `${out}.xz`, 'int8_zero'], [`${out}.i32`]);
    node('Cast', [`${out}.i32`], [`${out}.f`], { to: DataType.FLOAT });
    node('Mul', [`${out}.xs`, ws], [`${out}.scales`]);
    return node('Mul', [`${out}.f`, `${out}.scales`], [out]);
  };
  // The token embeddings' rows: gathered from the float table, or from the int8 one and dequantized.
  const embedRows = (ids, out) => {
    const table = values('model.embed_tokens.weight', [V, D]);
    if (!int8) return node('Gather', [constant('embed', [V, D], table), ids], [out], { axis: 0 });
    const { q, scale } = quantizeInt8(table);
    node('Gather', [constant('embed_quantized', [V, D], q), ids], [`${out}.q`], { axis: 0 });
    return node('DequantizeLinear', [`${out}.q`, constant('embed_scale', [], Float32Array.of(scale)), 'int8_zero'], [out]);
  };

  const { cos, sin } = rotaryTables(maxPositions, d, c.rope_theta);
  constant('cos_table', [maxPositions, d], cos);
  constant('sin_table', [maxPositions, d], sin);
  constant('eps', [], Float32Array.of(c.rms_norm_eps));
  constant('heads_q', [4], i64([1, -1, H, d]));
  constant('heads_kv', [4], i64([1, -1, KV, d]));
  constant('groups_q', [5], i64([1, KV, G, -1, d]));
  constant('heads_out', [4], i64([1, H, -1, d]));
  constant('model_dims', [3], i64([1, -1, H * d]));
  constant('scale', [], Float32Array.of(1 / Math.sqrt(d)));
  constant('half_lo', [1], i64([0]));
  constant('half_mid', [1], i64([d / 2]));
  constant('half_hi', [1], i64([d]));
  constant('last_axis', [1], i64([-1]));
  constant('seq_axis', [1], i64([1]));
  constant('big', [1], i64([2 ** 31 - 1]));

  const rmsNorm = (x, weight, tag) => {
    const w = constant(weight, [D], values(weight, [D]));
    node('Mul', [x, x], [`${tag}.sq`]);
    node('ReduceMean', [`${tag}.sq`], [`${tag}.ms`], { axes: [-1], keepdims: 1 });
    node('Add', [`${tag}.ms`, 'eps'], [`${tag}.mse`]);
    node('Sqrt', [`${tag}.mse`], [`${tag}.rms`]);
    node('Div', [x, `${tag}.rms`], [`${tag}.n`]);
    return node('Mul', [`${tag}.n`, w], [`${tag}.out`]);
  };
  // x [1, heads, S, d] rotated at its positions: x cos + rotate_half(x) sin, rotate_half = [-x2, x1].
  const rotate = (x, tag) => {
    node('Slice', [x, 'half_lo', 'half_mid', 'last_axis'], [`${tag}.x1`]);
    node('Slice', [x, 'half_mid', 'half_hi', 'last_axis'], [`${tag}.x2`]);
    node('Neg', [`${tag}.x2`], [`${tag}.nx2`]);
    node('Concat', [`${tag}.nx2`, `${tag}.x1`], [`${tag}.rh`], { axis: -1 });
    node('Mul', [x, 'cos'], [`${tag}.xc`]);
    node('Mul', [`${tag}.rh`, 'sin'], [`${tag}.rs`]);
    return node('Add', [`${tag}.xc`, `${tag}.rs`], [`${tag}.rot`]);
  };
  // [1, S, heads * d] -> [1, heads, S, d]
  const splitHeads = (x, shape, tag) => node('Transpose', [node('Reshape', [x, shape], [`${tag}.r`])], [`${tag}.t`], { perm: [0, 2, 1, 3] });

  embedRows('input_ids', 'h0');
  // cos / sin rows of the positions, [1, S, d] -> [1, 1, S, d] to broadcast over heads
  node('Unsqueeze', [node('Gather', ['cos_table', 'position_ids'], ['cos3'], { axis: 0 }), 'seq_axis'], ['cos']);
  node('Unsqueeze', [node('Gather', ['sin_table', 'position_ids'], ['sin3'], { axis: 0 }), 'seq_axis'], ['sin']);
  let x = 'h0';
  const outputs = [{ name: 'logits', dims: [1, 1, V] }];
  const inputs = [
    { name: 'input_ids', dims: [1, 'S'], type: 7 }, { name: 'position_ids', dims: [1, 'S'], type: 7 },
    { name: 'mask', dims: [1, 1, 1, 'S', 'T'] },
  ];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`, t = `l${l}`;
    inputs.push({ name: `past_key_${l}`, dims: [1, KV, 'P', d] }, { name: `past_value_${l}`, dims: [1, KV, 'P', d] });
    outputs.push({ name: `present_key_${l}`, dims: [1, KV, 'T', d] }, { name: `present_value_${l}`, dims: [1, KV, 'T', d] });
    const h = rmsNorm(x, `${p}input_layernorm.weight`, `${t}.n1`);
    const q = rotate(splitHeads(product(h, `${p}self_attn.q_proj.weight`, `${t}.q`), 'heads_q', `${t}.q`), `${t}.q`);
    const k = rotate(splitHeads(product(h, `${p}self_attn.k_proj.weight`, `${t}.k`), 'heads_kv', `${t}.k`), `${t}.k`);
    const v = splitHeads(product(h, `${p}self_attn.v_proj.weight`, `${t}.v`), 'heads_kv', `${t}.v`);
    node('Concat', [`past_key_${l}`, k], [`present_key_${l}`], { axis: 2 });
    node('Concat', [`past_value_${l}`, v], [`present_value_${l}`], { axis: 2 });
    // Query heads grouped under their K/V head: [1, KV, G, S, d]; K/V [1, KV, 1, T, d] broadcast.
    node('Reshape', [q, 'groups_q'], [`${t}.qg`]);
    node('Unsqueeze', [`present_key_${l}`, constant(`${t}.ax2`, [1], i64([2]))], [`${t}.kg`]);
    node('Unsqueeze', [`present_value_${l}`, `${t}.ax2`], [`${t}.vg`]);
    node('Transpose', [`${t}.kg`], [`${t}.kgt`], { perm: [0, 1, 2, 4, 3] });
    node('MatMul', [`${t}.qg`, `${t}.kgt`], [`${t}.s`]);
    node('Mul', [`${t}.s`, 'scale'], [`${t}.ss`]);
    node('Add', [`${t}.ss`, 'mask'], [`${t}.sm`]);
    node('Softmax', [`${t}.sm`], [`${t}.p`], { axis: -1 });
    node('MatMul', [`${t}.p`, `${t}.vg`], [`${t}.o5`]);
    node('Reshape', [`${t}.o5`, 'heads_out'], [`${t}.o4`]);
    node('Transpose', [`${t}.o4`], [`${t}.ot`], { perm: [0, 2, 1, 3] });
    node('Reshape', [`${t}.ot`, 'model_dims'], [`${t}.o`]);
    product(`${t}.o`, `${p}self_attn.o_proj.weight`, `${t}.attn`);
    const x1 = node('Add', [x, `${t}.attn`], [`${t}.x1`]);
    const h2 = rmsNorm(x1, `${p}post_attention_layernorm.weight`, `${t}.n2`);
    product(h2, `${p}mlp.gate_proj.weight`, `${t}.g`);
    product(h2, `${p}mlp.up_proj.weight`, `${t}.u`);
    node('Sigmoid', [`${t}.g`], [`${t}.sg`]);
    node('Mul', [`${t}.g`, `${t}.sg`], [`${t}.silu`]);
    node('Mul', [`${t}.silu`, `${t}.u`], [`${t}.a`]);
    product(`${t}.a`, `${p}mlp.down_proj.weight`, `${t}.mlp`);
    x = node('Add', [x1, `${t}.mlp`], [`${t}.out`]);
  }
  // The last position only: the head is most of a step's work on prefill otherwise.
  node('Slice', [x, 'last_axis', 'big', 'seq_axis'], ['x_last']);
  const xn = rmsNorm('x_last', 'model.norm.weight', 'final');
  const head = c.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  product(xn, head, 'logits');
  return encodeModel({ name: 'llama', nodes, initializers: init, inputs, outputs }, [{ domain: '', version: 17 }]);
}

/**
 * Greedy decoding with onnxruntime-web's session of llamaOnnxModel: { tokens, prefillMs,
 * decodeTokPerS, promptLogits } (the prompt's last-position logits, for checks).
 */
export async function ortGenerate(ort, session, c, promptIds, newTokens) {
  const KV = c.num_key_value_heads, d = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const feeds = {};
  for (let l = 0; l < c.num_hidden_layers; l++) {
    feeds[`past_key_${l}`] = new ort.Tensor('float32', new Float32Array(0), [1, KV, 0, d]);
    feeds[`past_value_${l}`] = new ort.Tensor('float32', new Float32Array(0), [1, KV, 0, d]);
  }
  const tokens = [];
  let ids = promptIds, past = 0, firstAt = 0, promptLogits = null;
  const t0 = performance.now();
  while (tokens.length < newTokens) {
    const S = ids.length, T = past + S;
    const mask = new Float32Array(S * T);
    for (let i = 0; i < S; i++) for (let j = past + i + 1; j < T; j++) mask[i * T + j] = -Infinity;
    feeds.input_ids = new ort.Tensor('int64', i64(ids), [1, S]);
    feeds.position_ids = new ort.Tensor('int64', i64(ids.map((_, i) => past + i)), [1, S]);
    feeds.mask = new ort.Tensor('float32', mask, [1, 1, 1, S, T]);
    const out = await session.run(feeds);
    const logits = out.logits.data;
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    tokens.push(best);
    if (!firstAt) { firstAt = performance.now(); promptLogits = logits; }
    for (let l = 0; l < c.num_hidden_layers; l++) {
      feeds[`past_key_${l}`] = out[`present_key_${l}`];
      feeds[`past_value_${l}`] = out[`present_value_${l}`];
    }
    past = T;
    ids = [best];
  }
  const end = performance.now();
  return { tokens, prefillMs: firstAt - t0, decodeTokPerS: (newTokens - 1) / ((end - firstAt) / 1000), promptLogits };
}
