// BERT's tokenizer: the "basic" tokenizer (clean the text, space out CJK ideographs, NFC, split on
// whitespace, lower-case and strip accents when asked, split punctuation off) and then WordPiece
// (greedy longest-match-first pieces, "##" marking a continuation; [UNK] for a word longer than
// 100 characters or one the pieces cannot spell). Special tokens such as [MASK] written in the
// text stay whole. Reads vocab.txt (one token per line, line = id) or a tokenizer.json.
// Linear in the text: a piece is looked for among candidates no longer than the vocabulary's
// longest token, so a word costs (its length) x (that length), not its length squared.
import { AttentionError } from '../errors.js';
import { checkId, checkIds, checkTokenizerFileSize, checkVocabSize, codePointCount, MAX_VOCAB_TOKENS, readField } from './tokenizer_checks.js';
import { checkObject, checkOptions, checkString, is, show } from '../validate.js';
import type { Rule, Rules } from '../validate.js';

export interface WordPieceFiles {
  /** vocab.txt's content, or its lines. */
  vocab: string | string[];
  /** Lower-case the text (BERT "uncased" models). Default true, as Hugging Face's BertTokenizer. */
  doLowerCase?: boolean;
  /** Strip accents; undefined/null: do so exactly when lower-casing. */
  stripAccents?: boolean | null;
  /** Put spaces around CJK ideographs so each is its own word. Default true. */
  tokenizeChineseChars?: boolean;
  /** A word of more characters is one [UNK] (Hugging Face's max_input_chars_per_word). Default 100. */
  maxInputCharsPerWord?: number;
}

/** encode()'s options. */
export interface WordPieceEncodeOptions {
  /** Cut the input to this many tokens, [CLS] and [SEP] included: the longer text loses a token
   * at a time, the second one when both are as long (BERT's _truncate_seq_pair). */
  maxLength?: number;
}

/** Token ids of one input, with [CLS]/[SEP] and token types (0 for the first text, 1 for the second). */
export interface Encoding {
  ids: number[];
  tokenTypes: number[];
  tokens: string[];
}

const nullOrBoolean: Rule = is.either(is.boolean, is.oneOf(null), 'true, false or null');
const FILE_RULES: Rules<WordPieceFiles> = {
  vocab: is.either(is.string, is.array(is.string), "the text of vocab.txt or its lines (strings)"),
  doLowerCase: is.boolean,
  stripAccents: nullOrBoolean,
  tokenizeChineseChars: is.boolean,
  maxInputCharsPerWord: is.int(1, 100_000),
};
const ENCODE_RULES: Rules<WordPieceEncodeOptions> = { maxLength: is.int(0) };
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

// A character's classes, remembered for the Basic Multilingual Plane: three Unicode property
// tests per character were most of the time spent on ordinary text.
const CONTROL = 1, SPACE = 2, PUNCTUATION = 4, KNOWN = 8;
const bmpClasses = new Uint8Array(0x10000);
const astralClasses = new Map<number, number>();  // (bounded: 1,048,576 code points at most)
function charClass(ch: string, cp: number): number {
  const known = cp < 0x10000 ? bmpClasses[cp] : astralClasses.get(cp) ?? 0;
  if (known !== 0) return known;
  const c = KNOWN | (isControl(ch) ? CONTROL : 0) | (isWhitespace(ch) ? SPACE : 0) | (isPunctuation(ch) ? PUNCTUATION : 0);
  if (cp < 0x10000) bmpClasses[cp] = c; else astralClasses.set(cp, c);
  return c;
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
  readonly maxInputCharsPerWord: number;
  private readonly ids = new Map<string, number>();
  private readonly tokens: string[];
  private readonly special: RegExp;
  // The most characters of any vocabulary entry: no longer candidate piece can be in it.
  private readonly longestPiece: number;

  constructor(files: WordPieceFiles) {
    files = checkOptions('WordPieceTokenizer', files, FILE_RULES, 'field');
    if (files.vocab === undefined) throw new AttentionError('WordPieceTokenizer: vocab must be the text of vocab.txt or its lines, got undefined');
    if (typeof files.vocab === 'string') checkTokenizerFileSize('vocab.txt', files.vocab.length, 'characters');
    const lines = typeof files.vocab === 'string' ? files.vocab.split(/\r?\n/) : files.vocab;
    // vocab.txt ends with a newline: a trailing empty line is not a token.
    let count = lines.length;
    while (count > 0 && lines[count - 1] === '') count--;
    if (count === 0) throw new AttentionError('tokenizer: vocab.txt is empty');
    checkVocabSize('vocab.txt', count);
    this.tokens = lines.slice(0, count);  // (a copy: the caller's lines stay as they were)
    let longest = 1;
    this.tokens.forEach((t, id) => {
      if (!this.ids.has(t)) this.ids.set(t, id);
      if (t.length > longest) longest = Math.max(longest, codePointCount(t));
    });
    this.longestPiece = longest;
    this.vocabSize = this.tokens.length;
    this.doLowerCase = files.doLowerCase ?? true;
    this.stripAccents = files.stripAccents ?? this.doLowerCase;
    this.tokenizeChineseChars = files.tokenizeChineseChars ?? true;
    this.maxInputCharsPerWord = files.maxInputCharsPerWord ?? 100;
    const need = (t: string) => {
      const id = this.ids.get(t);
      if (id === undefined) throw new AttentionError(`tokenizer: vocab.txt has no ${t} token`);
      return id;
    };
    [this.padId, this.unkId, this.clsId, this.sepId, this.maskId] = SPECIALS.map(need);
    this.special = new RegExp(`(${SPECIALS.map((t) => t.replace(/[[\]]/g, '\\$&')).join('|')})`);
  }

  /** From a Hugging Face tokenizer.json with a WordPiece model and a BertNormalizer. A field of
   * the wrong type is a named error ("tokenizer.json: model.max_input_chars_per_word must be ..."). */
  static fromTokenizerJson(json: Record<string, unknown>): WordPieceTokenizer {
    checkObject('tokenizer.json', 'the parsed file', json, '{ model: { vocab } }');
    const model = readField(json, 'model') as { type?: unknown; vocab?: Record<string, unknown>; merges?: unknown } & Record<string, unknown> | undefined;
    // The Hub's compact files (bert-base-uncased) leave out model.type: a vocab without merges is WordPiece.
    const wordPiece = model?.type === 'WordPiece' || (model?.type === undefined && model?.merges === undefined);
    if (typeof model !== 'object' || model === null || !wordPiece || typeof model.vocab !== 'object' || model.vocab === null || Array.isArray(model.vocab))
      throw new AttentionError('tokenizer.json: expected a WordPiece model with a vocab');
    for (const [key, only] of [['unk_token', '[UNK]'], ['continuing_subword_prefix', '##']]) {
      if (model[key] !== undefined && model[key] !== only)
        throw new AttentionError(`tokenizer.json: model.${key} must be ${show(only)} (the only one supported), got ${show(model[key])}`);
    }
    const lines: string[] = [], entries = Object.entries(model.vocab);
    checkVocabSize('tokenizer.json: model.vocab', entries.length);
    for (const [token, id] of entries) {
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_VOCAB_TOKENS)
        throw new AttentionError(`tokenizer.json: model.vocab[${show(token)}] must be an integer id from 0 to ${MAX_VOCAB_TOKENS}, got ${show(id)}`);
      lines[id] = token;
    }
    for (let i = 0; i < lines.length; i++) if (lines[i] === undefined) throw new AttentionError(`tokenizer.json: model.vocab has no token with id ${i}`);
    const norm = readField(json, 'normalizer') as Record<string, unknown> | null | undefined;
    if (norm !== undefined && norm !== null) {
      checkObject('tokenizer.json', 'normalizer', norm, '{ type: "BertNormalizer", ... }');
      if (norm.type !== 'BertNormalizer')
        throw new AttentionError(`tokenizer.json: normalizer ${show(norm.type)} is not supported (BERT uses BertNormalizer)`);
    }
    const field = (rule: Rule, value: unknown, name: string) => { if (value !== undefined) rule(value, `tokenizer.json: ${name}`); return value; };
    return new WordPieceTokenizer({
      vocab: lines,
      doLowerCase: (field(is.boolean, norm?.lowercase, 'normalizer.lowercase') ?? false) as boolean,
      stripAccents: field(nullOrBoolean, norm?.strip_accents, 'normalizer.strip_accents') as boolean | null | undefined,
      tokenizeChineseChars: field(is.boolean, norm?.handle_chinese_chars, 'normalizer.handle_chinese_chars') as boolean | undefined,
      maxInputCharsPerWord: field(FILE_RULES.maxInputCharsPerWord, model.max_input_chars_per_word, 'model.max_input_chars_per_word') as number | undefined,
    });
  }

  /** Text -> WordPiece tokens (no [CLS]/[SEP]). */
  tokenize(text: string): string[] {
    checkString('tokenize', 'text', text);
    const out: string[] = [];
    text.split(this.special).forEach((part, i) => {
      if (i % 2 === 1) out.push(part);  // split() puts the special tokens at odd indices
      else for (const word of this.basicTokenize(part)) for (const piece of this.wordPieces(word)) out.push(piece);
    });
    return out;
  }

  /**
   * Text (or a pair of texts) -> [CLS] A [SEP] (B [SEP]) with token types 0 for A, 1 for B.
   * maxLength truncates the longer text first, one token at a time, the second text when both are
   * as long, as BERT's _truncate_seq_pair and Hugging Face's longest_first do.
   */
  encode(input: string | readonly [string, string], options?: WordPieceEncodeOptions): Encoding {
    const { maxLength } = checkOptions('encode', options, ENCODE_RULES);
    const pair = typeof input !== 'string';
    if (pair && (!Array.isArray(input) || input.length !== 2 || typeof input[0] !== 'string' || typeof input[1] !== 'string'))
      throw new AttentionError(`encode: the input must be a string or a pair [textA, textB] of strings, got ${show(input)}`);
    const a = this.tokenize(pair ? input[0] : input);
    const b = pair ? this.tokenize(input[1]) : [];
    if (maxLength !== undefined) {
      const budget = maxLength - (pair ? 3 : 2);
      if (budget < (pair ? 2 : 1)) throw new AttentionError(`encode: maxLength ${maxLength} leaves no room for the text${pair ? ' pair' : ''}`);
      // Hugging Face's longest_first: one token off the longer text, off the second on a tie.
      while (a.length + b.length > budget) (a.length > b.length ? a : b).pop();
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
      const cp = ch.codePointAt(0)!, c = charClass(ch, cp);
      if (cp === 0 || cp === 0xfffd || (c & CONTROL)) continue;
      if (c & SPACE) clean += ' ';
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
        if (charClass(ch, ch.codePointAt(0)!) & PUNCTUATION) {
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
    const max = this.maxInputCharsPerWord;
    // More than 2 * max UTF-16 units are more than max characters: a long word is not counted.
    const chars = word.length > 2 * max ? Infinity : codePointCount(word);
    if (chars > max) return ['[UNK]'];
    const at = word.length === chars ? null : charOffsets(word), n = at ? at.length - 1 : word.length;
    const pieces: string[] = [];
    for (let start = 0; start < n;) {
      // Longest match first, from the longest candidate the vocabulary could hold.
      let end = Math.min(n, start + this.longestPiece), piece: string | undefined;
      for (; end > start; end--) {
        const candidate = (start > 0 ? '##' : '') + (at ? word.slice(at[start], at[end]) : word.slice(start, end));
        if (this.ids.has(candidate)) { piece = candidate; break; }
      }
      if (piece === undefined) return ['[UNK]'];  // the pieces cannot spell this word
      pieces.push(piece);
      start = end;
    }
    return pieces;
  }
}

/** Where each character (code point) of a word starts, and its end: n + 1 offsets. */
function charOffsets(word: string): number[] {
  const at: number[] = [];
  for (let i = 0; i < word.length; i++) {
    at.push(i);
    if ((word.charCodeAt(i) & 0xfc00) === 0xd800 && (word.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  at.push(word.length);
  return at;
}
