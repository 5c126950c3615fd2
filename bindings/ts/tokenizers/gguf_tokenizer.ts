// The tokenizer a GGUF file carries (llama.cpp's tokenizer.ggml.* keys), read into an HfTokenizer:
// the key-values are checked one by one and turned into the tokenizer.json that the model's own
// folder would have, which HfTokenizer then runs. Two tokenizer models:
//   gpt2  — byte-level BPE: tokenizer.ggml.tokens in GPT-2's byte characters, tokenizer.ggml.merges
//           ("a b", rank = index), the pre-tokenizer named by tokenizer.ggml.pre (a table below of
//           the regular expressions llama.cpp's llama-vocab.cpp uses for each name);
//   llama — SentencePiece BPE with byte fallback: tokenizer.ggml.scores rank the pieces; the merges
//           are derived from pieces and scores as transformers' LlamaConverter does (each split of
//           a piece into two pieces, ordered by the piece's score, higher first), spaces become "▁"
//           and one is put before the text (tokenizer.ggml.add_space_prefix, default true) and
//           after each special token, as llama.cpp and SentencePiece do.
// Token types (tokenizer.ggml.token_type, as llama.cpp's converter writes them): 1 normal,
// 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte. Control and unknown tokens become special
// added tokens, user-defined ones added tokens that are not special: each is found whole in the
// text before the model runs (llama.cpp's parse_special), and decode's skipSpecialTokens leaves
// out the special ones.
import { AttentionError } from '../errors.js';
import { HfTokenizer } from './hf_tokenizer.js';
import { MAX_VOCAB_TOKENS } from './tokenizer_checks.js';
import { show } from '../validate.js';

/** The GGUF metadata a tokenizer is read from: parseGguf's `metadata` Map, or a plain object of
 * the same key-values (value types as parseGguf reads them: numbers, booleans, strings, arrays of
 * strings, typed arrays or arrays of numbers). */
export type GgufTokenizerMetadata = ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>>;

/** What a model loader needs besides the tokenizer: the special ids, whether encode() adds BOS /
 * EOS, and the chat template. */
export interface GgufTokenizerInfo {
  /** tokenizer.ggml.model: 'gpt2' (byte-level BPE) or 'llama' (SentencePiece). */
  model: GgufTokenizerModel;
  /** tokenizer.ggml.pre for a gpt2 model ('default' when absent, as llama.cpp reads it); undefined for llama. */
  pre: string | undefined;
  /** The vocabulary's size: tokenizer.ggml.tokens' length. */
  vocabSize: number;
  /** tokenizer.ggml.bos_token_id; for a llama model without it, 1 (llama.cpp's default) when the vocabulary has it. */
  bosId: number | undefined;
  /** tokenizer.ggml.eos_token_id; for a llama model without it, 2 (llama.cpp's default). */
  eosId: number | undefined;
  /** The ids that end generation: eos, and tokenizer.ggml.eot_token_id / eom_token_id when set. */
  eosIds: number[];
  /** tokenizer.ggml.unknown_token_id; for a llama model without it, 0 (llama.cpp's default). */
  unknownId: number | undefined;
  /** tokenizer.ggml.padding_token_id. */
  paddingId: number | undefined;
  /** tokenizer.ggml.add_bos_token; default true for llama and for the pre-tokenizers llama.cpp adds BOS for (llama-bpe, tekken), else false. */
  addBos: boolean;
  /** tokenizer.ggml.add_eos_token; default false. */
  addEos: boolean;
  /** tokenizer.ggml.add_space_prefix (llama models; default true): "▁" before the text and after each special token. */
  addSpacePrefix: boolean;
  /** tokenizer.chat_template (a Jinja template), if the file has one. */
  chatTemplate: string | undefined;
}

export type GgufTokenizerModel = 'gpt2' | 'llama';
const MODELS: readonly GgufTokenizerModel[] = ['gpt2', 'llama'];

/** llama.cpp's token types (llama_token_type). */
const NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, BYTE = 6;
const MAX_TOKEN_TYPE = 6;

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers by tokenizer.ggml.pre: llama.cpp's regular expressions for each name
// (llm_tokenizer_bpe in src/llama-vocab.cpp), written as the tokenizer.json pre_tokenizer that
// splits the same way (each regular expression a Split with behavior Isolated: matches and the
// text between them both become pieces, as llama.cpp's unicode_regex_split keeps them), then
// GPT-2's byte characters.

const byteLevel = (useRegex: boolean): Json => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: useRegex });
const split = (regex: string): Json => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });
const sequence = (...pretokenizers: Json[]): Json => ({ type: 'Sequence', pretokenizers });

// GPT-2's pattern (ByteLevel's own when use_regex is true; llama.cpp's lacks the final "|\s+",
// which splits nothing differently: the whitespace it would match is a piece between matches).
const GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const LLAMA3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const TEKKEN = '[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
const CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)?";
const GPT4O = `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${CONTRACTIONS}|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const CJK = '[一-龥ࠀ-一가-퟿]+';

interface PreTokenizerEntry {
  /** The tokenizer.json pre_tokenizer that splits as llama.cpp does for these names. */
  preTokenizer: Json;
  /** A normalizer the model's tokenizer.json has and the GGUF keys do not record (Qwen2's NFC). */
  normalizer?: Json;
  /** llama.cpp's ignore_merges for these names: a piece that is a token is taken whole. */
  ignoreMerges?: boolean;
  /** llama.cpp's add_bos default for these names (when tokenizer.ggml.add_bos_token is absent). */
  addBos?: boolean;
}

const PRE_TABLE: Array<[string[], PreTokenizerEntry]> = [
  // llama.cpp's fallback (a gpt2 model without tokenizer.ggml.pre, or 'default'): punctuation runs,
  // then GPT-2's pattern, then digit runs, then runs of three ASCII digits.
  [['default'], { preTokenizer: sequence(split('[\\p{P}\\$\\+<=>\\^~\\|]+'), split(GPT2), split('\\p{N}+'), split('[0-9][0-9][0-9]'), byteLevel(false)) }],
  [['gpt-2', 'phi-2', 'mpt', 'olmo', 'jais', 'gigachat', 'exaone4', 'trillion', 'granite-docling'], { preTokenizer: byteLevel(true) }],
  [['llama-bpe', 'llama3', 'llama-v3', 'falcon3', 'falcon-h1', 'pixtral', 'midm-2.0', 'lfm2'], { preTokenizer: sequence(split(LLAMA3), byteLevel(false)), ignoreMerges: true, addBos: true }],
  [['smaug-bpe', 'dbrx', 'glm4', 'chatglm-bpe'], { preTokenizer: sequence(split(LLAMA3), byteLevel(false)) }],
  // Qwen2's tokenizer.json normalizes to NFC first (llama.cpp does not: on text that is not NFC
  // its ids differ from the model's own tokenizer; these are the model's).
  [['qwen2', 'deepseek-r1-qwen', 'megrez'], { preTokenizer: sequence(split(QWEN2), byteLevel(false)), normalizer: { type: 'NFC' } }],
  [['stablelm2', 'hunyuan'], { preTokenizer: sequence(split(QWEN2), byteLevel(false)) }],
  // SmolLM's (and StarCoder's) tokenizer.json: each digit apart, then GPT-2's pattern.
  [['smollm', 'starcoder', 'refact', 'command-r', 'codeshell', 'exaone', 'minerva-7b'], { preTokenizer: sequence({ type: 'Digits', individual_digits: true }, byteLevel(true)) }],
  [['deepseek-coder'], { preTokenizer: sequence(split('[\\r\\n]'), split('\\s?\\p{L}+'), split('\\s?\\p{P}+'), split(CJK), { type: 'Digits', individual_digits: true }, byteLevel(false)) }],
  [['tekken'], { preTokenizer: sequence(split(TEKKEN), byteLevel(false)), ignoreMerges: true, addBos: true }],
  [['gpt-4o', 'llama4'], { preTokenizer: sequence(split(GPT4O), byteLevel(false)) }],
];
const PRE_BY_NAME = new Map<string, PreTokenizerEntry>(PRE_TABLE.flatMap(([names, entry]) => names.map((n) => [n, entry] as [string, PreTokenizerEntry])));

/** The tokenizer.ggml.pre values read (a gpt2 model with any other is refused by name). */
export const GGUF_PRE_TOKENIZERS: readonly string[] = Object.freeze(PRE_TABLE.flatMap(([names]) => names));

// ---------------------------------------------------------------------------------------------
// Reading the keys

function fail(message: string): never {
  throw new AttentionError(`GGUF tokenizer: ${message}`);
}

/** A key's value from a Map or a plain object (own keys only); a getter or Proxy that throws is named. */
function reader(metadata: GgufTokenizerMetadata): (key: string) => unknown {
  if (metadata instanceof Map) return (key) => metadata.get(key);
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || ArrayBuffer.isView(metadata))
    fail(`metadata must be a Map of GGUF key-values (parseGguf's metadata) or an object of them, got ${show(metadata)}`);
  return (key) => {
    try {
      return Object.prototype.hasOwnProperty.call(metadata, key) ? (metadata as Record<string, unknown>)[key] : undefined;
    } catch (e) {
      return fail(`${key} could not be read: ${show((e as Error)?.message)}`);
    }
  };
}

/** A numeric array (typed or plain) as numbers, or undefined when the value is no such array. */
function numbers(value: unknown): ArrayLike<number> | undefined {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView) && !(value instanceof BigInt64Array) && !(value instanceof BigUint64Array))
    return value as unknown as ArrayLike<number>;
  if (Array.isArray(value) && value.every((v) => typeof v === 'number')) return value as number[];
  return undefined;
}

function optionalString(get: (key: string) => unknown, key: string): string | undefined {
  const v = get(key);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') fail(`${key} must be a string, got ${show(v)}`);
  return v;
}

function optionalBool(get: (key: string) => unknown, key: string): boolean | undefined {
  const v = get(key);
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') fail(`${key} must be a bool, got ${show(v)}`);
  return v;
}

function optionalId(get: (key: string) => unknown, key: string, vocabSize: number): number | undefined {
  const v = get(key);
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(`${key} must be a token id (an integer >= 0), got ${show(v)}`);
  if (v >= vocabSize) fail(`${key} ${v} is out of range: the vocabulary (tokenizer.ggml.tokens) has ${vocabSize} tokens`);
  return v;
}

/** Everything but the merges: checked, with llama.cpp's defaults filled in. */
interface Read {
  info: GgufTokenizerInfo;
  tokens: string[];
  types: ArrayLike<number> | undefined;
  get: (key: string) => unknown;
  pre: PreTokenizerEntry | undefined;
}

function read(metadata: GgufTokenizerMetadata): Read {
  const get = reader(metadata);
  const model = get('tokenizer.ggml.model');
  if (model === undefined) fail('tokenizer.ggml.model is missing: the file has no tokenizer');
  if (typeof model !== 'string') fail(`tokenizer.ggml.model must be a string, got ${show(model)}`);
  if (!(MODELS as readonly string[]).includes(model)) fail(`tokenizer.ggml.model ${show(model)} is not supported (supported: ${MODELS.join(', ')})`);

  const list = get('tokenizer.ggml.tokens');
  if (list === undefined) fail('tokenizer.ggml.tokens is missing');
  if (!Array.isArray(list)) fail(`tokenizer.ggml.tokens must be an array of strings, got ${show(list)}`);
  if (list.length === 0) fail('tokenizer.ggml.tokens is empty');
  if (list.length > MAX_VOCAB_TOKENS) fail(`tokenizer.ggml.tokens has ${list.length} tokens, more than a vocabulary may have (${MAX_VOCAB_TOKENS})`);
  const tokens: string[] = new Array(list.length);
  const seen = new Map<string, number>();
  for (let i = 0; i < list.length; i++) {
    let t = list[i] as unknown;
    if (typeof t !== 'string') fail(`tokenizer.ggml.tokens must be an array of strings: element ${i} is ${show(t)}`);
    if (t === '') t = `[EMPTY_${i}]`;  // (as llama.cpp names an empty token)
    const before = seen.get(t as string);
    if (before !== undefined) fail(`tokenizer.ggml.tokens: ${show(t)} is both token ${before} and token ${i}`);
    seen.set(t as string, i);
    tokens[i] = t as string;
  }
  const n = tokens.length;

  const typeValue = get('tokenizer.ggml.token_type');
  let types: ArrayLike<number> | undefined;
  if (typeValue !== undefined) {
    types = numbers(typeValue);
    if (types === undefined) fail(`tokenizer.ggml.token_type must be an array of integers (i32), got ${show(typeValue)}`);
    if (types.length !== n) fail(`tokenizer.ggml.token_type has ${types.length} entries, tokenizer.ggml.tokens ${n}: one type per token`);
    for (let i = 0; i < n; i++) {
      const t = types[i];
      if (!Number.isInteger(t) || t < 0 || t > MAX_TOKEN_TYPE) fail(`tokenizer.ggml.token_type[${i}] is ${show(t)}: the types are 0 to ${MAX_TOKEN_TYPE} (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte)`);
    }
  }

  let pre: PreTokenizerEntry | undefined, preName: string | undefined;
  const preValue = optionalString(get, 'tokenizer.ggml.pre');
  if (model === 'gpt2') {
    preName = preValue ?? 'default';
    pre = PRE_BY_NAME.get(preName);
    if (pre === undefined) fail(`tokenizer.ggml.pre ${show(preName)} is not supported (supported: ${GGUF_PRE_TOKENIZERS.join(', ')})`);
  }

  const id = (key: string) => optionalId(get, key, n);
  const llama = model === 'llama';
  const inRange = (fallback: number) => (llama && fallback < n ? fallback : undefined);
  const bosId = id('tokenizer.ggml.bos_token_id') ?? inRange(1);
  const eosId = id('tokenizer.ggml.eos_token_id') ?? inRange(2);
  const unknownId = id('tokenizer.ggml.unknown_token_id') ?? inRange(0);
  const paddingId = id('tokenizer.ggml.padding_token_id');
  const eosIds: number[] = [];
  for (const e of [eosId, id('tokenizer.ggml.eot_token_id'), id('tokenizer.ggml.eom_token_id')]) if (e !== undefined && !eosIds.includes(e)) eosIds.push(e);
  const addBos = optionalBool(get, 'tokenizer.ggml.add_bos_token') ?? (llama || pre?.addBos === true);
  const addEos = optionalBool(get, 'tokenizer.ggml.add_eos_token') ?? false;
  const addSpacePrefix = optionalBool(get, 'tokenizer.ggml.add_space_prefix') ?? llama;
  if (addBos && bosId === undefined) fail('tokenizer.ggml.add_bos_token is true but tokenizer.ggml.bos_token_id is not set');
  if (addEos && eosId === undefined) fail('tokenizer.ggml.add_eos_token is true but tokenizer.ggml.eos_token_id is not set');
  const chatTemplate = optionalString(get, 'tokenizer.chat_template');
  const info: GgufTokenizerInfo = {
    model: model as GgufTokenizerModel, pre: preName, vocabSize: n, bosId, eosId, eosIds, unknownId, paddingId, addBos, addEos, addSpacePrefix, chatTemplate,
  };
  return { info, tokens, types, get, pre };
}

/** gpt2: tokenizer.ggml.merges, "a b" each (split at the first space after the first character,
 * as llama.cpp splits them), both halves and their join tokens of the vocabulary. */
function gpt2Merges(get: (key: string) => unknown, vocab: ReadonlyMap<string, number>): Array<[string, string]> {
  const list = get('tokenizer.ggml.merges');
  if (list === undefined) fail('tokenizer.ggml.merges is missing: a gpt2 tokenizer needs its merges');
  if (!Array.isArray(list)) fail(`tokenizer.ggml.merges must be an array of strings, got ${show(list)}`);
  const out: Array<[string, string]> = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const m = list[i] as unknown;
    if (typeof m !== 'string') fail(`tokenizer.ggml.merges must be an array of strings: element ${i} is ${show(m)}`);
    const space = m.indexOf(' ', 1);
    if (space < 0) fail(`tokenizer.ggml.merges[${i}] ${show(m)} is not two tokens separated by a space`);
    const a = m.slice(0, space), b = m.slice(space + 1);
    if (!vocab.has(a) || !vocab.has(b)) fail(`tokenizer.ggml.merges[${i}] ${show(m)} names ${show(vocab.has(a) ? b : a)}, which is not in tokenizer.ggml.tokens`);
    if (!vocab.has(a + b)) fail(`tokenizer.ggml.merges[${i}] ${show(m)} makes ${show(a + b)}, which is not in tokenizer.ggml.tokens`);
    out[i] = [a, b];
  }
  return out;
}

/** llama: the merges SentencePiece's scores imply, as transformers' SentencePieceExtractor derives
 * them: for each piece (in id order), each split into two pieces of the vocabulary, ordered by
 * the halves' ids; then all of them by the piece's score, higher first (ties keep that order).
 * Only pieces SentencePiece can merge into are made (normal, user-defined and unused ones: not
 * control, unknown or byte tokens, which it keeps apart from its merges). */
function llamaMerges(get: (key: string) => unknown, tokens: string[], types: ArrayLike<number> | undefined, vocab: ReadonlyMap<string, number>): Array<[string, string]> {
  const value = get('tokenizer.ggml.scores');
  if (value === undefined) fail('tokenizer.ggml.scores is missing: a llama (SentencePiece) tokenizer needs the scores its merges are ranked by');
  const scores = numbers(value);
  if (scores === undefined) fail(`tokenizer.ggml.scores must be an array of numbers (f32), got ${show(value)}`);
  if (scores.length !== tokens.length) fail(`tokenizer.ggml.scores has ${scores.length} entries, tokenizer.ggml.tokens ${tokens.length}: one score per token`);
  const merges: Array<{ a: string; b: string; score: number; order: number }> = [];
  for (let id = 0; id < tokens.length; id++) {
    const score = scores[id];
    if (!Number.isFinite(score)) fail(`tokenizer.ggml.scores[${id}] is ${show(score)}, not a finite number`);
    const type = types?.[id] ?? NORMAL;
    if (type === CONTROL || type === UNKNOWN || type === BYTE) continue;
    const chars = Array.from(tokens[id]);
    if (chars.length < 2) continue;
    const local: Array<[string, string, number, number]> = [];
    let cut = chars[0].length;
    for (let k = 1; k < chars.length; k++) {
      const a = tokens[id].slice(0, cut), b = tokens[id].slice(cut);
      const ia = vocab.get(a), ib = vocab.get(b);
      if (ia !== undefined && ib !== undefined) local.push([a, b, ia, ib]);
      cut += chars[k].length;
    }
    local.sort((x, y) => x[2] - y[2] || x[3] - y[3]);
    for (const [a, b] of local) merges.push({ a, b, score, order: merges.length });
  }
  merges.sort((x, y) => y.score - x.score || x.order - y.order);
  return merges.map(({ a, b }) => [a, b]);
}

/** The tokenizer.json (and tokenizer_config / generation_config) the metadata stands for. */
function hfFiles(r: Read): { tokenizer: Json; config: Json; generation: Json } {
  const { info, tokens, types, get } = r;
  const vocab = new Map<string, number>();
  tokens.forEach((t, i) => vocab.set(t, i));
  const added: Json[] = [];
  if (types) for (let i = 0; i < tokens.length; i++) {
    const t = types[i];
    if (t === CONTROL || t === UNKNOWN || t === USER_DEFINED)
      added.push({ id: i, content: tokens[i], single_word: false, lstrip: false, rstrip: false, normalized: false, special: t !== USER_DEFINED });
  }
  const llama = info.model === 'llama';
  const model: Json = {
    type: 'BPE', dropout: null, continuing_subword_prefix: null, end_of_word_suffix: null, vocab,
    merges: llama ? llamaMerges(get, tokens, types, vocab) : gpt2Merges(get, vocab),
    unk_token: llama && info.unknownId !== undefined ? tokens[info.unknownId] : null,
    fuse_unk: llama, byte_fallback: llama, ignore_merges: r.pre?.ignoreMerges === true,
  };
  const replace = (from: string, to: string): Json => ({ type: 'Replace', pattern: { String: from }, content: to });
  const tokenizer: Json = llama ? {
    normalizer: info.addSpacePrefix ? { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' }, replace(' ', '\u2581')] } : replace(' ', '\u2581'),
    pre_tokenizer: null,
    decoder: { type: 'Sequence', decoders: [replace('\u2581', ' '), { type: 'ByteFallback' }, { type: 'Fuse' }, ...(info.addSpacePrefix ? [{ type: 'Strip', content: ' ', start: 1, stop: 0 }] : [])] },
  } : {
    normalizer: r.pre!.normalizer ?? null,
    pre_tokenizer: r.pre!.preTokenizer,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  };
  Object.assign(tokenizer, { version: '1.0', truncation: null, padding: null, added_tokens: added, post_processor: null, model });
  const config: Json = { add_bos_token: info.addBos, add_eos_token: info.addEos, clean_up_tokenization_spaces: false };
  if (info.bosId !== undefined) config.bos_token = tokens[info.bosId];
  if (info.eosId !== undefined) config.eos_token = tokens[info.eosId];
  const generation: Json = { eos_token_id: info.eosIds };
  if (info.bosId !== undefined) generation.bos_token_id = info.bosId;
  return { tokenizer, config, generation };
}

/**
 * The tokenizer of a GGUF file, from its metadata (`parseGguf(bytes).metadata`, or the header's):
 * llama.cpp's `tokenizer.ggml.*` keys read into an {@link HfTokenizer} that tokenizes as the
 * model's own tokenizer.json does.
 *
 * - `tokenizer.ggml.model` `gpt2`: byte-level BPE with `tokenizer.ggml.merges`, split first as
 *   `tokenizer.ggml.pre` names (see {@link GGUF_PRE_TOKENIZERS}; absent: llama.cpp's 'default').
 * - `tokenizer.ggml.model` `llama`: SentencePiece BPE ranked by `tokenizer.ggml.scores`, with byte
 *   fallback to the `<0xNN>` tokens and "▁" for spaces (`tokenizer.ggml.add_space_prefix`).
 * - `tokenizer.ggml.token_type`: control and unknown tokens are special added tokens, user-defined
 *   ones added tokens (each found whole in the text); `encode` puts BOS / EOS around the ids as
 *   `tokenizer.ggml.add_bos_token` / `add_eos_token` say (llama.cpp's defaults when absent);
 *   `bosId` and `eosIds` are the file's ids.
 *
 * Throws AttentionError naming the key for metadata that is missing or malformed: tokens not an
 * array of distinct strings, token types or scores not one per token, a merge naming a token the
 * vocabulary lacks, an id out of range, an unknown model or pre-tokenizer (with the supported ones).
 */
export function ggufTokenizer(metadata: GgufTokenizerMetadata): HfTokenizer {
  return new HfTokenizer(hfFiles(read(metadata)));
}

/**
 * The special ids, BOS / EOS flags and chat template of a GGUF file's tokenizer (see
 * {@link GgufTokenizerInfo}), with llama.cpp's defaults where a key is absent; the keys are
 * checked as {@link ggufTokenizer} checks them (but the merges are not read).
 */
export function ggufTokenizerInfo(metadata: GgufTokenizerMetadata): GgufTokenizerInfo {
  return read(metadata).info;
}
