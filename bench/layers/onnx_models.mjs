// The two ONNX graphs onnxruntime-web runs for a workload, with the workload's weights baked
// in as initializers. Browser-safe.
//  - fused: com.microsoft.Attention (packed QKV projection + attention) then MatMul+Add for W^O,
//    which is how ORT's transformer optimizer leaves a BERT/GPT-2 layer.
//  - plain: the textbook graph a framework exporter emits (separate projections, Reshape,
//    Transpose, MatMul, Mul, Softmax, ...). ORT may still fuse parts of it at load time:
//    that is what a user would get, so the bench keeps the default optimization level.
import { encodeModel } from '../common/onnx_proto.mjs';

const OPSET = 17;

function i64(values) { return BigInt64Array.from(values.map(BigInt)); }

/** W_qkv = [W^Q | W^K | W^V] (D x 3D, row-major) and b_qkv = [b^Q, b^K, b^V]. */
function packQkv(D, d) {
  const w = new Float32Array(D * 3 * D);
  for (let r = 0; r < D; r++) {
    w.set(d.wQ.subarray(r * D, (r + 1) * D), r * 3 * D);
    w.set(d.wK.subarray(r * D, (r + 1) * D), r * 3 * D + D);
    w.set(d.wV.subarray(r * D, (r + 1) * D), r * 3 * D + 2 * D);
  }
  const b = new Float32Array(3 * D);
  b.set(d.bQ, 0); b.set(d.bK, D); b.set(d.bV, 2 * D);
  return { w, b };
}

/**
 * Starts onnxruntime-web's wasm (and its thread pool) with a one-node model, so that a later
 * session's load time is the model's alone. Call after setting ort.env.wasm.
 */
export async function startOrtWasm(ort) {
  const identity = encodeModel({
    name: 'init', nodes: [{ op: 'Identity', inputs: ['a'], outputs: ['b'] }],
    inputs: [{ name: 'a', dims: [1] }], outputs: [{ name: 'b', dims: [1] }],
  }, [{ domain: '', version: 17 }]);
  const probe = await ort.InferenceSession.create(identity, { executionProviders: ['wasm'] });
  await probe.release();
}

export function fusedAttentionModel(wl, data) {
  const { batch: B, seqLen: S, dModel: D, numHeads: H } = wl;
  const qkv = packQkv(D, data);
  return encodeModel({
    name: `mha_fused_${wl.name}`,
    inputs: [{ name: 'x', dims: [B, S, D] }],
    outputs: [{ name: 'y', dims: [B, S, D] }],
    initializers: [
      { name: 'w_qkv', dims: [D, 3 * D], data: qkv.w },
      { name: 'b_qkv', dims: [3 * D], data: qkv.b },
      { name: 'w_o', dims: [D, D], data: data.wO },
      { name: 'b_o', dims: [D], data: data.bO },
    ],
    nodes: [
      // Inputs: input, weights (D x 3D), bias (3D). unidirectional=1 is its causal mask.
      { op: 'Attention', domain: 'com.microsoft', inputs: ['x', 'w_qkv', 'b_qkv'], outputs: ['z'],
        attrs: { num_heads: H, unidirectional: wl.causal ? 1 : 0 } },
      { op: 'MatMul', inputs: ['z', 'w_o'], outputs: ['zo'] },
      { op: 'Add', inputs: ['zo', 'b_o'], outputs: ['y'] },
    ],
  }, [{ domain: '', version: OPSET }, { domain: 'com.microsoft', version: 1 }]);
}

export function plainGraphModel(wl, data) {
  const { batch: B, seqLen: S, dModel: D, numHeads: H } = wl;
  const dk = D / H;
  const nodes = [];
  const init = [
    { name: 'shape_heads', dims: [4], data: i64([B, S, H, dk]) },
    { name: 'shape_model', dims: [3], data: i64([B, S, D]) },
    { name: 'scale', dims: [], data: Float32Array.of(1 / Math.sqrt(dk)) },
    { name: 'w_o', dims: [D, D], data: data.wO },
    { name: 'b_o', dims: [D], data: data.bO },
  ];
  // Q and V go to B x H x S x dk; K goes straight to B x H x dk x S so QKᵀ is one MatMul.
  const perms = { q: [0, 2, 1, 3], k: [0, 2, 3, 1], v: [0, 2, 1, 3] };
  for (const p of ['q', 'k', 'v']) {
    const P = p.toUpperCase();
    init.push({ name: `w_${p}`, dims: [D, D], data: data[`w${P}`] }, { name: `b_${p}`, dims: [D], data: data[`b${P}`] });
    nodes.push(
      { op: 'MatMul', inputs: ['x', `w_${p}`], outputs: [`${p}_mm`] },
      { op: 'Add', inputs: [`${p}_mm`, `b_${p}`], outputs: [`${p}_lin`] },
      { op: 'Reshape', inputs: [`${p}_lin`, 'shape_heads'], outputs: [`${p}_4d`] },
      { op: 'Transpose', inputs: [`${p}_4d`], outputs: [`${p}_h`], attrs: { perm: perms[p] } },
    );
  }
  nodes.push(
    { op: 'MatMul', inputs: ['q_h', 'k_h'], outputs: ['scores'] },
    { op: 'Mul', inputs: ['scores', 'scale'], outputs: ['scaled'] },
  );
  let logits = 'scaled';
  if (wl.causal) {
    // Additive S x S mask, broadcast over batch and heads. A large finite negative (not -inf)
    // is what exporters emit; exp() of it underflows to exactly 0.
    const mask = new Float32Array(S * S);
    for (let i = 0; i < S; i++) for (let j = i + 1; j < S; j++) mask[i * S + j] = -1e9;
    init.push({ name: 'causal_mask', dims: [S, S], data: mask });
    nodes.push({ op: 'Add', inputs: ['scaled', 'causal_mask'], outputs: ['masked'] });
    logits = 'masked';
  }
  nodes.push(
    { op: 'Softmax', inputs: [logits], outputs: ['probs'], attrs: { axis: -1 } },
    { op: 'MatMul', inputs: ['probs', 'v_h'], outputs: ['z_h'] },
    { op: 'Transpose', inputs: ['z_h'], outputs: ['z_t'], attrs: { perm: [0, 2, 1, 3] } },
    { op: 'Reshape', inputs: ['z_t', 'shape_model'], outputs: ['z'] },
    { op: 'MatMul', inputs: ['z', 'w_o'], outputs: ['zo'] },
    { op: 'Add', inputs: ['zo', 'b_o'], outputs: ['y'] },
  );
  return encodeModel({
    name: `mha_plain_${wl.name}`,
    inputs: [{ name: 'x', dims: [B, S, D] }],
    outputs: [{ name: 'y', dims: [B, S, D] }],
    initializers: init,
    nodes,
  }, [{ domain: '', version: OPSET }]);
}

