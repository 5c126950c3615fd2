// The BPE model of a tokenizer.json ("model": { "type": "BPE", ... }) as `tokenizers` runs it on
// one pre-tokenized piece: characters -> vocabulary symbols (a character the vocabulary lacks
// becomes its UTF-8 bytes as "<0xNN>" tokens with byte_fallback, else the unknown token, fused
// with its unknown neighbours under fuse_unk) -> merges by rank (the merge loop of
// bpe_tokenizer.ts, in the order of `tokenizers`: one merge at a time) -> ids. ignore_merges (Llama 3): a piece that is itself a token is taken whole.
import { applyMerges } from './bpe_tokenizer.js';
import type { MergeRanks } from './bpe_tokenizer.js';
import { AttentionError } from '../errors.js';
import { checkVocabSize, MAX_VOCAB_TOKENS } from './tokenizer_checks.js';
import { show } from '../validate.js';

type Json = Record<string, unknown>;
// Longest piece kept in the cache (characters), and the most pieces cached.
const MAX_CACHED_PIECE = 256;
const MAX_CACHE = 50_000;
// Longest text merged as one (characters): a longer one without a place to cut (see tokenize) is
// merged in parts, as bpe_tokenizer.ts does for the same reason (bounded working memory).
const MAX_PIECE = 1 << 16;

export class HfBpeModel {
  /** token -> id, and id -> token (holes for ids the model's vocabulary lacks). */
  readonly vocab = new Map<string, number>();
  readonly tokens: string[] = [];
  private readonly ranks: MergeRanks = new Map();
  private readonly unk: number | undefined;
  private readonly byteFallback: boolean;
  private readonly fuseUnk: boolean;
  private readonly ignoreMerges: boolean;
  private readonly byteIds: Array<number | undefined> = [];
  private readonly cache = new Map<string, number[]>();
  private joined: Map<string, Set<string>> | undefined;
  /** Whether one token can stand for any number of characters (fused unknown tokens): then a
   * text's length says nothing about its least number of tokens. */
  readonly fusesUnknown: boolean;

  constructor(model: Json) {
    for (const key of ['continuing_subword_prefix', 'end_of_word_suffix'])
      if (model[key] !== undefined && model[key] !== null && model[key] !== '') throw new AttentionError(`tokenizer.json: model.${key} ${show(model[key])} is not supported (the Llama family has none)`);
    if (model.dropout !== undefined && model.dropout !== null && model.dropout !== 0) throw new AttentionError(`tokenizer.json: model.dropout ${show(model.dropout)} is not supported (only null: encoding is deterministic)`);
    this.readVocab(model.vocab);
    this.readMerges(model.merges);
    const flag = (key: string) => {
      const v = model[key];
      if (v !== undefined && v !== null && typeof v !== 'boolean') throw new AttentionError(`tokenizer.json: model.${key} must be true or false, got ${show(v)}`);
      return v === true;
    };
    this.byteFallback = flag('byte_fallback');
    this.fuseUnk = flag('fuse_unk');
    this.ignoreMerges = flag('ignore_merges');
    if (model.unk_token !== undefined && model.unk_token !== null) {
      this.unk = typeof model.unk_token === 'string' ? this.vocab.get(model.unk_token) : undefined;
      if (this.unk === undefined) throw new AttentionError(`tokenizer.json: model.unk_token ${show(model.unk_token)} is not in model.vocab`);
    }
    for (let b = 0; b < 256; b++) this.byteIds[b] = this.vocab.get(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    this.fusesUnknown = this.fuseUnk && this.unk !== undefined && !(this.byteFallback && this.byteIds.every((id) => id !== undefined));
  }

  /** An object of token -> id (tokenizer.json), or a Map of them (a GGUF file's tokens: an object
   * of 150k keys costs seconds to build and to read back). */
  private readVocab(vocab: unknown): void {
    if (typeof vocab !== 'object' || vocab === null || Array.isArray(vocab)) throw new AttentionError(`tokenizer.json: model.vocab must be an object of token -> id, got ${show(vocab)}`);
    const entries: Iterable<[string, unknown]> = vocab instanceof Map ? vocab : Object.entries(vocab);
    checkVocabSize('tokenizer.json: model.vocab', vocab instanceof Map ? vocab.size : Object.keys(vocab).length);
    for (const [token, id] of entries) {
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_VOCAB_TOKENS)
        throw new AttentionError(`tokenizer.json: model.vocab: token ${show(token)} has an invalid id ${show(id)} (ids are integers from 0 to ${MAX_VOCAB_TOKENS})`);
      if (this.tokens[id] !== undefined) throw new AttentionError(`tokenizer.json: model.vocab: tokens ${show(this.tokens[id])} and ${show(token)} both have the id ${id} (each id must name one token)`);
      this.vocab.set(token, id);
      this.tokens[id] = token;
    }
  }

  /** Merges as "a b" strings (older files) or [a, b] pairs (newer ones); each must make a token. */
  private readMerges(merges: unknown): void {
    if (!Array.isArray(merges)) throw new AttentionError(`tokenizer.json: model.merges must be a list of merges ("a b" or ["a", "b"]), got ${show(merges)}`);
    merges.forEach((m: unknown, rank) => {
      let pair: unknown[] | undefined = Array.isArray(m) ? m : undefined;
      if (typeof m === 'string') {
        const space = m.indexOf(' ', 1);  // (a token may itself be a space: "  x" is [" ", "x"])
        pair = space < 0 ? undefined : [m.slice(0, space), m.slice(space + 1)];
      }
      if (!pair || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string')
        throw new AttentionError(`tokenizer.json: model.merges[${rank}] is malformed (expected "a b" or ["a", "b"]): ${show(m)}`);
      const [a, b] = pair as [string, string];
      if (!this.vocab.has(a + b)) throw new AttentionError(`tokenizer.json: model.merges[${rank}] makes ${show(a + b)}, which is not in model.vocab`);
      let row = this.ranks.get(a);
      if (row === undefined) this.ranks.set(a, row = new Map());
      row.set(b, rank);  // (a repeated merge keeps its last rank, as `tokenizers`' map of merges does)
    });
  }

  /** The ids of one pre-tokenized piece. A long piece (Llama 2 has no pre-tokenizer: a whole
   * text is one) is merged in parts cut before each character that no token joins to the one
   * before it (both tokens on their own, as "▁" after a letter in Llama 2): no merge could cross
   * such a cut, so the ids are those of the piece merged whole, and each part, a word, is cached. */
  tokenize(piece: string): number[] {
    const whole = this.ignoreMerges ? this.vocab.get(piece) : undefined;
    if (whole !== undefined) return [whole];
    if (piece.length <= MAX_CACHED_PIECE) return this.merged(piece);
    const ids: number[] = [];
    for (const part of this.parts(piece)) for (const id of this.merged(part)) ids.push(id);
    return ids;
  }

  /** The ids of a text merged whole (cached when short). A text over MAX_PIECE characters with no
   * place to cut is merged in parts of MAX_PIECE: only there can ids differ from `tokenizers`'. */
  private merged(text: string): number[] {
    const cached = this.cache.get(text);
    if (cached) return cached;
    const ids: number[] = [], chars = Array.from(text);
    for (let start = 0; start < chars.length; start += MAX_PIECE) {
      for (const symbol of applyMerges(this.symbols(chars.slice(start, start + MAX_PIECE)), this.ranks, true)) ids.push(this.vocab.get(symbol)!);
    }
    if (text.length <= MAX_CACHED_PIECE && this.cache.size < MAX_CACHE) this.cache.set(text, ids);
    return ids;
  }

  /** A long piece cut where no merge can cross (see tokenize). */
  private parts(piece: string): string[] {
    this.joined ??= this.joinedPairs();
    const parts: string[] = [];
    let start = 0, at = 0, prev = '';
    for (const ch of piece) {
      if (at > 0 && this.vocab.has(prev) && this.vocab.has(ch) && !this.joined.get(prev)?.has(ch)) {
        parts.push(piece.slice(start, at));
        start = at;
      }
      prev = ch;
      at += ch.length;
    }
    parts.push(piece.slice(start));
    return parts;
  }

  /** For each character, the characters that follow it inside some token (built when a piece is
   * long). */
  private joinedPairs(): Map<string, Set<string>> {
    const pairs = new Map<string, Set<string>>();
    for (const token of this.vocab.keys()) {
      const chars = Array.from(token);
      for (let i = 1; i < chars.length; i++) {
        let next = pairs.get(chars[i - 1]);
        if (next === undefined) pairs.set(chars[i - 1], next = new Set());
        next.add(chars[i]);
      }
    }
    return pairs;
  }

  /** Characters -> the symbols merging starts from, each a token of the vocabulary. */
  private symbols(chars: string[]): string[] {
    const out: string[] = [];
    let unkRun = false;  // the last symbol is an unknown token that a following one fuses with
    for (const ch of chars) {
      if (this.vocab.has(ch)) { out.push(ch); unkRun = false; continue; }
      if (this.byteFallback) {
        const bytes = Array.from(new TextEncoder().encode(ch), (b) => this.byteIds[b]);
        if (bytes.every((id) => id !== undefined)) {
          for (const id of bytes) out.push(this.tokens[id!]);
          unkRun = false;
          continue;
        }
      }
      if (this.unk === undefined) throw new AttentionError(`tokenizer: the character ${show(ch)} is not in the vocabulary, which has no unknown token${this.byteFallback ? ' (nor all of its bytes)' : ''}`);
      if (!(unkRun && this.fuseUnk)) out.push(this.tokens[this.unk]);
      unkRun = true;
    }
    return out;
  }
}
