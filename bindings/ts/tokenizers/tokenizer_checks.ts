// Checks the tokenizers share. The context limit a model passes to encode(): a text whose length
// alone proves it needs more tokens than the model's context is refused in O(n) before any
// merging, and one that passes that test stops as soon as its tokens go past the limit, so an
// over-long input costs no more than a pass over its characters. Also: the size of a tokenizer
// file before it is parsed, ids passed back to decode(), fields of a parsed tokenizer.json.
import { AttentionError } from '../errors.js';
import { checkOptions, is, show } from '../validate.js';
import type { Rules } from '../validate.js';

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

/** The largest tokenizer file read (vocab.json, merges.txt, vocab.txt, tokenizer.json): GPT-2's
 * are 1 MB and 0.5 MB, BERT's vocab.txt 0.2 MB, the largest multilingual tokenizer.json files of
 * these model types a few MB. A larger file is refused before it is decoded or parsed. */
export const MAX_TOKENIZER_FILE_BYTES = 32 * 1024 * 1024;

/** The most tokens of a vocabulary, and its highest id: GPT-2 has 50,257 tokens, the largest
 * vocabularies in use 256k. (An id of 1e9 would make a sparse table that long.) */
export const MAX_VOCAB_TOKENS = 1 << 20;

/** Refuses a vocabulary of more than MAX_VOCAB_TOKENS tokens before it is indexed. */
export function checkVocabSize(file: string, tokens: number): void {
  if (tokens > MAX_VOCAB_TOKENS) throw new AttentionError(`${file}: ${tokens} tokens are more than a vocabulary may have (${MAX_VOCAB_TOKENS})`);
}

/** The files checkTokenizerFileSize is for (tokenizer_config.json is a small settings file). */
export const TOKENIZER_FILES: readonly string[] = ['vocab.json', 'merges.txt', 'vocab.txt', 'tokenizer.json'];

/** Throws "<file>: N bytes are more than a tokenizer file may have (32 MiB)" for a file too large
 * to be a tokenizer's: call it with the file's byte length before decoding it (or with its text's
 * length, unit 'characters', each at least a byte). */
export function checkTokenizerFileSize(file: string, size: number, unit: 'bytes' | 'characters' = 'bytes'): void {
  if (size > MAX_TOKENIZER_FILE_BYTES)
    throw new AttentionError(`${file}: ${size} ${unit} are more than a tokenizer file may have (${MAX_TOKENIZER_FILE_BYTES / 1024 / 1024} MiB)`);
}

/** A top-level field of a parsed tokenizer.json: an object that throws when read (a Proxy, a
 * getter) is a named error too. */
export function readField(json: object, key: string): unknown {
  try {
    return (json as Record<string, unknown>)[key];
  } catch (e) {
    throw new AttentionError(`tokenizer.json: ${key} could not be read: ${show((e as Error)?.message)}`);
  }
}
