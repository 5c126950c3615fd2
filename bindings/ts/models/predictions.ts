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

/** Every allowed id, most probable first (ties: lower id first). */
function sortAll(logits: ArrayLike<number>, allowed?: (id: number) => boolean): number[] {
  return rankIds(logits, 0, allowed);
}

/** The k most probable ids (k = 0: all), most probable first, ties by lower id: selectTop for a
 * handful, else one sort of the whole row. The sort is of numbers, not of ids through a comparator
 * (8x slower on a 50,257-token row, and sampling sorts a row per generated token): each key is the
 * logit's bits mapped to an unsigned order (descending) times 2^20 plus the id, exact in a double. */
export function rankIds(logits: ArrayLike<number>, k: number, allowed?: (id: number) => boolean): number[] {
  if (k > 0 && k <= 64) return selectTop(logits, k, allowed);
  const n = logits.length;
  if (n > ID_SPAN) {  // past the keys' id field: the comparator sort
    const ids: number[] = [];
    for (let i = 0; i < n; i++) if (!allowed || allowed(i)) ids.push(i);
    ids.sort((a, b) => logits[b] - logits[a] || a - b);
    return k > 0 ? ids.slice(0, k) : ids;
  }
  const f = new Float32Array(1), u = new Uint32Array(f.buffer);
  const keys = new Float64Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (allowed && !allowed(i)) continue;
    f[0] = logits[i] + 0;  // -0 to 0: equal logits tie by id
    const bits = u[0];
    // Negative floats order by their bits upward; non-negative ones downward, ahead of them.
    keys[m++] = ((bits & 0x80000000) ? bits : 0x7fffffff - bits) * ID_SPAN + i;
  }
  const sorted = keys.subarray(0, m).sort();
  const count = k > 0 ? Math.min(k, m) : m;
  const ids = new Array<number>(count);
  for (let i = 0; i < count; i++) ids[i] = sorted[i] % ID_SPAN;
  return ids;
}

/** One past the largest id rankIds packs into a key (2^20: 52 bits with the logit's 32). */
const ID_SPAN = 1 << 20;

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
