// The worked example of seed 002 ("write a poem"): 2-number embeddings and 2x2 weight matrices,
// with the printed typos corrected (see tests/js/seeds.test.cjs for how each was found).

export const SEED_TOKENS = ['write', 'a', 'poem'];

export const SEED_DEFAULTS = Object.freeze({
  // Encoded matrix X (3 x 2): "each word represented with 2 numbers".
  x: [1.16, 0.23, 0.57, 1.36, 4.41, -2.16],
  // W^Q's top-left is printed 2.54; every printed Q value follows from 0.54.
  wQ: [0.54, -0.17, 0.59, 0.65],
  wK: [-0.15, -0.34, 0.14, 0.42],
  wV: [0.62, 0.61, -0.52, 0.13],
  // One head needs no mixing: the tutorial stops at softmax(...)V, which is W^O = I.
  wO: [1, 0, 0, 1],
});

// "Two heads, d_k ≠ d_v": the same X and the tutorial's W^Q and W^K, each split into two heads of
// d_k = 1 (head 1 reads their first column, head 2 their second); each head gets d_v = 2 value
// columns (head 1 the tutorial's W^V, head 2 made-up ones), so Concat is 3 × 4, and a 4 × 2 W^O,
// made up too, mixes the two heads back to d_model = 2: the step the one-head example never shows.
export const TWO_HEADS = Object.freeze({
  config: Object.freeze({ numHeads: 2, dK: 1, dV: 2 }),
  wQ: SEED_DEFAULTS.wQ, wK: SEED_DEFAULTS.wK,
  wV: [0.62, 0.61, 0.3, -0.4, -0.52, 0.13, 0.5, 0.2],
  wO: [0.5, 0, 0, 0.5, 0.5, 0.25, -0.25, 0.5],
});

// For cross-attention (the encoder-decoder section of the seed): keys and values come from a
// second sentence. The seed gives it no numbers, so these are made up in its spirit: each word's
// two numbers sit near those of its English counterpart, so the attention has something to find.
export const CROSS_TOKENS = ['escribe', 'un', 'poema'];
export const CROSS_DEFAULT_Y = [1.1, 0.3, 0.6, 1.2, 4.2, -2.0];

export const SEED_NOTES = [
  'W^Q is printed with 2.54 in its top-left corner; the printed Q (0.76, 1.11, 1.11 in its first column) needs 0.54: 1.16 × 0.54 + 0.23 × 0.59 = 0.762.',
  'K is printed as [−0.14, −0.36] for “write” and [−0.1, 0.38] for “a”; the arithmetic (and the seed’s own Kᵀ) gives [−0.14, −0.30] and [0.10, 0.38].',
  'In the last product V’s row for “poem” is printed 2.86; it is 3.86, as printed for V itself.',
  'The seed rounds to 2 decimals (and truncates 0.2457 to 0.24 so the row sums to 1); set the decimals to 2 to compare.',
];

/** Parses the editable cells; returns null when one is not a finite number. */
export function parseMatrix(strings) {
  const values = [];
  for (const s of strings) {
    const text = String(s).trim().replace(/−/g, '-');
    const v = Number(text);
    if (text === '' || !Number.isFinite(v)) return null;
    values.push(v);
  }
  return values;
}
