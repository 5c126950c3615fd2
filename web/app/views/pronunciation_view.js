// The encoder-decoder's answers: each typed word with the phonemes the model wrote (ARPAbet) and
// the same sounds in IPA. Clicking a word shows its attention in the views. Text only (no HTML).
import { el } from './dom.js';

/** data: { pronunciations: [{ word, phonemes, ipa, finished }], wordIndex }; onSelect(i). */
export function renderPronunciationView(container, data, { onSelect }) {
  const items = (data.pronunciations ?? []).map((p, i) => {
    const chosen = i === data.wordIndex;
    return el('button', { type: 'button', class: `pron${chosen ? ' chosen' : ''}`, 'data-index': i, 'aria-pressed': chosen ? 'true' : 'false',
      onclick: () => onSelect(i) },
    el('span', { class: 'pron-word', text: p.word }),
    el('span', { class: 'pron-arpabet', text: p.phonemes.join(' ') + (p.finished ? '' : ' …') }),
    p.ipa ? el('span', { class: 'pron-ipa', text: `/${p.ipa}/` }) : '');
  });
  container.replaceChildren(el('div', { class: 'prons' }, ...items));
}
