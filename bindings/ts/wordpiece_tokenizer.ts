// BERT's tokenizer: the "basic" tokenizer (clean the text, space out CJK ideographs, NFC, split on
// whitespace, lower-case and strip accents when asked, split punctuation off) and then WordPiece
// (greedy longest-match-first pieces, "##" marking a continuation; [UNK] for a word longer than
// 100 characters or one the pieces cannot spell). Special tokens such as [MASK] written in the
// text stay whole. Reads vocab.txt (one token per line, line = id) or a tokenizer.json.
import { AttentionError } from './errors.js';
import { checkId, checkIds } from './token_limit.js';

export interface WordPieceFiles {
  /** vocab.txt's content, or its lines. */
  vocab: string | string[];
  /** Lower-case the text (BERT "uncased" models). Default true, as Hugging Face's BertTokenizer. */
  doLowerCase?: boolean;
  /** Strip accents; undefined/null: do so exactly when lower-casing. */
  stripAccents?: boolean | null;
  /** Put spaces around CJK ideographs so each is its own word. Default true. */
  tokenizeChineseChars?: boolean;
}

/** Token ids of one input, with [CLS]/[SEP] and token types (0 for the first text, 1 for the second). */
export interface Encoding {
  ids: number[];
  tokenTypes: number[];
  tokens: string[];
}

const MAX_WORD_CHARS = 100;
const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

// The CJK Unified Ideographs blocks Hugging Face's BertTokenizer treats as words of their own.
// (Hiragana, Katakana and Hangul are not among them: they are written with spaces... or not, but BERT
// leaves them to WordPiece.)
function isCjk(cp: number): boolean {
  return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}
const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || /\p{Zs}/u.test(ch);
// Control characters (category C*) except the whitespace ones, which count as spaces.
const isControl = (ch: string) => !(ch === '\t' || ch === '\n' || ch === '\r') && /\p{C}/u.test(ch);
function isPunctuation(ch: string): boolean {
  const cp = ch.codePointAt(0)!;
  // All non-letter/number ASCII counts, e.g. "^", "$" and "`" (not Unicode punctuation).
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(ch);
}

export class WordPieceTokenizer {
  readonly vocabSize: number;
  readonly doLowerCase: boolean;
  readonly stripAccents: boolean;
  readonly tokenizeChineseChars: boolean;
  readonly padId: number;
  readonly unkId: number;
  readonly clsId: number;
  readonly sepId: number;
  readonly maskId: number;
  private readonly ids = new Map<string, number>();
  private readonly tokens: string[];
  private readonly special: RegExp;

  constructor(files: WordPieceFiles) {
    const lines = typeof files?.vocab === 'string' ? files.vocab.split(/\r?\n/) : files?.vocab;
    if (!Array.isArray(lines)) throw new AttentionError('tokenizer: vocab must be the text of vocab.txt or its lines');
    // vocab.txt ends with a newline: a trailing empty line is not a token.
    while (lines.length && lines[lines.length - 1] === '') lines.pop();
    if (lines.length === 0) throw new AttentionError('tokenizer: vocab.txt is empty');
    this.tokens = lines.slice();
    this.tokens.forEach((t, id) => { if (!this.ids.has(t)) this.ids.set(t, id); });
    this.vocabSize = this.tokens.length;
    this.doLowerCase = files.doLowerCase ?? true;
    this.stripAccents = files.stripAccents ?? this.doLowerCase;
    this.tokenizeChineseChars = files.tokenizeChineseChars ?? true;
    const need = (t: string) => {
      const id = this.ids.get(t);
      if (id === undefined) throw new AttentionError(`tokenizer: vocab.txt has no ${t} token`);
      return id;
    };
    [this.padId, this.unkId, this.clsId, this.sepId, this.maskId] = SPECIALS.map(need);
    this.special = new RegExp(`(${SPECIALS.map((t) => t.replace(/[[\]]/g, '\\$&')).join('|')})`);
  }

  /** From a Hugging Face tokenizer.json with a WordPiece model and a BertNormalizer. */
  static fromTokenizerJson(json: Record<string, unknown>): WordPieceTokenizer {
    const model = json?.model as { type?: string; vocab?: Record<string, number>; merges?: unknown } | undefined;
    // The Hub's compact files (bert-base-uncased) leave out model.type: a vocab without merges is WordPiece.
    const wordPiece = model?.type === 'WordPiece' || (model?.type === undefined && model?.merges === undefined);
    if (!model || !wordPiece || typeof model.vocab !== 'object' || model.vocab === null)
      throw new AttentionError('tokenizer.json: expected a WordPiece model with a vocab');
    const lines: string[] = [];
    for (const [token, id] of Object.entries(model.vocab)) {
      if (!Number.isInteger(id) || id < 0 || id > 10_000_000) throw new AttentionError(`tokenizer.json: token ${JSON.stringify(token)} has an invalid id ${id}`);
      lines[id] = token;
    }
    for (let i = 0; i < lines.length; i++) if (lines[i] === undefined) throw new AttentionError(`tokenizer.json: no token has id ${i}`);
    const norm = json.normalizer as { type?: string; lowercase?: boolean; strip_accents?: boolean | null; handle_chinese_chars?: boolean } | null;
    if (norm && norm.type !== 'BertNormalizer')
      throw new AttentionError(`tokenizer.json: normalizer ${JSON.stringify(norm.type)} is not supported (BERT uses BertNormalizer)`);
    return new WordPieceTokenizer({
      vocab: lines, doLowerCase: norm?.lowercase ?? false, stripAccents: norm?.strip_accents, tokenizeChineseChars: norm?.handle_chinese_chars,
    });
  }

  /** Text -> WordPiece tokens (no [CLS]/[SEP]). */
  tokenize(text: string): string[] {
    const out: string[] = [];
    text.split(this.special).forEach((part, i) => {
      if (i % 2 === 1) out.push(part);  // split() puts the special tokens at odd indices
      else for (const word of this.basicTokenize(part)) for (const piece of this.wordPieces(word)) out.push(piece);
    });
    return out;
  }

  /**
   * Text (or a pair of texts) -> [CLS] A [SEP] (B [SEP]) with token types 0 for A, 1 for B.
   * maxLength truncates the longer text first, one token at a time, as BERT's tokenizer does.
   */
  encode(input: string | readonly [string, string], options: { maxLength?: number } = {}): Encoding {
    const pair = typeof input !== 'string';
    if (pair && (!Array.isArray(input) || input.length !== 2 || typeof input[0] !== 'string' || typeof input[1] !== 'string'))
      throw new AttentionError('tokenizer: the input must be a string or a pair [textA, textB] of strings');
    const a = this.tokenize(pair ? input[0] : input);
    const b = pair ? this.tokenize(input[1]) : [];
    if (options.maxLength !== undefined) {
      const budget = options.maxLength - (pair ? 3 : 2);
      if (!Number.isInteger(options.maxLength) || budget < (pair ? 2 : 1))
        throw new AttentionError(`tokenizer: maxLength ${options.maxLength} leaves no room for the text`);
      while (a.length + b.length > budget) (a.length >= b.length ? a : b).pop();
    }
    const tokens = ['[CLS]', ...a, '[SEP]', ...(pair ? [...b, '[SEP]'] : [])];
    const tokenTypes = tokens.map((_, i) => (i < a.length + 2 ? 0 : 1));
    return { ids: tokens.map((t) => this.ids.get(t) ?? this.unkId), tokenTypes, tokens };
  }

  /** The id of a token string, if the vocabulary has it. */
  tokenId(token: string): number | undefined {
    return this.ids.get(token);
  }

  /** The vocabulary entry of an id ("##ing" for a continuation piece), "[id]" past its end. */
  tokenText(id: number): string {
    return this.tokens[checkId('tokenText', id)] ?? `[${id}]`;
  }

  /** Ids -> readable text: pieces joined, special tokens dropped, no space before punctuation. */
  decode(ids: number[]): string {
    checkIds('decode', ids);
    const specials = new Set([this.padId, this.clsId, this.sepId]);
    const text = Array.from(ids).filter((id) => !specials.has(id)).map((id) => this.tokenText(id)).join(' ').replace(/ ##/g, '');
    return text.replace(/ ([.,!?;:%)\]}])/g, '$1').replace(/([([{]) /g, '$1').replace(/ ' /g, "'").replace(/ n't\b/g, "n't")
      .replace(/ '(s|m|d|re|ve|ll)\b/g, "'$1");
  }

  private basicTokenize(text: string): string[] {
    let clean = '';
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (cp === 0 || cp === 0xfffd || isControl(ch)) continue;
      if (isWhitespace(ch)) clean += ' ';
      else if (this.tokenizeChineseChars && isCjk(cp)) clean += ` ${ch} `;
      else clean += ch;
    }
    const words: string[] = [];
    // Python's str.split(): besides spaces, U+2028/U+2029 (line/paragraph separators) split words.
    for (let word of clean.normalize('NFC').split(/[ \u2028\u2029]/)) {
      if (!word) continue;
      if (this.doLowerCase) word = word.toLowerCase();
      if (this.stripAccents) word = word.normalize('NFD').replace(/\p{Mn}/gu, '');
      let current = '';
      for (const ch of word) {
        if (isPunctuation(ch)) {
          if (current) words.push(current);
          words.push(ch);
          current = '';
        } else current += ch;
      }
      if (current) words.push(current);
    }
    return words;
  }

  private wordPieces(word: string): string[] {
    const chars = Array.from(word);
    if (chars.length > MAX_WORD_CHARS) return ['[UNK]'];
    const pieces: string[] = [];
    for (let start = 0; start < chars.length;) {
      let end = chars.length, piece: string | undefined;
      for (; end > start; end--) {
        const candidate = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
        if (this.ids.has(candidate)) { piece = candidate; break; }
      }
      if (piece === undefined) return ['[UNK]'];  // the pieces cannot spell this word
      pieces.push(piece);
      start = end;
    }
    return pieces;
  }
}
