// GPT-2's byte-level BPE tokenizer: text -> UTF-8 bytes -> printable unicode stand-ins ->
// pre-tokenized words -> merges applied by rank -> ids from vocab.json. Reads GPT-2's own files
// (vocab.json + merges.txt) or a Hugging Face tokenizer.json of the same kind.
import { AttentionError } from '../errors.js';
import { checkId, checkIds, checkLimit, checkTokenizerFileSize, checkVocabSize, contextError, MAX_VOCAB_TOKENS, readField, utf8Length } from './tokenizer_checks.js';
import type { EncodeLimit } from './tokenizer_checks.js';
import { checkObject, checkOptions, checkString, is, show } from '../validate.js';
import type { Rules } from '../validate.js';

// GPT-2's pre-tokenizer: contractions, letters, numbers, other symbols, each optionally with one
// leading space; runs of whitespace (keeping the last space for the next word).
const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

// Bytes map to printable characters so that merges never involve whitespace or control bytes:
// printable Latin-1 maps to itself, the other 68 bytes to U+0100 upwards.
export function byteToUnicode(): string[] {
  const table: string[] = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    table[b] = String.fromCharCode(printable ? b : next++);
  }
  return table;
}

export interface TokenizerFiles {
  /** vocab.json: token string -> id */
  vocab: Record<string, number>;
  /** merges.txt content, or the list of merges ("a b" strings or [a, b] pairs) */
  merges: string | Array<string | [string, string]>;
}

export class BpeTokenizer {
  private readonly encoder: Map<string, number>;
  private readonly decoder: string[];  // id -> token (holes for unused ids)
  // Merge ranks by left symbol, then right symbol (no string is built to look a pair up).
  private readonly ranks: MergeRanks = new Map();
  private readonly byteEncoder = byteToUnicode();
  private readonly byteDecoder = new Map<string, number>();
  private readonly cache = new Map<string, number[]>();
  // Special tokens such as <|endoftext|>: matched in text as a whole, never split into bytes.
  private readonly special: RegExp | null;
  // The most UTF-8 bytes of text one token stands for: a text of B bytes needs >= B / this tokens.
  private readonly longestToken: number;
  readonly vocabSize: number;

  /** `names` (internal): the files the vocabulary and merges came from, as errors name them. */
  constructor(files: TokenizerFiles, names: { vocab: string; merges: string } = { vocab: 'vocab.json', merges: 'merges' }) {
    // (A plain copy of the two fields: nothing else of `files` is read, no getter twice.)
    files = checkOptions('BpeTokenizer', checkObject('BpeTokenizer', 'files', files, '{ vocab, merges }'), FILE_RULES, 'field');
    const vocab = checkObject(names.vocab, 'the vocabulary', files.vocab as Record<string, unknown>, 'of token -> id');
    // One pass over the vocabulary and one over the merges: loading a large vocabulary (tens of
    // thousands of tokens) is on the page's path to its first view.
    this.encoder = new Map();
    this.decoder = [];
    let maxId = -1, longest = 1;
    const tokens = Object.keys(vocab);  // (faster than for-in over a large object)
    checkVocabSize(names.vocab, tokens.length);
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i], id = vocab[token];
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_VOCAB_TOKENS)
        throw new AttentionError(`${names.vocab}: token ${show(token)} has an invalid id ${show(id)} (ids are integers from 0 to ${MAX_VOCAB_TOKENS})`);
      if (this.decoder[id] !== undefined) throw new AttentionError(`${names.vocab}: tokens ${show(this.decoder[id])} and ${show(token)} both have the id ${id} (each id must name one token)`);
      this.encoder.set(token, id);
      this.decoder[id] = token;
      if (id > maxId) maxId = id;
      if (token.length > longest) longest = token.length;  // one character per byte (specials below)
    }
    if (maxId < 0) throw new AttentionError(`${names.vocab}: no token (the vocab is empty)`);
    this.vocabSize = maxId + 1;
    this.readMerges(files.merges, names.merges);
    this.byteEncoder.forEach((ch, b) => this.byteDecoder.set(ch, b));
    const specials = tokens.filter((t) => t.charCodeAt(0) === 60 /* < */ && /^<\|[^|]+\|>$/.test(t));
    const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    this.special = specials.length ? new RegExp(`(${specials.map(escape).join('|')})`) : null;
    for (const t of specials) longest = Math.max(longest, utf8Length(t));
    this.longestToken = longest;
  }

  /** merges.txt's text, or a list of "a b" strings or [a, b] pairs -> ranks (the list order). */
  private readMerges(merges: unknown, name: string): void {
    if (typeof merges === 'string') {
      checkTokenizerFileSize('merges.txt', merges.length, 'characters');
      merges = merges.split('\n').filter((l) => l.trim() && !l.startsWith('#version'));
      name = 'merges.txt';
    }
    if (!Array.isArray(merges)) throw new AttentionError(`${name} must be the text of merges.txt or a list of merges, got ${show(merges)}`);
    const list = merges as unknown[];
    for (let rank = 0; rank < list.length; rank++) {
      const m = list[rank];
      const malformed = () => new AttentionError(`${name}: merge ${rank + 1} is malformed (expected "a b" or ["a", "b"]): ${show(m)}`);
      if (Array.isArray(m)) {
        if (m.length !== 2 || typeof m[0] !== 'string' || typeof m[1] !== 'string') throw malformed();
        this.setRank(m[0], m[1], rank);
        continue;
      }
      if (typeof m !== 'string') throw malformed();
      // "a b": the key is the line itself (what follows a second space, if any, is ignored).
      const line = m.trim(), space = line.indexOf(' ');
      if (space < 0) throw malformed();
      const end = line.indexOf(' ', space + 1);
      this.setRank(line.slice(0, space), end < 0 ? line.slice(space + 1) : line.slice(space + 1, end), rank);
    }
  }

  /** A later merge of the same pair replaces an earlier one, as a later key in a Map would. */
  private setRank(a: string, b: string, rank: number): void {
    let row = this.ranks.get(a);
    if (row === undefined) this.ranks.set(a, row = new Map());
    row.set(b, rank);
  }

  /** From a Hugging Face tokenizer.json with a BPE model (a field of the wrong kind is a named
   * error: "tokenizer.json: model.merges: merge 3 is malformed ..."). */
  static fromTokenizerJson(json: { model?: { type?: string; vocab?: Record<string, number>; merges?: Array<string | [string, string]> } }): BpeTokenizer {
    checkObject('tokenizer.json', 'the parsed file', json, '{ model: { vocab, merges } }');
    const model = readField(json, 'model') as typeof json.model;
    if (typeof model !== 'object' || model === null || (model.type !== undefined && model.type !== 'BPE') || !model.vocab || !model.merges)
      throw new AttentionError('tokenizer.json: expected a BPE model with vocab and merges');
    if (!Array.isArray(model.merges)) throw new AttentionError(`tokenizer.json: model.merges must be a list of merges ("a b" or ["a", "b"]), got ${show(model.merges)}`);
    return new BpeTokenizer({ vocab: model.vocab, merges: model.merges }, { vocab: 'tokenizer.json: model.vocab', merges: 'tokenizer.json: model.merges' });
  }

  /**
   * Text -> token ids. Special tokens of the vocabulary (e.g. "<|endoftext|>") map to their id.
   * With a limit (a model's context), a text that needs more than limit.maxTokens tokens throws
   * "<caller>: the text exceeds the model's context ...": at once when its UTF-8 length alone
   * proves it (no token stands for more bytes than the vocabulary's longest), else as soon as the
   * tokens pass the limit.
   */
  encode(text: string, limit?: EncodeLimit): number[] {
    checkString('encode', 'text', text);
    const max = checkLimit(limit);
    if (max) {
      const bytes = utf8Length(text), least = Math.ceil(bytes / this.longestToken);
      if (least > max.maxTokens) throw contextError(max, `its ${bytes} UTF-8 bytes need at least ${least} tokens of at most ${this.longestToken} bytes`);
    }
    const ids: number[] = [];
    const pieces = this.special ? text.split(this.special) : [text];
    for (let i = 0; i < pieces.length; i++) {
      // split() puts the special tokens it matched at odd indices
      const words = i % 2 === 1 ? null : pieces[i].match(PRETOKENIZE) ?? [];
      if (words === null) ids.push(this.encoder.get(pieces[i])!);
      else for (const word of words) {
        // A loop, not push(...): a word can have more tokens than a call has room for arguments.
        for (const id of this.encodeWord(word)) ids.push(id);
        if (max && ids.length > max.maxTokens) break;
      }
      if (max && ids.length > max.maxTokens) throw contextError(max, `it has more than ${max.maxTokens} tokens`);
    }
    return ids;
  }

  /** The id of a token string, if the vocabulary has it. */
  tokenId(token: string): number | undefined {
    return this.encoder.get(token);
  }

  /** Token ids -> text (invalid UTF-8 sequences become U+FFFD). */
  decode(ids: number[]): string {
    checkIds('decode', ids);
    const bytes: number[] = [];
    for (const id of ids) for (const ch of this.token(id)) bytes.push(this.byteDecoder.get(ch) ?? 0x3f);
    // ignoreBOM: a text that starts with U+FEFF decodes with it (a TextDecoder drops it by default).
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array(bytes));
  }

  /** How each token reads on its own (for display: "Ġthe" -> " the"). A token holding only part
   * of a character's UTF-8 bytes (byte-level BPE splits accented letters and emoji) reads as its
   * bytes, "<0xC3>", never as U+FFFD. Ids past the vocabulary (models often pad vocab_size) read
   * as "<|id|>". */
  tokenText(id: number): string {
    const token = this.decoder[checkId('tokenText', id)];
    if (token === undefined) return `<|${id}|>`;
    if (this.special?.test(token)) return token;
    const bytes = Uint8Array.from(token, (ch) => this.byteDecoder.get(ch) ?? 0x3f);
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      return Array.from(bytes, (b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`).join('');
    }
  }

  private token(id: number): string {
    const t = this.decoder[checkId('decode', id)];
    if (t === undefined) throw new AttentionError(`decode: id ${id} is not in the vocabulary of ${this.vocabSize}`);
    return t;
  }

  private encodeWord(word: string): number[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    const bytes = new TextEncoder().encode(word);
    const ids: number[] = [];
    // A pre-token longer than MAX_WORD_BYTES is merged in pieces cut at character boundaries: the
    // merge itself is O(n log n), the cut bounds its working memory (to 4 MB). Only there can the
    // ids differ from the reference loop's (at the cuts); such a word needs over 1,000 tokens
    // when no token is longer than 64 bytes, more than GPT-2's context.
    for (let start = 0; start < bytes.length;) {
      let end = Math.min(bytes.length, start + MAX_WORD_BYTES);
      while (end < bytes.length && end > start + 1 && (bytes[end] & 0xc0) === 0x80) end--;  // not inside a character
      const parts: string[] = new Array(end - start);
      for (let i = start; i < end; i++) parts[i - start] = this.byteEncoder[bytes[i]];
      for (const part of applyMerges(parts, this.ranks)) ids.push(this.idOf(part));
      start = end;
    }
    // Short words only: a cache of long keys would keep megabytes of text alive.
    if (this.cache.size < 50_000 && word.length <= MAX_CACHED_WORD) this.cache.set(word, ids);
    return ids;
  }

  private idOf(part: string): number {
    const id = this.encoder.get(part);
    if (id === undefined) throw new AttentionError(`tokenizer: "${part}" is not in the vocabulary (vocab.json and merges.txt do not match?)`);
    return id;
  }
}

// (Both checked by the constructor itself, naming the file they came from.)
const FILE_RULES: Rules<TokenizerFiles> = { vocab: is.any, merges: is.any };

// Longest pre-token merged as one piece (UTF-8 bytes); longest word kept in the cache (characters).
const MAX_WORD_BYTES = 1 << 16;
const MAX_CACHED_WORD = 256;
// Words up to this many bytes share one set of working arrays (kept for the next word).
const SHARED_SCRATCH = 1024;

/**
 * Merges a word's symbols by rank as GPT-2's reference loop does (the lowest-ranked adjacent pair,
 * all its occurrences left to right, then again), in O(n log n) instead of O(n^2): the symbols
 * form a doubly linked list and the candidate pairs a min-heap ordered by (rank, position). An
 * entry records the stamps of its two symbols; a merge stamps the merged symbol anew, so an entry
 * whose symbols changed since it was queued is recognised as stale and skipped.
 * `oneAtATime`: Hugging Face's `tokenizers` order instead (the lowest (rank, position) entry, merged
 * at once, the pairs it makes queued with the rest). Both agree when every merge ranks after the
 * merges of its parts; Llama 2's merges (ranked by SentencePiece scores) do not: "▁▁ ▁▁" ranks
 * before "▁ ▁", and a run of spaces splits otherwise.
 */
export type MergeRanks = Map<string, Map<string, number>>;

export function applyMerges(parts: string[], ranks: MergeRanks, oneAtATime = false): string[] {
  const n = parts.length;
  if (n < 2) return parts;
  const { next, prev, stamp, heap, batch } = scratchFor(n);
  for (let i = 0; i < n; i++) { next[i] = i + 1; prev[i] = i - 1; stamp[i] = i + 1; }
  next[n - 1] = -1;
  let stamps = n;
  const offer = (left: number, right: number) => {
    const rank = ranks.get(parts[left])?.get(parts[right]);
    if (rank !== undefined) heap.push(rank, left, stamp[left], stamp[right]);
  };
  for (let i = 0; i + 1 < n; i++) offer(i, i + 1);
  while (heap.size > 0) {
    // A rank names one pair: take all of its entries, then merge them left to right. The pairs
    // these merges create wait for the next round even when ranked lower, as in the reference.
    const rank = heap.rank[0];
    batch.length = 0;
    while (heap.size > 0 && heap.rank[0] === rank) {
      batch.push(heap.left[0], heap.stampLeft[0], heap.stampRight[0]);
      heap.pop();
      if (oneAtATime) break;
    }
    for (let k = 0; k < batch.length; k += 3) {
      const left = batch[k], right = next[left];
      // Stale: the left symbol was merged since (its stamp changed), or its right neighbour was.
      if (stamp[left] !== batch[k + 1] || right < 0 || stamp[right] !== batch[k + 2]) continue;
      parts[left] += parts[right];
      stamp[right] = 0;
      stamp[left] = ++stamps;
      next[left] = next[right];
      if (next[left] >= 0) prev[next[left]] = left;
      if (prev[left] >= 0) offer(prev[left], left);
      if (next[left] >= 0) offer(left, next[left]);
    }
  }
  const out: string[] = [];
  for (let i = 0; i >= 0; i = next[i]) out.push(parts[i]);
  return out;
}

interface MergeScratch { next: Int32Array; prev: Int32Array; stamp: Int32Array; heap: PairHeap; batch: number[] }
let shared: MergeScratch | undefined;

/** Working arrays for a word of n symbols: those of ordinary words are allocated once and reused
 * (allocating them per word made ordinary text slower than the old quadratic loop). */
function scratchFor(n: number): MergeScratch {
  const make = (size: number): MergeScratch => ({
    // n - 1 pairs at first, at most two new ones per merge (and n - 1 merges at most)
    next: new Int32Array(size), prev: new Int32Array(size), stamp: new Int32Array(size), heap: new PairHeap(3 * size), batch: [],
  });
  if (n > SHARED_SCRATCH) return make(n);
  shared ??= make(SHARED_SCRATCH);
  shared.heap.size = 0;
  return shared;
}

/** Whether a merge (rank, left position) comes before another: lower rank, then further left. */
function before(rank: number, left: number, rank2: number, left2: number): boolean {
  return rank < rank2 || (rank === rank2 && left < left2);
}

/** A binary min-heap of candidate merges keyed by (rank, left position), in typed arrays. */
class PairHeap {
  size = 0;
  readonly rank: Int32Array;
  readonly left: Int32Array;
  readonly stampLeft: Int32Array;
  readonly stampRight: Int32Array;

  constructor(capacity: number) {
    this.rank = new Int32Array(capacity);
    this.left = new Int32Array(capacity);
    this.stampLeft = new Int32Array(capacity);
    this.stampRight = new Int32Array(capacity);
  }

  push(rank: number, left: number, stampLeft: number, stampRight: number): void {
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(rank, left, this.rank[parent], this.left[parent])) break;
      this.copy(parent, i);
      i = parent;
    }
    this.put(i, rank, left, stampLeft, stampRight);
  }

  /** Removes the top entry: the last entry sifts down from the root. */
  pop(): void {
    const last = --this.size;
    if (last === 0) return;
    const rank = this.rank[last], left = this.left[last];
    let i = 0;
    for (let child = 1; child < last; child = 2 * i + 1) {
      if (child + 1 < last && before(this.rank[child + 1], this.left[child + 1], this.rank[child], this.left[child])) child++;
      if (!before(this.rank[child], this.left[child], rank, left)) break;
      this.copy(child, i);
      i = child;
    }
    this.put(i, rank, left, this.stampLeft[last], this.stampRight[last]);
  }

  private copy(from: number, to: number): void {
    this.rank[to] = this.rank[from];
    this.left[to] = this.left[from];
    this.stampLeft[to] = this.stampLeft[from];
    this.stampRight[to] = this.stampRight[from];
  }

  private put(i: number, rank: number, left: number, stampLeft: number, stampRight: number): void {
    this.rank[i] = rank;
    this.left[i] = left;
    this.stampLeft[i] = stampLeft;
    this.stampRight[i] = stampRight;
  }
}
