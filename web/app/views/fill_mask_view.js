// Fill in the blank: the sentence's words as buttons (click one to hide it behind [MASK], click a
// [MASK] to bring a word back), and for every blank the model's guesses with probability bars.
import { el } from './dom.js';
import { renderNextTokenView } from './next_token_view.js';

/**
 * data: { words: [{ text, mask }] (masking.js splitWords), fill: [{ position, predictions }] or null }
 * on: { toggle(wordIndex) }
 */
export function renderFillMaskView(container, data, on = {}) {
  const words = el('div', { class: 'fill-words', role: 'group', 'aria-label': 'Words of the sentence: click one to mask it' },
    data.words.map((w, i) => el('button', {
      type: 'button', class: `fill-word${w.mask ? ' fill-mask' : ''}`, 'data-index': i, 'aria-pressed': w.mask ? 'true' : 'false',
      title: w.mask ? 'Put a word back' : 'Hide this word from the model', text: w.text, onclick: () => on.toggle?.(i),
    })));
  const blanks = (data.fill ?? []).map((blank, k) => {
    const body = el('div', { class: 'fill-preds' });
    return { body, blank, node: el('div', { class: 'fill-blank', 'data-blank': k, 'data-position': blank.position },
      el('p', { class: 'fill-title', text: `Blank ${k + 1} (token ${blank.position + 1}): the model’s guesses` }), body) };
  });
  const empty = data.words.some((w) => w.mask)
    ? (data.fill ? null : el('p', { class: 'fill-note', text: 'The sentence is longer than the model reads; shorten it to see guesses.' }))
    : el('p', { class: 'fill-note', text: 'No blank yet: click a word above (or type [MASK] in the sentence).' });
  container.replaceChildren(...[words, empty, ...blanks.map((b) => b.node)].filter(Boolean));
  // Drawn once in the document, so the bars take the panel's width.
  for (const { body, blank, node } of blanks)
    renderNextTokenView(body, { predictions: blank.predictions }, { title: false, label: `Guesses for blank ${Number(node.dataset.blank) + 1}` });
  return { svgs: blanks.map((b) => b.body.querySelector('svg')) };
}
