// Fill in the blank, on the text: the words a learner can click (as BERT's basic tokenizer splits
// them: runs of letters and digits, single punctuation marks, and [MASK] itself), and putting a
// [MASK] in place of one. Pure functions, shared by the page and the widget.
export const MASK = '[MASK]';

const WORD = /\[MASK\]|[\p{L}\p{N}\p{M}]+|[^\s\p{L}\p{N}\p{M}]/gu;

/** text -> [{ text, start, end, mask }] in order. */
export function splitWords(text) {
  return [...text.matchAll(WORD)].map((m) => ({ text: m[0], start: m.index, end: m.index + m[0].length, mask: m[0] === MASK }));
}

/** The text with word i (of splitWords(text)) replaced by `by` (default [MASK]). */
export function replaceWord(text, i, by = MASK) {
  const w = splitWords(text)[i];
  return w ? text.slice(0, w.start) + by + text.slice(w.end) : text;
}

/** How many [MASK]s come before word i: the index of its blank among the model's answers. */
export function blankIndex(text, i) {
  return splitWords(text).slice(0, i).filter((w) => w.mask).length;
}

/**
 * Clicking words in and out of the blanks: remembers the word behind each [MASK] (in order), so a
 * click on a [MASK] puts it back. A [MASK] typed by hand hides no word; it gets `guess` instead.
 */
export class Blanks {
  constructor(text = '') {
    this.hidden = [];
    this.sync(text);
  }

  /** Word i of text: a word becomes [MASK], a [MASK] its word (or `guess(k)`, k = its blank). Returns the new text, or null. */
  toggle(text, i, guess = () => undefined) {
    const w = splitWords(text)[i];
    if (!w) return null;
    if (!w.mask) {
      const next = replaceWord(text, i);
      this.hidden.splice(blankIndex(next, i), 0, w.text);
      return next;
    }
    const k = blankIndex(text, i);
    const back = this.hidden[k] ?? guess(k);
    if (!back) return null;
    this.hidden.splice(k, 1);
    return replaceWord(text, i, back);
  }

  /** The text with every [MASK] replaced by its word (or `guess(k)`), or dropped if it has none. */
  reveal(text, guess = () => undefined) {
    let k = 0;
    const out = text.replace(/\[MASK\]/g, () => {
      const word = this.hidden[k] ?? guess(k);
      k++;
      return word ?? '';
    });
    this.hidden = [];
    return out.replace(/ {2,}/g, ' ').trim();
  }

  /** After typing: forget the hidden words when the blanks no longer line up with them. */
  sync(text) {
    const count = splitWords(text).filter((w) => w.mask).length;
    if (count !== this.hidden.length) this.hidden = new Array(count).fill(undefined);
  }
}
