// The page's row of token chips: one button per token, the query token selected. With a sentence
// pair each chip shows its token type (0 or 1); a padded row's [PAD] chips are greyed; the pieces
// of one word share an underline; a byte chip's title says which character it is part of.
import { el, tokenLabel } from './views/dom.js';

/** The chip's place in its word: '' (a word of one token), 'first', 'middle' or 'last'. */
function pieceOf(continues, i) {
  const before = !!continues?.[i], after = !!continues?.[i + 1];
  return before ? (after ? 'middle' : 'last') : after ? 'first' : '';
}

/** A byte chip's title: which character its bytes spell (runs: word_groups.js's byteRuns). */
function byteTitle(runs, i) {
  const run = runs?.find((r) => i >= r.from && i < r.to);
  return run ? `, byte ${i - run.from + 1} of ${run.to - run.from} of “${run.text}” in UTF-8: the vocabulary has no token for it` : '';
}

/** tokens: strings; options: { query, tokenTypes (shown when showTypes), padding, continues (per
 * token: it is a piece of the word before; the strip underlines each word of several pieces),
 * byteRuns (byte tokens and the characters they spell) } */
export function renderTokenChips(container, tokens, { query, tokenTypes = null, showTypes = false, padding = null, continues = null, byteRuns = null }) {
  // Reuse the chips when nothing about them changed, so keyboard focus stays put.
  const key = (i) => `${tokens[i]}|${showTypes ? tokenTypes?.[i] ?? '' : ''}|${padding?.[i] ?? 0}|${pieceOf(continues, i)}`;
  const same = container.childElementCount === tokens.length && tokens.every((t, i) => container.children[i].dataset.key === key(i));
  if (!same) {
    container.replaceChildren(...tokens.map((t, i) => {
      const type = showTypes ? tokenTypes?.[i] : undefined;
      const pad = padding?.[i] === 1;
      const piece = pieceOf(continues, i);
      return el('button', {
        type: 'button', class: `token${type === 1 ? ' type-1' : ''}${pad ? ' pad' : ''}${piece ? ` piece piece-${piece}` : ''}`, role: 'option',
        'data-index': i, 'data-token': t, 'data-key': key(i), 'data-piece': piece || null,
        'data-type': type ?? null, title: `token ${i + 1}${type !== undefined ? `, token type ${type}` : ''}${pad ? ', padding (masked)' : ''}`
          + `${piece ? ', one piece of a word' : ''}${byteTitle(byteRuns, i)}`,
      }, tokenLabel(t), type !== undefined ? el('sub', { class: 'type', 'aria-hidden': 'true', text: String(type) }) : null);
    }));
  }
  [...container.children].forEach((b, i) => {
    b.setAttribute('aria-selected', i === query ? 'true' : 'false');
    b.tabIndex = i === query ? 0 : -1;
  });
}

/**
 * A strip's clicks and keys (a listbox: the arrows, Home and End move the choice) call pick(i)
 * with the chosen token's index; the arrows also move the focus along.
 */
export function listenToChips(container, pick) {
  container.addEventListener('click', (e) => {
    const b = e.target.closest('.token');
    if (b) pick(Number(b.dataset.index));
  });
  container.addEventListener('keydown', (e) => {
    const b = e.target.closest('.token');
    if (!b || !['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) return;
    const n = container.childElementCount, i = Number(b.dataset.index);
    const next = e.key === 'Home' ? 0 : e.key === 'End' ? n - 1 : Math.max(0, Math.min(n - 1, i + (e.key === 'ArrowRight' ? 1 : -1)));
    pick(next);
    container.children[next]?.focus();
    e.preventDefault();
  });
}
