// Turns the worker's answers into what the views draw: the attention of every layer and head with
// its token labels, and the input of the step-by-step view. Shared by the page and the widget.
import { SEED_TOKENS, CROSS_TOKENS, TWO_HEADS } from './seed_preset.js';
import { buildSteps } from './views/steps_model.js';
import { llamaSteps } from './views/llama_steps.js';
import { blockSteps } from './views/block_steps.js';
import { groupColors } from './views/kv_groups.js';

const causalMask = (i, j) => j > i;

// Tokens a learner does not follow: the model's markers ([CLS], [SEP], <|endoftext|>, </s>, the
// decoder's start ▶), not words.
const SPECIAL = /^(\[(CLS|SEP|PAD|MASK|UNK)\]|<\|[^|]*\|>|<\/?s>|<pad>|<unk>|▶)$/;

/**
 * The query every view opens on (kept as the learner switches views): a word, not a marker, and
 * one whose row shows the mask: under a causal mask the middle token (the last one's row masks
 * nothing); in a padded row the last real word (its [PAD] keys are masked); else the middle word.
 */
function openingQuery(tokens, { causal, padding }) {
  const words = tokens.map((t, i) => i).filter((i) => !SPECIAL.test(tokens[i]) && !padding?.[i]);
  if (!words.length) return Math.max(0, padding ? padding.lastIndexOf(0) : tokens.length - 1);
  if (padding?.some((p) => p)) return words[words.length - 1];
  const middle = Math.floor((tokens.length - 1) / 2);
  // The first word at or after the middle (a causal row there has later keys masked), else the last word.
  const after = words.filter((i) => i >= middle && (!causal || i < tokens.length - 1));
  return after.length ? after[0] : words[words.length - 1];
}

/** The mask the views grey out: the one the layer applied (run.mask, the library's appliedMask:
 * causal, a sliding window, the [PAD] keys of a padded row; batch row 0), or none. */
function maskOf(run) {
  const m = run.mask;
  if (!m || !m.hidden.includes(1)) return null;
  const row = m.hidden.subarray(0, m.seqQ * m.seqK);
  return (i, j) => row[i * m.seqK + j] === 1;
}

/** A model run -> head/model/heatmap view data (the same for every model). A run may override the
 * model's shape and mask (an encoder-decoder shows its encoder, decoder or cross-attention) and
 * name other key tokens (cross-attention: the keys are the encoder's sequence). */
export function modelViewData(run, info) {
  const labels = run.headLabels !== undefined ? run.headLabels : info.headLabels;
  return {
    tokens: run.tokenTexts, keyTokens: run.keyTokens, keyLabel: run.keyLabel, tokenTypes: run.tokenTypes,
    nLayer: run.nLayer ?? info.nLayer, nHead: run.nHead ?? info.nHead, attention: run.attention,
    masked: maskOf(run), headLabel: (l, h) => labels?.[l]?.[h] ?? null,
    // Grouped-query attention (a Llama-style model): the K/V head each query head reads, and head
    // colours by group (views/kv_groups.js).
    kvHeadOf: info.kvHeadOf ?? null, headColor: info.kvHeadOf ? groupColors(info.kvHeadOf) : null,
    // The query every view opens on (openingQuery): the same in every view.
    defaultQuery: openingQuery(run.tokenTexts, { causal: !!(run.causal ?? info.causal) && !run.keyTokens, padding: run.padding }),
  };
}

/** A seed-preset forward pass -> view data (one layer, one head; cross: keys from the second sentence). */
export function seedViewData(seed, state) {
  return {
    tokens: SEED_TOKENS, keyTokens: state.cross ? CROSS_TOKENS : undefined, nLayer: 1, nHead: state.twoHeads ? TWO_HEADS.config.numHeads : 1,
    attention: seed.attention, masked: state.causal ? causalMask : null, headLabel: () => null,
    // "a", the middle word: with the causal mask on, its row hides "poem".
    defaultQuery: 1,
  };
}

/** Clamp the selection to what the current data has (no query chosen: `defaultQuery`, else the
 * last token; 'last': the newest token, as a text being continued follows it). */
export function clampSelection(state, nLayer, nHead, nTokens, defaultQuery = nTokens - 1) {
  const layer = Math.min(Math.max(0, state.layer), nLayer - 1);
  const head = state.head === 'all' ? 'all' : Math.min(Math.max(0, state.head), nHead - 1);
  const query = state.query === 'last' ? nTokens - 1
    : state.query === null || state.query === undefined ? defaultQuery : Math.min(Math.max(0, state.query), nTokens - 1);
  return { layer, head, query };
}

const HELD = { f16: '16-bit', q8: '8-bit', q4: '4-bit' };
const FLOAT_TYPES = new Set(['F32', 'F16', 'BF16']);

/** Steps for the model: self-attention of the traced layer, or cross-attention when asked. With the
 * weights printed from a model loaded at a lower precision, step 2 says they are its own values. */
export function modelSteps(run, info, state, sel) {
  const steps = stepsOf(run, info, state, sel);
  // The rest of the layer after its attention (the residual stream, the norm, the MLP), for the
  // followed token: not under GPT-2's cross-attention illustration, nor when the rows the steps
  // follow are not the block's (BART's encoder view follows letters; its block is the decoder's).
  const block = run.trace?.block;
  const illustration = run.cross && !run.cross.always && state.cross && info.features.cross;
  if (block && !illustration && block.n === run.tokenTexts.length) steps.push(...blockSteps(block, { tokens: run.tokenTexts, qi: sel.query, info }));
  const qkv = steps.find((s) => s.id === 'qkv');
  if (HELD[info.dtype] && qkv?.groups?.flat().some((t) => t.key === 'wQ' && t.kind === 'matrix'))
    qkv.explain += ` The weights are printed as this model holds them (${HELD[info.dtype]}): the values it computes with, not the file's.`;
  // A GGUF file's weights stay in the file's blocks (Q4_K, Q5_0, …): printed decoded from them.
  const held = !HELD[info.dtype] && info.gguf ? info.gguf.layerTypes?.[sel.layer] : null;
  if (held && [held.q, held.k, held.v, held.o].every(Boolean) && qkv?.groups?.flat().some((t) => t.key === 'wQ' && t.kind === 'matrix'))
  {
    qkv.explain += ` The GGUF file stores this layer's W^Q as ${held.q}, W^K as ${held.k}, W^V as ${held.v} and W^O as ${held.o}; the model holds them so, and the numbers printed are decoded from those blocks: the values it computes with.`;
    // (the core multiplies quantized blocks with X rounded to 8 bits per block, as llama.cpp does)
    if (![held.q, held.k, held.v].every((t) => FLOAT_TYPES.has(t)))
      qkv.explain += ' Its products with quantized blocks first round each row of X to 8 bits per block of 32 numbers (as llama.cpp does), so an entry worked out in full precision differs from Q in its last digits.';
  }
  return steps;
}

function stepsOf(run, info, state, sel) {
  if (info.rotary) return llamaSteps(run, info, state, sel); // rotary positions, K/V groups
  const { nHead: H, dModel: C } = info;
  const head = sel.head === 'all' ? 0 : sel.head;
  // Cross-attention: an encoder-decoder's own (always), or GPT-2's untrained illustration when asked.
  const useCross = !!(run.cross && (run.cross.always || (state.cross && info.features.cross)));
  const trace = useCross ? run.cross.trace : run.trace;
  const padded = !useCross && run.padding?.some((p) => p);
  return buildSteps({
    preset: 'model', queryTokens: run.tokenTexts, keyTokens: useCross ? run.cross.keyTokens : run.tokenTexts,
    cross: useCross, head, query: sel.query, rows: state.rows,
    mask: useCross ? 'none' : info.causal ? 'causal' : padded ? 'padding' : 'none',
    config: { nHead: H, dK: C / H, dV: C / H, dModel: C, layer: sel.layer },
    names: { x: info.text.xName, wO: info.text.wOName },
    x: run.x, y: useCross ? run.cross.y : null, xNote: run.xNote, xCheck: useCross ? null : run.xCheck, weights: null,
    // The layer's weights as the model holds them, printed as slices (not for GPT-2's untrained
    // cross-attention illustration; an encoder-decoder's own cross-attention has them).
    modelWeights: useCross && !run.cross.always ? null : run.weights ?? null, trace,
  });
}

/** Steps for the seed preset (the tutorial's numbers, editable). */
export function seedSteps(seed, state, sel) {
  return buildSteps({
    preset: 'seed', queryTokens: SEED_TOKENS, keyTokens: state.cross ? CROSS_TOKENS : SEED_TOKENS, cross: state.cross,
    head: state.twoHeads && sel.head !== 'all' ? sel.head : 0, query: sel.query, mask: state.causal ? 'causal' : 'none',
    // Two heads, d_k ≠ d_v: fixed matrices (not editable); one head: the tutorial's, editable.
    config: state.twoHeads ? { nHead: TWO_HEADS.config.numHeads, dK: TWO_HEADS.config.dK, dV: TWO_HEADS.config.dV, dModel: 2, layer: 0 }
      : { nHead: 1, dK: 2, dV: 2, dModel: 2, layer: 0 },
    x: state.seed.x, y: state.cross ? state.seed.y : null, weights: state.twoHeads ? TWO_HEADS : state.seed, editable: !state.twoHeads, trace: seed.trace,
  });
}
