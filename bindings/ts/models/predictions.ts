// Turning a row of logits into what users read: probabilities and the k most likely tokens. The
// exponentials over the whole vocabulary run in the core (a page's first call of a JavaScript loop
// over tens of thousands of logits runs unoptimized, tens of ms).
import { throwIfError } from '../errors.js';
import type { Staging } from '../runtime/heap.js';
import type { WasmModule } from '../runtime/wasm_module.js';

export interface Prediction { id: number; text: string; probability: number }

/**
 * Each listed row's log-sum-exp (the softmax normalizer in log space: a token's probability is
 * exp(logit - it)), computed in the core: the rows of `logits` (V wide) go into the heap once.
 */
export function logSumExpRows(mod: WasmModule, staging: Staging, logits: Float32Array, V: number, rows: readonly number[]): Float64Array {
  const rl = staging.plan(rows.length * V * 4), ro = staging.plan(rows.length * 8);
  try {
    staging.commit();
    const view = staging.viewF32(rl, rows.length * V);
    rows.forEach((r, i) => view.set(logits.subarray(r * V, (r + 1) * V), i * V));
    throwIfError(mod.logSumExpRows(rl.ptr, rows.length, V, ro.ptr), 'logSumExpRows');
    return mod.HEAPF64.slice(ro.ptr >>> 3, (ro.ptr >>> 3) + rows.length);
  } finally {
    staging.release();
  }
}

/** The k most probable entries of a logits row, most probable first. lse: the row's
 * log-sum-exp (logSumExpRows). The ranking is the logits' own: no exponential but the k shown. */
export function topK(row: ArrayLike<number>, lse: number, k: number, text: (id: number) => string, allowed?: (id: number) => boolean): Prediction[] {
  const top = Number.isInteger(k) && k >= 0 && k <= 64 ? selectTop(row, k, allowed) : sortAll(row, allowed).slice(0, k);
  return top.map((id) => ({ id, text: text(id), probability: Math.exp(row[id] - lse) }));
}

/** Every allowed id, most probable first (ties: lower id first; the sort is stable). */
function sortAll(logits: ArrayLike<number>, allowed?: (id: number) => boolean): number[] {
  const ids: number[] = [];
  for (let i = 0; i < logits.length; i++) if (!allowed || allowed(i)) ids.push(i);
  return ids.sort((a, b) => logits[b] - logits[a]);
}

/** The same first k ids as sortAll, for a small k, in one pass over the row (a vocabulary of tens
 * of thousands of tokens need not be sorted to show a handful; beam search takes 2 x beams). */
export function selectTop(logits: ArrayLike<number>, k: number, allowed?: (id: number) => boolean): number[] {
  const top: number[] = [];
  if (k <= 0) return top;
  for (let i = 0; i < logits.length; i++) {
    const p = logits[i];
    if (top.length === k && !(p > logits[top[k - 1]])) continue;
    if (allowed && !allowed(i)) continue;
    let j = top.length === k ? k - 1 : top.length;
    while (j > 0 && logits[top[j - 1]] < p) j--;  // after every id of an equal logit: ties stay in id order
    top.splice(j, 0, i);
    if (top.length > k) top.pop();
  }
  return top;
}
