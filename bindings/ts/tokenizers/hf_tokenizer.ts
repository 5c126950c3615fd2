// A tokenizer read from Hugging Face's tokenizer.json (with tokenizer_config.json and
// generation_config.json beside it), for the Llama family: byte-level BPE (Qwen2, SmolLM2,
// Llama 3) and SentencePiece-style BPE with "▁" and byte fallback (Llama 2, TinyLlama, Mistral).
// encode: added tokens found in the raw text -> each other piece normalized -> added tokens found
// in it -> pre-tokenized -> the BPE model -> the special tokens of the template around the ids.
// decode: ids -> token strings -> the decoder's steps.
import { AddedTokenMatcher, readAddedTokens } from './added_tokens.js';
import type { AddedToken, Segment } from './added_tokens.js';
import { AttentionError } from '../errors.js';
import { HfBpeModel } from './hf_bpe_model.js';
import { checkId, checkIds, checkLimit, checkTokenizerFileSize, contextError, readField, utf8Length } from './tokenizer_checks.js';
import type { EncodeLimit } from './tokenizer_checks.js';
import { WorkBudget, decoder, normalizer, postProcessor, preTokenizer, tokenBytes } from './tokenizer_json.js';
import type { Decoder, Normalizer, PreTokenizer, Template } from './tokenizer_json.js';
import { checkObject, checkOptions, checkString, is, show } from '../validate.js';
import type { Rules } from '../validate.js';

type Json = Record<string, unknown>;

export interface HfTokenizerFiles {
  /** tokenizer.json, parsed. */
  tokenizer: object;
  /** tokenizer_config.json, parsed: add_bos_token / add_eos_token (when present they decide, as
   * transformers' LlamaTokenizerFast does, over the post_processor), bos_token, eos_token. */
  config?: object;
  /** generation_config.json, parsed: bos_token_id, eos_token_id (a number or a list). */
  generation?: object;
}

/** The same files as text, as read from disk or the Hub. */
export interface HfTokenizerTexts {
  tokenizer: string;
  config?: string;
  generation?: string;
}

export interface HfEncodeOptions extends EncodeLimit {
  /** Put the template's special tokens (e.g. BOS) around the ids; default true. */
  addSpecialTokens?: boolean;
}

export interface HfDecodeOptions {
  /** Leave out the added tokens marked special (BOS, EOS, <|im_end|>); default false. */
  skipSpecialTokens?: boolean;
  /** Remove the space before punctuation and English contractions (" ." -> ".", " 's" -> "'s"), as
   * transformers' decode does; default: tokenizer_config.json's clean_up_tokenization_spaces, else
   * false (then decode(encode(text)) gives the text back). */
  cleanUpTokenizationSpaces?: boolean;
}

const FILE_RULES: Rules<HfTokenizerFiles> = { tokenizer: is.any, config: is.any, generation: is.any };
const TEXT_RULES: Rules<HfTokenizerTexts> = { tokenizer: is.string, config: is.string, generation: is.string };
const ENCODE_RULES: Rules<HfEncodeOptions> = { addSpecialTokens: is.boolean, maxTokens: is.any, caller: is.any };
const DECODE_RULES: Rules<HfDecodeOptions> = { skipSpecialTokens: is.boolean, cleanUpTokenizationSpaces: is.boolean };
const MODELS = ['BPE'];
const TOP_LEVEL = ['version', 'truncation', 'padding', 'added_tokens', 'normalizer', 'pre_tokenizer', 'model', 'post_processor', 'decoder'];

export class HfTokenizer {
  private readonly model: HfBpeModel;
  private readonly added: AddedToken[];
  private readonly addedById = new Map<number, AddedToken>();
  private readonly addedByContent = new Map<string, AddedToken>();
  private readonly raw: AddedTokenMatcher;         // added tokens with normalized: false
  private readonly normalizedAdded: AddedTokenMatcher;
  private readonly normalize: Normalizer;
  private readonly preTokenize: PreTokenizer;
  private readonly decodeSteps: Decoder;
  private readonly template: Template;
  // The most UTF-8 bytes one token stands for, or 0 when the text's length bounds nothing.
  private readonly longestToken: number;
  readonly vocabSize: number;
  /** The id a sequence starts with (tokenizer_config's bos_token, else generation_config's). */
  readonly bosId: number | undefined;
  /** The ids that end generation (generation_config's eos_token_id, else tokenizer_config's eos_token). */
  readonly eosIds: readonly number[];
  private readonly cleanUp: boolean;

  constructor(files: HfTokenizerFiles) {
    // The files are data (from JSON.parse); a value a caller built with a getter or Proxy that
    // throws is named as such.
    try {
      files = checkOptions('HfTokenizer', checkObject('HfTokenizer', 'files', files, '{ tokenizer, config?, generation? }'), FILE_RULES, 'file');
      const json = checkObject('HfTokenizer', 'files.tokenizer (the parsed tokenizer.json)', files.tokenizer as Json, '{ model, ... }');
      for (const key of Object.keys(json)) if (!TOP_LEVEL.includes(key)) throw new AttentionError(`tokenizer.json: the field ${show(key)} is not supported (supported: ${TOP_LEVEL.join(', ')})`);
      for (const key of ['truncation', 'padding']) if (json[key] !== undefined && json[key] !== null) throw new AttentionError(`tokenizer.json: ${key} is not supported (pass maxTokens to encode() instead), got ${show(json[key])}`);
      const model = readField(json, 'model') as Json;
      if (typeof model !== 'object' || model === null || Array.isArray(model)) throw new AttentionError(`tokenizer.json: model must be an object { type: "BPE", vocab, merges }, got ${show(model)}`);
      const type = model.type ?? 'BPE';
      if (!MODELS.includes(type as string)) throw new AttentionError(`tokenizer.json: a model of type ${show(type)} is not supported (supported: ${MODELS.join(', ')})`);
      this.model = new HfBpeModel(model);
      this.added = readAddedTokens(readField(json, 'added_tokens'));
      for (const t of this.added) { this.addedById.set(t.id, t); this.addedByContent.set(t.content, t); }
      this.raw = new AddedTokenMatcher(this.added.filter((t) => !t.normalized));
      this.normalizedAdded = new AddedTokenMatcher(this.added.filter((t) => t.normalized));
      const norm = normalizer(readField(json, 'normalizer'));
      this.normalize = norm.apply;
      this.preTokenize = preTokenizer(readField(json, 'pre_tokenizer'));
      this.decodeSteps = decoder(readField(json, 'decoder'));
      const config = files.config === undefined ? {} : checkObject('HfTokenizer', 'files.config (the parsed tokenizer_config.json)', files.config as Json, '{ add_bos_token?, bos_token?, ... }');
      const generation = files.generation === undefined ? {} : checkObject('HfTokenizer', 'files.generation (the parsed generation_config.json)', files.generation as Json, '{ bos_token_id?, eos_token_id? }');
      this.template = this.readTemplate(readField(json, 'post_processor'), config);
      this.vocabSize = this.added.reduce((n, t) => Math.max(n, t.id + 1), this.model.tokens.length);
      this.bosId = this.configTokenId(config, 'bos_token') ?? generationIds(generation, 'bos_token_id')[0];
      const eos = generationIds(generation, 'eos_token_id'), configEos = this.configTokenId(config, 'eos_token');
      this.eosIds = eos.length ? eos : configEos === undefined ? [] : [configEos];
      const clean = config.clean_up_tokenization_spaces;
      if (clean !== undefined && clean !== null && typeof clean !== 'boolean') throw new AttentionError(`tokenizer_config.json: clean_up_tokenization_spaces must be true or false, got ${show(clean)}`);
      this.cleanUp = clean === true;
      this.longestToken = norm.shrinks || this.model.fusesUnknown ? 0 : this.longest();
    } catch (e) {
      if (e instanceof AttentionError) throw e;
      throw new AttentionError(`HfTokenizer: the files could not be read (${show((e as Error)?.name)}: ${show((e as Error)?.message)})`);
    }
  }

  /** From the files' texts as read (tokenizer.json, and tokenizer_config.json and
   * generation_config.json when there are): each refused by its size before it is parsed, and
   * text that is not JSON named with its file. */
  static fromText(texts: HfTokenizerTexts): HfTokenizer {
    const t = checkOptions('HfTokenizer.fromText', checkObject('HfTokenizer.fromText', 'texts', texts, '{ tokenizer, config?, generation? }'), TEXT_RULES, 'file');
    const parse = (file: string, text: string | undefined) => {
      if (text === undefined) return undefined;
      checkTokenizerFileSize(file, text.length, 'characters');
      try {
        return JSON.parse(text) as object;
      } catch (e) {
        throw new AttentionError(`${file}: not valid JSON (${(e as Error).message})`);
      }
    };
    return new HfTokenizer({
      tokenizer: parse('tokenizer.json', t.tokenizer)!, config: parse('tokenizer_config.json', t.config), generation: parse('generation_config.json', t.generation),
    });
  }

  /**
   * Text -> token ids: added tokens ("<|im_start|>", "<s>") anywhere in the text map to their ids;
   * the template's special tokens are put around the rest unless addSpecialTokens is false. With
   * maxTokens (a model's context), a text that needs more throws "<caller>: the text exceeds the
   * model's context ...", when its length proves it before any work, else as soon as it passes.
   */
  encode(text: string, options?: HfEncodeOptions): number[] {
    checkString('encode', 'text', text);
    const { addSpecialTokens = true, maxTokens, caller } = checkOptions('encode', options, ENCODE_RULES);
    const max = checkLimit(maxTokens === undefined && caller === undefined ? undefined : { maxTokens, caller } as EncodeLimit);
    const extra = addSpecialTokens ? this.template.before.length + this.template.after.length : 0;
    if (max && this.longestToken > 0) {
      const bytes = utf8Length(text), least = Math.ceil(bytes / this.longestToken) + extra;
      if (least > max.maxTokens) throw contextError(max, `its ${bytes} UTF-8 bytes need at least ${least} tokens of at most ${this.longestToken} bytes`);
    }
    const ids: number[] = addSpecialTokens ? [...this.template.before] : [];
    const over = () => max !== undefined && ids.length + (addSpecialTokens ? this.template.after.length : 0) > max.maxTokens;
    let atStart = true;
    const budget = new WorkBudget(text.length);
    for (const segment of this.raw.split(text)) {
      if (typeof segment === 'number') ids.push(segment);
      else for (const piece of this.normalizedAdded.split(this.normalize(segment, budget))) { this.encodePiece(piece, atStart, ids, budget); atStart = false; }
      atStart = false;  // (only the piece that begins the text is at its start)
      if (over()) throw contextError(max!, `it has more than ${max!.maxTokens} tokens`);
    }
    if (addSpecialTokens) for (const id of this.template.after) ids.push(id);
    return ids;
  }

  private encodePiece(piece: Segment, atStart: boolean, ids: number[], budget: WorkBudget): void {
    if (typeof piece === 'number') { ids.push(piece); return; }
    for (const word of this.preTokenize([piece], atStart, budget)) for (const id of this.model.tokenize(word)) ids.push(id);
  }

  /** Token ids -> text, through the tokenizer's decoder. */
  decode(ids: ArrayLike<number>, options?: HfDecodeOptions): string {
    checkIds('decode', ids);
    const { skipSpecialTokens = false, cleanUpTokenizationSpaces = this.cleanUp } = checkOptions('decode', options, DECODE_RULES);
    const tokens: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = checkId('decode', ids[i]), added = this.addedById.get(id);
      if (added?.special && skipSpecialTokens) continue;
      const token = added?.content ?? this.model.tokens[id];
      if (token === undefined) throw new AttentionError(`decode: id ${id} is not in the vocabulary of ${this.vocabSize}`);
      tokens.push(token);
    }
    const text = this.decodeSteps(tokens).join('');
    return cleanUpTokenizationSpaces ? cleanUpSpaces(text) : text;
  }

  /** The id of a token string (an added token's, else the model's), if there is one. */
  tokenId(token: string): number | undefined {
    checkString('tokenId', 'token', token);
    return this.addedByContent.get(token)?.id ?? this.model.vocab.get(token);
  }

  /** The token string of an id as the vocabulary writes it ("Ġthe", "▁the", "<0x0A>"). */
  idToToken(id: number): string | undefined {
    checkId('idToToken', id);
    return this.addedById.get(id)?.content ?? this.model.tokens[id];
  }

  /** How one token reads on its own, for display: through the decoder ("Ġthe" -> " the", "▁the"
   * -> " the": the space a decoder drops at the start of a text is kept). A token holding part of
   * a character's bytes reads as its bytes ("<0xC3>"), never as U+FFFD. Ids past the vocabulary
   * (models often pad vocab_size) read as "<|id|>". */
  tokenText(id: number): string {
    const token = this.idToToken(id);
    if (token === undefined) return `<|${id}|>`;
    let text = this.decodeSteps([token]).join('');
    if (text.includes('\ufffd') && !token.includes('\ufffd')) {
      if (/^<0x[0-9A-Fa-f]{2}>$/.test(token)) return token;
      return tokenBytes(token).map((b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`).join('');
    }
    if (token.startsWith('\u2581') && !text.startsWith(' ')) text = ' ' + text;
    return text;
  }

  /** The post_processor's template, unless tokenizer_config.json sets add_bos_token or
   * add_eos_token: then BOS and/or EOS, as transformers' LlamaTokenizerFast rebuilds it. */
  private readTemplate(post: unknown, config: Json): Template {
    const flag = (key: string) => {
      const v = config[key];
      if (v !== undefined && v !== null && typeof v !== 'boolean') throw new AttentionError(`tokenizer_config.json: ${key} must be true or false, got ${show(v)}`);
      return v as boolean | undefined;
    };
    const bos = flag('add_bos_token'), eos = flag('add_eos_token');
    if (bos === undefined && eos === undefined) return postProcessor(post);
    const id = (key: string) => {
      const found = this.configTokenId(config, key);
      if (found === undefined) throw new AttentionError(`tokenizer_config.json: add_${key} is true but ${key} is not set or not in the vocabulary`);
      return found;
    };
    return { before: bos ? [id('bos_token')] : [], after: eos ? [id('eos_token')] : [] };
  }

  /** tokenizer_config's bos_token / eos_token ("<s>" or { content: "<s>", ... }) -> its id. */
  private configTokenId(config: Json, key: string): number | undefined {
    const v = config[key] as unknown;
    if (v === undefined || v === null) return undefined;
    const content = typeof v === 'object' ? (v as Json).content : v;
    if (typeof content !== 'string') throw new AttentionError(`tokenizer_config.json: ${key} must be a token string or { content }, got ${show(v)}`);
    const id = this.addedByContent.get(content)?.id ?? this.model.vocab.get(content);
    if (id === undefined) throw new AttentionError(`tokenizer_config.json: ${key} ${show(content)} is not in the vocabulary`);
    return id;
  }

  /** The most UTF-8 bytes a token's string has: no token stands for more bytes of the text
   * (a byte-level character or "▁" stands for fewer bytes than it takes). */
  private longest(): number {
    let longest = 1;
    for (const t of this.model.tokens) if (t !== undefined && t.length * 3 > longest) longest = Math.max(longest, utf8Length(t));
    for (const t of this.added) {
      // an added token with lstrip / rstrip takes any run of spaces beside it
      if (t.lstrip || t.rstrip) return 0;
      longest = Math.max(longest, utf8Length(t.content));
    }
    return longest;
  }
}

/** generation_config's bos_token_id / eos_token_id: a number or a list of numbers. */
function generationIds(generation: Json, key: string): number[] {
  const v = generation[key];
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  if (!list.every((id) => Number.isInteger(id) && id >= 0)) throw new AttentionError(`generation_config.json: ${key} must be a token id or a list of them, got ${show(v)}`);
  return list as number[];
}

/** transformers' clean_up_tokenization: its replacements, in its order. */
const CLEAN_UP: Array<[string, string]> = [[' .', '.'], [' ?', '?'], [' !', '!'], [' ,', ','], [" ' ", "'"], [" n't", "n't"], [" 'm", "'m"], [" 's", "'s"], [" 've", "'ve"], [" 're", "'re"]];

function cleanUpSpaces(text: string): string {
  return CLEAN_UP.reduce((t, [from, to]) => t.split(from).join(to), text);
}
