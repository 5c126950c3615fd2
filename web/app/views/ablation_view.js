// "Switch heads off": the model's answers with every head (left) and with the switched-off heads'
// outputs zeroed before W^O (right), side by side. Next-token lists (GPT-2, Llama), each blank's
// guesses (BERT), each word's pronunciation (BART). Plain tables: every number is a text a screen
// reader and a test can read (data-probability on each cell).
import { el, tokenLabel } from './dom.js';
import { percent } from './next_token_view.js';

/** A probability change in percentage points, signed ("+3.1 pts", "−0.4 pts"). */
function points(after, before) {
  const d = (after - before) * 100;
  return `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(Math.abs(d) >= 10 ? 0 : 1)} pts`;
}

/** One cell of a list: the token and its probability (and, right of it, its change). */
function predictionCells(p, other) {
  if (!p) return [el('td', {}), el('td', { class: 'num' })];
  const was = other?.find((q) => q.id === p.id);
  const change = was ? points(p.probability, was.probability) : 'new';
  const cls = !was ? 'num changed' : p.probability >= was.probability ? 'num up' : 'num down';
  // The change sits under the probability: the side panel is narrow.
  return [
    el('td', { text: `“${tokenLabel(p.text)}”`, 'data-token-id': p.id }),
    el('td', { class: cls, 'data-probability': p.probability, title: was ? `with every head: ${percent(was.probability)}` : 'not in the list with every head' },
      percent(p.probability), other ? el('span', { class: 'delta', text: change }) : null),
  ];
}

/** Two ranked lists side by side: with every head, and without the switched-off ones. */
function listTable(caption, before, after, { beforeEnd, afterEnd } = {}) {
  const rows = Math.max(before.length, after.length);
  const head = el('tr', {}, [el('th', { scope: 'colgroup', colspan: 2, text: 'All heads' }), el('th', { scope: 'colgroup', colspan: 2, text: 'Heads off' })]);
  const body = [];
  if (beforeEnd || afterEnd) {
    body.push(el('tr', { class: 'end-of-text' }, [el('td', { text: 'text ends' }), el('td', { class: 'num', text: beforeEnd ? percent(beforeEnd.probability) : '' }),
      el('td', { text: 'text ends' }), el('td', { class: 'num', 'data-probability': afterEnd?.probability ?? '', text: afterEnd ? percent(afterEnd.probability) : '' })]));
  }
  for (let k = 0; k < rows; k++)
    body.push(el('tr', { 'data-rank': k + 1 }, [...predictionCells(before[k]), ...predictionCells(after[k], before)]));
  return el('table', { class: 'ablate-table' }, [el('caption', { text: caption }), el('thead', {}, head), el('tbody', {}, body)]);
}

/** Each word's phonemes with every head and without the switched-off ones. */
function pronunciationTable(before, after) {
  const text = (p) => `${p.phonemes.join(' ')}${p.ipa ? ` /${p.ipa}/` : ''}`;
  const rows = before.map((p, i) => {
    const a = after[i], same = a && a.phonemes.join(' ') === p.phonemes.join(' ');
    return el('tr', { 'data-word': p.word }, [el('td', { text: p.word }), el('td', { text: text(p) }),
      el('td', { class: same ? '' : 'changed', text: a ? `${text(a)}${same ? ' (same)' : ''}` : '' })]);
  });
  return el('table', { class: 'ablate-table' }, [el('caption', { text: 'Pronunciations' }),
    el('thead', {}, el('tr', {}, ['Word', 'All heads', 'Heads off'].map((t) => el('th', { scope: 'col', text: t })))), el('tbody', {}, rows)]);
}

/**
 * run: the page's run with `ablated` (the answers with the heads off) and the answers with every
 * head (predictions / endOfText, fill, pronunciations).
 */
export function renderAblationView(container, run) {
  const a = run.ablated, parts = [];
  if (a.predictions) parts.push(listTable('Next token', run.predictions ?? [], a.predictions, { beforeEnd: run.endOfText, afterEnd: a.endOfText }));
  if (a.pronunciations) parts.push(pronunciationTable(run.pronunciations ?? [], a.pronunciations));
  if ('fill' in a) {
    if (!a.fill) parts.push(el('p', { class: 'help', text: 'Hide a word behind [MASK] (fill in the blank) to compare the model’s guesses.' }));
    else a.fill.forEach((blank, k) => parts.push(listTable(`Blank ${k + 1} (token ${blank.position + 1})`, run.fill?.[k]?.predictions ?? [], blank.predictions)));
  }
  container.replaceChildren(...parts);
}
