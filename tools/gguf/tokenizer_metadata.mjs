// A model folder's tokenizer as the GGUF key-values llama.cpp's converter (convert_hf_to_gguf.py
// with gguf-py's SpecialVocab) writes for it, in the { type, of, value } form gguf_writer.mjs takes:
//   gpt2TokenizerMetadata(tokenizer.json, { config, modelConfig, pre })  byte-level BPE
//       tokenizer.ggml.model "gpt2", .pre, .tokens, .token_type, .merges (as get_vocab_base /
//       _set_vocab_gpt2 write them);
//   sentencePieceMetadata({ tokens, scores, types }, { tokenizer, config, modelConfig })
//       tokenizer.ggml.model "llama", .pre "default", .tokens, .scores, .token_type (the pieces,
//       scores and types of a SentencePiece model, as _create_vocab_sentencepiece reads them from
//       tokenizer.model: tools/tokenizers/sentencepiece_reference.py dumps them);
// and for both the special ids (bos, eos, unknown, seperator [sic], padding, cls, mask), add_bos /
// add_eos and tokenizer.chat_template, as SpecialVocab finds them (tokenizer_config.json's
// bos_token etc. looked up among tokenizer.json's added tokens, then config.json's *_token_id;
// add_bos / add_eos from the post-processor's template, then tokenizer_config's add_*_token).
//
// llama.cpp's converter names the pre-tokenizer by hashing the ids of a test text against a list
// of known models; here it is named from the tokenizer.json's pre_tokenizer itself (detectPre), or
// given (options.pre).
//
// Token types (gguf.TokenType): 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
export const TOKEN_TYPE = Object.freeze({ NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 });

const LLAMA3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const isType = (part, type) => part !== null && typeof part === 'object' && part.type === type;
const parts = (pre) => (isType(pre, 'Sequence') ? pre.pretokenizers : [pre]);
const byteLevel = (part, useRegex) => isType(part, 'ByteLevel') && !part.add_prefix_space && (part.use_regex ?? true) === useRegex;
const splitOf = (part) => (isType(part, 'Split') && part.behavior === 'Isolated' && !part.invert ? part.pattern?.Regex : undefined);

/**
 * The tokenizer.ggml.pre name of a byte-level tokenizer.json, from its pre_tokenizer (and its
 * normalizer and model.ignore_merges, which tell Llama 3 from Smaug, Qwen2 from StableLM 2):
 * GPT-2's ByteLevel -> 'gpt-2'; digits apart then ByteLevel -> 'smollm'; Llama 3's split pattern
 * -> 'llama-bpe' (ignore_merges) or 'smaug-bpe'; Qwen2's (NFC) -> 'qwen2'. Throws for any other.
 */
export function detectPre(tokenizer) {
  const p = parts(tokenizer.pre_tokenizer ?? null);
  const nfc = isType(tokenizer.normalizer, 'NFC');
  if (!tokenizer.normalizer && p.length === 1 && byteLevel(p[0], true)) return 'gpt-2';
  if (!tokenizer.normalizer && p.length === 2 && isType(p[0], 'Digits') && p[0].individual_digits === true && byteLevel(p[1], true)) return 'smollm';
  if (p.length === 2 && byteLevel(p[1], false)) {
    const regex = splitOf(p[0]);
    if (regex === LLAMA3 && !tokenizer.normalizer) return tokenizer.model?.ignore_merges ? 'llama-bpe' : 'smaug-bpe';
    if (regex === QWEN2 && nfc) return 'qwen2';
    if (regex === QWEN2 && !tokenizer.normalizer) return 'stablelm2';
  }
  throw new Error(`tokenizer_metadata: the pre-tokenizer ${JSON.stringify(tokenizer.pre_tokenizer)} (normalizer ${JSON.stringify(tokenizer.normalizer)}) is not one this tool names: pass options.pre`);
}

/** convert_hf_to_gguf.py's does_token_look_special: added tokens that ought to be control tokens. */
function looksSpecial(text) {
  return ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(text) || (text.startsWith('<|') && text.endsWith('|>')) ||
    (text.startsWith('<｜') && text.endsWith('｜>')) || (text.startsWith('<unused') && text.endsWith('>'));
}

const strings = (value) => ({ type: 'array', of: 'string', value });

/**
 * Byte-level BPE (tokenizer.json with a ByteLevel decoder, no byte_fallback) -> the gpt2 keys.
 * options: config (tokenizer_config.json, parsed), modelConfig (config.json: vocab_size pads the
 * token list with "[PAD<i>]" unused tokens, *_token_id), pre (tokenizer.ggml.pre; default:
 * detectPre). Token i is the vocabulary's (added tokens included); an added token is control when
 * marked special or when it looks special ("<|...|>"), else user-defined; every other normal.
 */
export function gpt2TokenizerMetadata(tokenizer, { config, modelConfig, pre } = {}) {
  const model = tokenizer.model;
  if (model?.type !== 'BPE' || model.byte_fallback || tokenizer.decoder?.type !== 'ByteLevel')
    throw new Error('tokenizer_metadata: not a GPT-2 byte-level BPE tokenizer.json (BPE without byte_fallback, ByteLevel decoder)');
  const byId = new Map();
  for (const [token, id] of Object.entries(model.vocab)) byId.set(id, token);
  const added = new Map();
  for (const t of tokenizer.added_tokens ?? []) { byId.set(t.id, t.content); added.set(t.content, t); }
  const vocabSize = modelConfig?.vocab_size ?? [...byId.keys()].reduce((a, b) => Math.max(a, b + 1), 0);
  const tokens = [], types = [];
  for (let i = 0; i < vocabSize; i++) {
    let token = byId.get(i);
    let type = TOKEN_TYPE.NORMAL;
    if (token === undefined) { token = `[PAD${i}]`; type = TOKEN_TYPE.UNUSED; } else if (added.has(token)) {
      if (added.get(token).special || looksSpecial(token)) type = TOKEN_TYPE.CONTROL;
      else { token = token.replaceAll('\u2581', ' '); type = TOKEN_TYPE.USER_DEFINED; }
    }
    tokens.push(token);
    types.push(type);
  }
  // Merges as "a b"; pairs (the newer tokenizer.json form) with a space inside a part have it as
  // U+0120, as gguf-py's SpecialVocab writes them.
  const merges = model.merges.map((m) => (typeof m === 'string' ? m : m.map((part) => part.replaceAll(' ', '\u0120')).join(' ')));
  return {
    'tokenizer.ggml.model': { type: 'string', value: 'gpt2' },
    'tokenizer.ggml.pre': { type: 'string', value: pre ?? detectPre(tokenizer) },
    'tokenizer.ggml.tokens': strings(tokens),
    'tokenizer.ggml.token_type': { type: 'array', of: 'i32', value: types },
    'tokenizer.ggml.merges': strings(merges),
    ...specialMetadata(tokenizer, config, modelConfig, tokens.length),
  };
}

/**
 * A SentencePiece model's pieces, scores and types (one each per id, types as TOKEN_TYPE) -> the
 * llama keys. options: tokenizer (its tokenizer.json, for the added tokens and the template's
 * BOS/EOS), config (tokenizer_config.json), modelConfig (config.json), addSpacePrefix (written
 * only when given: llama.cpp's default for llama is true).
 */
export function sentencePieceMetadata({ tokens, scores, types }, { tokenizer, config, modelConfig, addSpacePrefix } = {}) {
  if (tokens.length !== scores.length || tokens.length !== types.length) throw new Error('tokenizer_metadata: tokens, scores and types must have one entry per id');
  const out = {
    'tokenizer.ggml.model': { type: 'string', value: 'llama' },
    'tokenizer.ggml.pre': { type: 'string', value: 'default' },
    'tokenizer.ggml.tokens': strings(tokens),
    'tokenizer.ggml.scores': { type: 'array', of: 'f32', value: scores },
    'tokenizer.ggml.token_type': { type: 'array', of: 'i32', value: types },
    ...specialMetadata(tokenizer ?? {}, config, modelConfig, tokens.length),
  };
  if (addSpacePrefix !== undefined) out['tokenizer.ggml.add_space_prefix'] = { type: 'bool', value: addSpacePrefix };
  return out;
}

const ID_KEYS = {
  bos: 'bos_token_id', eos: 'eos_token_id', unk: 'unknown_token_id', sep: 'seperator_token_id', pad: 'padding_token_id',
  cls: 'cls_token_id', mask: 'mask_token_id', eot: 'eot_token_id', eom: 'eom_token_id',
};
const ADD_KEYS = ['bos', 'eos', 'sep'];  // (the add_*_token keys GGUFWriter has)

/** gguf-py's SpecialVocab: the special ids, add_bos / add_eos and the chat template. */
function specialMetadata(tokenizer, config, modelConfig, nVocab) {
  const ids = {}, add = {};
  const typesToRead = ['bos', 'eos', 'unk', 'sep', 'pad', 'cls', 'mask'];
  const setId = (typ, id) => {
    if (!Number.isInteger(id) || id < 0 || id >= nVocab || typ in ids) return;
    ids[typ] = id;
  };
  const cfg = config ? { ...config } : undefined;
  const content = (entry) => (typeof entry === 'string' ? entry : typeof entry?.content === 'string' ? entry.content : undefined);
  let bos = content(cfg?.bos_token), eos = content(cfg?.eos_token);
  const cls = content(cfg?.cls_token);
  const post = tokenizer.post_processor;
  for (const processor of post ? (post.processors ?? [post]) : []) {
    if (processor.type === 'RobertaProcessing') { add.bos = true; add.eos = true; add.sep = true; continue; }
    if (processor.type !== 'TemplateProcessing') continue;
    const single = processor.single ?? [];
    if (single.length <= 1) continue;
    const first = single[0]?.SpecialToken?.id;
    if (first) {
      if (!cfg) bos = first;
      add.bos = first === bos || first === cls;
    }
    const last = single[single.length - 1]?.SpecialToken?.id;
    if (last) {
      if (!cfg) eos = last;
      else if (last !== eos) {
        // (SpecialVocab keeps tokenizer_config's eos as the EOT token and takes the template's)
        if (!typesToRead.includes('eot')) { typesToRead.push('eot'); cfg.eot_token = eos; }
        cfg.eos_token = eos = last;
      }
      add.eos = last === eos;
    }
  }
  const out = {};
  if (cfg) {
    let template = cfg.chat_template;
    if (Array.isArray(template)) template = template.find((t) => t.name === 'default')?.template;
    if (typeof template === 'string') out['tokenizer.chat_template'] = { type: 'string', value: template };
    const addedTokens = tokenizer.added_tokens ?? [];
    for (const typ of typesToRead) {
      if (typeof cfg[`add_${typ}_token`] === 'boolean') add[typ] = cfg[`add_${typ}_token`];
      const c = content(cfg[`${typ}_token`]);
      if (c !== undefined) setId(typ, addedTokens.find((t) => t.content === c)?.id);
    }
  }
  for (const typ of typesToRead) setId(typ, modelConfig?.[`${typ}_token_id`]);
  for (const [typ, id] of Object.entries(ids)) out[`tokenizer.ggml.${ID_KEYS[typ]}`] = { type: 'u32', value: id };
  for (const typ of ADD_KEYS) if (typ in add) out[`tokenizer.ggml.add_${typ}_token`] = { type: 'bool', value: add[typ] };
  return out;
}
