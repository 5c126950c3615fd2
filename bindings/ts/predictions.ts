// Turning a row of logits into what users read: probabilities and the k most likely tokens.

export interface Prediction { id: number; text: string; probability: number }

/** softmax over one row, in float64 (max subtracted first). */
export function softmax(row: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  const out = new Float64Array(row.length);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += (out[i] = Math.exp(row[i] - max));
  for (let i = 0; i < row.length; i++) out[i] /= sum;
  return out;
}

/** The k most probable entries of a logits row, most probable first. */
export function topK(row: ArrayLike<number>, k: number, text: (id: number) => string, allowed?: (id: number) => boolean): Prediction[] {
  const probs = softmax(row);
  const top = Number.isInteger(k) && k >= 0 && k <= 64 ? selectTop(probs, k, allowed) : sortAll(probs, allowed).slice(0, k);
  return top.map((id) => ({ id, text: text(id), probability: probs[id] }));
}

/** Every allowed id, most probable first (ties: lower id first; the sort is stable). */
function sortAll(probs: Float64Array, allowed?: (id: number) => boolean): number[] {
  const ids: number[] = [];
  for (let i = 0; i < probs.length; i++) if (!allowed || allowed(i)) ids.push(i);
  return ids.sort((a, b) => probs[b] - probs[a]);
}

/** The same first k ids as sortAll, for a small k, in one pass over the row (a vocabulary of tens
 * of thousands of tokens need not be sorted to show a handful). */
function selectTop(probs: Float64Array, k: number, allowed?: (id: number) => boolean): number[] {
  const top: number[] = [];
  if (k <= 0) return top;
  for (let i = 0; i < probs.length; i++) {
    const p = probs[i];
    if (top.length === k && !(p > probs[top[k - 1]])) continue;
    if (allowed && !allowed(i)) continue;
    let j = top.length === k ? k - 1 : top.length;
    while (j > 0 && probs[top[j - 1]] < p) j--;  // after every id of equal probability: ties stay in id order
    top.splice(j, 0, i);
    if (top.length > k) top.pop();
  }
  return top;
}

/** Cross-entropy (nats) of `target` under a logits row: log(sum exp) - logit[target]. */
export function crossEntropy(row: ArrayLike<number>, target: number): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  return Math.log(sum) + max - row[target];
}
