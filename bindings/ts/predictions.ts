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
  const ids: number[] = [];
  for (let i = 0; i < probs.length; i++) if (!allowed || allowed(i)) ids.push(i);
  ids.sort((a, b) => probs[b] - probs[a]);
  return ids.slice(0, k).map((id) => ({ id, text: text(id), probability: probs[id] }));
}

/** Cross-entropy (nats) of `target` under a logits row: log(sum exp) - logit[target]. */
export function crossEntropy(row: ArrayLike<number>, target: number): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  return Math.log(sum) + max - row[target];
}
