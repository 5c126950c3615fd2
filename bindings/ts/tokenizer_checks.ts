// The context limit a model passes to its tokenizer's encode(): a text whose length alone proves
// it needs more tokens than the model's context is refused in O(n) before any merging, and one
// that passes that test stops as soon as its tokens go past the limit, so an over-long input
// costs no more than a pass over its characters, whatever the tokenizer.
import { AttentionError } from './errors.js';
import { checkOptions, is, show } from './validate.js';
import type { Rules } from './validate.js';

/** The limit of an encode() call. */
export interface EncodeLimit {
  /** The most tokens the caller can use (a model's context, less the tokens it adds itself). */
  maxTokens: number;
  /** The function the error names ("run", "generate"); default "encode". */
  caller?: string;
}

const RULES: Rules<EncodeLimit> = { maxTokens: is.int(0), caller: is.string };

/** The checked limit (a plain copy), or undefined when there is none. */
export function checkLimit(limit: EncodeLimit | undefined): Required<EncodeLimit> | undefined {
  if (limit === undefined) return undefined;
  const { maxTokens, caller } = checkOptions('encode', limit, RULES);
  if (maxTokens === undefined) throw new AttentionError(`encode: the limit needs maxTokens (an integer >= 0), got ${show(limit)}`);
  return { maxTokens, caller: caller ?? 'encode' };
}

/** "run: the text exceeds the model's context of 1024 tokens (...)". */
export function contextError(limit: Required<EncodeLimit>, detail: string): AttentionError {
  return new AttentionError(`${limit.caller}: the text exceeds the model's context of ${limit.maxTokens} tokens (${detail})`);
}

/** The length of text in UTF-8 bytes, as TextEncoder writes it (a lone surrogate as U+FFFD's 3
 * bytes), without allocating them. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { bytes += 4; i++; } else bytes += 3;
  }
  return bytes;
}

/** The number of characters (code points) of text, as Array.from(text) would count them. */
export function codePointCount(text: string): number {
  let count = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    // A high surrogate followed by a low one is one character.
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { count--; i++; }
  }
  return count;
}

/** Token ids passed back to decode(): an array (or typed array) of them, checked one by one by the
 * tokenizer (an id it does not know is named there). */
export function checkIds(where: string, ids: unknown): void {
  if (!Array.isArray(ids) && !(ArrayBuffer.isView(ids) && !(ids instanceof DataView)))
    throw new AttentionError(`${where}: ids must be an array of token ids, got ${show(ids)}`);
}

/** An id asked about one at a time (tokenText): an integer, else a named error. */
export function checkId(where: string, id: unknown): number {
  if (typeof id !== 'number' || !Number.isInteger(id)) throw new AttentionError(`${where}: a token id must be an integer, got ${show(id)}`);
  return id;
}
