// What the demo's decoder-only models (models/gpt2.js, models/llama.js) share: the next-token list
// and continuing the text through the library's one decoding loop (its KV cache).

/**
 * The next-token list. When the model's first choice is to end the text (its end-of-text token),
 * that is said apart (endOfText: its probability) and the list shows what would come if the text
 * went on: the other tokens, their probabilities given that it does not end.
 */
export function nextTokens(lm, r, topK) {
  const preds = lm.predictNext(r, topK + 1);
  if (preds[0]?.id !== lm.eosTokenId) return { predictions: preds.slice(0, topK) };
  const pEnd = preds[0].probability;
  const rest = preds.slice(1).map((p) => ({ ...p, probability: p.probability / (1 - pEnd) }));
  return { predictions: rest, endOfText: { probability: pEnd, text: preds[0].text } };
}

/**
 * The next-token list with the heads of `ablate` ([{ layer, head }], counted from 0) switched off
 * (their outputs zeroed before W^O: the library's run option), for the page's before-and-after
 * panel; null when no head is off.
 */
export function ablatedNext(lm, ids, ablate, topK) {
  if (!ablate?.length) return null;
  const off = lm.run(ids, { ablate: ablate.map(({ layer, head }) => ({ layer, head })), logitsToKeep: 1 });
  return { heads: ablate, ...nextTokens(lm, off, topK) };
}

/**
 * What generate() samples the next token from at `temperature` and `topK` (the library's
 * chooseToken): softmax(logits / T) over the k largest logits (0: all; ties by id), T = 0 the
 * largest alone. Its `n` most likely tokens, computed in float64 from the run's last row of logits.
 */
export function samplingList(lm, r, { temperature = 1, topK = 0 } = {}, n = 8) {
  const rows = r.tokens.length - (r.logitsFrom ?? 0), V = r.logits.length / rows;
  const row = r.logits.subarray((rows - 1) * V, rows * V);
  const ids = Array.from({ length: V }, (_, i) => i).sort((a, b) => row[b] - row[a] || a - b);
  const keep = topK > 0 ? ids.slice(0, topK) : ids;
  const weights = temperature === 0 ? keep.map((_, i) => (i === 0 ? 1 : 0)) : keep.map((i) => Math.exp((row[i] - row[keep[0]]) / temperature));
  const total = weights.reduce((a, b) => a + b, 0);
  return { temperature, topK, predictions: keep.slice(0, n).map((id, i) => ({ id, text: lm.tokenizer.tokenText(id), probability: weights[i] / total })) };
}

/**
 * Continues `ids` (at most the context `P`) token by token; onToken streams each one. With
 * `attention`, the events are the generate view's (views/generate_view.js): first
 * { start: { columns: the prompt's token texts, rowBase: its length + 1, nLayer, nHead } }, then per
 * token { index, token, text, label (its token text), self: L x H x (its position + 1) }, the
 * library's tokenAttention read from the KV-cache step (the result leaves it out: the events carried it).
 */
export function continueIds(lm, ids, P, { maxNewTokens = 30, temperature = 0.8, topK = 40, seed = 1, signal, onToken, attention = false, columns = null }) {
  const room = P - ids.length;
  if (room < 1) throw new Error(`The text already fills the model's ${P} tokens.`);
  if (attention) {
    const { nLayer, nHead } = decoderShape(lm.config);
    onToken({ start: { columns: columns ?? ids.map((id) => lm.tokenizer.tokenText(id)), rowBase: ids.length + 1, nLayer, nHead } });
  }
  return lm.generate(ids, { maxNewTokens: Math.min(maxNewTokens, room), temperature, topK, seed, signal, ...(attention ? { attention: true } : {}),
    onToken: ({ token, text: piece, index, attention: self }) => onToken(self
      ? { token, text: piece, index, label: lm.tokenizer.tokenText(token), self } : { token, text: piece, index }),
  }).then(({ tokenAttention, ...result }) => result);
}

/** Layers and query heads of a GPT-2 or a Llama-family config. */
const decoderShape = (c) => ({ nLayer: c.n_layer ?? c.num_hidden_layers, nHead: c.n_head ?? c.num_attention_heads });
