// The side panel that describes what computes: the model (from the worker's info, whatever the
// model) or the tutorial's one-layer example.
import { el } from './views/dom.js';

/** info: the worker's model info (or null while loading); run: the last run (its facts are per sentence);
 * back: the address of this view (the page's URL may not say it yet). */
export function renderInfoPanel(dl, { seed, info, run, modelUrl, back = location.href }) {
  if (seed) {
    dl.replaceChildren(
      el('dt', { text: 'Layer' }), el('dd', { text: 'one attention layer, 1 head, d_model = d_k = 2, no biases' }),
      el('dt', { text: 'Computed by' }), el('dd', { text: `the library's MultiHeadAttention with trace (WASM ${info?.variant ?? ''})` }));
    return;
  }
  if (!info) return;
  const items = [['Model', info.name], ...info.facts, ['Weights', `${(info.modelBytes / 1e6).toFixed(1)} MB`],
    ['Engine', `WebAssembly (${info.variant}) in a worker`], ...(run?.facts ?? [])];
  const { href, text } = cardLink(info, modelUrl, back);
  const link = href ? el('a', { href, text, rel: info.hubPage ? 'noopener' : null }) : el('span', { text: 'no model card (a GGUF file)' });
  dl.replaceChildren(...items.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]), el('dt', { text: 'More' }), el('dd', {}, link));
}

/** Where a model is described: its card rendered as a page of the demo (`cardPage`: model-card.html
 * beside the page by default), coming back to `back`, or with no demo beside (cardPage null: the
 * widget from the npm package) the card's Markdown file itself; a model from the Hugging Face Hub:
 * its page there; a GGUF file of no Hub repository: nowhere (href null). */
export function cardLink(info, modelUrl, back, cardPage = new URL('model-card.html', location.href).href) {
  if (info.hubPage) return { href: info.hubPage, text: 'model page on the Hub' };
  // A GGUF file (from the learner's disk or a URL) comes with no card beside it.
  if (info.gguf) return { href: null, text: null };
  if (!cardPage) return { href: new URL('MODEL_CARD.md', modelUrl).href, text: 'model card' };
  const card = new URL(cardPage);
  card.searchParams.set('card', new URL('MODEL_CARD.md', modelUrl).href);
  card.searchParams.set('back', back);
  // The card page opens with the model's measured summary when the model has one (quality.json).
  if (info.quality) card.searchParams.set('summary', '1');
  return { href: card.href, text: 'model card' };
}
