// BART (encoder-decoder) in WASM: config.json (model_type "bart") + model.safetensors + vocab.json
// (symbols, e.g. the shipped spelling-to-sound model) or vocab.json + merges.txt (byte-level BPE).
// generate() decodes through the KV cache (greedy or beam search), then re-runs the chosen output
// in one teacher-forced pass for the attention a learner looks at: encoder self-attention, decoder
// self-attention and the cross-attention from every output token to every source token.
import { arpabetToIpa } from '../tokenizers/arpabet.js';
import { BpeTokenizer } from '../tokenizers/bpe_tokenizer.js';
import { configInt, heldDtype, loadCheckpoint } from '../loading/checkpoint.js';
import type { WeightTypes } from '../loading/checkpoint.js';
import type { DtypeName } from '../runtime/wasm_module.js';
import type { ModelLoadOptions } from '../loading/weight_dtype.js';
import { MAX_BEAMS, beamSearch } from './decoding.js';
import type { Stepper } from './decoding.js';
import { AttentionError, throwIfError } from '../errors.js';
import type { FilesReader } from '../loading/model_files.js';
import type { SafetensorsWeights } from '../loading/safetensors.js';
import { readMhaTrace } from '../attention/multi_head_attention.js';
import { readBlockTrace } from '../attention/block_trace.js';
import type { MultiHeadTrace } from '../attention/multi_head_attention.js';
import { parseWeights } from '../loading/safetensors.js';
import { SymbolTokenizer } from '../tokenizers/symbol_tokenizer.js';
import { checkObject, checkOptions, checkString, is, show } from '../validate.js';
import type { Rules } from '../validate.js';
import { enumValue } from '../runtime/wasm_module.js';
import type { BartHandle, TokenBatch, WasmModule } from '../runtime/wasm_module.js';
import { WasmObject } from '../runtime/wasm_object.js';
import { readAppliedMask, readHeadWeights, type AppliedMask, type HeadWeights } from './layer_inspection.js';
import type { AttentionPartName } from '../runtime/wasm_module.js';
import { checkAblation, withHeadsOff, type AblatedHead, type AttentionSizes } from './head_ablation.js';

/** A BART checkpoint in memory. tokenizer: vocab.json (symbols: the shipped spelling-to-sound
 * model), with merges.txt for byte-level BPE (Hugging Face's BART checkpoints), or a tokenizer. */
export interface BartFiles {
  config: Record<string, unknown>;
  weights: SafetensorsWeights;
  tokenizer: { vocab: Record<string, number>; merges?: string } | SymbolTokenizer | BpeTokenizer;
}

/** BART's files: vocab.json (+ merges.txt). */
export const readBartFiles: FilesReader = async (files, config, weights) => {
  const [weightBytes, vocab, merges] = await Promise.all([weights, files.json('vocab.json'), files.optional(files.text('merges.txt'))]);
  return { config, weights: weightBytes, tokenizer: { vocab: vocab as Record<string, number>, merges } };
};

/** The fields of a Hugging Face BART config.json that the model uses. */
export interface BartConfig {
  vocab_size: number;
  d_model: number;
  encoder_layers: number;
  decoder_layers: number;
  encoder_attention_heads: number;
  decoder_attention_heads: number;
  encoder_ffn_dim: number;
  decoder_ffn_dim: number;
  max_position_embeddings: number;
  scale_embedding: boolean;
  pad_token_id: number;
  bos_token_id: number;
  eos_token_id: number;
  decoder_start_token_id: number;
  /** "grapheme-to-phoneme" for the shipped spelling-to-sound model: enables pronounce(). */
  task?: string;
}

export interface Seq2SeqOptions {
  /** Beam width, 1 to MAX_BEAMS = 64 (default 1: greedy). */
  beams?: number;
  /** Output tokens at most, the end token included (default 64); more than the model's
   * positions (max_position_embeddings) is capped there. */
  maxNewTokens?: number;
  /** Beams are ranked by log-probability / length^lengthPenalty (default 1; from -10 to 10). */
  lengthPenalty?: number;
  /** Return every intermediate of this decoder layer's attention (see MultiHeadTrace). */
  traceLayer?: number;
  /** Which attention of traceLayer to trace: 'cross' (default: Q from the decoder, K and V from
   * the encoder output) or 'self' (the decoder's masked self-attention). */
  traceKind?: 'cross' | 'self';
  /** Greedy (beams 1) only: each output step's attention as the KV-cache step computed it, in
   * the result's tokenAttention (nothing is run twice). */
  attention?: boolean;
  /** Heads to switch off while decoding (and in the attention pass after it): their outputs are
   * set to zero before W^O, as run()'s ablate ({ layer, head, part: 'self' | 'decoder' | 'cross' }). */
  ablate?: AblatedHead[];
}

/** One output step's attention, read from the KV-cache step that produced output t (its input:
 * decoder_start_token_id, then output t - 1). */
export interface StepAttention {
  /** decoder_layers x heads x (t + 1): the decoder's masked self-attention over outputs so far. */
  self: Float32Array;
  /** decoder_layers x heads x S: where the step looked in the source. */
  cross: Float32Array;
}

export interface Seq2SeqResult {
  /** Encoder input: <s> source </s>. */
  sourceTokens: number[];
  sourceTexts: string[];
  /** The best hypothesis, without start and end tokens. */
  tokens: number[];
  tokenTexts: string[];
  text: string;
  /** Its log-probability / length^lengthPenalty, and whether it ended with the end token. */
  score: number;
  finished: boolean;
  /** Every beam's finished hypothesis, best first. */
  hypotheses: { tokens: number[]; text: string; score: number }[];
  /** The decoder's rows: row t is the step that produced output t (`outputTexts[t]`: the tokens,
   * then the end token when finished). T = outputTexts.length, S = sourceTokens.length. */
  outputTexts: string[];
  /** encoder_layers x heads x S x S. */
  encoderAttention: Float32Array;
  /** decoder_layers x heads x T x T (masked: a step sees only earlier steps). */
  selfAttention: Float32Array;
  /** decoder_layers x heads x T x S: where each output step looked in the source. */
  crossAttention: Float32Array;
  trace?: MultiHeadTrace;
  /** With `attention` (greedy): one entry per row of outputTexts, from the cached decoding steps;
   * entry t equals row t of selfAttention and crossAttention. */
  tokenAttention?: StepAttention[];
}

/** What run() returns: one teacher-forced pass (T = decoder input length, S = source length). */
export interface Seq2SeqRunResult {
  sourceTokens: number[];
  /** S x d_model: what the cross-attention reads its keys and values from. */
  encoderOutput: Float32Array;
  /** T x vocab_size: row t scores the token after decoder input t. */
  logits: Float32Array;
  encoderAttention: Float32Array;
  selfAttention: Float32Array;
  crossAttention: Float32Array;
  trace?: MultiHeadTrace;
}

/** A result of generate() or run() as the options make it: `trace` is there with a `traceLayer`. */
export type Seq2SeqTraced<R extends { trace?: MultiHeadTrace }, O> = R & (O extends { traceLayer: number } ? { trace: MultiHeadTrace } : unknown);

/** generate()'s result as the options make it: `trace` with a `traceLayer`, `tokenAttention` with
 * `attention: true` when greedy (beams absent or 1). */
export type Seq2SeqResultFor<O> = Seq2SeqTraced<Seq2SeqResult, O> & (O extends { attention: true; beams?: 1 } ? { tokenAttention: StepAttention[] } : unknown);

export interface Pronunciation {
  word: string;
  /** ARPAbet phonemes, e.g. ["F", "OW", "N"]. */
  phonemes: string[];
  ipa: string;
  result: Seq2SeqResult;
}

/** One unpadded sequence of `length` tokens at `tokens`. */
const sourceBatch = (tokens: number, length: number): TokenBatch => ({ tokens, token_types: 0, padding: 0, batch: 1, length });

/** config.json, checked (a named error for what the core does not run). */
export function readBartConfig(c: Record<string, unknown>): BartConfig {
  checkObject('loadModel', 'config.json', c, '(the parsed config.json)');
  const act = c.activation_function ?? 'gelu';
  if (act !== 'gelu' && act !== 'gelu_new')
    throw new AttentionError(`config.json: activation_function ${show(act)} is not supported (BART uses gelu)`);
  if (c.normalize_before === true || c.add_final_layer_norm === true)
    throw new AttentionError('config.json: pre-LayerNorm BART variants (normalize_before / add_final_layer_norm, as mBART) are not supported');
  const id = (key: string, fallback?: unknown) => {
    const v = c[key] ?? fallback;
    if (!Number.isInteger(v) || (v as number) < 0) throw new AttentionError(`config.json: ${key} must be an integer >= 0, got ${show(v)}`);
    return v as number;
  };
  const out: BartConfig = {
    vocab_size: configInt(c, 'vocab_size'), d_model: configInt(c, 'd_model'),
    encoder_layers: configInt(c, 'encoder_layers'), decoder_layers: configInt(c, 'decoder_layers'),
    encoder_attention_heads: configInt(c, 'encoder_attention_heads'), decoder_attention_heads: configInt(c, 'decoder_attention_heads'),
    encoder_ffn_dim: configInt(c, 'encoder_ffn_dim'), decoder_ffn_dim: configInt(c, 'decoder_ffn_dim'),
    max_position_embeddings: configInt(c, 'max_position_embeddings', undefined, 1 << 16), scale_embedding: c.scale_embedding === true,
    pad_token_id: id('pad_token_id', 1), bos_token_id: id('bos_token_id', 0), eos_token_id: id('eos_token_id', 2),
    decoder_start_token_id: id('decoder_start_token_id', c.eos_token_id ?? 2),
    task: typeof c.task === 'string' ? c.task : undefined,
  };
  for (const k of ['pad_token_id', 'bos_token_id', 'eos_token_id', 'decoder_start_token_id'] as const)
    if (out[k] >= out.vocab_size) throw new AttentionError(`config.json: ${k} ${out[k]} is outside the vocabulary of ${out.vocab_size}`);
  return out;
}

/** BartForConditionalGeneration stores everything under "model." except final_logits_bias; the
 * shared table may only be stored as the encoder's or decoder's embed_tokens. */
const bartNames = (name: string) => (name === 'shared.weight'
  ? ['shared', 'encoder.embed_tokens', 'decoder.embed_tokens'].flatMap((t) => [`model.${t}.weight`, `${t}.weight`])
  : [name, 'model.' + name]);

/** Letters (and apostrophes) of each word, for pronounce(). */
const WORDS = /[\p{L}']+/gu;
/** Digits: pronounce() refuses them rather than drop them (the model reads letters only). */
const DIGIT = /\p{N}/u;

/** The most words one pronounce() call reads: each word is a generate() (a decoding loop and a
 * teacher-forced pass) on the caller's thread, so a long text is refused before any work. */
export const MAX_PRONOUNCE_WORDS = 64;

/** |lengthPenalty| at most this: length^penalty stays finite and nonzero for every length a model
 * has positions for, so a beam's score (log-probability / length^penalty) is never NaN. */
export const MAX_LENGTH_PENALTY = 10;

/** run()'s options: a layer to trace, and heads to switch off for the pass (their outputs set to
 * zero before W^O; part 'self' is the encoder's self-attention, 'decoder' the decoder's, 'cross'
 * the cross-attention). */
export interface Seq2SeqRunOptions extends Pick<Seq2SeqOptions, 'traceLayer' | 'traceKind'> {
  ablate?: AblatedHead[];
}
type TraceOptions = Pick<Seq2SeqOptions, 'traceLayer' | 'traceKind'>;

/** generate() and pronounce()'s option rules; the layer range comes from the config. */
function seq2seqRules(c: BartConfig): Rules<Seq2SeqOptions> {
  return {
    beams: is.int(1, MAX_BEAMS), maxNewTokens: is.int(1),
    lengthPenalty: is.number(-MAX_LENGTH_PENALTY, MAX_LENGTH_PENALTY),
    traceLayer: is.int(0, c.decoder_layers - 1), traceKind: is.oneOf('cross', 'self'), attention: is.boolean, ablate: is.any,
  };
}

/** The number of code points of s, counting no further than `limit + 1` (no array is built). */
function codePoints(s: string, limit: number): number {
  let n = 0;
  for (const _ of s) if (++n > limit) break;
  return n;
}

/** A short array for a message: "[20, 12]", or its first elements and its length. */
function showIds(a: readonly unknown[]): string {
  return a.length <= 8 ? `[${a.map(show).join(', ')}]` : `[${a.slice(0, 4).map(show).join(', ')}, … (${a.length} ids)]`;
}

/** A BART (encoder-decoder) model. */
export class BartModel extends WasmObject<BartHandle> {
  /** Each weight tensor's type as the model holds it, by its checkpoint name ('F32', 'F16', 'Q8_0',
   * 'Q4_K', ...): the dtype asked for, or F16 where a matrix's width is not whole 32-value blocks. */
  weightTypes: WeightTypes = {};

  /** The type most of its tensors are held in ('F16', 'Q8_0', 'Q4_K', ...; its F32 norms and biases
   * aside): the precision it was loaded at, as weightTypes names it. */
  get dtype(): DtypeName {
    return heldDtype(this.weightTypes);
  }
  readonly type = 'bart' as const;

  /** Saving is the Llama family's (LlamaModel.save(): a GGUF file); a BART model is refused with
   * an AttentionError of code 'unsupported'. */
  save(): never {
    throw new AttentionError('save: BART models cannot be saved yet (only the Llama family writes GGUF files); load this one from its files', 'unsupported');
  }
  readonly config: BartConfig;
  readonly tokenizer: SymbolTokenizer | BpeTokenizer;
  private generating = false;
  private readonly rules: Rules<Seq2SeqOptions>;
  private readonly traceRules: Rules<Seq2SeqRunOptions>;

  /** @internal use AttentionModule.loadModel */
  constructor(mod: WasmModule, files: BartFiles, options: ModelLoadOptions = {}) {
    const config = readBartConfig(files.config);
    const tokenizer = files.tokenizer instanceof SymbolTokenizer || files.tokenizer instanceof BpeTokenizer ? files.tokenizer
      : files.tokenizer.merges !== undefined ? new BpeTokenizer({ vocab: files.tokenizer.vocab, merges: files.tokenizer.merges })
        : new SymbolTokenizer(files.tokenizer.vocab, config.task === 'grapheme-to-phoneme');
    if (tokenizer.vocabSize > config.vocab_size)
      throw new AttentionError(`tokenizer has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${config.vocab_size}`);
    const file = parseWeights(files.weights);
    super(mod, new mod.BartHandle(), 'BartModel');
    this.config = config;
    this.tokenizer = tokenizer;
    this.rules = seq2seqRules(config);
    this.traceRules = { traceLayer: this.rules.traceLayer, traceKind: this.rules.traceKind, ablate: is.any };
    const handle = this.live();
    try {
      const c = config;
      throwIfError(handle.configure({ ...c, activation_function: enumValue(mod.Activation, String(files.config.activation_function ?? 'gelu'),
        'config.json: activation_function') }), 'loadModel');
      this.weightTypes = loadCheckpoint(mod, handle, this.staging, file, bartNames, options.dtype);
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  /**
   * Head `head` of layer `layer` of the encoder's self-attention (part 'self'), the decoder's
   * ('decoder') or the cross-attention ('cross'), as the model holds it (see HeadWeights).
   */
  headWeights(layer: number, head: number, part: AttentionPartName = 'self'): HeadWeights {
    return readHeadWeights(this.mod, this.live(), part, layer, head);
  }

  /** The mask layer `layer` of `part` applied in the last call that returned attention (null before one). */
  appliedMask(layer: number, part: AttentionPartName = 'self'): AppliedMask | null {
    return readAppliedMask(this.mod, this.live(), part, layer);
  }

  /** <s> + the text's tokens + </s>, as BART's tokenizers frame an input; token ids must come
   * framed already (first bos_token_id, last eos_token_id, at least one token between). */
  encodeSource(source: string | number[]): number[] {
    return this.frameSource('encodeSource', source);
  }

  /** The checked encoder input; `where` names the public method in errors. */
  private frameSource(where: string, source: unknown): number[] {
    const { bos_token_id: bos, eos_token_id: eos, vocab_size: V, max_position_embeddings: P } = this.config;
    const tooLong = (n: number) => new AttentionError(`${where}: the source's ${n} tokens exceed the model's ${P} positions`);
    let ids: number[];
    if (typeof source === 'string') {
      // One token per code point: an over-long text is refused in one pass, before tokenizing
      // (a BPE tokenizer refuses it by its bytes, or stops as soon as it passes the limit).
      if (this.tokenizer instanceof SymbolTokenizer && codePoints(source, P) + 2 > P) throw tooLong(codePoints(source, Infinity) + 2);
      ids = [bos, ...this.tokenizer.encode(source, { maxTokens: P - 2, caller: where }), eos];
      if (ids.length === 2) throw new AttentionError(`${where}: the source is empty`);
    } else if (Array.isArray(source)) {
      if (source.length > P) throw tooLong(source.length);
      ids = Array.from(source);  // a hole becomes undefined, which the id check names
    } else {
      throw new AttentionError(`${where}: the source must be a string or token ids framed as <s> ... </s>, got ${show(source)}`);
    }
    if (ids.length > P) throw tooLong(ids.length);
    ids.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= V) throw new AttentionError(`${where}: token ${show(t)} at position ${i} is outside the vocabulary of ${V}`);
    });
    if (ids.length < 3 || ids[0] !== bos || ids[ids.length - 1] !== eos)
      throw new AttentionError(`${where}: token ids must be framed as <s> ... </s> (first ${bos}, last ${eos}, at least one token between), got ${showIds(ids)}`);
    return ids;
  }

  /**
   * Translates one source (text, or token ids already framed with <s> ... </s>): greedy, or beam
   * search with `beams` (at most MAX_BEAMS), through the KV cache; then the attention of the best
   * output. maxNewTokens is capped by the positions (max_position_embeddings).
   */
  generate<O extends Seq2SeqOptions = Seq2SeqOptions>(source: string | number[], options?: O): Seq2SeqResultFor<O> {
    const o = checkOptions('generate', options, this.rules);
    return this.decodeSource('generate', this.frameSource('generate', source), o) as Seq2SeqResultFor<O>;
  }

  /** generate() on a checked source and checked options (the heads of `ablate` switched off);
   * `where` names the public method. */
  private decodeSource(where: string, src: number[], o: Seq2SeqOptions): Seq2SeqResult {
    const sizes = this.attentionSizes(), ablate = checkAblation(where, o.ablate ?? [], sizes);
    return withHeadsOff(this.mod, this.live(), this.staging, where, ablate, sizes, () => this.decodeChecked(where, src, o));
  }

  private decodeChecked(where: string, src: number[], o: Seq2SeqOptions): Seq2SeqResult {
    const c = this.config, handle = this.live(), st = this.staging;
    const S = src.length, D = c.d_model;
    const beams = o.beams ?? 1, alpha = o.lengthPenalty ?? 1;
    const maxNew = o.maxNewTokens ?? Math.min(64, c.max_position_embeddings);
    if (this.generating) throw new AttentionError(`${where}: this model is already generating`);
    this.generating = true;
    try {
      // Encode once; the cross-attention keys/values are computed from it once, in startDecoding.
      const capacity = Math.min(maxNew, c.max_position_embeddings);
      const rs = st.plan(S * 4), rm = st.plan(S * D * 4);
      try {
        st.commit();
        st.writeI32(rs, src);
        throwIfError(handle.encode(sourceBatch(rs.ptr, S), rm.ptr, 0, -1), where);
        throwIfError(handle.startDecoding({ states: rm.ptr, padding: 0, length: S }, 1, capacity), where);
      } finally {
        st.release();
      }
      const stepper = this.stepper(where, o.attention === true && beams === 1 ? S : 0);
      const first = stepper.step([c.decoder_start_token_id], 1);
      const hyps = beamSearch(stepper, first, { beams, maxNewTokens: capacity, endTokenId: c.eos_token_id, lengthPenalty: alpha });
      const best = hyps[0];
      const texts = (ids: number[]) => ids.map((t) => this.tokenizer.tokenText(t));
      const decoderIn = [c.decoder_start_token_id, ...best.tokens].slice(0, capacity);
      const { encoderAttention, selfAttention, crossAttention, trace: tr } = this.teacherForced(where, src, decoderIn, o);
      return {
        sourceTokens: src, sourceTexts: texts(src), tokens: best.tokens, tokenTexts: texts(best.tokens),
        text: this.tokenizer.decode(best.tokens), score: best.score, finished: best.finished,
        hypotheses: hyps.map((h) => ({ tokens: h.tokens, text: this.tokenizer.decode(h.tokens), score: h.score })),
        outputTexts: [...texts(best.tokens), ...(best.finished ? [this.tokenizer.tokenText(c.eos_token_id)] : [])].slice(0, decoderIn.length),
        encoderAttention, selfAttention, crossAttention, ...(tr ? { trace: tr } : {}),
        ...(stepper.attention.length ? { tokenAttention: stepper.attention.slice(0, decoderIn.length) } : {}),
      };
    } finally {
      this.generating = false;
    }
  }

  /**
   * Spelling to sound, for the shipped grapheme-to-phoneme model: each word of the text (at most
   * MAX_PRONOUNCE_WORDS). A word is a run of letters and apostrophes; spaces, punctuation, hyphens
   * and symbols separate words; a digit is refused (write numbers as words).
   */
  pronounce(text: string, options?: Seq2SeqOptions): Pronunciation[] {
    checkString('pronounce', 'text', text);
    const o = checkOptions('pronounce', options, this.rules);
    this.live();
    if (this.config.task !== 'grapheme-to-phoneme')
      throw new AttentionError('pronounce: this model is not a grapheme-to-phoneme model (config.json task)');
    const digit = DIGIT.exec(text);
    if (digit) {
      throw new AttentionError(`pronounce: the text has the digit ${show(digit[0])} at index ${digit.index}; ` +
        'this model reads letters only: write numbers as words ("two", not "2")');
    }
    const words: string[] = [], letters = this.config.max_position_embeddings - 2;
    for (const [word] of text.matchAll(WORDS)) {
      if (words.length === MAX_PRONOUNCE_WORDS)
        throw new AttentionError(`pronounce: the text has more than ${MAX_PRONOUNCE_WORDS} words; pronounce reads at most ${MAX_PRONOUNCE_WORDS} per call`);
      if (codePoints(word, letters) > letters)
        throw new AttentionError(`pronounce: the word ${show(word)} is longer than the ${letters} letters this model reads (max_position_embeddings ${letters + 2}, less <s> and </s>)`);
      words.push(word);
    }
    if (words.length === 0) throw new AttentionError('pronounce: the text has no words (letters)');
    return words.map((word) => {
      const result = this.decodeSource('pronounce', this.frameSource('pronounce', word), o);
      return { word, phonemes: result.tokenTexts, ipa: arpabetToIpa(result.tokenTexts), result };
    });
  }

  /**
   * One teacher-forced pass: the encoder over `source` (text, or ids framed with <s> ... </s>) and
   * the decoder over `decoderInput` (ids, starting with decoder_start_token_id). Returns the
   * encoder output (S x d_model), the logits (T x vocab) and every attention map.
   */
  run<O extends Seq2SeqRunOptions = Seq2SeqRunOptions>(source: string | number[], decoderInput: number[], options?: O): Seq2SeqTraced<Seq2SeqRunResult, O> {
    const o = checkOptions('run', options, this.traceRules);
    const src = this.frameSource('run', source);
    const c = this.config, V = c.vocab_size, P = c.max_position_embeddings;
    if (!Array.isArray(decoderInput))
      throw new AttentionError(`run: the decoder input must be an array of token ids starting with decoder_start_token_id (${c.decoder_start_token_id}), got ${show(decoderInput)}`);
    if (decoderInput.length === 0) throw new AttentionError('run: the decoder input is empty (start it with decoder_start_token_id)');
    if (decoderInput.length > P) throw new AttentionError(`run: the decoder input's ${decoderInput.length} tokens exceed the model's ${P} positions`);
    const dec = Array.from(decoderInput);
    dec.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= V) throw new AttentionError(`run: decoder token ${show(t)} at position ${i} is outside the vocabulary of ${V}`);
    });
    if (dec[0] !== c.decoder_start_token_id)
      throw new AttentionError(`run: the decoder input must start with decoder_start_token_id (${c.decoder_start_token_id}), got ${showIds(dec)}`);
    const sizes = this.attentionSizes();
    const ablate = checkAblation('run', o.ablate ?? [], sizes);
    return withHeadsOff(this.mod, this.live(), this.staging, 'run', ablate, sizes, () => this.teacherForced('run', src, dec, o)) as Seq2SeqTraced<Seq2SeqRunResult, O>;
  }

  /** The layers and heads of the encoder's self-attention, the decoder's and the cross-attention. */
  private attentionSizes(): AttentionSizes {
    const c = this.config, decoder = { layers: c.decoder_layers, heads: c.decoder_attention_heads };
    return { self: { layers: c.encoder_layers, heads: c.encoder_attention_heads }, decoder, cross: decoder };
  }

  /** run() on checked ids and options; `where` names the public method in errors. */
  private teacherForced(where: string, src: number[], dec: number[], options: TraceOptions): Seq2SeqRunResult {
    const c = this.config, handle = this.live(), st = this.staging;
    const S = src.length, T = dec.length, D = c.d_model, He = c.encoder_attention_heads, Hd = c.decoder_attention_heads, V = c.vocab_size;
    const trace = options.traceLayer, kind = options.traceKind ?? 'cross';
    const nEnc = c.encoder_layers * He * S * S, nSelf = c.decoder_layers * Hd * T * T, nCross = c.decoder_layers * Hd * T * S;
    const rs = st.plan(S * 4), rm = st.plan(S * D * 4), re = st.plan(nEnc * 4), rd = st.plan(T * 4), rl = st.plan(T * V * 4);
    const rself = st.plan(nSelf * 4), rcross = st.plan(nCross * 4);
    try {
      st.commit();
      st.writeI32(rs, src);
      st.writeI32(rd, dec);
      throwIfError(handle.encode(sourceBatch(rs.ptr, S), rm.ptr, re.ptr, -1), where);
      throwIfError(handle.decode(sourceBatch(rd.ptr, T), { states: rm.ptr, padding: 0, length: S },
        { logits: rl.ptr, self_attention: rself.ptr, cross_attention: rcross.ptr }, trace ?? -1, kind === 'cross'), where);
      const out: Seq2SeqRunResult = {
        sourceTokens: src, encoderOutput: st.readF32(rm, S * D), logits: st.readF32(rl, T * V),
        encoderAttention: st.readF32(re, nEnc), selfAttention: st.readF32(rself, nSelf), crossAttention: st.readF32(rcross, nCross),
      };
      if (trace !== undefined) {
        const dK = D / Hd;
        out.trace = { ...readMhaTrace(this.mod, handle, { numHeads: Hd, dK, dV: dK, dModel: D }, 1, T, kind === 'cross' ? S : T),
          block: readBlockTrace(this.mod, handle, 'post-norm', T, D) };
      }
      return out;
    } finally {
      st.release();
    }
  }

  /** The decoder's KV cache as the decoding loop sees it. With `source` > 0 (its length S; one
   * sequence), each single-token step's attention is kept in `attention`. */
  private stepper(where: string, source = 0): Stepper & { attention: StepAttention[] } {
    const handle = this.live(), st = this.staging, V = this.config.vocab_size;
    const LH = this.config.decoder_layers * this.config.decoder_attention_heads;
    let batch = 1;
    const attention: StepAttention[] = [];
    return {
      vocabSize: V,
      attention,
      step(tokens: number[], n: number): Float32Array {
        const keep = source > 0 && batch === 1 && n === 1, length = handle.cachedLength() + n;
        const rt = st.plan(tokens.length * 4), rl = st.plan(batch * V * 4);
        const rself = st.plan(keep ? LH * length * 4 : 0), rcross = st.plan(keep ? LH * source * 4 : 0);
        try {
          st.commit();
          st.writeI32(rt, tokens);
          throwIfError(handle.step(rt.ptr, n, { logits: rl.ptr, self_attention: rself.ptr, cross_attention: rcross.ptr }), where);
          if (keep) attention.push({ self: st.readF32(rself, LH * length), cross: st.readF32(rcross, LH * source) });
          return st.readF32(rl, batch * V);
        } finally {
          st.release();
        }
      },
      reorder(order: number[]): void {
        st.withI32(order, (ptr) => throwIfError(handle.reorderCache(ptr, order.length), where));
        batch = order.length;
      },
    };
  }
}
