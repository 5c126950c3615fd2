// The added tokens of a tokenizer.json (<|im_start|>, <|endoftext|>, <s>, ...): found in the text
// before the model runs, leftmost and longest first, as `tokenizers` finds them; each is one id
// whatever the model's merges would make of its characters. Those marked `normalized: false` are
// found in the raw text, the others in the normalized text. lstrip / rstrip take the whitespace
// beside a match into it; single_word accepts a match only between non-word characters.
import { AttentionError } from '../errors.js';
import { show } from '../validate.js';

export interface AddedToken {
  id: number;
  content: string;
  special: boolean;
  normalized: boolean;
  lstrip: boolean;
  rstrip: boolean;
  singleWord: boolean;
}

/** A piece of text: still to tokenize (a string) or an added token's id. */
export type Segment = string | number;

/** tokenizer.json's added_tokens list, checked entry by entry (fields: id, content, single_word,
 * lstrip, rstrip, normalized, special). */
export function readAddedTokens(list: unknown): AddedToken[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new AttentionError(`tokenizer.json: added_tokens must be a list, got ${show(list)}`);
  return list.map((entry: unknown, i) => {
    const at = `tokenizer.json: added_tokens[${i}]`;
    if (typeof entry !== 'object' || entry === null) throw new AttentionError(`${at} must be an object { id, content, ... }, got ${show(entry)}`);
    const e = entry as Record<string, unknown>;
    if (typeof e.id !== 'number' || !Number.isInteger(e.id) || e.id < 0) throw new AttentionError(`${at}.id must be an integer >= 0, got ${show(e.id)}`);
    if (typeof e.content !== 'string' || e.content === '') throw new AttentionError(`${at}.content must be a non-empty string, got ${show(e.content)}`);
    const flag = (key: string, fallback: boolean) => {
      if (e[key] === undefined) return fallback;
      if (typeof e[key] !== 'boolean') throw new AttentionError(`${at}.${key} must be true or false, got ${show(e[key])}`);
      return e[key] as boolean;
    };
    const special = flag('special', false);
    return {
      id: e.id, content: e.content, special, normalized: flag('normalized', !special),
      lstrip: flag('lstrip', false), rstrip: flag('rstrip', false), singleWord: flag('single_word', false),
    };
  });
}

const isWordChar = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{N}_]/u.test(ch);

/** Finds one group of added tokens (the normalized ones, or the others) in a text. */
export class AddedTokenMatcher {
  private readonly re: RegExp | null;
  private readonly byContent = new Map<string, AddedToken>();

  constructor(tokens: AddedToken[]) {
    for (const t of tokens) this.byContent.set(t.content, t);
    // Longest first: at one position the alternation then takes the longest token.
    const contents = [...this.byContent.keys()].sort((a, b) => b.length - a.length);
    const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    this.re = contents.length ? new RegExp(contents.map(escape).join('|'), 'gu') : null;
  }

  /** The text cut at the added tokens it holds: strings to tokenize and ids, in order. */
  split(text: string): Segment[] {
    if (this.re === null || text === '') return text === '' ? [] : [text];
    const out: Segment[] = [];
    let last = 0;  // end of the text taken so far (a match's stripped spaces included)
    this.re.lastIndex = 0;
    for (let m = this.re.exec(text); m !== null; m = this.re.exec(text)) {
      const token = this.byContent.get(m[0])!;
      let start = m.index, stop = start + m[0].length;
      if (token.singleWord && (isWordChar(lastChar(text, start)) || isWordChar(firstChar(text, stop)))) continue;
      if (token.lstrip) while (start > last && /\s/u.test(lastChar(text, start)!)) start -= lastChar(text, start)!.length;
      if (token.rstrip) while (stop < text.length && /\s/u.test(firstChar(text, stop)!)) stop += firstChar(text, stop)!.length;
      if (start > last) out.push(text.slice(last, start));
      out.push(token.id);
      last = stop;
      this.re.lastIndex = Math.max(this.re.lastIndex, stop);
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }
}

/** The character before / at a position (a surrogate pair whole). */
function lastChar(text: string, at: number): string | undefined {
  if (at <= 0) return undefined;
  const low = text.charCodeAt(at - 1);
  return at >= 2 && (low & 0xfc00) === 0xdc00 && (text.charCodeAt(at - 2) & 0xfc00) === 0xd800 ? text.slice(at - 2, at) : text[at - 1];
}

function firstChar(text: string, at: number): string | undefined {
  if (at >= text.length) return undefined;
  const cp = text.codePointAt(at)!;
  return String.fromCodePoint(cp);
}
