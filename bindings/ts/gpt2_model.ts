// GPT-2 in WASM: config.json + model.safetensors + the byte-level BPE tokenizer; runs the forward
// pass and returns logits, per-head attention and a layer's trace.
import { BpeTokenizer } from './bpe_tokenizer.js';
import { configEps, configInt, loadCheckpoint } from './checkpoint.js';
import { AttentionError, throwIfError } from './errors.js';
import type { Gpt2Files } from './model_files.js';
import { readMhaTrace } from './multi_head_attention.js';
import type { MultiHeadTrace } from './multi_head_attention.js';
import { MAX_BEAMS, beamSearch, checkSampling, chooseToken, seededRandom, yieldToEventLoop } from './decoding.js';
import type { SamplingOptions, Stepper } from './decoding.js';
import { logSumExpRows, topK } from './predictions.js';
import type { Prediction } from './predictions.js';
import { parseWeights } from './safetensors.js';
import type { Gpt2DecodingHandle, WasmModule } from './wasm_module.js';
import { WasmObject } from './wasm_object.js';

/** The fields of a Hugging Face GPT-2 config.json that the forward pass needs. */
export interface Gpt2Config {
  vocab_size: number;
  n_positions: number;
  n_embd: number;
  n_layer: number;
  n_head: number;
  layer_norm_epsilon?: number;
  activation_function?: string;
  n_ctx?: number;
  bos_token_id?: number;
}

export interface RunOptions {
  /** Put the model's bos_token_id (GPT-2: <|endoftext|>) before the input, as models trained on
   * sentences that each start with it expect (the shipped brown-gpt2 does). */
  prependBos?: boolean;
  /** Return per-layer, per-head attention weights: n_layer x n_head x n x n. */
  attention?: boolean;
  /** Return every intermediate of this layer's attention (see MultiHeadTrace). */
  traceLayer?: number;
  /** Compute the logits of only the last this-many positions (default: every position; 0: none).
   * The language-model head is most of a short run's work, and the last position alone gives the
   * next-token predictions. (Hugging Face's `logits_to_keep`, except that 0 means none here.) */
  logitsToKeep?: number;
}

export interface RunResult {
  tokens: number[];
  /** How each token reads on its own (" the", ","), for display. */
  tokenTexts: string[];
  /** The next-token logits after each position from `logitsFrom` on: (n - logitsFrom) x vocab_size. */
  logits: Float32Array;
  /** The position of the first row of `logits`: 0 unless the run kept fewer (logitsToKeep);
   * absent means 0. */
  logitsFrom?: number;
  attention?: Float32Array;
  trace?: MultiHeadTrace;
}

export interface GenerateOptions extends SamplingOptions {
  /** How many tokens to add at most (default 32; the context length caps prompt + new tokens). */
  maxNewTokens?: number;
  /** Stop as soon as the generated text contains one of these strings (left out of the result). */
  stop?: string[];
  /** Put bos_token_id before the prompt (as in run()). */
  prependBos?: boolean;
  /** Beam search with this many beams (no sampling, no streaming); default 1. */
  beams?: number;
  /** Called with each new token as soon as it is chosen. */
  onToken?: (event: TokenEvent) => void;
  /** Include each new token's attention (n_layer x n_head x its position + 1) in onToken's event. */
  attention?: boolean;
  /** Aborting it stops the generation after the current token; the promise resolves with what
   * was generated so far and finishReason "abort". */
  signal?: AbortSignal;
}

export interface TokenEvent {
  token: number;
  /** The text this token adds (a character split over several byte tokens arrives whole, with the last of them). */
  text: string;
  /** 0 for the first new token. */
  index: number;
  /** n_layer x n_head x (position + 1): how the new token's position attends to every earlier one. */
  attention?: Float32Array;
}

export interface GenerateResult {
  /** The prompt's tokens (with bos when prependBos). */
  promptTokens: number[];
  /** The new tokens, without a final end-of-text token. */
  tokens: number[];
  /** The new text (cut before a stop string). */
  text: string;
  finishReason: 'length' | 'eos' | 'stop' | 'abort';
  /** Milliseconds from the call to the first new token, and new tokens per second after it. */
  timeToFirstTokenMs: number;
  tokensPerSecond: number;
}

function checkConfig(c: Record<string, unknown>): Gpt2Config {
  const out = {
    vocab_size: configInt(c, 'vocab_size'), n_embd: configInt(c, 'n_embd'), n_layer: configInt(c, 'n_layer'),
    n_head: configInt(c, 'n_head'), n_positions: configInt(c, 'n_positions', c.n_ctx),
    layer_norm_epsilon: configEps(c, 'layer_norm_epsilon', 1e-5),
  };
  const act = c.activation_function ?? 'gelu_new';
  if (act !== 'gelu_new' && act !== 'gelu_pytorch_tanh')
    throw new AttentionError(`config.json: activation_function "${String(act)}" is not supported (GPT-2 uses gelu_new)`);
  return out;
}

/** GPT2LMHeadModel checkpoints prefix every name with "transformer.". */
const gpt2Names = (name: string) => [name, 'transformer.' + name];

/** A GPT-2 (decoder-only) language model. */
export class Gpt2Model extends WasmObject<Gpt2DecodingHandle> {
  readonly type = 'gpt2' as const;
  readonly config: Required<Omit<Gpt2Config, 'n_ctx' | 'activation_function' | 'bos_token_id'>>;
  readonly tokenizer: BpeTokenizer;
  /** config.json's bos_token_id, if any. */
  readonly bosTokenId: number | undefined;
  private readonly eosId: number | undefined;

  /** @internal use AttentionModule.loadModel */
  constructor(mod: WasmModule, files: Gpt2Files) {
    const config = checkConfig(files.config);
    const tokenizer = files.tokenizer instanceof BpeTokenizer ? files.tokenizer : new BpeTokenizer(files.tokenizer);
    if (tokenizer.vocabSize > config.vocab_size)
      throw new AttentionError(`tokenizer has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${config.vocab_size}`);
    const file = parseWeights(files.weights);
    super(mod, new mod.Gpt2Handle(), 'Gpt2Model');
    this.config = { ...config, layer_norm_epsilon: config.layer_norm_epsilon ?? 1e-5 };
    this.tokenizer = tokenizer;
    const tokenId = (v: unknown) => (Number.isInteger(v) && (v as number) >= 0 && (v as number) < config.vocab_size ? v as number : undefined);
    this.bosTokenId = tokenId(files.config.bos_token_id);
    this.eosId = tokenId(files.config.eos_token_id);
    const handle = this.live();
    try {
      throwIfError(handle.configure(config.vocab_size, config.n_positions, config.n_embd, config.n_layer, config.n_head, this.config.layer_norm_epsilon), 'loadModel');
      loadCheckpoint(mod, handle, this.staging, file, gpt2Names);
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  /** Runs the model on text (tokenized here) or on token ids. */
  run(input: string | number[], options: RunOptions = {}): RunResult {
    const handle = this.live();
    const tokens = typeof input === 'string' ? this.tokenizer.encode(input) : Array.from(input);
    if (options.prependBos) {
      if (this.bosTokenId === undefined) throw new AttentionError('run: prependBos needs bos_token_id in config.json');
      tokens.unshift(this.bosTokenId);
    }
    const { vocab_size: V, n_layer: L, n_head: H, n_positions } = this.config;
    const n = tokens.length;
    if (n === 0) throw new AttentionError('run: the input has no tokens');
    if (n > n_positions) throw new AttentionError(`run: ${n} tokens exceed the model's context of ${n_positions}`);
    tokens.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= V) throw new AttentionError(`run: token ${t} at position ${i} is outside the vocabulary of ${V}`);
    });
    const keep = options.logitsToKeep ?? n;
    if (!Number.isInteger(keep) || keep < 0 || keep > n)
      throw new AttentionError(`run: logitsToKeep must be an integer in [0, ${n}] (the run's tokens), got ${typeof keep === 'number' ? keep : JSON.stringify(keep)}`);
    const trace = options.traceLayer;
    if (trace !== undefined && (!Number.isInteger(trace) || trace < 0 || trace >= L))
      throw new AttentionError(`run: traceLayer must be an integer in [0, ${L - 1}], got ${trace}`);
    const st = this.staging;
    const rt = st.plan(n * 4), rl = st.plan(keep * V * 4), ra = st.plan(options.attention ? L * H * n * n * 4 : 0);
    try {
      st.commit();
      st.writeI32(rt, tokens);
      throwIfError(handle.forward(rt.ptr, n, rl.ptr, ra.ptr, trace ?? -1, keep), 'run');
      const result: RunResult = {
        tokens, tokenTexts: tokens.map((t) => this.tokenizer.tokenText(t)), logits: st.readF32(rl, keep * V), logitsFrom: n - keep,
      };
      if (options.attention) result.attention = st.readF32(ra, L * H * n * n);
      if (trace !== undefined) {
        const dK = this.config.n_embd / H;
        result.trace = readMhaTrace(this.mod, handle, { numHeads: H, dK, dV: dK, dModel: this.config.n_embd }, 1, n, n);
      }
      return result;
    } finally {
      st.release();
    }
  }

  /** The k most likely next tokens after `position` (default: the last) of a run's logits. */
  predictNext(result: RunResult, k = 5, position = result.tokens.length - 1): Prediction[] {
    this.live();
    const V = this.config.vocab_size, from = result.logitsFrom ?? 0, n = result.tokens.length;
    if (!Number.isInteger(position) || position < 0 || position >= n)
      throw new AttentionError(`predictNext: position must be an integer in [0, ${n - 1}] (the run's tokens), got ${position}`);
    if (position < from)
      throw new AttentionError(`predictNext: position ${position} has no logits (the run kept ${from === n ? 'none' : `positions ${from} to ${n - 1}`}: logitsToKeep)`);
    const row = position - from;
    const [lse] = logSumExpRows(this.mod, this.staging, result.logits, V, [row]);
    return topK(result.logits.subarray(row * V, (row + 1) * V), lse, k, (id) => this.tokenizer.tokenText(id));
  }

  /** Mean next-token negative log-likelihood (nats) over the run's tokens, and its exp. */
  loss(result: RunResult): { loss: number; perplexity: number } {
    this.live();
    const V = this.config.vocab_size, n = result.tokens.length - 1;
    const kept = result.tokens.length - (result.logitsFrom ?? 0);
    if (kept < result.tokens.length && n > 0)
      throw new AttentionError(`loss: needs the logits of every position; the run kept ${kept === 0 ? 'none' : `only the last ${kept}`} (logitsToKeep)`);
    const lse = logSumExpRows(this.mod, this.staging, result.logits, V, Array.from({ length: Math.max(0, n) }, (_, i) => i));
    let total = 0;  // cross-entropy of each next token: log-sum-exp - its logit
    for (let i = 0; i < n; i++) total += lse[i] - result.logits[i * V + result.tokens[i + 1]];
    const loss = total / Math.max(1, n);
    return { loss, perplexity: Math.exp(loss) };
  }

  /**
   * Continues the prompt token by token through the KV cache: each new token costs one position,
   * not a re-run of the prefix. Greedy by default; temperature/topK/topP/seed sample
   * reproducibly; beams > 1 runs beam search. Stops at maxNewTokens, the end-of-text token, a
   * stop string or the signal. One generation per model at a time.
   */
  async generate(prompt: string | number[], options: GenerateOptions = {}): Promise<GenerateResult> {
    const t0 = performance.now();
    const sampling = checkSampling(options, 'generate');
    const maxNew = options.maxNewTokens ?? 32, beams = options.beams ?? 1;
    if (!Number.isInteger(maxNew) || maxNew < 0) throw new AttentionError(`generate: maxNewTokens must be an integer >= 0, got ${options.maxNewTokens}`);
    if (!Number.isInteger(beams) || beams < 1 || beams > MAX_BEAMS)
      throw new AttentionError(`generate: beams must be an integer from 1 to ${MAX_BEAMS}, got ${options.beams}`);
    const stops = options.stop ?? [];
    if (!Array.isArray(stops) || stops.some((s) => typeof s !== 'string' || s === '')) throw new AttentionError('generate: stop must be an array of non-empty strings');
    const promptTokens = typeof prompt === 'string' ? this.tokenizer.encode(prompt) : Array.from(prompt);
    if (options.prependBos) {
      if (this.bosTokenId === undefined) throw new AttentionError('generate: prependBos needs bos_token_id in config.json');
      promptTokens.unshift(this.bosTokenId);
    }
    const { n_positions: P, vocab_size: V } = this.config;
    if (promptTokens.length === 0) throw new AttentionError('generate: the prompt has no tokens (pass prependBos to start from bos)');
    promptTokens.forEach((t, i) => {
      if (!Number.isInteger(t) || t < 0 || t >= V) throw new AttentionError(`generate: token ${t} at position ${i} is outside the vocabulary of ${V}`);
    });
    if (promptTokens.length >= P) throw new AttentionError(`generate: the prompt's ${promptTokens.length} tokens leave no room in the model's context of ${P}`);
    if (this.generating) throw new AttentionError('generate: this model is already generating; await the previous call');
    this.generating = true;
    try {
      const capacity = Math.min(P, promptTokens.length + maxNew);
      const stepper = this.stepper(capacity, !!options.attention);
      let logits = stepper.step(promptTokens, promptTokens.length);
      const room = Math.min(maxNew, P - promptTokens.length);
      const eos = this.eosTokenId;
      const result = (tokens: number[], finishReason: GenerateResult['finishReason'], firstAt: number): GenerateResult => {
        let text = this.tokenizer.decode(tokens);
        for (const s of stops) {
          const at = text.indexOf(s);
          if (at >= 0) text = text.slice(0, at);
        }
        const now = performance.now();
        return { promptTokens, tokens, text, finishReason, timeToFirstTokenMs: (firstAt || now) - t0,
          tokensPerSecond: tokens.length > 1 ? (tokens.length - 1) / ((now - firstAt) / 1000) : 0 };
      };
      if (beams > 1) {
        const [best] = beamSearch(stepper, logits, { beams, maxNewTokens: room, endTokenId: eos ?? -1 });
        return result(best.tokens, best.finished ? 'eos' : 'length', performance.now());
      }
      const random = seededRandom(sampling.seed);
      const tokens: number[] = [];
      let emitted = '', firstAt = 0;
      for (let i = 0; i < room; i++) {
        if (options.signal?.aborted) return result(tokens, 'abort', firstAt);
        const token = chooseToken(logits, sampling, random);
        if (i === 0) firstAt = performance.now();
        if (token === eos) return result(tokens, 'eos', firstAt);
        tokens.push(token);
        // Feed it now: the next logits, and (when asked) its own attention row for the event.
        if (i + 1 < room || options.attention) logits = stepper.step([token], 1);
        // Emit whole characters only: a byte token may end inside a UTF-8 sequence.
        const text = this.tokenizer.decode(tokens);
        const ready = text.endsWith('\ufffd') ? emitted : text;
        options.onToken?.({ token, text: ready.slice(emitted.length), index: i, attention: stepper.attention });
        emitted = ready;
        if (stops.some((s) => text.includes(s))) return result(tokens, 'stop', firstAt);
        await yieldToEventLoop();
      }
      return result(tokens, options.signal?.aborted ? 'abort' : 'length', firstAt);
    } finally {
      this.generating = false;
    }
  }

  /** config.json's eos_token_id, if any (GPT-2: <|endoftext|>). */
  get eosTokenId(): number | undefined {
    return this.eosId;
  }

  private generating = false;

  /** The KV cache as the decoding loop sees it. attention: the last step's n_layer x n_head x length (one new token). */
  private stepper(capacity: number, wantAttention: boolean): Stepper & { attention?: Float32Array } {
    const handle = this.live(), st = this.staging;
    const { vocab_size: V, n_layer: L, n_head: H } = this.config;
    throwIfError(handle.startDecoding(1, capacity), 'generate');
    let batch = 1;
    const self = {
      vocabSize: V,
      attention: undefined as Float32Array | undefined,
      step(tokens: number[], n: number): Float32Array {
        const len = handle.cachedLength() + n;
        const attn = wantAttention && n === 1 ? L * batch * H * len : 0;
        const rt = st.plan(tokens.length * 4), rl = st.plan(batch * V * 4), ra = st.plan(attn * 4);
        try {
          st.commit();
          st.writeI32(rt, tokens);
          throwIfError(handle.step(rt.ptr, n, rl.ptr, ra.ptr), 'generate');
          self.attention = attn ? st.readF32(ra, attn) : undefined;
          return st.readF32(rl, batch * V);
        } finally {
          st.release();
        }
      },
      reorder(order: number[]): void {
        st.withI32(order, (ptr) => throwIfError(handle.reorderCache(ptr, order.length), 'generate'));
        batch = order.length;
      },
    };
    return self;
  }
}
