// GPT-2's byte-level BPE tokenizer: text -> UTF-8 bytes -> printable unicode stand-ins ->
// pre-tokenized words -> merges applied by rank -> ids from vocab.json. Reads GPT-2's own files
// (vocab.json + merges.txt) or a Hugging Face tokenizer.json of the same kind.
import { AttentionError } from './errors.js';

// GPT-2's pre-tokenizer: contractions, letters, numbers, other symbols, each optionally with one
// leading space; runs of whitespace (keeping the last space for the next word).
const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

// Bytes map to printable characters so that merges never involve whitespace or control bytes:
// printable Latin-1 maps to itself, the other 68 bytes to U+0100 upwards.
function byteToUnicode(): string[] {
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
  private readonly ranks = new Map<string, number>();
  private readonly byteEncoder = byteToUnicode();
  private readonly byteDecoder = new Map<string, number>();
  private readonly cache = new Map<string, number[]>();
  // Special tokens such as <|endoftext|>: matched in text as a whole, never split into bytes.
  private readonly special: RegExp | null;
  readonly vocabSize: number;

  constructor(files: TokenizerFiles) {
    if (typeof files?.vocab !== 'object' || files.vocab === null) throw new AttentionError('tokenizer: vocab must be an object of token -> id');
    // One pass over the vocabulary and one over the merges: loading a large vocabulary (tens of
    // thousands of tokens) is on the page's path to its first view.
    this.encoder = new Map();
    this.decoder = [];
    let maxId = -1;
    const tokens = Object.keys(files.vocab);  // (faster than for-in over a large object)
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i], id = files.vocab[token];
      if (!Number.isInteger(id) || id < 0) throw new AttentionError(`tokenizer: vocab has an invalid id ${id}`);
      this.encoder.set(token, id);
      this.decoder[id] = token;
      if (id > maxId) maxId = id;
    }
    if (maxId < 0) throw new AttentionError('tokenizer: vocab is empty');
    this.vocabSize = maxId + 1;
    const merges = typeof files.merges === 'string'
      ? files.merges.split('\n').filter((l) => l.trim() && !l.startsWith('#version'))
      : files.merges;
    merges.forEach((m, rank) => {
      if (Array.isArray(m)) {
        const [a, b] = m;
        if (a === undefined || b === undefined) throw new AttentionError(`tokenizer: merge ${rank + 1} is malformed: ${JSON.stringify(m)}`);
        this.ranks.set(a + ' ' + b, rank);
        return;
      }
      // "a b": the key is the line itself (what follows a second space, if any, is ignored).
      const line = m.trim(), space = line.indexOf(' ');
      if (space < 0) throw new AttentionError(`tokenizer: merge ${rank + 1} is malformed: ${JSON.stringify(m)}`);
      const end = line.indexOf(' ', space + 1);
      this.ranks.set(end < 0 ? line : line.slice(0, end), rank);
    });
    this.byteEncoder.forEach((ch, b) => this.byteDecoder.set(ch, b));
    const specials = tokens.filter((t) => t.charCodeAt(0) === 60 /* < */ && /^<\|[^|]+\|>$/.test(t));
    const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    this.special = specials.length ? new RegExp(`(${specials.map(escape).join('|')})`) : null;
  }

  /** From a Hugging Face tokenizer.json with a BPE model. */
  static fromTokenizerJson(json: { model?: { type?: string; vocab?: Record<string, number>; merges?: Array<string | [string, string]> } }): BpeTokenizer {
    const model = json?.model;
    if (!model || (model.type && model.type !== 'BPE') || !model.vocab || !model.merges)
      throw new AttentionError('tokenizer.json: expected a BPE model with vocab and merges');
    return new BpeTokenizer({ vocab: model.vocab, merges: model.merges });
  }

  /** Text -> token ids. Special tokens of the vocabulary (e.g. "<|endoftext|>") map to their id. */
  encode(text: string): number[] {
    const ids: number[] = [];
    const pieces = this.special ? text.split(this.special) : [text];
    pieces.forEach((piece, i) => {
      if (i % 2 === 1) ids.push(this.encoder.get(piece)!);  // split() puts the matches at odd indices
      else for (const word of piece.match(PRETOKENIZE) ?? []) ids.push(...this.encodeWord(word));
    });
    return ids;
  }

  /** The id of a token string, if the vocabulary has it. */
  tokenId(token: string): number | undefined {
    return this.encoder.get(token);
  }

  /** Token ids -> text (invalid UTF-8 sequences become U+FFFD). */
  decode(ids: number[]): string {
    const bytes: number[] = [];
    for (const id of ids) for (const ch of this.token(id)) bytes.push(this.byteDecoder.get(ch) ?? 0x3f);
    return new TextDecoder().decode(new Uint8Array(bytes));
  }

  /** How each token reads on its own (for display: "Ġthe" -> " the"). A token holding only part
   * of a character's UTF-8 bytes (byte-level BPE splits accented letters and emoji) reads as its
   * bytes, "<0xC3>", never as U+FFFD. Ids past the vocabulary (models often pad vocab_size) read
   * as "<|id|>". */
  tokenText(id: number): string {
    const token = this.decoder[id];
    if (token === undefined) return `<|${id}|>`;
    if (this.special?.test(token)) return token;
    const bytes = Uint8Array.from(token, (ch) => this.byteDecoder.get(ch) ?? 0x3f);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return Array.from(bytes, (b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`).join('');
    }
  }

  private token(id: number): string {
    const t = this.decoder[id];
    if (t === undefined) throw new AttentionError(`tokenizer: id ${id} is not in the vocabulary`);
    return t;
  }

  private encodeWord(word: string): number[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    let parts = Array.from(new TextEncoder().encode(word), (b) => this.byteEncoder[b]);
    // Repeatedly merge the adjacent pair with the lowest rank (the earliest learned merge).
    while (parts.length > 1) {
      let best = -1, bestRank = Infinity;
      for (let i = 0; i < parts.length - 1; i++) {
        const rank = this.ranks.get(parts[i] + ' ' + parts[i + 1]);
        if (rank !== undefined && rank < bestRank) { bestRank = rank; best = i; }
      }
      if (best < 0) break;
      const a = parts[best], b = parts[best + 1];
      const merged: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === a && parts[i + 1] === b) { merged.push(a + b); i++; } else merged.push(parts[i]);
      }
      parts = merged;
    }
    const ids = parts.map((p) => {
      const id = this.encoder.get(p);
      if (id === undefined) throw new AttentionError(`tokenizer: "${p}" is not in the vocabulary (vocab.json and merges.txt do not match?)`);
      return id;
    });
    if (this.cache.size < 50_000) this.cache.set(word, ids);
    return ids;
  }
}
