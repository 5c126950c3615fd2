// loadModel's dtype: how a model holds its weight matrices in the core (src/tensors/tensor_table.h's
// WeightStorage). 'auto' keeps the checkpoint's own precision (F16 and BF16 stay 16-bit, F32 stays
// F32); 'f32' and 'f16' convert to that; 'q8' and 'q4' quantize each matrix as it loads
// (llama.cpp's Q8_0 / Q4_0: blocks of 32 inputs with an f16 scale, 8.5 / 4.5 bits a weight).
// Position and token-type tables stay as stored under q8 and q4; biases and LayerNorms stay float32.
import { AttentionError } from '../errors.js';
import { is, nearestName, show } from '../validate.js';
import type { Rule, Rules } from '../validate.js';
import type { WeightStorageName } from '../runtime/wasm_module.js';

/** The core's WeightStorage names (the module's enum of them: runtime/wasm_module.ts). */
export type WeightDtype = WeightStorageName;

/** The names loadModel accepts (checked before the module is at hand; the same as its enum's). */
export const WEIGHT_DTYPES: readonly WeightDtype[] = ['auto', 'f32', 'f16', 'q8', 'q4'];

/** The options a model's loading reads (loadModel takes them beside the Hub's). */
export interface ModelLoadOptions {
  /** How the weights are held: 'auto' (default), 'f32', 'f16', 'q8' or 'q4'. */
  dtype?: WeightDtype;
}

// The names other libraries give these types (transformers.js's dtype, PyTorch's), which a caller
// may bring along: refused, with ours suggested.
const OTHER_NAMES: ReadonlyMap<string, WeightDtype> = new Map(Object.entries({
  fp32: 'f32', float32: 'f32', float: 'f32', fp16: 'f16', float16: 'f16', half: 'f16',
  int8: 'q8', uint8: 'q8', q8_0: 'q8', int4: 'q4', uint4: 'q4', q4_0: 'q4', q4f16: 'q4', bnb4: 'q4',
} as const));

/** One of WEIGHT_DTYPES; anything else is refused naming the nearest (or the equivalent) dtype. */
const dtypeRule: Rule = (v, name) => {
  if (typeof v !== 'string' || WEIGHT_DTYPES.includes(v as WeightDtype)) return is.oneOf(...WEIGHT_DTYPES)(v, name);
  const near = OTHER_NAMES.get(v.toLowerCase()) ?? nearestName(v, WEIGHT_DTYPES);
  throw new AttentionError(`${name} must be one of ${WEIGHT_DTYPES.map(show).join(', ')}, got ${show(v)}` +
    (near !== undefined ? ` (did you mean '${near}'?)` : ''));
};

export const MODEL_LOAD_OPTION_RULES: Rules<ModelLoadOptions> = { dtype: dtypeRule };
