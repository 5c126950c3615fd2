// Attention through the layers (attention rollout, Abnar & Zuidema 2020): how much of each input
// token reaches each position after the chosen layer, when every layer mixes half through its heads'
// average attention and half through the residual stream. The library's attentionRollout (from the
// analysis entry: no WebAssembly on the page's thread), drawn as the heatmap draws one head.
import { attentionRollout } from '../../../dist/analysis.js';
import { renderHeatmapView } from './heatmap_view.js';
import { el } from './dom.js';

const rollouts = new WeakMap(); // a run's attention -> its rollout (computed once per run)

/** The rollout of the views' data (tokens, nHead, attention L x H x n x n): L x n x n, computed
 * once per run (the view and the JSON export share it). */
export function rolloutOf(data) {
  if (!rollouts.has(data.attention))
    rollouts.set(data.attention, attentionRollout({ tokens: data.tokens, attention: data.attention }, { heads: data.nHead }));
  return rollouts.get(data.attention);
}

/** data: the views' data (tokens, nHead, attention L x H x n x n, masked); sel: { layer, query }. */
export function renderRolloutView(container, data, sel, on = {}) {
  if (data.keyTokens) {
    container.replaceChildren(el('p', { class: 'help', text: 'Rollout follows a sequence’s attention to itself through the layers; cross-attention reads another sequence. Pick the decoder’s or the encoder’s self-attention.' }));
    return { svg: null };
  }
  const rolled = {
    ...data, nHead: 1, attention: rolloutOf(data), headLabel: () => null, test: null, view: 'rollout',
    title: (layer) => `Attention rollout, layers 1–${layer + 1}: how much of each token (column) reaches each row`,
  };
  return renderHeatmapView(container, rolled, { layer: sel.layer, head: 0, query: sel.query }, on);
}
