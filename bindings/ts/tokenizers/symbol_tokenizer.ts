// The tokenizer of character-level sequence-to-sequence models (the shipped spelling-to-sound
// model): vocab.json maps symbols to ids; a source is split into characters, an output is its
// symbols (phonemes) joined by spaces. BART checkpoints with merges.txt use BpeTokenizer instead.
import { AttentionError } from '../errors.js';
import { checkId, checkIds, checkLimit, checkVocabSize, codePointCount, contextError, MAX_VOCAB_TOKENS } from './tokenizer_checks.js';
import type { EncodeLimit } from './tokenizer_checks.js';
import { checkObject, checkString, is, show } from '../validate.js';

export class SymbolTokenizer {
  private readonly ids: Map<string, number>;
  private readonly symbols: string[] = [];
  readonly unkTokenId: number | undefined;

  /** vocab: symbol -> id (vocab.json). lowerCase: fold sources to lower case first. */
  constructor(vocab: Record<string, number>, readonly lowerCase = false, unkToken = '<unk>') {
    checkObject('vocab.json', 'the vocabulary', vocab, 'of symbol -> id');
    is.boolean(lowerCase, 'SymbolTokenizer: lowerCase');
    is.string(unkToken, 'SymbolTokenizer: unkToken');
    const symbols = Object.keys(vocab);
    checkVocabSize('vocab.json', symbols.length);
    this.ids = new Map();
    for (const s of symbols) {
      const id = (vocab as Record<string, unknown>)[s];
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_VOCAB_TOKENS)
        throw new AttentionError(`vocab.json: id of ${show(s)} must be an integer from 0 to ${MAX_VOCAB_TOKENS}, got ${show(id)}`);
      this.ids.set(s, id);
      this.symbols[id] = s;
    }
    this.unkTokenId = this.ids.get(unkToken);
  }

  get vocabSize(): number {
    return this.symbols.length;
  }

  tokenId(symbol: string): number | undefined {
    return this.ids.get(symbol);
  }

  /** One id per character (by code point); a character not in the vocabulary becomes the unknown
   * token. With a limit (a model's context), more characters than limit.maxTokens throw
   * "<caller>: the text exceeds the model's context ..." before any is looked up. */
  encode(text: string, limit?: EncodeLimit): number[] {
    checkString('encode', 'text', text);
    const max = checkLimit(limit);
    const src = this.lowerCase ? text.toLowerCase() : text;
    if (max) {
      const chars = codePointCount(src);
      if (chars > max.maxTokens) throw contextError(max, `its ${chars} characters are a token each`);
    }
    return Array.from(src, (ch) => {
      const id = this.ids.get(ch) ?? this.unkTokenId;
      if (id === undefined) throw new AttentionError(`encode: ${show(ch)} is not in the vocabulary and it has no <unk>`);
      return id;
    });
  }

  tokenText(id: number): string {
    return this.symbols[checkId('tokenText', id)] ?? `<${id}>`;
  }

  /** Output symbols joined by spaces ("F OW N"). */
  decode(ids: number[]): string {
    checkIds('decode', ids);
    return Array.from(ids, (id) => this.tokenText(id)).join(' ');
  }
}
