// Converts PyTorch's nn.MultiheadAttention state (weights stored out x in) into this library's
// row-vector layout (in x out). Pure data movement: no WASM needed.
import { AttentionError } from './errors.js';
import type { MultiHeadAttentionConfig, MultiHeadAttentionWeights } from './multi_head_attention.js';
import { floatArray, positiveInt } from './validate.js';
import type { FloatInput } from './validate.js';

/**
 * The tensors of `nn.MultiheadAttention.state_dict()`, flattened row-major. Either
 * `in_proj_weight` (3E x E, when kdim = vdim = E) or `q_proj_weight` (E x E), `k_proj_weight`
 * (E x kdim), `v_proj_weight` (E x vdim); plus `in_proj_bias` (3E), `out_proj.weight` (E x E) and
 * `out_proj.bias` (E) when bias=True. Keys may carry a prefix such as "layers.0.self_attn.".
 */
export type PyTorchMultiheadAttentionState = Record<string, FloatInput>;

/** Transposes rows x cols (row-major) starting at `offset` into a new cols x rows array. */
function transpose(src: FloatInput, offset: number, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) out[c * rows + r] = src[offset + r * cols + c];
  return out;
}

function slice(src: FloatInput, start: number, length: number): Float32Array {
  return Float32Array.from({ length }, (_, i) => src[start + i]);
}

/**
 * Builds {@link MultiHeadAttentionWeights} from a PyTorch state dict. PyTorch's heads split the
 * embedding evenly (dK = dV = E / numHeads), which is exactly the column-block layout here.
 */
export function weightsFromPyTorch(state: PyTorchMultiheadAttentionState, config: MultiHeadAttentionConfig, prefix = ''): MultiHeadAttentionWeights {
  const E = positiveInt('dModel', config.dModel);
  const heads = positiveInt('numHeads', config.numHeads);
  if (E % heads !== 0) throw new AttentionError(`weightsFromPyTorch: dModel (${E}) is not divisible by numHeads (${heads})`);
  const kdim = config.kdim ?? E, vdim = config.vdim ?? E;
  if ((config.dK ?? E / heads) !== E / heads || (config.dV ?? E / heads) !== E / heads)
    throw new AttentionError('weightsFromPyTorch: nn.MultiheadAttention always has dK = dV = dModel / numHeads');
  const get = (name: string, n: number, formula: string) => {
    const value = state[prefix + name];
    if (value === undefined) throw new AttentionError(`weightsFromPyTorch: missing "${prefix + name}"`);
    return floatArray(prefix + name, value, n, formula);
  };
  for (const unsupported of ['bias_k', 'bias_v'])
    if (state[prefix + unsupported] !== undefined)
      throw new AttentionError(`weightsFromPyTorch: "${prefix + unsupported}" (add_bias_kv=True) is not supported`);

  let wQ: Float32Array, wK: Float32Array, wV: Float32Array;
  if (state[prefix + 'in_proj_weight'] !== undefined) {
    if (kdim !== E || vdim !== E) throw new AttentionError('weightsFromPyTorch: in_proj_weight implies kdim = vdim = dModel');
    const w = get('in_proj_weight', 3 * E * E, `3*E*E = 3*${E}*${E}`);
    wQ = transpose(w, 0, E, E);
    wK = transpose(w, E * E, E, E);
    wV = transpose(w, 2 * E * E, E, E);
  } else {
    wQ = transpose(get('q_proj_weight', E * E, `E*E = ${E}*${E}`), 0, E, E);
    wK = transpose(get('k_proj_weight', E * kdim, `E*kdim = ${E}*${kdim}`), 0, E, kdim);
    wV = transpose(get('v_proj_weight', E * vdim, `E*vdim = ${E}*${vdim}`), 0, E, vdim);
  }
  const weights: MultiHeadAttentionWeights = {
    wQ, wK, wV, wO: transpose(get('out_proj.weight', E * E, `E*E = ${E}*${E}`), 0, E, E),
  };
  if (config.bias ?? true) {
    const b = get('in_proj_bias', 3 * E, `3*E = 3*${E}`);
    weights.bQ = slice(b, 0, E);
    weights.bK = slice(b, E, E);
    weights.bV = slice(b, 2 * E, E);
    weights.bO = slice(get('out_proj.bias', E, 'E'), 0, E);
  }
  return weights;
}
