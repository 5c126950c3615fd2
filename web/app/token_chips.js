// The page's row of token chips: one button per token, the query token selected. With a sentence
// pair each chip shows its token type (0 or 1); a padded row's [PAD] chips are greyed.
import { el, tokenLabel } from './views/dom.js';

/** tokens: strings; options: { query, tokenTypes (shown when showTypes), padding } */
export function renderTokenChips(container, tokens, { query, tokenTypes = null, showTypes = false, padding = null }) {
  // Reuse the chips when nothing about them changed, so keyboard focus stays put.
  const key = (i) => `${tokens[i]}|${showTypes ? tokenTypes?.[i] ?? '' : ''}|${padding?.[i] ?? 0}`;
  const same = container.childElementCount === tokens.length && tokens.every((t, i) => container.children[i].dataset.key === key(i));
  if (!same) {
    container.replaceChildren(...tokens.map((t, i) => {
      const type = showTypes ? tokenTypes?.[i] : undefined;
      const pad = padding?.[i] === 1;
      return el('button', {
        type: 'button', class: `token${type === 1 ? ' type-1' : ''}${pad ? ' pad' : ''}`, role: 'option', 'data-index': i, 'data-token': t, 'data-key': key(i),
        'data-type': type ?? null, title: `token ${i + 1}${type !== undefined ? `, token type ${type}` : ''}${pad ? ', padding (masked)' : ''}`,
      }, tokenLabel(t), type !== undefined ? el('sub', { class: 'type', 'aria-hidden': 'true', text: String(type) }) : null);
    }));
  }
  [...container.children].forEach((b, i) => {
    b.setAttribute('aria-selected', i === query ? 'true' : 'false');
    b.tabIndex = i === query ? 0 : -1;
  });
}
