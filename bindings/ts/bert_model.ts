// BERT in WASM: config.json (model_type "bert") + model.safetensors + the WordPiece tokenizer.
// run() gives hidden states, bidirectional attention and a layer's trace; fillMask() the masked-LM
// head's guesses; embed() one vector per sentence (sentence-transformers' pooling), many sentences
// padded into one batched call.
import { configEps, configInt, findTensor, loadCheckpoint } from './checkpoint.js';
import { AttentionError, throwIfError } from './errors.js';
import type { BertFiles, SentenceEmbeddingConfig } from './model_files.js';
import { readMhaTrace } from './multi_head_attention.js';
import type { MultiHeadTrace } from './multi_head_attention.js';
import { logSumExpRows, topK } from './predictions.js';
import type { Prediction } from './predictions.js';
import { parseWeights } from './safetensors.js';
import type { BertHandle, WasmModule } from './wasm_module.js';
import { WasmObject } from './wasm_object.js';
import { WordPieceTokenizer } from './wordpiece_tokenizer.js';
import type { WordPieceFiles } from './wordpiece_tokenizer.js';

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
  /** Return per-layer, per-head attention weights: num_hidden_layers x heads x n x n. */
  attention?: boolean;
  /** Return every intermediate of this layer's attention (see MultiHeadTrace). */
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
  /** Sentences per forward call (they are sorted by length first so a call pads little). Default 32. */
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

const ACTIVATIONS: Record<string, number> = { gelu: 0, gelu_new: 1, gelu_pytorch_tanh: 1 };

function checkConfig(c: Record<string, unknown>): BertConfig {
  const act = c.hidden_act ?? 'gelu';
  if (typeof act !== 'string' || !(act in ACTIVATIONS))
    throw new AttentionError(`config.json: hidden_act ${JSON.stringify(act)} is not supported (BERT uses "gelu")`);
  if (c.position_embedding_type !== undefined && c.position_embedding_type !== 'absolute')
    throw new AttentionError(`config.json: position_embedding_type "${String(c.position_embedding_type)}" is not supported (only "absolute")`);
  return {
    vocab_size: configInt(c, 'vocab_size'), hidden_size: configInt(c, 'hidden_size'),
    num_hidden_layers: configInt(c, 'num_hidden_layers'), num_attention_heads: configInt(c, 'num_attention_heads'),
    intermediate_size: configInt(c, 'intermediate_size'), max_position_embeddings: configInt(c, 'max_position_embeddings'),
    type_vocab_size: configInt(c, 'type_vocab_size', 2), layer_norm_eps: configEps(c, 'layer_norm_eps', 1e-12),
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
  readonly type = 'bert' as const;
  readonly config: BertConfig;
  readonly tokenizer: WordPieceTokenizer;
  /** Which optional parts the checkpoint has. */
  readonly hasMaskedLmHead: boolean;
  readonly hasPooler: boolean;
  /** Defaults of embed(), from the checkpoint's sentence-transformers files if any. */
  readonly sentenceEmbedding: Required<SentenceEmbeddingConfig>;

  /** @internal use AttentionModule.loadModel */
  constructor(mod: WasmModule, files: BertFiles) {
    const config = checkConfig(files.config);
    const tokenizer = tokenizerFrom(files.tokenizer);
    if (tokenizer.vocabSize > config.vocab_size)
      throw new AttentionError(`tokenizer has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${config.vocab_size}`);
    const file = parseWeights(files.weights);
    super(mod, new mod.BertHandle(), 'BertModel');
    this.config = config;
    this.tokenizer = tokenizer;
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
      throwIfError(handle.configure(c.vocab_size, c.max_position_embeddings, c.type_vocab_size, c.hidden_size, c.num_hidden_layers,
        c.num_attention_heads, c.intermediate_size, c.layer_norm_eps, ACTIVATIONS[c.hidden_act], this.hasPooler, this.hasMaskedLmHead), 'loadModel');
      loadCheckpoint(mod, handle, this.staging, file, bertNames);
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  /** Runs the encoder on one input: text, a text pair, or token ids. */
  run(input: BertInput, options: BertRunOptions = {}): BertRunResult {
    const handle = this.live();
    const { num_hidden_layers: L, num_attention_heads: H, hidden_size: D, vocab_size: V, max_position_embeddings: P } = this.config;
    const padTo = options.padTo;
    if (padTo !== undefined && (!Number.isInteger(padTo) || padTo < 1 || padTo > P))
      throw new AttentionError(`run: padTo must be an integer in [1, ${P}] (max_position_embeddings), got ${padTo}`);
    const given = this.encodeInput(input, 'run');
    const extra = Math.max(0, (padTo ?? 0) - given.tokens.length);
    const tokens = [...given.tokens, ...new Array<number>(extra).fill(this.tokenizer.padId)];
    const tokenTypes = [...given.tokenTypes, ...new Array<number>(extra).fill(0)];
    const padding = padTo === undefined ? null : tokens.map((_, i) => (i < given.tokens.length ? 0 : 1));
    const n = tokens.length;
    const trace = options.traceLayer;
    if (trace !== undefined && (!Number.isInteger(trace) || trace < 0 || trace >= L))
      throw new AttentionError(`run: traceLayer must be an integer in [0, ${L - 1}], got ${trace}`);
    if (options.logits && !this.hasMaskedLmHead) throw new AttentionError('run: logits need the masked-LM head (cls.predictions.*), which this checkpoint does not have');
    const st = this.staging;
    const rt = st.plan(n * 4), rty = st.plan(n * 4), rh = st.plan(n * D * 4), ra = st.plan(options.attention ? L * H * n * n * 4 : 0);
    const rl = st.plan(options.logits ? n * V * 4 : 0), rp = st.plan(this.hasPooler ? D * 4 : 0), rm = st.plan(padding ? n : 0);
    try {
      st.commit();
      st.writeI32(rt, tokens);
      st.writeI32(rty, tokenTypes);
      if (padding) st.writeU8(rm, Uint8Array.from(padding));
      throwIfError(handle.forward(rt.ptr, rty.ptr, padding ? rm.ptr : 0, 1, n, rh.ptr, ra.ptr, trace ?? -1), 'run');
      const result: BertRunResult = {
        tokens, tokenTypes, tokenTexts: tokens.map((t) => this.tokenizer.tokenText(t)), hidden: st.readF32(rh, n * D),
      };
      if (padding) result.padding = padding;
      if (options.attention) result.attention = st.readF32(ra, L * H * n * n);
      if (trace !== undefined) result.trace = readMhaTrace(this.mod, handle, { numHeads: H, dK: D / H, dV: D / H, dModel: D }, 1, n, n);
      if (options.logits) {
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
  }

  /**
   * Fill in the blank: for each [MASK] in the text (or pair), the k most likely tokens.
   * Special tokens ([CLS], [SEP], [PAD], [MASK], [UNK]) are never proposed.
   */
  fillMask(input: string | readonly [string, string], k = 5): FillMaskResult[] {
    if (!Number.isInteger(k) || k < 1) throw new AttentionError(`fillMask: k must be a positive integer, got ${k}`);
    if (!this.hasMaskedLmHead) throw new AttentionError('fillMask: needs the masked-LM head (cls.predictions.*), which this checkpoint does not have');
    const enc = this.encodeInput(input, 'fillMask');
    const positions = enc.tokens.flatMap((t, i) => (t === this.tokenizer.maskId ? [i] : []));
    if (positions.length === 0) throw new AttentionError('fillMask: the text has no [MASK] token');
    const r = this.run({ tokens: enc.tokens, tokenTypes: enc.tokenTypes }, { logits: true });
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
   */
  maskedLmLoss(result: BertRunResult, positions: number[], targets: number[]): { loss: number; perplexity: number; accuracy: number } {
    if (!result.logits) throw new AttentionError('maskedLmLoss: run the model with { logits: true }');
    if (positions.length === 0 || positions.length !== targets.length) throw new AttentionError('maskedLmLoss: need as many targets as positions (at least one)');
    this.live();
    const V = this.config.vocab_size, rows = result.logits.length / V;
    const outside = positions.find((p) => !Number.isInteger(p) || p < 0 || p >= rows);
    if (outside !== undefined) throw new AttentionError(`maskedLmLoss: position ${outside} is outside the run's ${rows} tokens`);
    const lse = logSumExpRows(this.mod, this.staging, result.logits, V, positions);
    let total = 0, right = 0;
    positions.forEach((p, i) => {
      const row = result.logits!.subarray(p * V, (p + 1) * V);
      total += lse[i] - row[targets[i]];  // cross-entropy: log-sum-exp - the target's logit
      let best = 0;
      for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
      if (best === targets[i]) right++;
    });
    const loss = total / positions.length;
    return { loss, perplexity: Math.exp(loss), accuracy: right / positions.length };
  }

  /** One vector per text (or text pair, or token-id input), computed in batched forward calls. */
  embed(inputs: readonly BertInput[], options: EmbedOptions = {}): Embeddings {
    const handle = this.live();
    if (!Array.isArray(inputs)) throw new AttentionError('embed: expected an array of texts');
    const pooling = options.pooling ?? this.sentenceEmbedding.pooling;
    if (pooling !== 'mean' && pooling !== 'cls') throw new AttentionError(`embed: pooling must be 'mean' or 'cls', got ${JSON.stringify(pooling)}`);
    const normalize = options.normalize ?? this.sentenceEmbedding.normalize;
    const maxLength = options.maxLength ?? this.sentenceEmbedding.maxSeqLength;
    const batchSize = options.batchSize ?? 32;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new AttentionError(`embed: batchSize must be a positive integer, got ${batchSize}`);
    const D = this.config.hidden_size;
    const encoded = inputs.map((x) => this.encodeInput(x, 'embed', maxLength));
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
        throwIfError(handle.forward(rt.ptr, rty.ptr, rp.ptr, B, n, rh.ptr, 0, -1), 'embed');
        this.mod.poolHidden(rh.ptr, rp.ptr, B, n, D, pooling === 'cls' ? 1 : 0, normalize, ro.ptr);
        const pooled = st.readF32(ro, B * D);
        ids.forEach((i, b) => data.set(pooled.subarray(b * D, (b + 1) * D), i * D));
      } finally {
        st.release();
      }
    }
    return { data, count: inputs.length, dim: D, row: (i: number) => data.subarray(i * D, (i + 1) * D) };
  }

  private encodeInput(input: BertInput, what: string, maxLength?: number): { tokens: number[]; tokenTypes: number[] } {
    let tokens: number[], tokenTypes: number[];
    if (typeof input === 'string' || Array.isArray(input)) {
      ({ ids: tokens, tokenTypes } = this.tokenizer.encode(input as string | [string, string], { maxLength }));
    } else if (typeof input === 'object' && input !== null && Array.isArray((input as { tokens?: unknown }).tokens)) {
      const t = input as { tokens: number[]; tokenTypes?: number[] };
      tokens = Array.from(t.tokens);
      tokenTypes = t.tokenTypes ? Array.from(t.tokenTypes) : tokens.map(() => 0);
      if (tokenTypes.length !== tokens.length) throw new AttentionError(`${what}: ${tokenTypes.length} token types for ${tokens.length} tokens`);
    } else throw new AttentionError(`${what}: the input must be a string, a pair [textA, textB] or { tokens, tokenTypes }`);
    const { vocab_size: V, type_vocab_size: T, max_position_embeddings: P } = this.config;
    const n = tokens.length;
    if (n === 0) throw new AttentionError(`${what}: the input has no tokens`);
    if (n > P) throw new AttentionError(`${what}: ${n} tokens exceed the model's ${P} positions (max_position_embeddings)`);
    tokens.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= V) throw new AttentionError(`${what}: token ${t} at position ${i} is outside the vocabulary of ${V}`);
    });
    tokenTypes.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= T) throw new AttentionError(`${what}: token type ${t} at position ${i} is outside type_vocab_size ${T}`);
    });
    return { tokens, tokenTypes };
  }
}

/** cos(a, b) = a.b / (|a| |b|); 0 when either is all zeros. */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new AttentionError(`cosineSimilarity: vectors of ${a.length} and ${b.length} numbers`);
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/** The count x count matrix of cosine similarities between embeddings (symmetric, 1 on the diagonal). */
export function similarityMatrix(e: Embeddings): Float32Array {
  const out = new Float32Array(e.count * e.count);
  for (let i = 0; i < e.count; i++) {
    out[i * e.count + i] = 1;
    for (let j = i + 1; j < e.count; j++) out[i * e.count + j] = out[j * e.count + i] = cosineSimilarity(e.row(i), e.row(j));
  }
  return out;
}
