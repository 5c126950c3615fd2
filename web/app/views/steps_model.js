// The math of one head, step by step, as data: which matrices to show, with what labels, in the
// seeds' order (X -> Q, K, V -> QK^T -> / sqrt(d_k) -> + M -> softmax -> x V -> concat -> x W^O).
// steps_view.js draws it as HTML (with editable cells), steps_svg.js as an SVG for export.
import { tokenLabel } from './dom.js';
import { neuronDetail } from './neuron_view.js';

/** Per-head slice of a B=1 x H x rows x cols trace tensor. */
function headSlice(t, h, rows, cols) {
  return t.subarray(h * rows * cols, (h + 1) * rows * cols);
}

function transpose(values, rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c];
  return out;
}

// Wide matrices (the model's 128-wide concat and output) show only the query's row, even when every
// row is asked for.
const MAX_FULL_COLS = 48;
// Matrices the query's row needs whole (its keys and values) open on their first rows, with a button
// for the rest: 128 rows of numbers is a wall, and drawing it costs more than the rest together.
export const ROW_PREVIEW = 8;
// Wide matrices (128 keys, or d = 128) open on 16 columns, with "+112" for the rest: the columns
// near the query's own key for scores and weights, the first ones (or the head's block) otherwise.
export const COL_PREVIEW = 16;

/**
 * input: {
 *   preset: 'model' | 'seed', queryTokens, keyTokens, cross, head, query,
 *   rows (model): 'query' (the default: the chosen query's row carried through every step) | 'all' (every row),
 *   mask: 'causal' | 'padding' ([PAD] keys of a padded batch row) | 'none',
 *   config: { nHead, dK, dV, dModel, layer },
 *   names (model): { x: the input's name, e.g. 'X = LN₁(h)'; wO: the checkpoint's name for W^O, e.g. 'c_proj' },
 *   x, y (cross: keys/values input) or null, xNote, xCheck (self-check of X, or null), weights: { wQ, wK, wV, wO } (seed) or null,
 *   trace (MultiHeadTrace, batch 1),
 *   scoreQK (optional): { q: n x dK, k: m x dK } of the head as the scores multiply them, when they
 *     differ from the trace's q and k shown in step 2 (a Llama's, rotated)
 * }
 * The tutorial's example (seed) always shows every row: three tokens fit, and whole matrices are what
 * the tutorial prints.
 */
export function buildSteps(input) {
  const { queryTokens: qt, keyTokens: kt, trace, head: h, query: qi, cross, preset } = input;
  const { nHead: H, dK, dV, dModel } = input.config;
  const n = qt.length, m = kt.length;
  const seed = preset === 'seed';
  // The tutorial's matrices are editable; its two-head variant's are fixed (input.editable false).
  const canEdit = seed && input.editable !== false;
  const one = !seed && input.rows !== 'all';
  const sub = H > 1 ? `_${h + 1}` : '';
  const who = `“${tokenLabel(qt[qi])}”`;
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
  const rowOf = (t, cols) => t.subarray(qi * cols, (qi + 1) * cols);
  // (No highlight: when it is the only row, a frame around every cell would say nothing.)
  const queryRow = (cols) => ({ rowLabels: [qt[qi]], rowIndex: [qi], partial: `1 × ${cols}: the row of ${who}` });
  // A matrix with one row per query (X, Q, scores, weights, Z): the query's row alone, or every row
  // with the query's highlighted. maskedBy: the masked scores, so that masked weights read 0, greyed.
  const qMat = (key, name, cols, values, extra = {}) => {
    const { maskedBy, ...rest } = extra;
    if (one) return mat(key, name, 1, cols, rowOf(values, cols), { ...queryRow(cols), ...(maskedBy ? { maskedFrom: rowOf(maskedBy, cols) } : {}), ...rest });
    return mat(key, name, n, cols, values, { ...rowsQ, ...(maskedBy ? { maskedFrom: maskedBy } : {}), ...rest });
  };
  // The previous step's result as this step's operand: the tutorial's three tokens print it again;
  // the model's (up to 128 × 128 numbers) is not drawn twice: a box names the step it comes from.
  const again = (key, name, cols, values, extra, step) => (seed
    ? qMat(key, name, cols, values, { ...extra, compact: true })
    : shapeOnly(key, name, one ? 1 : n, cols, one ? `the row of ${who} from step ${step}` : `as in step ${step}`));
  // One row per key (K, V, Y): all of them, the first few open when following one query.
  const preview = one ? { maxRows: ROW_PREVIEW } : {};
  const dimCols = seed ? {} : { maxCols: COL_PREVIEW };
  // Key columns: in self-attention, those up to a little past the query's own key (a decoder's later
  // keys are masked: two show it); cross-attention's keys are another sequence: the first ones.
  const keyCols = seed ? {} : { maxCols: COL_PREVIEW, ...(cross ? {} : { focusCol: qi, focusAfter: input.mask === 'causal' ? 2 : 7 }) };
  const steps = [];

  // 1. The input.
  const xName = seed ? 'X' : input.names?.x ?? 'X';
  const inputTerms = [];
  if (input.x) inputTerms.push(qMat('x', xName, dModel, input.x, { ...dimCols, signed: true, editable: canEdit ? 'x' : null }));
  else inputTerms.push(shapeOnly('x', xName, n, dModel, input.xNote));
  if (cross) {
    if (input.y) inputTerms.push(op(' '), mat('y', 'Y', m, dModel, input.y, { ...rowsK, ...preview, ...dimCols, signed: true, editable: canEdit ? 'y' : null }));
    else inputTerms.push(op(' '), shapeOnly('y', 'Y', m, dModel, input.xNote));
  }
  steps.push({
    id: 'input', title: cross ? 'The inputs: X (queries) and Y (keys and values)' : 'The input X',
    explain: seed
      ? (cross ? 'Each word of both sentences is two numbers (embedding plus position). The query sentence is X; the second sentence, Y, provides the keys and values.'
        : 'Each word is represented by two numbers (word embedding plus positional encoding). Real models use hundreds.')
      : `${input.xNote ?? ''}${one && input.x ? ` Shown: the row of ${who}, the token chosen above; the steps below follow it${cross ? ', with every row of Y' : ''}.` : ''}`,
    terms: inputTerms,
    // max |X W^Q + b^Q - Q| with the layer's weights (as the model holds them): a self-check for tests
    // (data-check on the step), not prose for the learner.
    check: input.xCheck ?? null,
  });

  // 2. Q, K, V.
  // A trained model's weights (input.modelWeights: the layer's, every head's columns) are printed
  // as this head's slice, opening on its first rows and columns.
  const mw = seed ? null : input.modelWeights ?? null;
  const wTerm = (key, name, rows, cols, values) => {
    if (seed && H === 1) return mat(key, name, rows, cols, values, { signed: true, editable: canEdit ? key : null });
    const which = cols === 1 ? `column ${h + 1}` : `columns ${h * cols + 1}–${(h + 1) * cols}`;
    if (seed) return mat(key, `${name}${sub}`, rows, cols, columnBlock(Float32Array.from(values), rows, H * cols, h * cols, cols), { signed: true, partial: `${rows} × ${cols}: ${which} of the ${rows} × ${H * cols} ${KIND[key]} weights` });
    const note = `columns ${h * cols + 1}–${(h + 1) * cols} of the layer's ${name}`;
    const words = `columns ${h * cols + 1}–${(h + 1) * cols} of the layer's ${KIND[key]} weights`;
    if (!mw?.[key]) return shapeOnly(key, `${name}${sub}`, rows, cols, `${note}; not printed`);
    return mat(key, `${name}${sub}`, rows, cols, columnBlock(mw[key], rows, H * cols, h * cols, cols),
      { signed: true, maxRows: ROW_PREVIEW, maxCols: COL_PREVIEW, partial: `${rows} × ${cols}: ${words}` });
  };
  const kvSource = cross ? 'Y' : 'X';
  const kvInput = (suffix) => (one
    ? shapeOnly(`${kvSource.toLowerCase()}${suffix}`, kvSource, cross ? m : n, dModel, cross ? `all ${m} rows of Y, from step 1` : `all ${n} rows of X`)
    : shapeOrInput(kvSource, cross ? input.y : input.x, cross ? m : n, dModel, cross ? rowsK : { rowLabels: qt }, mat, shapeOnly, suffix, seed));
  steps.push({
    id: 'qkv', title: `Queries, keys and values${H > 1 ? ` for head ${h + 1}` : ''}`,
    explain: seed && H > 1 ? `Each head takes its own columns of W^Q, W^K (d_k = ${dK} each) and W^V (dᵥ = ${dV}): head ${h + 1}’s queries and keys have ${dK} number${dK > 1 ? 's' : ''} per token, its values ${dV}. Pick the other head above to see its slice.`
      : seed ? 'Multiply the inputs by the three weight matrices (edit any cell: everything below recomputes). The tutorial labels them “weightsᵀ”: the same numbers, used as X × W.'
      : one ? `Each head has its own slice of the layer's weights (plus a bias). The row of ${who} times the W^Q slice gives the query of ${who}: what it is looking for. Every token also gets a key (what it can be found by) and a value (what it passes on), ${dK} numbers each. Following one query takes every key and value, so K${sub} and V${sub} keep all ${m} rows.`
        : `Each head has its own slice of the layer's weights (plus a bias). X times that slice gives this head's queries Q${sub}, keys K${sub} and values V${sub}: one row per token, ${dK} numbers each.`,
    terms: [],
    detail: mw && input.x ? queryEntryDetail(input.x, mw, q, { qi, h, dK, dModel, H, n, who }) : null,
    groups: [
      [one ? shapeOnly('xq', 'x', 1, dModel, `the row of ${who}, from step 1`)
        : input.x && seed ? mat('xq', 'X', n, dModel, input.x, { ...rowsQ, signed: true, compact: true }) : shapeOnly('xq', 'X', n, dModel, input.x ? 'as in step 1' : 'not exposed'), op('×'),
      wTerm('wQ', 'W^Q', dModel, dK, input.weights?.wQ), op(seed ? '=' : '+ b^Q ='), qMat('q', `Q${sub}`, dK, q, { ...dimCols, signed: true })],
      [kvInput('k'), op('×'), wTerm('wK', 'W^K', dModel, dK, input.weights?.wK), op(seed ? '=' : '+ b^K ='), mat('k', `K${sub}`, m, dK, k, { ...rowsK, ...preview, ...dimCols, signed: true })],
      [kvInput('v'), op('×'), wTerm('wV', 'W^V', dModel, dV, input.weights?.wV), op(seed ? '=' : '+ b^V ='), mat('v', `V${sub}`, m, dV, v, { ...rowsK, ...preview, ...dimCols, signed: true })],
    ],
  });

  // 3. Q K^T.
  steps.push({
    id: 'rawScores', title: one ? `Unscaled similarities: the row of QKᵀ for ${who}` : 'Unscaled similarities QKᵀ',
    explain: one ? `Entry j is the dot product of the query of ${who} with key j (multiply them number by number, add up): large when the two point the same way, which is when ${who} will attend to token j.`
      : 'Every query against every key: entry (i, j) is the dot product of query i and key j.',
    terms: [again('q3', `Q${sub}`, dK, q, { signed: true }, 2), op('×'),
      one ? shapeOnly('kT', `K${sub}ᵀ`, dK, m, 'K from step 2, on its side')
        : mat('kT', `K${sub}ᵀ`, dK, m, transpose(k, m, dK), { colLabels: kt, ...keyCols, signed: true }), op('='),
      qMat('rawScores', `Q${sub}K${sub}ᵀ`, m, raw, { colLabels: kt, ...keyCols, signed: true })],
    // The neuron view: the followed query's score with one key, dimension by dimension (a Llama's
    // scores multiply the rotated Q and K: input.scoreQK).
    detail: [neuronDetail({ qt, kt, q: input.scoreQK?.q ?? q, k: input.scoreQK?.k ?? k, raw, weights, masked, qi, dK })],
  });

  // 4. Scale.
  const root = Math.sqrt(dK);
  steps.push({
    id: 'scaledScores', title: `Scaled: divide by √d_k = √${dK} = ${root.toFixed(4)}`,
    explain: 'Keeps the scores from growing with the key size, so the softmax does not saturate.',
    terms: [again('raw2', `Q${sub}K${sub}ᵀ`, m, raw, { colLabels: kt, signed: true }, 3), op(`÷ √${dK} =`),
      qMat('scaledScores', 'scaled', m, scaled, { colLabels: kt, ...keyCols, signed: true })],
  });

  // 5. Mask.
  const mask = new Float32Array(n * m);
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) mask[i * m + j] = masked[i * m + j] === -Infinity ? -Infinity : 0;
  // The whole S x S matrices (a model's: the tutorial prints its 3 x 3 ones whole anyway), the
  // followed query's row outlined.
  const whole = (key, name, values, kind) => (seed ? null
    : { key, name, values, rows: n, cols: m, rowLabels: qt, colLabels: kt, highlightRow: qi, kind, ...(kind === 'weights' ? { maskedFrom: masked } : {}) });
  steps.push({
    id: 'maskedScores', title: MASK_TEXT[input.mask ?? 'none'].title, explain: MASK_TEXT[input.mask ?? 'none'].explain,
    whole: whole('wholeMasked', `Every query’s masked scores (${n} × ${m})`, masked, 'scores'),
    terms: [again('scaled2', 'scaled', m, scaled, { colLabels: kt, signed: true }, 4), op('+'),
      qMat('mask', 'M', m, mask, { colLabels: kt, ...keyCols, integer: true }), op('='),
      qMat('maskedScores', 'masked', m, masked, { colLabels: kt, ...keyCols, signed: true })],
  });

  // 6. Softmax.
  steps.push({
    id: 'weights', title: one ? `Softmax of the row: the attention weights of ${who} (they sum to 1)` : 'Softmax of each row: the attention weights (each row sums to 1)',
    explain: one ? 'The softmax turns the scores into shares that add up to 1: e^(s − max) for each key, divided by the sum of them all. Subtracting the largest score first changes nothing in the result and keeps the powers small. A masked key (−∞) gets e^(−∞) = 0: weight 0.'
      : 'e^(s − max) / Σ e^(s − max) across the row: the share of attention each key gets.',
    terms: [op('softmax('), again('masked2', 'masked', m, masked, { colLabels: kt, signed: true }, 5), op(') ='),
      qMat('weights', `A${sub}`, m, weights, { colLabels: kt, ...keyCols, probability: true, rowSums: true, maskedBy: masked })],
    whole: whole('wholeWeights', `Every query’s attention weights (${n} × ${m})`, weights, 'weights'),
    detail: softmaxDetail(qt, kt, masked, weights, qi, m),
  });

  // 7. Weighted sum of the values.
  steps.push({
    id: 'z', title: one ? `Weighted sum of the values: the output of ${who}` : 'Weighted sum of the values: A × V',
    explain: one ? `The output for ${who} mixes the value rows by its weights: weight j times value row j, added up over every key j. A key with weight 0 adds nothing. This is the head's output Z${sub} for ${who}.`
      : `Each output row mixes the value rows by the attention weights: the head's output Z${sub}.`,
    terms: [again('weights2', `A${sub}`, m, weights, { colLabels: kt, probability: true, maskedBy: masked }, 6), op('×'),
      seed ? mat('v2', `V${sub}`, m, dV, v, { ...rowsK, signed: true }) : shapeOnly('v2', `V${sub}`, m, dV, 'V from step 2'), op('='),
      qMat('z', `Z${sub}`, dV, z, { ...dimCols, signed: true })],
  });

  // 8. Concatenate the heads; 9. output projection.
  const width = H * dV;
  const wide = one || width > MAX_FULL_COLS;
  const rowOfWide = (t, cols) => (wide ? rowOf(t, cols) : t);
  const rowOpts = (cols) => (wide ? { ...queryRow(cols), ...(one ? {} : { partial: `1 × ${cols}: the row of ${who} (all ${n} rows: ${n} × ${cols})` }) } : rowsQ);
  steps.push({
    id: 'concat', title: H > 1 ? `Concatenate the ${H} heads` : 'Concatenate the heads (one head: Z itself)',
    explain: H > 1 ? `Z_1 … Z_${H} side by side; head ${h + 1}'s block is highlighted.` : 'With a single head the concatenation is just Z.',
    terms: [mat('concat', H > 1 ? `Concat(Z_1…Z_${H})` : 'Concat(Z)', wide ? 1 : n, width, rowOfWide(trace.concat, width), { ...rowOpts(width), signed: true, highlightCols: H > 1 ? [h * dV, (h + 1) * dV] : undefined,
      // the window opens on this head's block
      ...(seed ? {} : { maxCols: COL_PREVIEW, ...(H > 1 && h > 0 ? { focusCol: h * dV + COL_PREVIEW - 2, focusAfter: 0 } : {}) }) })],
  });
  const outCols = dModel;
  steps.push({
    id: 'output', title: 'Output projection: × W^O',
    explain: seed && H > 1 ? `Concat is ${H} × ${dV} = ${width} numbers per token; W^O (${width} × ${outCols}) mixes them back to d_model = ${outCols}: each output number is a weighted sum of both heads’ outputs, so the heads’ results combine here.`
      : seed ? 'W^O mixes the heads back to d_model numbers. The tutorial uses one head, so W^O = I leaves Z unchanged.'
      : `W^O (the layer’s ${input.names?.wO ?? 'output projection'}, with its bias) mixes all heads back into the residual stream.`,
    terms: [!seed ? shapeOnly('concat2', 'Concat', wide ? 1 : n, width, wide ? `the row of ${who} from step 8` : 'as in step 8')
      : mat('concat2', 'Concat', wide ? 1 : n, width, rowOfWide(trace.concat, width), { ...rowOpts(width), signed: true, compact: true }), op('×'),
      seed ? mat('wO', 'W^O', width, outCols, input.weights.wO, { signed: true, editable: canEdit ? 'wO' : null })
        : mw?.wO ? mat('wO', 'W^O', width, outCols, mw.wO, { signed: true, maxRows: ROW_PREVIEW, maxCols: COL_PREVIEW, partial: `${width} × ${outCols}: the ${input.names?.wO ?? 'output projection'} weight` })
          : shapeOnly('wO', 'W^O', width, outCols, `${input.names?.wO ?? 'output projection'} weight; not printed`),
      op(seed ? '=' : '+ b^O ='), mat('output', 'output', wide ? 1 : n, outCols, rowOfWide(trace.output, outCols), { ...rowOpts(outCols), ...dimCols, signed: true })],
  });
  return steps;
}

const KIND = { wQ: 'query', wK: 'key', wV: 'value' };

const MASK_TEXT = {
  causal: { title: 'Add the mask M (causal: −∞ above the diagonal)', explain: 'A query may not look at later keys: their scores become −∞, which the softmax turns into 0.' },
  padding: {
    title: 'Add the mask M (padding: −∞ in the [PAD] columns)',
    explain: 'In a batch every sentence is padded with [PAD] to the longest one’s length. The key-padding mask gives every query −∞ for a [PAD] key, which the softmax turns into 0, so the padding changes nothing for the real tokens. (The [PAD] rows are computed too, and ignored.)',
  },
  none: { title: 'Add the mask M (none: all zeros)', explain: 'Without a mask every query sees every key (self-attention in an encoder, or cross-attention).' },
};

/** Columns from..from+count of a rows × cols row-major matrix. */
function columnBlock(values, rows, cols, from, count) {
  const out = new Float32Array(rows * count);
  for (let r = 0; r < rows; r++) out.set(values.subarray(r * cols + from, r * cols + from + count), r * count);
  return out;
}

/**
 * One entry of Q written out: q[i][1] = Σ_r x[i][r] · W^Q[r][1] + b^Q[1], its first terms, the sum
 * (float64 here) and the trace's Q entry it must equal. weights: the layer's (every head's columns).
 */
function queryEntryDetail(x, weights, q, { qi, h, dK, dModel, H, who }) {
  const col = h * dK, wCols = H * dK;
  const terms = Array.from({ length: dModel }, (_, r) => [x[qi * dModel + r], weights.wQ[r * wCols + col]]);
  const bias = weights.bQ ? weights.bQ[col] : 0;
  const sum = terms.reduce((a, [xv, wv]) => a + xv * wv, bias);
  const f = (v) => (v < 0 ? `(−${Math.abs(v).toFixed(4)})` : v.toFixed(4));
  const shown = terms.slice(0, 3).map(([xv, wv]) => `${f(xv)}·${f(wv)}`).join(' + ');
  // (A model without biases, e.g. a Llama, has no b^Q term.)
  const plusBias = weights.bQ ? [` + b^Q${H > 1 ? `_${h + 1}` : ''}[1]`, ` + ${f(bias)}`] : ['', ''];
  const traced = q[qi * dK]; // the trace's Q, head h's slice: row qi, column 0
  const sub = H > 1 ? `_${h + 1}` : '';
  return [{
    kind: 'note', check: Math.abs(sum - traced),
    text: `One entry worked out: q${sub}[${who}][1] = Σ x[${who}][i] · W^Q${sub}[i][1]${plusBias[0]} over the ${dModel} numbers i of the row`
      + ` = ${shown} + … (${dModel} products)${plusBias[1]} = ${sum.toFixed(4)}: the first number of Q${sub}’s row for ${who} (${traced.toFixed(4)}).`,
  }];
}

function shapeOrInput(name, values, rows, cols, labels, mat, shapeOnly, suffix, seed) {
  if (!seed) return shapeOnly(`${name.toLowerCase()}${suffix}`, name, rows, cols, values ? 'as in step 1' : 'not exposed');
  return values ? mat(`${name.toLowerCase()}${suffix}`, name, rows, cols, values, { ...labels, signed: true, compact: true }) : shapeOnly(`${name.toLowerCase()}${suffix}`, name, rows, cols);
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
