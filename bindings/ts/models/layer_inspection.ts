// What a viewer asks a loaded model about one layer, read from the core rather than from the
// checkpoint: a head's weights as the layer holds them (decoded from f32, f16, bf16, q8 or q4, and
// so the same for any file format), and the mask the layer's last call applied. Every model class
// offers them through these two functions.
import { AttentionError } from '../errors.js';
import type { AttentionPartName, ModelHandle, WasmModule } from '../runtime/wasm_module.js';
import { enumValue } from '../runtime/wasm_module.js';

/**
 * One head's weights in the seeds' row-vector layout (y = x W + b), row-major: `wQ` is
 * dModel x dK (row i: input i), `wK` kdim x dK and `wV` vdim x dV (its K/V head's, under
 * grouped-query attention: `kvHead`), `wO` the head's dV rows of W^O (dV x dModel). Biases are
 * empty arrays when the layer has none; `bO` is W^O's whole bias (dModel).
 */
export interface HeadWeights {
  layer: number;
  head: number;
  kvHead: number;
  dModel: number;
  kdim: number;
  vdim: number;
  dK: number;
  dV: number;
  wQ: Float32Array;
  wK: Float32Array;
  wV: Float32Array;
  wO: Float32Array;
  bQ: Float32Array;
  bK: Float32Array;
  bV: Float32Array;
  bO: Float32Array;
}

/**
 * The boolean mask a layer's last call with attention weights (or a trace) applied: `hidden` is
 * batch x seqQ x seqK, 1 where key j was hidden from query i (causal, sliding window, padding).
 */
export interface AppliedMask {
  batch: number;
  seqQ: number;
  seqK: number;
  hidden: Uint8Array;
}

function checkIndex(value: unknown, what: string, call: string): number {
  if (!Number.isInteger(value) || (value as number) < 0)
    throw new AttentionError(`${call}: ${what} must be a non-negative integer, got ${String(value)}`);
  return value as number;
}

/** Head `head` of layer `layer` (of attention `part`), copied out of the heap. */
export function readHeadWeights(mod: WasmModule, handle: ModelHandle<unknown>, part: AttentionPartName, layer: number,
  head: number): HeadWeights {
  const call = 'headWeights';
  const v = handle.headWeights(enumValue(mod.AttentionPart, part, `${call}: part`), checkIndex(layer, 'layer', call),
    checkIndex(head, 'head', call));
  if (v.error) throw new AttentionError(`${call}: ${v.error}`);
  return {
    layer, head, kvHead: v.kvHead, dModel: v.dModel, kdim: v.kdim, vdim: v.vdim, dK: v.dK, dV: v.dV,
    wQ: v.wQ.slice(), wK: v.wK.slice(), wV: v.wV.slice(), wO: v.wO.slice(),
    bQ: v.bQ.slice(), bK: v.bK.slice(), bV: v.bV.slice(), bO: v.bO.slice(),
  };
}

/** The mask of layer `layer`'s (of attention `part`) last call that returned weights, or null. */
export function readAppliedMask(mod: WasmModule, handle: ModelHandle<unknown>, part: AttentionPartName,
  layer: number): AppliedMask | null {
  const call = 'appliedMask';
  const v = handle.appliedMask(enumValue(mod.AttentionPart, part, `${call}: part`), checkIndex(layer, 'layer', call));
  return v && { batch: v.batch, seqQ: v.seqQ, seqK: v.seqK, hidden: v.hidden.slice() };
}
