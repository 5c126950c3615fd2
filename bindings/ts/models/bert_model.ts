// BERT in WASM: config.json (model_type "bert") + model.safetensors + the WordPiece tokenizer.
// run() gives hidden states, bidirectional attention and a layer's trace; fillMask() the masked-LM
// head's guesses; embed() one vector per sentence (sentence-transformers' pooling), many sentences
// padded into one batched call.
import { configEps, configInt, findTensor, heldDtype, loadCheckpoint } from '../loading/checkpoint.js';
import type { WeightTypes } from '../loading/checkpoint.js';
import type { DtypeName } from '../runtime/wasm_module.js';
import type { ModelLoadOptions } from '../loading/weight_dtype.js';
import { AttentionError, throwIfError } from '../errors.js';
import type { FilesReader } from '../loading/model_files.js';
import type { SafetensorsWeights } from '../loading/safetensors.js';
import { readMhaTrace } from '../attention/multi_head_attention.js';
import { readBlockTrace } from '../attention/block_trace.js';
import type { MultiHeadTrace } from '../attention/multi_head_attention.js';
import { logSumExpRows, topK } from './predictions.js';
import type { Prediction } from './predictions.js';
import { parseWeights } from '../loading/safetensors.js';
import { checkObject, checkOptions, is, show } from '../validate.js';
import type { Rules } from '../validate.js';
import { enumValue } from '../runtime/wasm_module.js';
import type { ActivationName, BertHandle, WasmModule } from '../runtime/wasm_module.js';
import { WasmObject } from '../runtime/wasm_object.js';
import { WordPieceTokenizer } from '../tokenizers/wordpiece_tokenizer.js';
import type { WordPieceFiles } from '../tokenizers/wordpiece_tokenizer.js';
import { readAppliedMask, readHeadWeights, type AppliedMask, type HeadWeights } from './layer_inspection.js';
import { checkAblation, withHeadsOff, type AblatedHead } from './head_ablation.js';

/** How sentence-transformers turns a BERT's hidden states into one vector per sentence. */
export interface SentenceEmbeddingConfig {
  pooling?: 'mean' | 'cls';
  normalize?: boolean;
  /** Longer inputs are truncated to this many tokens (sentence_bert_config.json's max_seq_length). */
  maxSeqLength?: number;
}

/** A BERT checkpoint in memory. tokenizer: vocab.txt's text (+ options), a tokenizer.json object,
 * or a WordPieceTokenizer. */
export interface BertFiles {
  config: Record<string, unknown>;
  weights: SafetensorsWeights;
  tokenizer: WordPieceFiles | WordPieceTokenizer | Record<string, unknown>;
  sentenceEmbedding?: SentenceEmbeddingConfig;
}

/** BERT's files: vocab.txt (+ tokenizer_config.json) or tokenizer.json, and sentence-transformers'
 * modules.json / 1_Pooling/config.json / sentence_bert_config.json when present. */
export const readBertFiles: FilesReader = async (files, config, weights) => {
  const optionalJson = (f: string) => files.optional(files.json(f));
  const [weightBytes, vocab, tokenizerConfig, modules, pooling, sbert] = await Promise.all([
    weights, files.optional(files.text('vocab.txt')), optionalJson('tokenizer_config.json'),
    optionalJson('modules.json'), optionalJson('1_Pooling/config.json'), optionalJson('sentence_bert_config.json'),
  ]);
  const tokenizer = vocab !== undefined
    ? { vocab, doLowerCase: tokenizerConfig?.do_lower_case as boolean | undefined, stripAccents: tokenizerConfig?.strip_accents as boolean | null | undefined,
      tokenizeChineseChars: tokenizerConfig?.tokenize_chinese_chars as boolean | undefined }
    : await files.json('tokenizer.json').catch((e) => {
      throw files.isMissing(e) ? files.missing(e, 'a BERT needs vocab.txt or tokenizer.json; neither was found') : e;
    });
  return { config, weights: weightBytes, tokenizer, sentenceEmbedding: sentenceTransformersConfig(modules, pooling, sbert) };
};

/** sentence-transformers' folder: modules.json lists Pooling (1_Pooling/config.json) and Normalize. */
function sentenceTransformersConfig(modules?: Record<string, unknown>, pooling?: Record<string, unknown>,
  sbert?: Record<string, unknown>): SentenceEmbeddingConfig | undefined {
  if (!modules && !pooling && !sbert) return undefined;
  const out: SentenceEmbeddingConfig = {};
  if (pooling?.pooling_mode_cls_token === true) out.pooling = 'cls';
  else if (pooling?.pooling_mode_mean_tokens === true) out.pooling = 'mean';
  if (Array.isArray(modules)) out.normalize = modules.some((m) => typeof m?.type === 'string' && m.type.endsWith('.Normalize'));
  if (typeof sbert?.max_seq_length === 'number') out.maxSeqLength = sbert.max_seq_length;
  return out;
}

/** The fields of a Hugging Face BERT config.json that the forward pass uses. */
export interface BertConfig {
  vocab_size: number;
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  intermediate_size: number;
  max_position_embeddings: number;
  type_vocab_size: number;
  layer_norm_eps: number;
  hidden_act: 'gelu' | 'gelu_new' | 'gelu_pytorch_tanh';
}

/** Text, a pair [textA, textB] (token types 0 then 1), or token ids (with optional types). */
export type BertInput = string | readonly [string, string] | { tokens: number[]; tokenTypes?: number[] };

export interface BertRunOptions {
  /** Heads to switch off for this run: their outputs are set to zero before W^O (layer and head
   * counted from 0). The causal test of what a head does. */
  ablate?: AblatedHead[];
  /** Return per-layer, per-head attention weights: num_hidden_layers x heads x n x n. */
  attention?: boolean;
  /** Return every intermediate of this layer's attention (see MultiHeadTrace): 0 to num_hidden_layers - 1. */
  traceLayer?: number;
  /** Return the masked-LM logits for every position (n x vocab_size). Needs the MLM head. */
  logits?: boolean;
  /** Append [PAD] tokens up to this length, hidden by the key-padding mask: the input as one row of
   * a padded batch (its real tokens' results are the unpadded run's). The result has `padding`. */
  padTo?: number;
}

export interface BertRunResult {
  tokens: number[];
  tokenTypes: number[];
  /** The vocabulary entry of each token ("[CLS]", "the", "##ing"). */
  tokenTexts: string[];
  /** n x hidden_size: the last layer's hidden states. */
  hidden: Float32Array;
  attention?: Float32Array;
  trace?: MultiHeadTrace;
  logits?: Float32Array;
  /** The pooler's output (hidden_size), when the checkpoint has a pooler. */
  pooled?: Float32Array;
  /** With padTo: 1 for each appended [PAD] (masked out of attention), 0 for the input's tokens. */
  padding?: number[];
}

/** BertRunResult as the options make it: `attention` with `attention: true`, `trace` with a
 * `traceLayer`, `logits` with `logits: true`, `padding` with `padTo`. */
export type BertRunResultFor<O> = BertRunResult
  & (O extends { attention: true } ? { attention: Float32Array } : unknown)
  & (O extends { traceLayer: number } ? { trace: MultiHeadTrace } : unknown)
  & (O extends { logits: true } ? { logits: Float32Array } : unknown)
  & (O extends { padTo: number } ? { padding: number[] } : unknown);

export interface FillMaskResult {
  /** Index of the [MASK] token in the tokenized input ([CLS] is 0). */
  position: number;
  /** Most likely first. `sequence` is the input with this guess in place of the mask. */
  predictions: Array<Prediction & { sequence: string }>;
}

export interface EmbedOptions {
  /** 'mean': average of the last hidden states over real tokens (sentence-transformers' default);
   * 'cls': the [CLS] token's. Default: the checkpoint's sentence-transformers config, else 'mean'. */
  pooling?: 'mean' | 'cls';
  /** Divide each vector by its L2 norm. Default: true when the checkpoint's modules.json has Normalize. */
  normalize?: boolean;
  /** Longer texts are truncated to this many tokens. Default: sentence_bert_config.json's max_seq_length, else max_position_embeddings. */
  maxLength?: number;
  /** Sentences per forward call, 1 to MAX_EMBED_BATCH = 256 (they are sorted by length first so a
   * call pads little). Default 32. */
  batchSize?: number;
}

/** B sentence vectors of `dim` numbers, row-major. */
export interface Embeddings {
  data: Float32Array;
  count: number;
  dim: number;
  /** Sentence i's vector (a view into data). */
  row(i: number): Float32Array;
}

/** hidden_act -> the core's Activation (gelu_pytorch_tanh is gelu_new's tanh GELU). */
const ACTIVATIONS: Record<string, ActivationName> = { gelu: 'gelu', gelu_new: 'gelu_new', gelu_pytorch_tanh: 'gelu_new' };

/** The largest layer_norm_eps accepted: BERT's are 1e-12 (TensorFlow ports) to 1e-5; one past 0.1
 * drowns the variance of small activations, so it is a broken config rather than a choice. */
const MAX_LAYER_NORM_EPS = 0.1;

/** config.json, checked (a named error for what the core does not run). */
export function readBertConfig(c: Record<string, unknown>): BertConfig {
  checkObject('loadModel', 'config.json', c, '(the parsed config.json)');
  const act = c.hidden_act ?? 'gelu';
  if (typeof act !== 'string' || !Object.prototype.hasOwnProperty.call(ACTIVATIONS, act))
    throw new AttentionError(`config.json: hidden_act ${show(act)} is not supported (BERT uses "gelu")`);
  if (c.position_embedding_type !== undefined && c.position_embedding_type !== 'absolute')
    throw new AttentionError(`config.json: position_embedding_type ${show(c.position_embedding_type)} is not supported (only "absolute")`);
  return {
    vocab_size: configInt(c, 'vocab_size'), hidden_size: configInt(c, 'hidden_size'),
    num_hidden_layers: configInt(c, 'num_hidden_layers'), num_attention_heads: configInt(c, 'num_attention_heads'),
    intermediate_size: configInt(c, 'intermediate_size'), max_position_embeddings: configInt(c, 'max_position_embeddings', undefined, 1 << 16),
    type_vocab_size: configInt(c, 'type_vocab_size', 2), layer_norm_eps: configEps(c, 'layer_norm_eps', 1e-12, MAX_LAYER_NORM_EPS),
    hidden_act: act as BertConfig['hidden_act'],
  };
}

/**
 * Where Hugging Face keeps a tensor: BertForMaskedLM prefixes the encoder with "bert."; checkpoints
 * converted from TensorFlow (bert-base-uncased) name LayerNorm parameters gamma and beta.
 */
function bertNames(name: string): string[] {
  const spellings = [name];
  if (name.includes('LayerNorm.')) spellings.push(name.replace(/LayerNorm\.weight$/, 'LayerNorm.gamma').replace(/LayerNorm\.bias$/, 'LayerNorm.beta'));
  return name.startsWith('cls.') ? spellings : [...spellings, ...spellings.map((s) => 'bert.' + s)];
}

function tokenizerFrom(t: BertFiles['tokenizer']): WordPieceTokenizer {
  if (t instanceof WordPieceTokenizer) return t;
  if (typeof t === 'object' && t !== null && 'model' in t) return WordPieceTokenizer.fromTokenizerJson(t as Record<string, unknown>);
  return new WordPieceTokenizer(t as WordPieceFiles);
}

/** A BERT (encoder-only) model: bidirectional attention, masked-LM head, sentence embeddings. */
export class BertModel extends WasmObject<BertHandle> {
  /** Each weight tensor's type as the model holds it, by its checkpoint name ('F32', 'F16', 'Q8_0',
   * 'Q4_K', ...): the dtype asked for, or F16 where a matrix's width is not whole 32-value blocks. */
  weightTypes: WeightTypes = {};

  /** The type most of its tensors are held in ('F16', 'Q8_0', 'Q4_K', ...; its F32 norms and biases
   * aside): the precision it was loaded at, as weightTypes names it. */
  get dtype(): DtypeName {
    return heldDtype(this.weightTypes);
  }
  readonly type = 'bert' as const;

  /** Saving is the Llama family's (LlamaModel.save(): a GGUF file); a BERT model is refused with
   * an AttentionError of code 'unsupported'. */
  save(): never {
    throw new AttentionError('save: BERT models cannot be saved yet (only the Llama family writes GGUF files); load this one from its files', 'unsupported');
  }
  readonly config: BertConfig;
  readonly tokenizer: WordPieceTokenizer;
  /** Which optional parts the checkpoint has. */
  readonly hasMaskedLmHead: boolean;
  readonly hasPooler: boolean;
  /** Defaults of embed(), from the checkpoint's sentence-transformers files if any. */
  readonly sentenceEmbedding: Required<SentenceEmbeddingConfig>;
  private readonly runRules: Rules<BertRunOptions>;
  private readonly embedRules: Rules<EmbedOptions>;

  /** @internal use AttentionModule.loadModel */
  constructor(mod: WasmModule, files: BertFiles, options: ModelLoadOptions = {}) {
    const config = readBertConfig(files.config);
    const tokenizer = tokenizerFrom(files.tokenizer);
    if (tokenizer.vocabSize > config.vocab_size)
      throw new AttentionError(`tokenizer has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${config.vocab_size}`);
    const file = parseWeights(files.weights);
    super(mod, new mod.BertHandle(), 'BertModel');
    this.config = config;
    this.tokenizer = tokenizer;
    this.runRules = runRules(config);
    this.embedRules = embedRules(config);
    this.hasPooler = !!findTensor(file, bertNames('pooler.dense.weight'));
    this.hasMaskedLmHead = !!findTensor(file, bertNames('cls.predictions.bias'));
    const st = files.sentenceEmbedding ?? {};
    this.sentenceEmbedding = {
      pooling: st.pooling ?? 'mean', normalize: st.normalize ?? false,
      maxSeqLength: Math.min(st.maxSeqLength ?? Infinity, config.max_position_embeddings),
    };
    const handle = this.live();
    try {
      const c = config;
      throwIfError(handle.configure({ ...c, hidden_act: enumValue(mod.Activation, ACTIVATIONS[c.hidden_act], 'config.json: hidden_act'),
        pooler: this.hasPooler, mlm_head: this.hasMaskedLmHead }), 'loadModel');
      this.weightTypes = loadCheckpoint(mod, handle, this.staging, file, bertNames, options.dtype);
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  /** Runs the encoder on one input: text, a text pair, or token ids. */
  run<O extends BertRunOptions = BertRunOptions>(input: BertInput, options?: O): BertRunResultFor<O> {
    const o = checkOptions('run', options, this.runRules);
    const handle = this.live();
    const { num_hidden_layers: L, num_attention_heads: H, hidden_size: D, vocab_size: V } = this.config;
    const given = this.encodeInput(input, 'run');
    const padTo = o.padTo;
    const extra = Math.max(0, (padTo ?? 0) - given.tokens.length);
    const tokens = [...given.tokens, ...new Array<number>(extra).fill(this.tokenizer.padId)];
    const tokenTypes = [...given.tokenTypes, ...new Array<number>(extra).fill(0)];
    const padding = padTo === undefined ? null : tokens.map((_, i) => (i < given.tokens.length ? 0 : 1));
    const n = tokens.length;
    const trace = o.traceLayer;
    if (o.logits && !this.hasMaskedLmHead) throw new AttentionError('run: logits need the masked-LM head (cls.predictions.*), which this checkpoint does not have');
    const sizes = { self: { layers: L, heads: H } };
    const ablate = checkAblation('run', o.ablate ?? [], sizes);
    const st = this.staging;
    return withHeadsOff(this.mod, handle, st, 'run', ablate, sizes, () => {
      const rt = st.plan(n * 4), rty = st.plan(n * 4), rh = st.plan(n * D * 4), ra = st.plan(o.attention ? L * H * n * n * 4 : 0);
      const rl = st.plan(o.logits ? n * V * 4 : 0), rp = st.plan(this.hasPooler ? D * 4 : 0), rm = st.plan(padding ? n : 0);
      try {
        st.commit();
        st.writeI32(rt, tokens);
        st.writeI32(rty, tokenTypes);
        if (padding) st.writeU8(rm, Uint8Array.from(padding));
        throwIfError(handle.forward({ tokens: rt.ptr, token_types: rty.ptr, padding: padding ? rm.ptr : 0, batch: 1, length: n }, rh.ptr, ra.ptr, trace ?? -1), 'run');
        const result: BertRunResult = {
          tokens, tokenTypes, tokenTexts: tokens.map((t) => this.tokenizer.tokenText(t)), hidden: st.readF32(rh, n * D),
        };
        if (padding) result.padding = padding;
        if (o.attention) result.attention = st.readF32(ra, L * H * n * n);
        if (trace !== undefined)
          result.trace = { ...readMhaTrace(this.mod, handle, { numHeads: H, dK: D / H, dV: D / H, dModel: D }, 1, n, n), block: readBlockTrace(this.mod, handle, 'post-norm', n, D) };
        if (o.logits) {
          throwIfError(handle.mlmLogits(rh.ptr, n, rl.ptr), 'run');
          result.logits = st.readF32(rl, n * V);
        }
        if (this.hasPooler) {
          throwIfError(handle.pooler(rh.ptr, 1, n, rp.ptr), 'run');
          result.pooled = st.readF32(rp, D);
        }
        return result;
      } finally {
        st.release();
      }
    }) as BertRunResultFor<O>;
  }

  /**
   * Head `head` of layer `layer` as the model holds it (decoded, in the seeds' layout: W^Q, W^K,
   * W^V columns and W^O rows; see HeadWeights). Works at every dtype and for any checkpoint format.
   */
  headWeights(layer: number, head: number): HeadWeights {
    return readHeadWeights(this.mod, this.live(), 'self', layer, head);
  }

  /** The mask layer `layer` applied in the last run that returned attention (null before one). */
  appliedMask(layer: number): AppliedMask | null {
    return readAppliedMask(this.mod, this.live(), 'self', layer);
  }

  /**
   * Fill in the blank: for each [MASK] in the text (or pair), the k most likely tokens (k from 1
   * to vocab_size). Special tokens ([CLS], [SEP], [PAD], [MASK], [UNK]) are never proposed.
   * `options.ablate` switches heads off as in run().
   */
  fillMask(input: string | readonly [string, string], k = 5, options?: { ablate?: AblatedHead[] }): FillMaskResult[] {
    is.int(1, this.config.vocab_size)(k, 'fillMask: k');
    const { ablate } = checkOptions('fillMask', options, { ablate: is.any });
    this.live();
    if (!this.hasMaskedLmHead) throw new AttentionError('fillMask: needs the masked-LM head (cls.predictions.*), which this checkpoint does not have');
    const enc = this.encodeInput(input, 'fillMask');
    const positions = enc.tokens.flatMap((t, i) => (t === this.tokenizer.maskId ? [i] : []));
    if (positions.length === 0) throw new AttentionError('fillMask: the text has no [MASK] token');
    const r = this.run({ tokens: enc.tokens, tokenTypes: enc.tokenTypes }, { logits: true, ...(ablate ? { ablate } : {}) });
    const V = this.config.vocab_size, tk = this.tokenizer;
    const specials = new Set([tk.padId, tk.unkId, tk.clsId, tk.sepId, tk.maskId]);
    const allowed = (id: number) => id < tk.vocabSize && !specials.has(id);
    const lse = logSumExpRows(this.mod, this.staging, r.logits!, V, positions);
    return positions.map((position, i) => ({
      position,
      predictions: topK(r.logits!.subarray(position * V, (position + 1) * V), lse[i], k, (id) => tk.tokenText(id), allowed).map((p) => {
        const filled = enc.tokens.slice();
        filled[position] = p.id;
        return { ...p, sequence: tk.decode(filled) };
      }),
    }));
  }

  /**
   * Masked-LM loss of a run made with { logits: true }: mean cross-entropy (nats) of `targets` (the
   * original ids) at `positions`, its exp (perplexity), and how often the top guess was right.
   * The result's logits are checked (shape, finite values), so a loss is never NaN.
   */
  maskedLmLoss(result: BertRunResult, positions: number[], targets: number[]): { loss: number; perplexity: number; accuracy: number } {
    const where = 'maskedLmLoss', V = this.config.vocab_size;
    this.live();
    checkObject(where, 'result', result, '(what run(input, { logits: true }) returned)');
    const logits = readField(where, 'result', result, 'logits');
    if (logits === undefined) throw new AttentionError(`${where}: the result has no logits: run the model with { logits: true }`);
    if (!(logits instanceof Float32Array) || logits.length === 0 || logits.length % V !== 0)
      throw new AttentionError(`${where}: result.logits must be a Float32Array of tokens x vocab_size (${V}) numbers, got ${show(logits)}`);
    const rows = logits.length / V;
    is.array(is.int(0, rows - 1), rows)(positions, `${where}: positions`);
    is.array(is.int(0, V - 1), rows)(targets, `${where}: targets`);
    if (positions.length === 0 || positions.length !== targets.length)
      throw new AttentionError(`${where}: need as many targets as positions (at least one), got ${positions.length} positions and ${targets.length} targets`);
    for (const p of positions) {
      const row = logits.subarray(p * V, (p + 1) * V), bad = row.findIndex((x) => !Number.isFinite(x));
      if (bad >= 0) throw new AttentionError(`${where}: result.logits at position ${p}, token ${bad} is ${show(row[bad])}, not a finite number`);
    }
    const lse = logSumExpRows(this.mod, this.staging, logits, V, positions);
    let total = 0, right = 0;
    positions.forEach((p, i) => {
      const row = logits.subarray(p * V, (p + 1) * V);
      total += lse[i] - row[targets[i]];  // cross-entropy: log-sum-exp - the target's logit
      let best = 0;
      for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
      if (best === targets[i]) right++;
    });
    const loss = total / positions.length;
    return { loss, perplexity: Math.exp(loss), accuracy: right / positions.length };
  }

  /** One vector per text (or text pair, or token-id input), computed in batched forward calls. */
  embed(inputs: readonly BertInput[], options?: EmbedOptions): Embeddings {
    const o = checkOptions('embed', options, this.embedRules);
    const handle = this.live();
    if (!Array.isArray(inputs)) throw new AttentionError(`embed: inputs must be an array of texts, pairs or { tokens } inputs, got ${show(inputs)}`);
    const pooling = o.pooling ?? this.sentenceEmbedding.pooling;
    const normalize = o.normalize ?? this.sentenceEmbedding.normalize;
    const maxLength = o.maxLength ?? this.sentenceEmbedding.maxSeqLength;
    const batchSize = o.batchSize ?? 32;
    const D = this.config.hidden_size;
    const encoded = Array.from(inputs, (x) => this.encodeInput(x, 'embed', maxLength));  // a hole is undefined: named
    const data = new Float32Array(inputs.length * D);
    // Sorted by length, each call pads its sentences only to the longest of similar ones.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a].tokens.length - encoded[b].tokens.length);
    for (let start = 0; start < order.length; start += batchSize) {
      const ids = order.slice(start, start + batchSize);
      const B = ids.length, n = Math.max(...ids.map((i) => encoded[i].tokens.length));
      const tok = new Int32Array(B * n).fill(this.tokenizer.padId), typ = new Int32Array(B * n), pad = new Uint8Array(B * n).fill(1);
      ids.forEach((i, b) => {
        tok.set(encoded[i].tokens, b * n);
        typ.set(encoded[i].tokenTypes, b * n);
        pad.fill(0, b * n, b * n + encoded[i].tokens.length);
      });
      const st = this.staging;
      const rt = st.plan(B * n * 4), rty = st.plan(B * n * 4), rp = st.plan(B * n), rh = st.plan(B * n * D * 4), ro = st.plan(B * D * 4);
      try {
        st.commit();
        st.writeI32(rt, tok);
        st.writeI32(rty, typ);
        st.writeU8(rp, pad);
        throwIfError(handle.forward({ tokens: rt.ptr, token_types: rty.ptr, padding: rp.ptr, batch: B, length: n }, rh.ptr, 0, -1), 'embed');
        this.mod.poolHidden({ hidden: rh.ptr, padding: rp.ptr, batch: B, length: n, dim: D, out: ro.ptr }, this.mod.Pooling[pooling], normalize);
        const pooled = st.readF32(ro, B * D);
        ids.forEach((i, b) => data.set(pooled.subarray(b * D, (b + 1) * D), i * D));
      } finally {
        st.release();
      }
    }
    return { data, count: inputs.length, dim: D, row: (i: number) => data.subarray(i * D, (i + 1) * D) };
  }

  /** Any input form to checked ids and token types; `what` names the caller in errors. */
  private encodeInput(input: unknown, what: string, maxLength?: number): { tokens: number[]; tokenTypes: number[] } {
    const { vocab_size: V, type_vocab_size: T, max_position_embeddings: P } = this.config;
    let tokens: number[], tokenTypes: number[];
    if (typeof input === 'string') {
      ({ ids: tokens, tokenTypes } = this.tokenizer.encode(input, { maxLength }));
    } else if (Array.isArray(input)) {
      if (input.length !== 2 || typeof input[0] !== 'string' || typeof input[1] !== 'string')
        throw new AttentionError(`${what}: a text pair must be [textA, textB] (two strings), got ${showArray(input)}`);
      if (maxLength !== undefined && maxLength < 5)
        throw new AttentionError(`${what}: maxLength ${maxLength} leaves no room for a pair ([CLS] a [SEP] b [SEP] is 5 tokens)`);
      ({ ids: tokens, tokenTypes } = this.tokenizer.encode(input as [string, string], { maxLength }));
    } else if (typeof input === 'object' && input !== null && !ArrayBuffer.isView(input)) {
      ({ tokens, tokenTypes } = this.idsInput(input, what));
    } else throw new AttentionError(`${what}: the input must be a string, a pair [textA, textB] or { tokens, tokenTypes }, got ${show(input)}`);
    const n = tokens.length;
    if (n === 0) throw new AttentionError(`${what}: the input has no tokens`);
    if (n > P) throw new AttentionError(`${what}: ${n} tokens exceed the model's ${P} positions (max_position_embeddings)`);
    tokens.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= V) throw new AttentionError(`${what}: token ${show(t)} at position ${i} is outside the vocabulary of ${V}`);
    });
    tokenTypes.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= T) throw new AttentionError(`${what}: token type ${show(t)} at position ${i} is outside type_vocab_size ${T}`);
    });
    return { tokens, tokenTypes };
  }

  /** { tokens, tokenTypes? }: known keys only (a misspelt tokenTypes would silently be zeros),
   * arrays no longer than the model's positions, copied before their ids are checked. */
  private idsInput(input: object, what: string): { tokens: number[]; tokenTypes: number[] } {
    const t = checkOptions(what, input as { tokens: number[]; tokenTypes?: number[] }, IDS_INPUT_RULES, 'input key');
    const P = this.config.max_position_embeddings;
    if (!Array.isArray(t.tokens)) throw new AttentionError(`${what}: tokens must be an array of token ids, got ${show(t.tokens)}`);
    if (t.tokens.length > P) throw new AttentionError(`${what}: ${t.tokens.length} tokens exceed the model's ${P} positions (max_position_embeddings)`);
    if (t.tokenTypes !== undefined && !Array.isArray(t.tokenTypes))
      throw new AttentionError(`${what}: tokenTypes must be an array of 0s and 1s, got ${show(t.tokenTypes)}`);
    // Array.from fills holes with undefined, which the id checks then name ([2, , 3]).
    const tokens = Array.from(t.tokens), tokenTypes = t.tokenTypes ? Array.from(t.tokenTypes) : tokens.map(() => 0);
    if (tokenTypes.length !== tokens.length) throw new AttentionError(`${what}: ${tokenTypes.length} token types for ${tokens.length} tokens`);
    return { tokens, tokenTypes };
  }
}

const IDS_INPUT_RULES: Rules<{ tokens: number[]; tokenTypes?: number[] }> = { tokens: is.any, tokenTypes: is.any };

/** run()'s option rules; the ranges come from the model's config. */
function runRules(c: BertConfig): Rules<BertRunOptions> {
  return {
    attention: is.boolean, logits: is.boolean, ablate: is.any,
    traceLayer: is.int(0, c.num_hidden_layers - 1), padTo: is.int(1, c.max_position_embeddings),
  };
}

/** The most sentences one embed() forward call takes: the call holds batch x tokens x hidden_size
 * floats of hidden states (256 x 512 x 768 x 4 bytes is 400 MB) in the WebAssembly heap. */
export const MAX_EMBED_BATCH = 256;

function embedRules(c: BertConfig): Rules<EmbedOptions> {
  return {
    pooling: is.oneOf('mean', 'cls'), normalize: is.boolean,
    maxLength: is.int(3, c.max_position_embeddings), batchSize: is.int(1, MAX_EMBED_BATCH),
  };
}

/** One field of an object passed back in (a run's result, embeddings), read once: a getter or a
 * Proxy that throws gives a named error rather than its own. */
function readField(where: string, what: string, obj: object, key: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (e) {
    throw new AttentionError(`${where}: reading ${what}.${key} failed (${e instanceof Error ? e.message : show(e)})`);
  }
}

/** A short array for a message: "[20, 12]", or its length when long. */
function showArray(a: readonly unknown[]): string {
  return a.length <= 8 ? `[${a.map(show).join(', ')}]` : `an array of ${a.length} elements`;
}

/** A vector argument: an array or a typed array of finite numbers. */
function vector(where: string, name: string, v: unknown): ArrayLike<number> {
  const numeric = Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView) && typeof (v as unknown as ArrayLike<unknown>)[0] !== 'bigint');
  if (!numeric) throw new AttentionError(`${where}: ${name} must be an array of numbers (or a Float32Array), got ${show(v)}`);
  const a = v as ArrayLike<unknown>;
  for (let i = 0; i < a.length; i++) {
    if (typeof a[i] !== 'number' || !Number.isFinite(a[i])) throw new AttentionError(`${where}: ${name}[${i}] must be a finite number, got ${show(a[i])}`);
  }
  return a as ArrayLike<number>;
}

/** The largest absolute value: each vector is divided by it, so the sums of squares can neither
 * overflow (1e200 * 1e200) nor underflow to 0 for tiny but nonzero vectors. */
function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
}

/** cos of two checked vectors of equal length; 0 when either is all zeros. */
function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const sa = maxAbs(a), sb = maxAbs(b);
  if (sa === 0 || sb === 0) return 0;
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] / sa, y = b[i] / sb;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return dot / Math.sqrt(na * nb);
}

/** cos(a, b) = a.b / (|a| |b|); 0 when either is all zeros. Both must hold finite numbers. */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const va = vector('cosineSimilarity', 'a', a), vb = vector('cosineSimilarity', 'b', b);
  if (va.length !== vb.length) throw new AttentionError(`cosineSimilarity: vectors of ${va.length} and ${vb.length} numbers`);
  return cosine(va, vb);
}

/** The most embeddings similarityMatrix() compares: its result holds count^2 floats
 * (8192^2 x 4 bytes is 256 MB). */
export const MAX_SIMILARITY_COUNT = 8192;

/** The count x count matrix of cosine similarities between embeddings (symmetric, 1 on the
 * diagonal). Reads `data`, `count` and `dim` (row i is data[i*dim, (i+1)*dim)). */
export function similarityMatrix(e: Embeddings): Float32Array {
  const where = 'similarityMatrix';
  checkObject(where, 'the embeddings', e, '(what embed() returns: { data, count, dim })');
  const count = readField(where, 'embeddings', e, 'count'), dim = readField(where, 'embeddings', e, 'dim');
  is.int(0, MAX_SIMILARITY_COUNT)(count, `${where}: embeddings.count`);
  is.int(1, 1 << 20)(dim, `${where}: embeddings.dim`);
  const n = count as number, d = dim as number;
  const data = readField(where, 'embeddings', e, 'data');
  if (!(data instanceof Float32Array) || data.length !== n * d)
    throw new AttentionError(`${where}: embeddings.data must be a Float32Array of count x dim = ${n} x ${d} numbers, got ${show(data)}`);
  vector(where, 'embeddings.data', data);
  const out = new Float32Array(n * n);
  const row = (i: number) => data.subarray(i * d, (i + 1) * d);
  for (let i = 0; i < n; i++) {
    out[i * n + i] = 1;
    for (let j = i + 1; j < n; j++) out[i * n + j] = out[j * n + i] = cosine(row(i), row(j));
  }
  return out;
}
