// Turns the worker's answers into what the views draw: the attention of every layer and head with
// its token labels, and the input of the step-by-step view. Shared by the page and the widget.
import { SEED_TOKENS, CROSS_TOKENS } from './seed_preset.js';
import { buildSteps } from './views/steps_model.js';

const causalMask = (i, j) => j > i;

/** A model run -> head/model/heatmap view data. */
export function modelViewData(run, info) {
  const { n_layer: L, n_head: H } = info.config;
  return {
    tokens: run.tokenTexts, nLayer: L, nHead: H, attention: run.attention, masked: causalMask,
    headLabel: (l, h) => info.headLabels?.[l]?.[h] ?? null,
  };
}

/** A seed-preset forward pass -> view data (one layer, one head; cross: keys from the second sentence). */
export function seedViewData(seed, state) {
  return {
    tokens: SEED_TOKENS, keyTokens: state.cross ? CROSS_TOKENS : undefined, nLayer: 1, nHead: 1,
    attention: seed.attention, masked: state.causal ? causalMask : null, headLabel: () => null,
  };
}

/** Clamp the selection to what the current data has. */
export function clampSelection(state, nLayer, nHead, nTokens) {
  const layer = Math.min(Math.max(0, state.layer), nLayer - 1);
  const head = state.head === 'all' ? 'all' : Math.min(Math.max(0, state.head), nHead - 1);
  const query = state.query === null || state.query === undefined ? nTokens - 1 : Math.min(Math.max(0, state.query), nTokens - 1);
  return { layer, head, query };
}

/** Steps for the model: self-attention of the traced layer, or cross-attention when asked. */
export function modelSteps(run, info, state, sel) {
  const { n_head: H, n_embd: C } = info.config;
  const head = sel.head === 'all' ? 0 : sel.head;
  const useCross = state.cross && run.cross;
  const trace = useCross ? run.cross.trace : run.trace;
  const xNote = run.x
    ? `X = LN₁(h): the LayerNorm of the residual stream h entering layer ${sel.layer + 1} (token plus position embedding for layer 1), from the library's trace. With the layer's weights read from model.safetensors, X W^Q + b^Q reproduces the trace's Q to ${run.xCheck.toExponential(1)}.`
    : 'X = LN₁(h), the LayerNorm of the residual stream entering this layer: this build of the library does not trace it.';
  return buildSteps({
    preset: 'model', queryTokens: run.tokenTexts, keyTokens: useCross ? run.cross.keyTokens : run.tokenTexts,
    cross: !!useCross, head, query: sel.query, causal: !useCross,
    config: { nHead: H, dK: C / H, dV: C / H, dModel: C, layer: sel.layer },
    x: run.x, y: useCross ? run.cross.y : null, xNote, weights: null, trace,
  });
}

/** Steps for the seed preset (the tutorial's numbers, editable). */
export function seedSteps(seed, state, sel) {
  return buildSteps({
    preset: 'seed', queryTokens: SEED_TOKENS, keyTokens: state.cross ? CROSS_TOKENS : SEED_TOKENS, cross: state.cross,
    head: 0, query: sel.query, causal: state.causal,
    config: { nHead: 1, dK: 2, dV: 2, dModel: 2, layer: 0 },
    x: state.seed.x, y: state.cross ? state.seed.y : null, weights: state.seed, trace: seed.trace,
  });
}
