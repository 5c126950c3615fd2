// The step view for a Llama-style decoder: the same steps as every model's (steps_model.js), with
// what this family does differently written in:
// - grouped-query attention: the query head reads the K and V of its K/V head, shared with the other
//   query heads of its group (Hugging Face's repeat_kv: each K/V head stands in for its group);
// - no biases, RMSNorm, o_proj;
// - a rotation step after Q, K, V: the query and every key turned by their positions (rotary
//   embeddings), with the chosen query/key pair's score moved to other positions (rotary_detail.js);
//   a layer that does not rotate (SmolLM3's every 4th) says so in its place;
// - Qwen3's and Gemma 3's per-head RMSNorm of q and k as a step before the rotation;
// - Phi-3's fused qkv_proj: the columns of the one matrix each head reads.
import { buildSteps } from './steps_model.js';
import { rotaryDetail } from './rotary_detail.js';

const ROTATION_AT = 2; // the rotation step comes third, after Q, K, V

/** A K/V tensor (KV x n x d) with each K/V head repeated for its query heads (H x n x d). */
function perQueryHead(t, kvHeadOf, n, d) {
  const out = new Float32Array(kvHeadOf.length * n * d);
  kvHeadOf.forEach((g, h) => out.set(t.subarray(g * n * d, (g + 1) * n * d), h * n * d));
  return out;
}

const headSlice = (t, h, rows, cols) => t.subarray(h * rows * cols, (h + 1) * rows * cols);

function transpose(values, rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c];
  return out;
}

/** Steps for a Llama-style model (info.rotary set). */
export function llamaSteps(run, info, state, sel) {
  const { nHead: H, nKvHead: KV, kvHeadOf, headDim: d, dModel: D } = info;
  const head = sel.head === 'all' ? 0 : sel.head, qi = sel.query;
  const tokens = run.tokenTexts, n = tokens.length;
  const t = run.trace;
  // Step 2 shows Q and K as projected (before the rotation); V is never rotated.
  // With q/k norms, before those (the norm step follows); a layer without rotation has no
  // "before rotation": its Q and K are the ones the scores use.
  const rotates = Boolean(run.rotary), normed = Boolean(run.qkNorm && t.qBeforeNorm?.length);
  const qShown = normed ? t.qBeforeNorm : rotates ? t.qBeforeRotary : t.q;
  const kShown = normed ? t.kBeforeNorm : rotates ? t.kBeforeRotary : t.k;
  const trace = { ...t, q: qShown, k: perQueryHead(kShown, kvHeadOf, n, d), v: perQueryHead(t.v, kvHeadOf, n, d) };
  const kRotated = headSlice(perQueryHead(t.k, kvHeadOf, n, d), head, n, d);
  const steps = buildSteps({
    preset: 'model', queryTokens: tokens, keyTokens: tokens, cross: false, head, query: qi, rows: state.rows, mask: 'causal',
    config: { nHead: H, dK: d, dV: d, dModel: D, layer: sel.layer },
    names: { x: info.text.xName, wO: info.text.wOName },
    x: run.x, y: null, xNote: run.xNote, xCheck: null, weights: null, trace,
    // The layer's q/k/v/o_proj, printed as slices (layer_weights.js: W^K and W^V hold each query
    // head's K/V head columns, so head h's slice is its K/V head's).
    modelWeights: run.weights ?? null,
    // The scores multiply Q and K as rotated (and normed): the neuron view takes those apart.
    scoreQK: { q: headSlice(t.q, head, n, d), k: kRotated },
  });
  const ctx = { H, KV, d, n, head, qi, kv: kvHeadOf[head], kvHeadOf, tokens, one: state.rows !== 'all', bias: !!info.config.attention_bias,
    fused: !!info.config.fused_projections, normed, rotates };
  const inserted = [normed ? normStep(run, ctx) : null, rotates ? rotationStep(run, info, ctx, kRotated) : noRotationStep(ctx)].filter(Boolean);
  renumber(steps, inserted.length);
  groupedQkv(steps.find((s) => s.id === 'qkv'), ctx);
  rotatedOperands(steps.find((s) => s.id === 'rawScores'), ctx, kRotated);
  outputWithoutBias(steps.find((s) => s.id === 'output'), ctx);
  slidingWindow(steps.find((s) => s.id === 'maskedScores'), run.window);
  preAttnScalar(steps.find((s) => s.id === 'scaledScores'), info.config, d);
  steps.splice(ROTATION_AT, 0, ...inserted);
  return steps;
}

/** The notes that point at a step ("from step 4") count the inserted steps. */
function renumber(steps, inserted) {
  const shift = (text) => (typeof text === 'string' ? text.replace(/\bstep (\d+)/g, (m, k) => (Number(k) > ROTATION_AT ? `step ${Number(k) + inserted}` : m)) : text);
  for (const s of steps.slice(ROTATION_AT)) {
    s.explain = shift(s.explain);
    for (const term of [...(s.terms ?? []), ...(s.groups ?? []).flat()]) term.note = shift(term.note);
  }
}

const range = (a, b) => (a === b ? `${a}` : `${a}–${b}`);

/** Where head h's slice of W^Q, W^K or W^V sits in the checkpoint: q/k/v_proj's columns (in
 * the seeds' layout), or Phi-3's one qkv_proj, whose columns hold Q's, then K's, then V's. */
function sliceOf(key, { H, KV, d, head, kv, fused }) {
  const part = { wQ: [0, head, `${d} per query head`], wK: [H * d, kv, `${d} per K/V head`], wV: [(H + KV) * d, kv, `${d} per K/V head`] }[key];
  const [offset, index, per] = part, from = offset + index * d + 1, to = offset + (index + 1) * d;
  if (fused) return `columns ${from}–${to} of qkv_proj (${(H + 2 * KV) * d} columns: Q’s ${H * d}, then K’s ${KV * d}, then V’s ${KV * d}; ${per})`;
  const width = key === 'wQ' ? H * d : KV * d;
  return `columns ${from}–${to} of ${key[1].toLowerCase()}_proj (${width} columns, ${per})`;
}

/** Step 2: the query head's own W^Q slice; K and V of its K/V head, shared with its group. */
function groupedQkv(step, ctx) {
  const { H, KV, d, head, kv, kvHeadOf, bias, normed, rotates } = ctx;
  if (!step) return;
  const group = kvHeadOf.map((g, h) => (g === kv ? h + 1 : 0)).filter(Boolean);
  const sharing = group.length > 1 ? `query heads ${range(group[0], group[group.length - 1])} share it` : 'no other query head reads it';
  step.title = `Queries for head ${head + 1}; keys and values of its K/V head ${kv + 1}`;
  step.explain = `Grouped-query attention: the layer has ${H} query heads but only ${KV} key/value head${KV > 1 ? 's' : ''}. `
    + `Query head ${head + 1} has its own ${d} columns of W^Q; its keys and values are those of K/V head ${kv + 1} (${sharing}), `
    + `so the cache holds ${KV} sets of keys and values instead of ${H}.${bias ? '' : ' This model has no biases.'} `
    + (normed ? 'Q and K are shown as projected: step 3 normalizes each head of them, step 4 rotates them by their positions.'
      : rotates ? 'Q and K are shown as projected: step 3 rotates them by their positions.' : 'This layer does not rotate them (step 3).');
  for (const term of (step.groups ?? []).flat()) {
    if (term.kind === 'op' && !bias) term.text = term.text.replace(/\+ b\^[QKV] =/, '=');
    const where = /^w[QKV]$/.test(term.key) ? sliceOf(term.key, ctx) : '';
    if (term.key === 'wK' || term.key === 'wV') term.name = `W^${term.key[1]} of K/V head ${kv + 1}`;
    if (/^w[QKV]$/.test(term.key) && term.kind === 'shape') term.note = `${where}; not printed`;
    // Printed (the step view was open when the layer ran): say which columns of the checkpoint's matrix.
    if (/^w[QKV]$/.test(term.key) && term.kind === 'matrix') term.partial = `${term.rows} × ${term.cols}: ${where}`;
    if (term.key === 'k' || term.key === 'v') term.name = `${term.key.toUpperCase()} of K/V head ${kv + 1}`;
    if (term.key === 'q') term.name = `Q_${head + 1}${normed ? ' (before its norm)' : rotates ? ' (before rotation)' : ''}`;
  }
}

/** The output projection: o_proj has no bias in a Llama (Qwen2's biases are on q, k and v only). */
function outputWithoutBias(step) {
  if (!step) return;
  step.explain = step.explain.replace(', with its bias)', ')');
  for (const term of step.terms ?? []) if (term.kind === 'op') term.text = term.text.replace(/\+ b\^O =/, '=');
}

/** Step 4 (Q Kᵀ) multiplies the rotated query and keys. */
function rotatedOperands(step, { d, n, kv, tokens, qi, one }, kRotated) {
  if (!step) return;
  for (const term of step.terms ?? []) {
    if (term.key === 'q3' && term.kind === 'shape') term.note = one ? `the rotated row of “${tokens[qi]}”, from step 3` : 'rotated, as in step 3';
    if (term.key === 'kT') term.name = `Kᵀ of K/V head ${kv + 1}`;
    if (term.key === 'kT' && term.kind === 'shape') term.note = 'the rotated K, from step 3, on its side';
    if (term.key === 'kT' && term.kind === 'matrix') term.values = transpose(kRotated, n, d);
  }
}

/** Mistral's mask: causal, and nothing `window` or more keys back (the trace's −∞ show both). */
function slidingWindow(step, window) {
  if (!step || !window) return;
  step.title = `Add the mask M (causal, with a sliding window of ${window}: −∞ above the diagonal and ${window} or more keys back)`;
  step.explain = `A query may not look at later keys, nor at keys ${window} or more positions back: their scores become −∞, which the softmax turns into 0. Each layer sees ${window} tokens back; stacked layers reach further.`;
}

/** Step 3 with q/k norms (Qwen3, Gemma 3): each head's q and k divided by their root mean square
 * and scaled by the head's gains, before the rotation, so that no head's scores grow with the
 * size of its projections. */
function normStep(run, { d, n, head, kv, tokens, qi, one }) {
  const t = run.trace, who = `“${tokens[qi]}”`;
  const qBefore = headSlice(t.qBeforeNorm, head, n, d), kBefore = headSlice(t.kBeforeNorm, kv, n, d);
  const qAfter = headSlice(run.rotary ? t.qBeforeRotary : t.q, head, n, d), kAfter = headSlice(run.rotary ? t.kBeforeRotary : t.k, kv, n, d);
  const qRow = (v) => (one ? v.subarray(qi * d, (qi + 1) * d) : v);
  const queryRows = one ? { rowLabels: [tokens[qi]], rowIndex: [qi], partial: `1 × ${d}: the row of ${who}` } : { rowLabels: tokens, highlightRow: qi };
  const keyRows = { rowLabels: tokens, ...(one ? { maxRows: 8 } : {}) };
  const sub = `_${head + 1}`;
  return {
    id: 'qkNorm', title: 'Normalize each head’s query and key (q_norm, k_norm)',
    explain: `This model puts an RMSNorm on every head’s query and key: each row of ${d} numbers is divided by its root mean square `
      + `(so its squares average 1) and multiplied by ${d} learned gains, one set for all queries (q_norm) and one for all keys (k_norm). `
      + 'A query and a key then have bounded lengths, so a score cannot grow just because the projections grew: the softmax stays in a useful range.',
    terms: [],
    groups: [
      [matrix('qPreNorm', `Q${sub} as projected`, qRow(qBefore), one ? 1 : n, d, queryRows), { kind: 'op', text: '→ RMSNorm × gains →' },
        matrix('qNormed', `Q${sub} normalized`, qRow(qAfter), one ? 1 : n, d, queryRows)],
      [matrix('kPreNorm', `K of K/V head ${kv + 1} as projected`, kBefore, n, d, keyRows), { kind: 'op', text: '→ RMSNorm × gains →' },
        matrix('kNormed', `K of K/V head ${kv + 1} normalized`, kAfter, n, d, keyRows)],
    ],
  };
}

/** In place of the rotation: this layer adds no position at all (SmolLM3's layers without rotary
 * embeddings: only the causal mask tells a token where it is). */
function noRotationStep({ n }) {
  return {
    id: 'rotary', title: 'No rotation in this layer',
    explain: 'This model rotates queries and keys in most layers but not in this one (its config’s no_rope_layers): the scores here '
      + `depend on what the ${n} tokens are, not on how far apart they are. The causal mask still tells each query which keys came before it, `
      + 'and the layers that do rotate carry the positions; leaving some layers without them helps the model read texts longer than it was trained on.',
    terms: [],
  };
}

/** Gemma 3 scales by √query_pre_attn_scalar, a setting of its own, instead of √d_k (the trace's
 * scaled scores are the core's, with it). */
function preAttnScalar(step, config, d) {
  const scalar = config.query_pre_attn_scalar ?? (config.attention_scale ? config.attention_scale ** -2 : 0);
  if (!step || !config.attention_scale || Math.abs(scalar - d) < 1e-9) return;
  const root = Math.sqrt(scalar);
  step.title = `Scaled: divide by √query_pre_attn_scalar = √${+scalar.toFixed(4)} = ${root.toFixed(4)} (not √d_k = √${d})`;
  step.explain = 'Keeps the scores from growing with the key size, so the softmax does not saturate. This model names its own divisor (query_pre_attn_scalar) instead of using the head size.';
  for (const term of step.terms ?? []) if (term.kind === 'op') term.text = `÷ √${+scalar.toFixed(4)} =`;
}

/** A matrix term, as steps_model.js makes them (signed numbers, 16 columns open). */
function matrix(key, name, values, rows, d, extra) {
  return { kind: 'matrix', key, name, rows, cols: d, values, signed: true, maxCols: 16,
    colLabels: Array.from({ length: d }, (_, c) => String(c + 1)), ...extra };
}

/** Step 3: q and every k before and after their rotation, and the pair's score moved around. */
function rotationStep(run, info, ctx, kRotated) {
  const { d, n, head, kv, tokens, qi, one } = ctx;
  const t = run.trace;
  const who = `“${tokens[qi]}”`;
  const qBefore = headSlice(t.qBeforeRotary, head, n, d), qAfter = headSlice(t.q, head, n, d);
  const kBefore = headSlice(t.kBeforeRotary, kv, n, d);
  const queryRows = one
    ? { rowLabels: [tokens[qi]], rowIndex: [qi], partial: `1 × ${d}: the row of ${who}` }
    : { rowLabels: tokens, highlightRow: qi };
  const qRow = (v) => (one ? v.subarray(qi * d, (qi + 1) * d) : v);
  const keyRows = { rowLabels: tokens, ...(one ? { maxRows: 8 } : {}) };
  const sub = `_${head + 1}`;
  return {
    id: 'rotary', title: `Rotate each query and key by its position (rotary embedding)`,
    explain: `A Llama adds no position vector to X: positions enter here. ${rotatedPairs(d, run.rotary)}`
      + `(θ = ${run.rotary.theta}${run.rotary.local ? ', this windowed layer’s own base' : ''}): `
      + `the first pairs turn fast, the last ones slowly, and token 1 does not turn. The query of ${who}, token ${qi + 1}, turns by ${qi} steps; each key by its own. `
      + 'Turning both by the same amount changes no dot product, so the score of a query and a key depends on how far apart they are, not on where they are: below, the pair moved to other positions.',
    terms: [],
    groups: [
      [matrix('qPre', `Q${sub} before`, qRow(qBefore), one ? 1 : n, d, queryRows), { kind: 'op', text: '→' },
        matrix('qRot', one ? `Q${sub} turned for token ${qi + 1}` : `Q${sub}, each row turned for its token`, qRow(qAfter), one ? 1 : n, d, queryRows)],
      [matrix('kPre', `K of K/V head ${kv + 1} before`, kBefore, n, d, keyRows), { kind: 'op', text: '→' },
        matrix('kRot', `K of K/V head ${kv + 1}, each row turned for its token`, kRotated, n, d, keyRows)],
    ],
    detail: [rotaryDetail({ tokens, qi, head, kv, d, qBefore, kBefore, weights: headSlice(t.weights, head, n, n), rotary: run.rotary, context: info.maxTokens })],
  };
}

/** Which numbers of a head turn, in pairs (Phi-4-mini turns only its first rotaryDim). */
function rotatedPairs(d, { rotaryDim }) {
  const r = rotaryDim || d;
  return r === d
    ? `The ${d} numbers of a query or key form ${d / 2} pairs (number i with number i + ${d / 2}, i from 1 to ${d / 2}), and pair i of token t is turned by the angle (t − 1) × θ^(−2(i − 1)/${d}) `
    : `Only the first ${r} of a head’s ${d} numbers turn (the other ${d - r} pass as they are): they form ${r / 2} pairs (number i with number i + ${r / 2}, i from 1 to ${r / 2}), and pair i of token t is turned by the angle (t − 1) × θ^(−2(i − 1)/${r}) `;
}
