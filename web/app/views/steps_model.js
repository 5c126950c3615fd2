// The math of one head, step by step, as data: which matrices to show, with what labels, in the
// seeds' order (X -> Q, K, V -> QK^T -> / sqrt(d_k) -> + M -> softmax -> x V -> concat -> x W^O).
// steps_view.js draws it as HTML (with editable cells), steps_svg.js as an SVG for export.
import { tokenLabel } from './dom.js';

/** Per-head slice of a B=1 x H x rows x cols trace tensor. */
function headSlice(t, h, rows, cols) {
  return t.subarray(h * rows * cols, (h + 1) * rows * cols);
}

function transpose(values, rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c];
  return out;
}

// Wide matrices (the model's 128-wide concat and output) show only the query's row.
const MAX_FULL_COLS = 48;

/**
 * input: {
 *   preset: 'model' | 'seed', queryTokens, keyTokens, cross, head, query,
 *   mask: 'causal' | 'padding' ([PAD] keys of a padded batch row) | 'none',
 *   config: { nHead, dK, dV, dModel, layer },
 *   names (model): { x: the input's name, e.g. 'X = LN₁(h)'; wO: the checkpoint's name for W^O, e.g. 'c_proj' },
 *   x, y (cross: keys/values input) or null, xNote, xCheck (self-check of X, or null), weights: { wQ, wK, wV, wO } (seed) or null,
 *   trace (MultiHeadTrace, batch 1)
 * }
 */
export function buildSteps(input) {
  const { queryTokens: qt, keyTokens: kt, trace, head: h, query: qi, cross, preset } = input;
  const { nHead: H, dK, dV, dModel } = input.config;
  const n = qt.length, m = kt.length;
  const seed = preset === 'seed';
  const sub = H > 1 ? `_${h + 1}` : '';
  const dims = (k) => Array.from({ length: k }, (_, c) => String(c + 1));
  const mat = (key, name, rows, cols, values, extra = {}) => ({
    kind: 'matrix', key, name, rows, cols, values, rowLabels: extra.rowLabels ?? dims(rows), colLabels: extra.colLabels ?? dims(cols), ...extra,
  });
  const op = (text) => ({ kind: 'op', text });
  const shapeOnly = (key, name, rows, cols, note) => ({ kind: 'shape', key, name, rows, cols, note });

  const q = headSlice(trace.q, h, n, dK), k = headSlice(trace.k, h, m, dK), v = headSlice(trace.v, h, m, dV);
  const raw = headSlice(trace.rawScores, h, n, m), scaled = headSlice(trace.scaledScores, h, n, m);
  const masked = headSlice(trace.maskedScores, h, n, m), weights = headSlice(trace.weights, h, n, m);
  const z = headSlice(trace.z, h, n, dV);
  const rowsQ = { rowLabels: qt, highlightRow: qi }, rowsK = { rowLabels: kt };
  const steps = [];

  // 1. The input.
  const xName = seed ? 'X' : input.names?.x ?? 'X';
  const inputTerms = [];
  if (input.x) inputTerms.push(mat('x', xName, n, dModel, input.x, { ...rowsQ, signed: true, editable: seed ? 'x' : null }));
  else inputTerms.push(shapeOnly('x', xName, n, dModel, input.xNote));
  if (cross) {
    if (input.y) inputTerms.push(op(' '), mat('y', 'Y', m, dModel, input.y, { ...rowsK, signed: true, editable: seed ? 'y' : null }));
    else inputTerms.push(op(' '), shapeOnly('y', 'Y', m, dModel, input.xNote));
  }
  steps.push({
    id: 'input', title: cross ? 'The inputs: X (queries) and Y (keys and values)' : 'The input X',
    explain: seed
      ? (cross ? 'Each word of both sentences is two numbers (embedding plus position). The query sentence is X; the second sentence, Y, provides the keys and values.'
        : 'Each word is represented by two numbers (word embedding plus positional encoding). Real models use hundreds.')
      : input.xNote,
    terms: inputTerms,
    // max |X W^Q + b^Q - Q| with the layer's weights from the checkpoint: a self-check for tests
    // (data-check on the step), not prose for the learner.
    check: input.xCheck ?? null,
  });

  // 2. Q, K, V.
  const wTerm = (key, name, rows, cols, values) => (seed
    ? mat(key, name, rows, cols, values, { signed: true, editable: key })
    : shapeOnly(key, `${name}${sub}`, rows, cols, `columns ${h * cols + 1}–${(h + 1) * cols} of the layer's ${name}; not printed`));
  const kvSource = cross ? 'Y' : 'X';
  steps.push({
    id: 'qkv', title: `Queries, keys and values${H > 1 ? ` for head ${h + 1}` : ''}`,
    explain: seed ? 'Multiply the inputs by the three weight matrices (edit any cell: everything below recomputes). The tutorial labels them “weightsᵀ”: the same numbers, used as X × W.'
      : `Each head has its own slice of the layer's weights (plus a bias). X times that slice gives this head's queries Q${sub}, keys K${sub} and values V${sub}: one row per token, ${dK} numbers each.`,
    terms: [],
    groups: [
      [input.x && seed ? mat('xq', 'X', n, dModel, input.x, { ...rowsQ, signed: true, compact: true }) : shapeOnly('xq', 'X', n, dModel, input.x ? 'as in step 1' : 'not exposed'), op('×'),
        wTerm('wQ', 'W^Q', dModel, dK, input.weights?.wQ), op(seed ? '=' : '+ b^Q ='), mat('q', `Q${sub}`, n, dK, q, { ...rowsQ, signed: true })],
      [shapeOrInput(kvSource, cross ? input.y : input.x, cross ? m : n, dModel, cross ? rowsK : { rowLabels: qt }, mat, shapeOnly, 'k', seed), op('×'),
        wTerm('wK', 'W^K', dModel, dK, input.weights?.wK), op(seed ? '=' : '+ b^K ='), mat('k', `K${sub}`, m, dK, k, { ...rowsK, signed: true })],
      [shapeOrInput(kvSource, cross ? input.y : input.x, cross ? m : n, dModel, cross ? rowsK : { rowLabels: qt }, mat, shapeOnly, 'v', seed), op('×'),
        wTerm('wV', 'W^V', dModel, dV, input.weights?.wV), op(seed ? '=' : '+ b^V ='), mat('v', `V${sub}`, m, dV, v, { ...rowsK, signed: true })],
    ],
  });

  // 3. Q K^T.
  steps.push({
    id: 'rawScores', title: 'Unscaled similarities QKᵀ',
    explain: 'Every query against every key: entry (i, j) is the dot product of query i and key j.',
    terms: [mat('q3', `Q${sub}`, n, dK, q, { ...rowsQ, signed: true }), op('×'),
      mat('kT', `K${sub}ᵀ`, dK, m, transpose(k, m, dK), { colLabels: kt, signed: true }), op('='),
      mat('rawScores', `Q${sub}K${sub}ᵀ`, n, m, raw, { ...rowsQ, colLabels: kt, signed: true })],
    detail: dK <= 4 ? dotDetail(qt, kt, q, k, qi, dK, raw) : null,
  });

  // 4. Scale.
  const root = Math.sqrt(dK);
  steps.push({
    id: 'scaledScores', title: `Scaled: divide by √d_k = √${dK} = ${root.toFixed(4)}`,
    explain: 'Keeps the scores from growing with the key size, so the softmax does not saturate.',
    terms: [mat('raw2', `Q${sub}K${sub}ᵀ`, n, m, raw, { ...rowsQ, colLabels: kt, signed: true, compact: true }), op(`÷ √${dK} =`),
      mat('scaledScores', 'scaled', n, m, scaled, { ...rowsQ, colLabels: kt, signed: true })],
  });

  // 5. Mask.
  const mask = new Float32Array(n * m);
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) mask[i * m + j] = masked[i * m + j] === -Infinity ? -Infinity : 0;
  steps.push({
    id: 'maskedScores', title: MASK_TEXT[input.mask ?? 'none'].title, explain: MASK_TEXT[input.mask ?? 'none'].explain,
    terms: [mat('scaled2', 'scaled', n, m, scaled, { ...rowsQ, colLabels: kt, signed: true, compact: true }), op('+'),
      mat('mask', 'M', n, m, mask, { ...rowsQ, colLabels: kt, integer: true }), op('='),
      mat('maskedScores', 'masked', n, m, masked, { ...rowsQ, colLabels: kt, signed: true })],
  });

  // 6. Softmax.
  steps.push({
    id: 'weights', title: 'Softmax of each row: the attention weights (each row sums to 1)',
    explain: 'e^(s − max) / Σ e^(s − max) across the row: the share of attention each key gets.',
    terms: [op('softmax('), mat('masked2', 'masked', n, m, masked, { ...rowsQ, colLabels: kt, signed: true, compact: true }), op(') ='),
      mat('weights', `A${sub}`, n, m, weights, { ...rowsQ, colLabels: kt, probability: true, rowSums: true })],
    detail: softmaxDetail(qt, kt, masked, weights, qi, m),
  });

  // 7. Weighted sum of the values.
  steps.push({
    id: 'z', title: 'Weighted sum of the values: A × V',
    explain: `Each output row mixes the value rows by the attention weights: the head's output Z${sub}.`,
    terms: [mat('weights2', `A${sub}`, n, m, weights, { ...rowsQ, colLabels: kt, probability: true, compact: true }), op('×'),
      mat('v2', `V${sub}`, m, dV, v, { ...rowsK, signed: true }), op('='), mat('z', `Z${sub}`, n, dV, z, { ...rowsQ, signed: true })],
  });

  // 8. Concatenate the heads; 9. output projection.
  const width = H * dV;
  const wide = width > MAX_FULL_COLS;
  const rowOf = (t, cols) => (wide ? t.subarray(qi * cols, (qi + 1) * cols) : t);
  const rowOpts = (cols) => (wide ? { rowLabels: [qt[qi]], partial: `1 × ${cols}: the row of “${tokenLabel(qt[qi])}” (all ${n} rows: ${n} × ${cols})` } : rowsQ);
  steps.push({
    id: 'concat', title: H > 1 ? `Concatenate the ${H} heads` : 'Concatenate the heads (one head: Z itself)',
    explain: H > 1 ? `Z_1 … Z_${H} side by side; head ${h + 1}'s block is highlighted.` : 'With a single head the concatenation is just Z.',
    terms: [mat('concat', H > 1 ? `Concat(Z_1…Z_${H})` : 'Concat(Z)', wide ? 1 : n, width, rowOf(trace.concat, width), { ...rowOpts(width), signed: true, highlightCols: H > 1 ? [h * dV, (h + 1) * dV] : undefined })],
  });
  const outCols = dModel;
  steps.push({
    id: 'output', title: 'Output projection: × W^O',
    explain: seed ? 'W^O mixes the heads back to d_model numbers. The tutorial uses one head, so W^O = I leaves Z unchanged.'
      : `W^O (the layer’s ${input.names?.wO ?? 'output projection'}, with its bias) mixes all heads back into the residual stream.`,
    terms: [mat('concat2', 'Concat', wide ? 1 : n, width, rowOf(trace.concat, width), { ...rowOpts(width), signed: true, compact: true }), op('×'),
      seed ? mat('wO', 'W^O', width, outCols, input.weights.wO, { signed: true, editable: 'wO' }) : shapeOnly('wO', 'W^O', width, outCols, `${input.names?.wO ?? 'output projection'} weight; not printed`),
      op(seed ? '=' : '+ b^O ='), mat('output', 'output', wide ? 1 : n, outCols, rowOf(trace.output, outCols), { ...rowOpts(outCols), signed: true })],
  });
  return steps;
}

const MASK_TEXT = {
  causal: { title: 'Add the mask M (causal: −∞ above the diagonal)', explain: 'A query may not look at later keys: their scores become −∞, which the softmax turns into 0.' },
  padding: {
    title: 'Add the mask M (padding: −∞ in the [PAD] columns)',
    explain: 'In a batch every sentence is padded with [PAD] to the longest one’s length. The key-padding mask gives every query −∞ for a [PAD] key, which the softmax turns into 0, so the padding changes nothing for the real tokens. (The [PAD] rows are computed too, and ignored.)',
  },
  none: { title: 'Add the mask M (none: all zeros)', explain: 'Without a mask every query sees every key (self-attention in an encoder, or cross-attention).' },
};

function shapeOrInput(name, values, rows, cols, labels, mat, shapeOnly, suffix, seed) {
  if (!seed) return shapeOnly(`${name.toLowerCase()}${suffix}`, name, rows, cols, values ? 'as in step 1' : 'not exposed');
  return values ? mat(`${name.toLowerCase()}${suffix}`, name, rows, cols, values, { ...labels, signed: true, compact: true }) : shapeOnly(`${name.toLowerCase()}${suffix}`, name, rows, cols);
}

/** q_i · k_j written out, one line per key (only for small d_k, like the seed's 2). */
function dotDetail(qt, kt, q, k, qi, dK, raw) {
  return kt.map((key, j) => {
    const parts = [];
    for (let d = 0; d < dK; d++) parts.push({ a: q[qi * dK + d], b: k[j * dK + d] });
    return { kind: 'dot', query: qt[qi], key, parts, result: raw[qi * kt.length + j] };
  });
}

/** The query row's softmax written out: e^(s_j - max) / sum. */
function softmaxDetail(qt, kt, masked, weights, qi, m) {
  const row = Array.from(masked.subarray(qi * m, (qi + 1) * m));
  const finite = row.filter(Number.isFinite);
  if (!finite.length) return [{ kind: 'note', text: `Every key is masked for “${qt[qi]}”: its weights are all 0.` }];
  const max = Math.max(...finite);
  const exps = row.map((s) => (Number.isFinite(s) ? Math.exp(s - max) : 0));
  const sum = exps.reduce((a, b) => a + b, 0);
  return [{ kind: 'softmax', query: qt[qi], keys: kt, scores: row, max, exps, sum, weights: Array.from(weights.subarray(qi * m, (qi + 1) * m)) }];
}
