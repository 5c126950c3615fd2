// The pipeline parts of a Hugging Face tokenizer.json, read as the `tokenizers` library defines
// them: normalizers (string -> string), pre-tokenizers (pieces -> finer pieces), decoders (token
// strings -> strings) and the post-processor (ids -> ids with the special tokens a template adds).
// Only the kinds the Llama family's files use are built; any other is refused by name, listing
// the kinds that are supported.
import { byteToUnicode } from './bpe_tokenizer.js';
import { AttentionError } from '../errors.js';
import { onigRegex } from './onig_regex.js';
import type { LinearRegex } from './linear_regex.js';
import { show } from '../validate.js';

type Json = Record<string, unknown>;
/** `budget`: the characters the encode() call may still write (see WorkBudget). */
export type Normalizer = (text: string, budget: WorkBudget) => string;
/** `atStart`: whether the first piece begins the text (Metaspace's prepend_scheme "first"). */
export type PreTokenizer = (pieces: string[], atStart: boolean, budget: WorkBudget) => string[];

// A tokenizer.json comes from whoever published it: its parts may be nested and repeated at will
// (a Sequence of 20 ByteLevel pre-tokenizers turns 16 characters into 1.5 million ids). Bounds:
/** The deepest a Sequence may sit in Sequences (real files use one level). */
export const MAX_NESTING = 4;
/** The most parts of one normalizer, pre-tokenizer or decoder, Sequences included (real files: under 10). */
export const MAX_PARTS = 64;
/** The longest Replace content or Prepend prefix (real files: one character, "▁" or " "). */
export const MAX_REPLACEMENT = 64;
/** The characters the normalizer and pre-tokenizer steps of one encode() call may write, all steps
 * together: this many per character of the text, plus WORK_SLACK (the real pipelines write under
 * 10 per character; NFKD, which makes up to 18 characters of one, then bytes, under 80). */
export const WORK_PER_CHARACTER = 256;
export const WORK_SLACK = 65536;

/** The characters an encode() call may still have its normalizer and pre-tokenizer write. */
export class WorkBudget {
  private left: number;
  constructor(private readonly textLength: number) { this.left = this.total; }
  private get total(): number { return WORK_PER_CHARACTER * this.textLength + WORK_SLACK; }
  get remaining(): number { return this.left; }
  /** Counts what a step wrote; throws a named error once the budget is spent. */
  spend(chars: number, where: string): void {
    this.left -= chars;
    if (this.left < 0) {
      throw new AttentionError(`encode: the tokenizer.json's ${where} wrote more than the ${this.total} characters allowed for a text of ${this.textLength} ` +
        `(${WORK_PER_CHARACTER} per character and ${WORK_SLACK} more, all steps together): the file's normalizer or pre-tokenizer makes text grow without bound`);
    }
  }
}

/** Counts the parts of one tree (a normalizer, a pre-tokenizer, a decoder) as they are read. */
interface Tree { what: string; parts: number; depth: number; byteLevel?: string }
const newTree = (what: string): Tree => ({ what, parts: 0, depth: 0 });
function countPart(tree: Tree, where: string): void {
  if (++tree.parts > MAX_PARTS) throw new AttentionError(`tokenizer.json: ${tree.what} has more than ${MAX_PARTS} parts (at ${where})`);
}
/** Reads a Sequence's items one level deeper. */
function nested<T>(tree: Tree, where: string, list: unknown[], read: (item: unknown, at: string) => T, key: string): T[] {
  if (++tree.depth > MAX_NESTING) throw new AttentionError(`tokenizer.json: ${where} is a Sequence nested more than ${MAX_NESTING} deep`);
  const out = list.map((item, i) => read(item, `${where}.${key}[${i}]`));
  tree.depth--;
  return out;
}
export type Decoder = (tokens: string[]) => string[];

/** A part's field: its value, or a named error when it is not of the expected kind. */
function field<T>(part: Json, where: string, key: string, kind: 'string' | 'boolean' | 'number' | 'object', fallback?: T): T {
  const value = part[key];
  if (value === undefined || value === null) {
    if (fallback !== undefined) return fallback;
    throw new AttentionError(`tokenizer.json: ${where}.${key} is missing`);
  }
  if (typeof value !== kind) throw new AttentionError(`tokenizer.json: ${where}.${key} must be a ${kind}, got ${show(value)}`);
  return value as T;
}

/** A part: an object with a `type`, which must be one of `known`. */
function partType(part: unknown, where: string, known: string[]): string {
  if (typeof part !== 'object' || part === null || Array.isArray(part)) throw new AttentionError(`tokenizer.json: ${where} must be an object with a type, got ${show(part)}`);
  const type = (part as Json).type;
  if (typeof type !== 'string' || !known.includes(type))
    throw new AttentionError(`tokenizer.json: ${where} of type ${show(type)} is not supported (supported: ${known.join(', ')})`);
  return type;
}

/** The items of a Sequence part. */
function items(part: Json, where: string, key: string): unknown[] {
  const list = part[key];
  if (!Array.isArray(list)) throw new AttentionError(`tokenizer.json: ${where}.${key} must be a list, got ${show(list)}`);
  return list;
}

/** Where a pattern matches in a text: visit(start, end) for each match, left to right, none overlapping. */
export interface Matcher { each(text: string, visit: (start: number, end: number) => void): void }

/** A literal's occurrences, found with indexOf (linear in the text). */
function literalMatcher(literal: string): Matcher {
  return {
    each(text: string, visit: (start: number, end: number) => void) {
      for (let at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, at + literal.length)) visit(at, at + literal.length);
    },
  };
}

/** A Replace step; it stops (returning undefined) once its text would pass `max` characters. */
function replacer(part: Json, where: string): (text: string, max: number) => string | undefined {
  const match = pattern(part, where), content = field<string>(part, where, 'content', 'string');
  if (content.length > MAX_REPLACEMENT) throw new AttentionError(`tokenizer.json: ${where}.content has ${content.length} characters, more than ${MAX_REPLACEMENT} (each match would grow the text by as many)`);
  const literal = (part.pattern as Json).String;
  if (typeof literal === 'string') {
    return (s, max) => {
      if (!s.includes(literal)) return s;
      const parts = s.split(literal);
      return s.length + (parts.length - 1) * (content.length - literal.length) > max ? undefined : parts.join(content);
    };
  }
  return (s, max) => (match as LinearRegex).replace(s, content, max);
}

/** A Split or Replace pattern: { String: "..." } (literal) or { Regex: "..." } (Oniguruma's
 * syntax, matched in time linear in the text: onig_regex.ts). */
function pattern(part: Json, where: string): Matcher {
  const p = part.pattern as Json | undefined;
  if (typeof p === 'object' && p !== null && typeof p.String === 'string') {
    if (p.String === '') throw new AttentionError(`tokenizer.json: ${where}.pattern.String must not be empty`);
    return literalMatcher(p.String);
  }
  if (typeof p === 'object' && p !== null && typeof p.Regex === 'string') return onigRegex(p.Regex, `tokenizer.json: ${where}.pattern`);
  throw new AttentionError(`tokenizer.json: ${where}.pattern must be { String } or { Regex }, got ${show(p)}`);
}

// ---------------------------------------------------------------------------------------------
// Normalizers

const NORMALIZERS = ['Sequence', 'NFC', 'NFD', 'NFKC', 'NFKD', 'Lowercase', 'Prepend', 'Replace', 'Strip'];

/** A normalizer, and whether it can make a text shorter (then the length precheck is off). */
export function normalizer(part: unknown, where = 'normalizer', tree = newTree('normalizer')): { apply: Normalizer; shrinks: boolean } {
  if (part === null || part === undefined) return { apply: (s) => s, shrinks: false };
  const type = partType(part, where, NORMALIZERS), p = part as Json;
  countPart(tree, where);
  // Each step counts what it writes against the call's budget.
  const step = (apply: (s: string) => string, shrinks: boolean) => ({
    apply: (s: string, budget: WorkBudget) => { const out = apply(s); budget.spend(out.length, where); return out; }, shrinks,
  });
  switch (type) {
    case 'Sequence': {
      const steps = nested(tree, where, items(p, where, 'normalizers'), (n, at) => normalizer(n, at, tree), 'normalizers');
      return { apply: (s, budget) => steps.reduce((t, next) => next.apply(t, budget), s), shrinks: steps.some((s) => s.shrinks) };
    }
    case 'NFC': case 'NFD': case 'NFKC': case 'NFKD':
      return step((s) => s.normalize(type), true);
    case 'Lowercase': return step((s) => s.toLowerCase(), true);
    case 'Prepend': {
      // (an empty text stays empty, as in `tokenizers`)
      const prefix = field<string>(p, where, 'prepend', 'string');
      if (prefix.length > MAX_REPLACEMENT) throw new AttentionError(`tokenizer.json: ${where}.prepend has ${prefix.length} characters, more than ${MAX_REPLACEMENT}`);
      return step((s) => (s ? prefix + s : s), false);
    }
    case 'Replace': {
      const literal = (p.pattern as Json).String as string | undefined;
      const replace = replacer(p, where);
      const apply = (s: string, budget: WorkBudget) => {
        const out = replace(s, budget.remaining);
        budget.spend(out === undefined ? budget.remaining + 1 : out.length, where);
        return out!;
      };
      return { apply, shrinks: literal === undefined || (p.content as string).length < literal.length };
    }
    default: {  // Strip
      const left = field<boolean>(p, where, 'strip_left', 'boolean', false), right = field<boolean>(p, where, 'strip_right', 'boolean', false);
      return step((s) => (left && right ? s.trim() : left ? s.trimStart() : right ? s.trimEnd() : s), true);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers

const PRE_TOKENIZERS = ['Sequence', 'Split', 'ByteLevel', 'Metaspace', 'Digits'];
// (not 'Removed': no text may vanish, the length precheck of encode() counts on it)
const BEHAVIORS = ['Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];
// GPT-2's pattern, which ByteLevel splits with when its use_regex is true.
const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/** Splits text where `re` matches, as `tokenizers`' Split with `behavior` does (empty pieces are
 * dropped). `invert`: the matches are the pieces to keep and the text between them delimits. */
export function splitText(text: string, matcher: Matcher, behavior: string, invert = false): string[] {
  const spans: Array<[number, number, boolean]> = [];
  let last = 0;
  matcher.each(text, (start, end) => {
    if (end === start) return;
    if (start > last) spans.push([last, start, invert]);
    spans.push([start, end, !invert]);
    last = end;
  });
  if (last < text.length) spans.push([last, text.length, invert]);
  const out: Array<[number, number]> = [];
  if (behavior === 'MergedWithNext') {
    // Walked from the end: a delimiter joins the piece after it.
    let previousMatch = false;
    for (let i = spans.length - 1; i >= 0; i--) {
      const [start, end, isMatch] = spans[i];
      if (isMatch && !previousMatch && out.length) out[out.length - 1][0] = start;
      else out.push([start, end]);
      previousMatch = isMatch;
    }
    out.reverse();
  } else {
    let previousMatch = false;
    for (const [start, end, isMatch] of spans) {
      const join = behavior === 'MergedWithPrevious' ? isMatch && !previousMatch : behavior === 'Contiguous' && isMatch && previousMatch;
      if (join && out.length) out[out.length - 1][1] = end;
      else out.push([start, end]);
      previousMatch = isMatch;
    }
  }
  return out.map(([start, end]) => text.slice(start, end));
}

const eachPiece = (pieces: string[], split: (piece: string, index: number) => string[]): string[] => {
  const out: string[] = [];
  pieces.forEach((piece, i) => { for (const p of split(piece, i)) out.push(p); });
  return out;
};

const NUMBER = onigRegex('\\p{N}', 'Digits');

export function preTokenizer(part: unknown, where = 'pre_tokenizer', tree = newTree('pre_tokenizer')): PreTokenizer {
  if (part === null || part === undefined) return (pieces) => pieces;
  const type = partType(part, where, PRE_TOKENIZERS), p = part as Json;
  countPart(tree, where);
  const counted = (split: PreTokenizer): PreTokenizer => (pieces, atStart, budget) => {
    const out = split(pieces, atStart, budget);
    budget.spend(out.reduce((n, piece) => n + piece.length, 0), where);
    return out;
  };
  switch (type) {
    case 'Sequence': {
      const steps = nested(tree, where, items(p, where, 'pretokenizers'), (n, at) => preTokenizer(n, at, tree), 'pretokenizers');
      return (pieces, atStart, budget) => steps.reduce((ps, step) => step(ps, atStart, budget), pieces);
    }
    case 'Split': {
      const re = pattern(p, where), behavior = field<string>(p, where, 'behavior', 'string');
      if (!BEHAVIORS.includes(behavior)) throw new AttentionError(`tokenizer.json: ${where}.behavior ${show(behavior)} is not supported (supported: ${BEHAVIORS.join(', ')})`);
      const invert = field<boolean>(p, where, 'invert', 'boolean', false);
      return counted((pieces) => eachPiece(pieces, (piece) => splitText(piece, re, behavior, invert)));
    }
    case 'ByteLevel': {
      // Its output is already bytes: a second would re-encode them, each up to 3 times longer.
      if (tree.byteLevel !== undefined) throw new AttentionError(`tokenizer.json: ${where} is a second ByteLevel pre-tokenizer (after ${tree.byteLevel}); each one would make the text up to 3 times longer`);
      tree.byteLevel = where;
      return counted(byteLevel(p, where));
    }
    case 'Digits': {
      const individual = field<boolean>(p, where, 'individual_digits', 'boolean', false);
      return counted((pieces) => eachPiece(pieces, (piece) => splitText(piece, NUMBER, individual ? 'Isolated' : 'Contiguous')));
    }
    default: return counted(metaspace(p, where));
  }
}

const BYTE_TO_CHAR = byteToUnicode();
const encoder = new TextEncoder();

/** Bytes as GPT-2's printable stand-ins (each piece first split with GPT-2's pattern if use_regex). */
function byteLevel(p: Json, where: string): PreTokenizer {
  const prefix = field<boolean>(p, where, 'add_prefix_space', 'boolean', false);
  const re = field<boolean>(p, where, 'use_regex', 'boolean', true) ? onigRegex(GPT2_PATTERN, where) : null;
  return (pieces) => eachPiece(pieces, (piece) => {
    if (prefix && !piece.startsWith(' ')) piece = ' ' + piece;
    return (re ? splitText(piece, re, 'Isolated') : [piece]).map(toByteChars);
  });
}

/** A string's UTF-8 bytes as GPT-2's byte characters. */
export function toByteChars(text: string): string {
  let out = '';
  for (const b of encoder.encode(text)) out += BYTE_TO_CHAR[b];
  return out;
}

const PREPEND_SCHEMES = ['always', 'first', 'never'];

/** SentencePiece's metaspace: spaces become `replacement` ("▁"), one is put before a piece per
 * prepend_scheme, and with `split` each word (with its "▁") is a piece of its own. */
function metaspace(p: Json, where: string): PreTokenizer {
  const replacement = field<string>(p, where, 'replacement', 'string');
  if ([...replacement].length !== 1) throw new AttentionError(`tokenizer.json: ${where}.replacement must be one character, got ${show(replacement)}`);
  const scheme = metaspaceScheme(p, where), split = field<boolean>(p, where, 'split', 'boolean', true);
  const re = literalMatcher(replacement);
  return (pieces, atStart) => eachPiece(pieces, (piece, i) => {
    piece = piece.replace(/ /g, replacement);
    const prepend = scheme === 'always' || (scheme === 'first' && i === 0 && atStart);
    if (prepend && !piece.startsWith(replacement)) piece = replacement + piece;
    return split ? splitText(piece, re, 'MergedWithNext') : [piece];
  });
}

/** prepend_scheme, or the older add_prefix_space (true = "always"). */
function metaspaceScheme(p: Json, where: string): string {
  if (p.prepend_scheme === undefined || p.prepend_scheme === null) return field<boolean>(p, where, 'add_prefix_space', 'boolean', true) ? 'always' : 'never';
  const scheme = field<string>(p, where, 'prepend_scheme', 'string');
  if (!PREPEND_SCHEMES.includes(scheme)) throw new AttentionError(`tokenizer.json: ${where}.prepend_scheme ${show(scheme)} is not supported (supported: ${PREPEND_SCHEMES.join(', ')})`);
  return scheme;
}

// ---------------------------------------------------------------------------------------------
// Decoders

const DECODERS = ['Sequence', 'ByteLevel', 'Replace', 'ByteFallback', 'Fuse', 'Strip', 'Metaspace'];
const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((ch, b) => [ch, b]));
// Invalid sequences -> U+FFFD, as from_utf8_lossy; a leading U+FEFF is text, not a byte order
// mark to drop (TextDecoder drops it unless told).
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decoder(part: unknown, where = 'decoder', tree = newTree('decoder')): Decoder {
  // No decoder: `tokenizers` joins the tokens with spaces.
  if (part === null || part === undefined) return (tokens) => [tokens.join(' ')];
  const type = partType(part, where, DECODERS), p = part as Json;
  countPart(tree, where);
  switch (type) {
    case 'Sequence': {
      const steps = nested(tree, where, items(p, where, 'decoders'), (n, at) => decoder(n, at, tree), 'decoders');
      return (tokens) => steps.reduce((ts, step) => step(ts), tokens);
    }
    case 'ByteLevel': return (tokens) => [utf8.decode(Uint8Array.from(tokens.flatMap(tokenBytes)))];
    case 'Replace': {
      const replace = replacer(p, where);
      return (tokens) => tokens.map((t) => replace(t, Infinity)!);
    }
    case 'ByteFallback': return byteFallback;
    case 'Fuse': return (tokens) => [tokens.join('')];
    case 'Strip': {
      const content = field<string>(p, where, 'content', 'string');
      const start = field<number>(p, where, 'start', 'number', 0), stop = field<number>(p, where, 'stop', 'number', 0);
      return (tokens) => tokens.map((t) => strip(t, content, start, stop));
    }
    default: {  // Metaspace: "▁" -> " ", and the first token loses the space the encoder put before it
      const replacement = field<string>(p, where, 'replacement', 'string'), scheme = metaspaceScheme(p, where);
      return (tokens) => tokens.map((t, i) => {
        const s = t.split(replacement).join(' ');
        return i === 0 && scheme !== 'never' && s.startsWith(' ') ? s.slice(1) : s;
      });
    }
  }
}

/** A byte-level token's bytes; a token with a character outside the byte map (an added token)
 * stands for its own UTF-8 bytes. */
export function tokenBytes(token: string): number[] {
  const bytes: number[] = [];
  for (const ch of token) {
    const b = CHAR_TO_BYTE.get(ch);
    if (b === undefined) return Array.from(encoder.encode(token));
    bytes.push(b);
  }
  return bytes;
}

/** Runs of "<0xNN>" tokens become the text of their bytes, or one U+FFFD per byte when they are
 * not valid UTF-8 together. */
function byteFallback(tokens: string[]): string[] {
  const out: string[] = [], run: number[] = [];
  const flush = () => {
    if (!run.length) return;
    try {
      out.push(strictUtf8.decode(Uint8Array.from(run)));
    } catch {
      for (let i = 0; i < run.length; i++) out.push('\ufffd');
    }
    run.length = 0;
  };
  for (const t of tokens) {
    const byte = /^<0x[0-9A-Fa-f]{2}>$/.test(t) ? parseInt(t.slice(3, 5), 16) : -1;
    if (byte >= 0) run.push(byte);
    else { flush(); out.push(t); }
  }
  flush();
  return out;
}

/** Removes up to `start` leading and `stop` trailing `content` characters (by index: the token
 * after Fuse is the whole text). */
function strip(token: string, content: string, start: number, stop: number): string {
  let from = 0, to = token.length;
  for (let n = 0; n < start && from < to && token.startsWith(content, from); n++) from += content.length;
  for (let n = 0; n < stop && to - content.length >= from && token.endsWith(content, to); n++) to -= content.length;
  return token.slice(from, to);
}

// ---------------------------------------------------------------------------------------------
// Post-processor

const POST_PROCESSORS = ['Sequence', 'ByteLevel', 'TemplateProcessing'];

/** The special tokens the post-processor puts around one sequence: ids before and after it. */
export interface Template { before: number[]; after: number[] }

export function postProcessor(part: unknown, where = 'post_processor', tree = newTree('post_processor')): Template {
  const none: Template = { before: [], after: [] };
  if (part === null || part === undefined) return none;
  const type = partType(part, where, POST_PROCESSORS), p = part as Json;
  countPart(tree, where);
  if (type === 'ByteLevel') return none;  // (it only adjusts offsets)
  if (type === 'Sequence') {
    const parts = nested(tree, where, items(p, where, 'processors'), (n, at) => postProcessor(n, at, tree), 'processors');
    return { before: parts.flatMap((t) => t.before), after: parts.flatMap((t) => t.after) };
  }
  return template(p, where);
}

/** TemplateProcessing's `single` template, e.g. [<s>, $A] or [<|begin_of_text|>, $A]. */
function template(p: Json, where: string): Template {
  const single = items(p, where, 'single'), specials = p.special_tokens as Record<string, Json> | undefined;
  const out: Template = { before: [], after: [] };
  let seen = false;
  single.forEach((piece, i) => {
    const at = `${where}.single[${i}]`, item = piece as { Sequence?: Json; SpecialToken?: Json } | null;
    if (item?.Sequence) {
      if (item.Sequence.id !== 'A' || seen) throw new AttentionError(`tokenizer.json: ${at}: only one sequence, $A, is supported in a single template, got ${show(item.Sequence.id)}`);
      seen = true;
      return;
    }
    const name = item?.SpecialToken?.id;
    const ids = typeof name === 'string' ? specials?.[name]?.ids : undefined;
    if (!Array.isArray(ids) || !ids.every((id) => Number.isInteger(id) && id >= 0))
      throw new AttentionError(`tokenizer.json: ${at} must be { Sequence } or { SpecialToken } with its ids in ${where}.special_tokens, got ${show(piece)}`);
    (seen ? out.after : out.before).push(...(ids as number[]));
  });
  if (!seen) throw new AttentionError(`tokenizer.json: ${where}.single has no $A sequence`);
  return out;
}
