// Converts PyTorch's nn.MultiheadAttention state (weights stored out x in) into this library's
// row-vector layout (in x out). Pure data movement: no WASM needed.
import { AttentionError } from '../errors.js';
import { CONFIG_RULES } from './multi_head_attention.js';
import type { MultiHeadAttentionConfig, MultiHeadAttentionWeights } from './multi_head_attention.js';
import { checkObject, checkOptions, checkString, floatArray, positiveInt, unknownName } from '../validate.js';
import type { FloatInput } from '../validate.js';

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

/** What nn.MultiheadAttention's state_dict() may hold (the projections it does not use are absent). */
const STATE_KEYS = ['in_proj_weight', 'q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias',
  'out_proj.weight', 'out_proj.bias', 'bias_k', 'bias_v'];

/** The state's own entries under `prefix`, read once (never a getter twice, nor an inherited key).
 * A key of this module that is not one of STATE_KEYS is a misspelling: refused with the nearest.
 * Deeper keys (another submodule's, "linear1.weight" beside a prefix of "") are not ours. */
function ownState(where: string, state: PyTorchMultiheadAttentionState, prefix: string): Map<string, unknown> {
  const own = new Map<string, unknown>();
  for (const key of Object.keys(state)) {
    if (!key.startsWith(prefix)) continue;
    const name = key.slice(prefix.length);
    if (!STATE_KEYS.includes(name)) {
      if (name.includes('.') && !name.startsWith('out_proj.')) continue;
      throw new AttentionError(`${where}: ${unknownName('key', name, STATE_KEYS)}${prefix ? ` under prefix ${JSON.stringify(prefix)}` : ''}`);
    }
    own.set(name, (state as Record<string, unknown>)[key]);
  }
  return own;
}

function slice(src: FloatInput, start: number, length: number): Float32Array {
  return Float32Array.from({ length }, (_, i) => src[start + i]);
}

/**
 * Builds {@link MultiHeadAttentionWeights} from a PyTorch state dict. PyTorch's heads split the
 * embedding evenly (dK = dV = E / numHeads), which is exactly the column-block layout here.
 */
export function weightsFromPyTorch(stateDict: PyTorchMultiheadAttentionState, layerConfig: MultiHeadAttentionConfig, prefix = ''): MultiHeadAttentionWeights {
  const where = 'weightsFromPyTorch';
  checkObject(where, 'state', stateDict, '(a state dict: tensor name -> Float32Array)');
  const config = checkOptions(where, checkObject(where, 'config', layerConfig, 'like { dModel: 512, numHeads: 8 }'), CONFIG_RULES, 'config key');
  const state = ownState(where, stateDict, checkString(where, 'prefix', prefix));
  const E = positiveInt(`${where}: dModel`, config.dModel);
  const heads = positiveInt(`${where}: numHeads`, config.numHeads);
  if (E % heads !== 0) throw new AttentionError(`weightsFromPyTorch: dModel (${E}) is not divisible by numHeads (${heads})`);
  const kdim = config.kdim ?? E, vdim = config.vdim ?? E;
  if ((config.dK ?? E / heads) !== E / heads || (config.dV ?? E / heads) !== E / heads)
    throw new AttentionError('weightsFromPyTorch: nn.MultiheadAttention always has dK = dV = dModel / numHeads');
  const get = (name: string, n: number, formula: string) => {
    const value = state.get(name);
    if (value === undefined) throw new AttentionError(`weightsFromPyTorch: missing "${prefix + name}"`);
    return floatArray(`${where}: ${prefix + name}`, value, n, formula);
  };
  for (const unsupported of ['bias_k', 'bias_v'])
    if (state.get(unsupported) !== undefined)
      throw new AttentionError(`weightsFromPyTorch: "${prefix + unsupported}" (add_bias_kv=True) is not supported`);

  let wQ: Float32Array, wK: Float32Array, wV: Float32Array;
  if (state.get('in_proj_weight') !== undefined) {
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
