// What the decoder-only language models (GPT-2, the Llama family) share: run, predictNext, loss and
// generate over a core handle with a KV cache, through the one decoding loop (decoding.ts). A model
// class adds its config, its tokenizer and its checkpoint names.
import { AttentionError, throwIfError } from '../errors.js';
import type { MultiHeadTrace } from '../attention/multi_head_attention.js';
import { BEAM_RULES, BeamSearch, SAMPLING_RULES, chooseToken, lengthNormalized, penalizeRepeats, samplingDefaults, seededRandom, signalRule,
  yieldToEventLoop } from './decoding.js';
import type { BeamSearchOptions, DecodingScores, GenerationDefaults, Hypothesis, SamplingOptions, Stepper } from './decoding.js';
import { logSumExpRows, topK } from './predictions.js';
import type { Prediction } from './predictions.js';
import type { DecoderModelHandle, WasmModule } from '../runtime/wasm_module.js';
import { checkObject, checkOptions, is, show } from '../validate.js';
import type { Rule, Rules } from '../validate.js';
import { WasmObject } from '../runtime/wasm_object.js';
import { readAppliedMask, readHeadWeights, type AppliedMask, type HeadWeights } from './layer_inspection.js';
import { CHAT_TEMPLATE_RULES, renderChatTemplate } from './chat.js';
import { checkAblation, withHeadsOff, type AblatedHead } from './head_ablation.js';
import type { ChatMessage, ChatTemplateOptions, ChatTemplateSource } from './chat.js';

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
  /** Heads to switch off for this run: their outputs are set to zero before W^O (layer and head
   * counted from 0). The causal test of what a head does. */
  ablate?: AblatedHead[];
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

/** RunResult as the options make it: `attention` is there with `attention: true`, `trace` with a
 * `traceLayer` (no `?.` needed on what was asked for), as forward()'s result. */
export type RunResultFor<O, R extends RunResult = RunResult> = R
  & (O extends { attention: true } ? { attention: Float32Array } : unknown)
  & (O extends { traceLayer: number } ? { trace: NonNullable<R['trace']> } : unknown);

/** generate()'s and chat()'s options with `attention: true` (greedy or sampling): onToken's
 * event and the result's tokenAttention hold the attention. */
export type WithTokenAttention<O> = Omit<O, 'attention' | 'onToken' | 'beams'> & {
  attention: true; beams?: 1; onToken?: (event: TokenEvent & { attention: Float32Array }) => void;
};

export interface GenerateOptions extends SamplingOptions, BeamSearchOptions {
  /** How many tokens to add at most (default: generation_config.json's max_new_tokens, else 32; the
   * context length caps prompt + new tokens). */
  maxNewTokens?: number;
  /** Stop as soon as the generated text contains one of these strings (left out of the result). */
  stop?: string[];
  /** Put bos_token_id before the prompt (as in run()). */
  prependBos?: boolean;
  /** Called with each new token as soon as it is chosen (greedy and sampling: a beam search
   * knows its output only at the end). */
  onToken?: (event: TokenEvent) => void;
  /** Include each new token's attention (n_layer x n_head x its position + 1) in onToken's event
   * and in the result's tokenAttention (greedy and sampling), read from the KV-cache step that
   * feeds the token: nothing is run twice. */
  attention?: boolean;
  /** Aborting it stops the generation after the current token (beam search: after the current
   * step); the promise resolves with what was generated so far and finishReason "abort". */
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

/**
 * A generation's result. `score`, `finished` and `hypotheses` have the same shape as BART's
 * (DecodingScores): the output's log-probability under the model (untempered, the end token's
 * included when it ended) / length^lengthPenalty; with beams, every beam's hypothesis, best first
 * (their texts cut at a stop string too); greedy and sampling: the one output.
 */
export interface GenerateResult extends DecodingScores {
  /** The prompt's tokens (with bos when prependBos). */
  promptTokens: number[];
  /** The new tokens (the best hypothesis's with beams), without a final end-of-text token. */
  tokens: number[];
  /** The new text (cut before a stop string). */
  text: string;
  /** Beam search ends with 'eos' (its best hypothesis ended), 'length' or 'abort' (never 'stop':
   * the beams run on past a stop string; the texts are cut at it). */
  finishReason: 'length' | 'eos' | 'stop' | 'abort';
  /** Milliseconds from the call to the first new token (beam search: to the end of its first
   * step, which chose every beam's first token). */
  timeToFirstTokenMs: number;
  /** Decoding steps per second after the first: new tokens per second (beam search: steps, each
   * adding a token to every beam). 0 with fewer than two steps. */
  tokensPerSecond: number;
  /** With `attention` (greedy and sampling): for each of `tokens`, at position p (prompt length +
   * its index), n_layer x n_head x (p + 1): how that position attends to itself and every earlier
   * one, as onToken's event has it. */
  tokenAttention?: Float32Array[];
}

/** chat()'s options: generate()'s (but prependBos: the template puts BOS where the model wants
 * it) and the template's (but addGenerationPrompt: chat always asks for the assistant's turn). */
export interface ChatOptions extends Omit<GenerateOptions, 'prependBos'>, Omit<ChatTemplateOptions, 'addGenerationPrompt'> {}

/** chat()'s result: generate()'s for the rendered conversation, and that text. `text` is the
 * reply, without the end-of-turn token that ended it (finishReason 'eos'). */
export interface ChatResult extends GenerateResult {
  /** The conversation as the template rendered it (promptTokens is its tokenization). */
  prompt: string;
}

/** A model's chat template, its special tokens' texts and the ids that end a turn (see chat()). */
export interface ChatDefaults extends ChatTemplateSource {
  /** Token ids that end an assistant turn besides eosTokenId (generation_config's eos_token_id
   * list, the tokenizer's EOS / end-of-turn ids). */
  endIds?: readonly number[];
}

/** What a decoding loop hands back: hypotheses best first, and when its first step completed. */
interface Decoded {
  hypotheses: Hypothesis[]; finishReason: GenerateResult['finishReason']; firstAt: number; steps: number;
  /** Each kept token's attention row (sampleDecode with the attention option). */
  attention?: Float32Array[];
}

/** A stop string: not empty (it would match at once). */
const stopString: Rule = (v, name) => {
  if (typeof v !== 'string' || v === '') throw new AttentionError(`${name} must be a non-empty string, got ${show(v)}`);
};

/** At most this many stop strings (each is looked for after every token). */
const MAX_STOPS = 1000;

// traceLayer and logitsToKeep depend on the model and the input: their ranges are checked in run().
const RUN_RULES: Rules<RunOptions> = { prependBos: is.boolean, attention: is.boolean, traceLayer: is.any, logitsToKeep: is.any, ablate: is.any };

const GENERATE_RULES: Rules<GenerateOptions> = {
  ...SAMPLING_RULES, ...BEAM_RULES, maxNewTokens: is.int(0), stop: is.array(stopString, MAX_STOPS),
  prependBos: is.boolean, onToken: is.function, attention: is.boolean, signal: signalRule,
};

const { prependBos: _bos, ...CHAT_GENERATE_RULES } = GENERATE_RULES;
const { addGenerationPrompt: _prompt, ...CHAT_ONLY_RULES } = CHAT_TEMPLATE_RULES;
const CHAT_RULES: Rules<ChatOptions> = { ...CHAT_GENERATE_RULES, ...CHAT_ONLY_RULES };

/** A run's result as predictNext and loss read it (checked: it may be hand-made). */
interface CheckedRun { tokens: number[]; logits: Float32Array; from: number }

/** A token id from a config file, if it is one of the vocabulary's. */
export function vocabTokenId(v: unknown, vocab: number): number | undefined {
  return Number.isInteger(v) && (v as number) >= 0 && (v as number) < vocab ? v as number : undefined;
}

/** What the shared code needs of a tokenizer (BpeTokenizer, HfTokenizer). */
export interface DecoderTokenizer {
  readonly vocabSize: number;
  encode(text: string): number[];
  decode(ids: number[]): string;
  tokenText(id: number): string;
}

/** The sizes the shared code reads: vocabulary, layers, (query) heads, context in positions. */
export interface DecoderShape { vocab: number; layers: number; heads: number; context: number }

/** A decoder-only language model over a core handle with a KV cache. */
export abstract class DecoderModel<T extends DecoderTokenizer, H extends DecoderModelHandle> extends WasmObject<H> {
  readonly tokenizer: T;
  /** config.json's bos_token_id, if any. */
  readonly bosTokenId: number | undefined;
  private readonly eosId: number | undefined;
  protected readonly shape: DecoderShape;
  private readonly chatDefaults: ChatDefaults;
  /** What the checkpoint's generation_config.json sets for generate() and chat() (sampling,
   * repetition penalty, max_new_tokens, end ids): used unless an option says otherwise. */
  readonly generationDefaults: GenerationDefaults;

  protected constructor(mod: WasmModule, handle: H, name: string, tokenizer: T, shape: DecoderShape,
    bosTokenId: number | undefined, eosTokenId: number | undefined, chat: ChatDefaults = {}, generation: GenerationDefaults = {}) {
    super(mod, handle, name);
    this.generationDefaults = generation;
    this.tokenizer = tokenizer;
    this.shape = shape;
    this.bosTokenId = bosTokenId;
    this.eosId = eosTokenId;
    this.chatDefaults = chat;
  }

  /**
   * The text of token ids. A config's vocab_size may exceed the tokenizer's (Qwen2's is padded
   * past its tokenizer's ids): those embedding rows have no text, so such an id (which a model can
   * still produce) reads as nothing instead of failing the decode.
   */
  private decodeIds(ids: number[]): string {
    const V = this.tokenizer.vocabSize;
    return this.tokenizer.decode(ids.some((id) => id >= V) ? ids.filter((id) => id < V) : ids);
  }

  /** How one token reads on its own ('' for an id past the tokenizer's vocabulary, see decodeIds). */
  private tokenText(id: number): string {
    return id < this.tokenizer.vocabSize ? this.tokenizer.tokenText(id) : '';
  }

  /**
   * Head `head` of layer `layer` as the model holds it (decoded, in the seeds' layout: W^Q, W^K,
   * W^V columns and W^O rows; see HeadWeights). Works at every dtype and for any checkpoint format.
   */
  headWeights(layer: number, head: number): HeadWeights {
    return readHeadWeights(this.mod, this.live(), 'self', layer, head);
  }

  /** The mask layer `layer` applied in the last run or step that returned attention (null before one). */
  appliedMask(layer: number): AppliedMask | null {
    return readAppliedMask(this.mod, this.live(), 'self', layer);
  }

  /** The traced layer's attention walk after a forward of n tokens (LlamaModel's holds more). */
  protected abstract readTrace(handle: H, n: number): MultiHeadTrace;

  /** Runs the model on text (tokenized here) or on token ids. */
  run<O extends RunOptions = RunOptions>(input: string | number[], opts?: O): RunResultFor<O> {
    const handle = this.live();
    const options = checkOptions('run', opts, RUN_RULES);
    const tokens = this.inputTokens('run', input, 'input', options.prependBos === true);
    const { vocab: V, layers: L, heads: H, context: n_positions } = this.shape;
    const n = tokens.length;
    if (n === 0) throw new AttentionError('run: the input has no tokens');
    if (n > n_positions) throw new AttentionError(`run: ${n} tokens exceed the model's context of ${n_positions}`);
    const keep = options.logitsToKeep ?? n;
    if (!Number.isInteger(keep) || (keep as number) < 0 || (keep as number) > n)
      throw new AttentionError(`run: logitsToKeep must be an integer in [0, ${n}] (the run's tokens), got ${show(keep)}`);
    const trace = options.traceLayer;
    if (trace !== undefined && (!Number.isInteger(trace) || trace < 0 || trace >= L))
      throw new AttentionError(`run: traceLayer must be an integer in [0, ${L - 1}], got ${show(trace)}`);
    const sizes = { self: { layers: L, heads: H } };
    const ablate = checkAblation('run', options.ablate ?? [], sizes);
    const st = this.staging;
    return withHeadsOff(this.mod, handle, st, 'run', ablate, sizes, () => {
      const rt = st.plan(n * 4), rl = st.plan(keep * V * 4), ra = st.plan(options.attention ? L * H * n * n * 4 : 0);
      try {
        st.commit();
        st.writeI32(rt, tokens);
        throwIfError(handle.forward(rt.ptr, n, rl.ptr, ra.ptr, trace ?? -1, keep), 'run');
        const result: RunResult = {
          tokens, tokenTexts: tokens.map((t) => this.tokenText(t)), logits: st.readF32(rl, keep * V), logitsFrom: n - keep,
        };
        this.ownLogits.add(result.logits);
        if (options.attention) result.attention = st.readF32(ra, L * H * n * n);
        if (trace !== undefined) result.trace = this.readTrace(handle, n);
        return result;
      } finally {
        st.release();
      }
    }) as RunResultFor<O>;
  }

  /** The k most likely next tokens after `position` (default: the last) of a run's logits. */
  predictNext(result: RunResult, k = 5, position?: number): Prediction[] {
    this.live();
    const V = this.shape.vocab, { tokens, logits, from } = this.checkRun('predictNext', result), n = tokens.length;
    // k past the vocabulary gives all of it (at most k), as before; a k that is not a count is named.
    if (!Number.isSafeInteger(k) || k < 0) throw new AttentionError(`predictNext: k must be an integer >= 0, got ${show(k)}`);
    position ??= n - 1;
    if (!Number.isInteger(position) || position < 0 || position >= n)
      throw new AttentionError(`predictNext: position must be an integer in [0, ${n - 1}] (the run's tokens), got ${show(position)}`);
    if (position < from)
      throw new AttentionError(`predictNext: position ${position} has no logits (the run kept ${from === n ? 'none' : `positions ${from} to ${n - 1}`}: logitsToKeep)`);
    const row = position - from;
    const [lse] = logSumExpRows(this.mod, this.staging, logits, V, [row]);
    if (!Number.isFinite(lse)) throw new AttentionError(`predictNext: the logits at position ${position} hold NaN or Infinity`);
    return topK(logits.subarray(row * V, (row + 1) * V), lse, k, (id) => this.tokenText(id));
  }

  /** Mean next-token negative log-likelihood (nats) over the run's tokens, and its exp. */
  loss(result: RunResult): { loss: number; perplexity: number } {
    this.live();
    const V = this.shape.vocab, { tokens, logits, from } = this.checkRun('loss', result), n = tokens.length - 1;
    const kept = tokens.length - from;
    if (kept < tokens.length && n > 0)
      throw new AttentionError(`loss: needs the logits of every position; the run kept ${kept === 0 ? 'none' : `only the last ${kept}`} (logitsToKeep)`);
    const lse = logSumExpRows(this.mod, this.staging, logits, V, Array.from({ length: Math.max(0, n) }, (_, i) => i));
    let total = 0;  // cross-entropy of each next token: log-sum-exp - its logit
    for (let i = 0; i < n; i++) total += lse[i] - logits[i * V + tokens[i + 1]];
    const loss = total / Math.max(1, n);
    if (!Number.isFinite(loss)) throw new AttentionError('loss: the run\'s logits hold NaN or Infinity');
    return { loss, perplexity: Math.exp(loss) };
  }

  /**
   * A run's result as given back to predictNext / loss, checked field by field (it may be
   * hand-made or another model's): tokens are ids of this vocabulary, logits a Float32Array of
   * (tokens - logitsFrom) rows of vocab_size. Each field is read once.
   */
  private checkRun(where: string, result: RunResult): CheckedRun {
    checkObject(where, 'result', result, '(what run() returned)');
    const field = (key: keyof RunResult): unknown => {
      try {
        return result[key];
      } catch {
        throw new AttentionError(`${where}: result.${key} cannot be read`);
      }
    };
    const tokens = field('tokens'), logits = field('logits'), logitsFrom = field('logitsFrom');
    const { vocab: V, context: P } = this.shape;
    if (!Array.isArray(tokens) || tokens.length === 0 || tokens.length > P)
      throw new AttentionError(`${where}: result.tokens must be an array of 1 to ${P} token ids (what run() returned), got ${show(tokens)}`);
    const ids = Array.from(tokens as unknown[]);
    ids.forEach((t, i) => {
      if (!Number.isInteger(t) || (t as number) < 0 || (t as number) >= V)
        throw new AttentionError(`${where}: result.tokens[${i}] is ${show(t)}, outside the vocabulary of ${V}: not a run of this model`);
    });
    const n = ids.length, from = logitsFrom ?? 0;
    if (!Number.isInteger(from) || (from as number) < 0 || (from as number) > n)
      throw new AttentionError(`${where}: result.logitsFrom must be an integer in [0, ${n}] (the run's tokens), got ${show(logitsFrom)}`);
    const rows = n - (from as number);
    if (!(logits instanceof Float32Array) || logits.length !== rows * V)
      throw new AttentionError(`${where}: result.logits must be a Float32Array of ${rows} x ${V} (kept positions x vocab_size) = ${rows * V} logits, got ${show(logits)}`);
    // The core's own logits are finite; any other array is scanned once (a NaN would otherwise
    // vanish into a softmax normalizer and give a finite, wrong loss).
    if (!this.ownLogits.has(logits)) {
      const at = logits.findIndex((v) => !Number.isFinite(v));
      if (at >= 0) throw new AttentionError(`${where}: result.logits[${at}] is ${logits[at]}: logits must be finite`);
    }
    return { tokens: ids as number[], logits, from: from as number };
  }

  /** The logits arrays run() returned: known finite, not scanned again. */
  private readonly ownLogits = new WeakSet<Float32Array>();

  /**
   * The token ids of a text or of given ids, with bos first when asked, each checked against the
   * vocabulary. Input that cannot fit the context is refused before any tokenizing: a token holds
   * at most `longestToken` bytes, so a longer text than context x that cannot fit.
   */
  private inputTokens(where: string, input: unknown, what: string, prependBos: boolean): number[] {
    const { vocab: V, context: P } = this.shape;
    let tokens: number[];
    if (typeof input === 'string') {
      // Each UTF-16 unit is at least one UTF-8 byte, so a text of this many units is too long.
      if (input.length > this.longestToken() * P)
        throw new AttentionError(`${where}: the ${what}'s ${input.length} characters exceed the model's context of ${P} tokens (a token covers at most ${this.longestToken()} bytes)`);
      tokens = this.tokenizer.encode(input);
    } else if (Array.isArray(input) || (ArrayBuffer.isView(input) && !(input instanceof DataView))) {
      const ids = input as ArrayLike<unknown>;
      if (ids.length > P) throw new AttentionError(`${where}: ${ids.length} tokens exceed the model's context of ${P}`);
      tokens = Array.from(ids) as number[];
      tokens.forEach((t, i) => {
        if (!Number.isInteger(t) || t < 0 || t >= V) throw new AttentionError(`${where}: token ${show(t)} at position ${i} is outside the vocabulary of ${V}`);
      });
    } else {
      throw new AttentionError(`${where}: the ${what} must be a string or an array of token ids, got ${show(input)}`);
    }
    if (prependBos) {
      if (this.bosTokenId === undefined) throw new AttentionError(`${where}: prependBos needs bos_token_id in config.json`);
      tokens.unshift(this.bosTokenId);
    }
    return tokens;
  }

  /** The most UTF-8 bytes one token of the vocabulary stands for (found once, on first need). */
  private longestToken(): number {
    if (this.longest === 0) {
      const encoder = new TextEncoder();
      // A partial character decodes to U+FFFD (3 bytes, for 1 to 3 bytes of the token): still a bound.
      // About 35 ms for 14k tokens, once per model, and only for a text longer than the context.
      for (let id = 0; id < this.tokenizer.vocabSize; id++) {
        try {
          this.longest = Math.max(this.longest, encoder.encode(this.tokenizer.decode([id])).length);
        } catch { /* a gap in the vocabulary's ids */ }
      }
      this.longest = Math.max(1, this.longest);
    }
    return this.longest;
  }

  private longest = 0;

  /**
   * Continues the prompt token by token through the KV cache: each new token costs one position,
   * not a re-run of the prefix. Greedy by default (or as the checkpoint's generation_config.json
   * says: generationDefaults); temperature/topK/topP/minP/seed sample reproducibly,
   * repetitionPenalty discourages repeats; beams > 1 runs beam search (ranked with lengthPenalty,
   * by the model's own probabilities: the sampling options do not apply). Stops at maxNewTokens,
   * the end-of-text token (or generation_config.json's end ids), a stop string or the signal. One generation per model at a time; a
   * dispose() while it runs ends it at its next step with an AttentionError of code 'aborted'.
   */
  generate(prompt: string | number[], opts: WithTokenAttention<GenerateOptions>): Promise<GenerateResult & { tokenAttention: Float32Array[] }>;
  generate(prompt: string | number[], opts?: GenerateOptions): Promise<GenerateResult>;
  async generate(prompt: string | number[], opts?: GenerateOptions | WithTokenAttention<GenerateOptions>): Promise<GenerateResult> {
    const t0 = performance.now();
    this.live();
    const options = checkOptions('generate', opts as GenerateOptions | undefined, GENERATE_RULES);
    const promptTokens = this.inputTokens('generate', prompt, 'prompt', options.prependBos === true);
    const { context: P } = this.shape;
    if (promptTokens.length === 0) throw new AttentionError('generate: the prompt has no tokens (pass prependBos to start from bos)');
    if (promptTokens.length >= P) throw new AttentionError(`generate: the prompt's ${promptTokens.length} tokens leave no room in the model's context of ${P}`);
    return this.decodeFrom('generate', promptTokens, options, this.generateEndIds(), t0);
  }

  /** The ids that end generate(): eosTokenId and generation_config.json's eos_token_id list. */
  private generateEndIds(): number[] {
    const ids = [...(this.eosTokenId === undefined ? [] : [this.eosTokenId]), ...(this.generationDefaults.eosTokenIds ?? [])];
    return ids.filter((id, i) => ids.indexOf(id) === i && id < this.shape.vocab);
  }

  /** Generation from prompt ids (checked to fit), ending at any of `ends`: generate's and chat's loop. */
  private async decodeFrom(where: string, promptTokens: number[], options: Omit<GenerateOptions, 'prependBos'>, ends: readonly number[],
    t0: number): Promise<GenerateResult> {
    const maxNew = options.maxNewTokens ?? this.generationDefaults.maxNewTokens ?? 32, beams = options.beams ?? 1, P = this.shape.context;
    if (this.generating) throw new AttentionError(`${where}: this model is already generating; await the previous call`);
    this.generating = true;
    try {
      const stepper = this.stepper(Math.min(P, promptTokens.length + maxNew), options.attention === true && beams === 1);
      const first = stepper.step(promptTokens, promptTokens.length);
      const room = Math.min(maxNew, P - promptTokens.length);
      const decoded = beams > 1 ? await this.beamDecode(stepper, first, room, ends, options)
        : await this.sampleDecode(stepper, first, room, ends, options, promptTokens);
      return this.generateResult(promptTokens, decoded, options.stop ?? [], t0);
    } finally {
      this.generating = false;
    }
  }

  /**
   * The conversation as the model's chat template renders it (tokenizer_config.json's
   * chat_template, chat_template.jinja, a GGUF file's tokenizer.chat_template, or the
   * chatTemplate option): the text chat() tokenizes. addGenerationPrompt ends it with the start
   * of the assistant's turn. Throws an AttentionError (code 'no-chat-template') for a model
   * without a template when no chatTemplate is passed.
   */
  applyChatTemplate(messages: ChatMessage[], options?: ChatTemplateOptions): string {
    this.live();
    return renderChatTemplate('applyChatTemplate', this.chatSource(), messages, options);
  }

  /**
   * Replies to a conversation: renders it with the chat template (addGenerationPrompt: true),
   * tokenizes that text as it is (the template writes the special tokens, BOS included, so none
   * is added), and generates as generate() does (sampling options, maxNewTokens, stop, onToken,
   * signal, beams) until an end-of-turn token: eosTokenId or any of the model's other end ids
   * (generation_config.json's eos_token_id list, the tokenizer's EOS / EOT ids: <|im_end|>,
   * <|eot_id|>, <end_of_turn>, <|end|>, ...). The reply is `text`; append
   * `{ role: 'assistant', content: text }` to the messages to go on.
   */
  chat(messages: ChatMessage[], opts: WithTokenAttention<ChatOptions>): Promise<ChatResult & { tokenAttention: Float32Array[] }>;
  chat(messages: ChatMessage[], opts?: ChatOptions): Promise<ChatResult>;
  async chat(messages: ChatMessage[], opts?: ChatOptions | WithTokenAttention<ChatOptions>): Promise<ChatResult> {
    const t0 = performance.now();
    this.live();
    const options = checkOptions('chat', opts as ChatOptions | undefined, CHAT_RULES);
    const { tools, documents, chatTemplate, variables, ...generation } = options;
    const prompt = renderChatTemplate('chat', this.chatSource(), messages, { tools, documents, chatTemplate, variables, addGenerationPrompt: true });
    const P = this.shape.context;
    if (prompt.length > this.longestToken() * P)
      throw new AttentionError(`chat: the rendered conversation's ${prompt.length} characters exceed the model's context of ${P} tokens (a token covers at most ${this.longestToken()} bytes)`);
    const promptTokens = this.encodeChat(prompt);
    if (promptTokens.length === 0) throw new AttentionError('chat: the rendered conversation has no tokens');
    if (promptTokens.length >= P) throw new AttentionError(`chat: the rendered conversation's ${promptTokens.length} tokens leave no room in the model's context of ${P}`);
    const result = await this.decodeFrom('chat', promptTokens, generation, this.chatEndIds(), t0);
    return { ...result, prompt };
  }

  /** The token ids of a rendered chat: the text as it is, no special tokens added (the template
   * wrote them). A tokenizer that adds none by itself (GPT-2's) encodes it plainly. */
  protected encodeChat(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  /** The template and the texts of BOS / EOS the template reads (the tokenizer's, when the model
   * has none of its own). */
  private chatSource(): ChatTemplateSource {
    const d = this.chatDefaults, text = (id: number | undefined) => (id === undefined ? undefined : this.decodeIds([id]));
    return { templates: d.templates, bosToken: d.bosToken ?? text(this.bosTokenId), eosToken: d.eosToken ?? text(this.eosId) };
  }

  /** The ids that end a chat turn: eosTokenId and the model's other end ids. */
  chatEndIds(): number[] {
    const ids = [...(this.eosId === undefined ? [] : [this.eosId]), ...(this.chatDefaults.endIds ?? [])];
    return ids.filter((id, i) => ids.indexOf(id) === i && id < this.shape.vocab);
  }

  /** Greedy or sampled decoding, one token per step, streamed through onToken. */
  private async sampleDecode(stepper: Stepper & { attention?: Float32Array }, first: Float32Array, room: number, ends: readonly number[],
    options: Omit<GenerateOptions, 'prependBos'>, promptTokens: readonly number[]): Promise<Decoded> {
    const sampling = samplingDefaults(options, this.generationDefaults), random = seededRandom(sampling.seed), stops = options.stop ?? [];
    // The tokens a repetition penalty discourages: the prompt's and the output's so far.
    const seen = new Set(promptTokens);
    const tokens: number[] = [], rows: Float32Array[] = [];
    let logits = first, logProb = 0, emitted = '', firstAt = 0;
    const done = (finishReason: Decoded['finishReason'], ended = false): Decoded => ({
      hypotheses: [{ tokens, logProb, finished: ended, score: lengthNormalized(logProb, tokens.length, ended, options.lengthPenalty ?? 1) }],
      finishReason, firstAt, steps: tokens.length, ...(options.attention ? { attention: rows } : {}),
    });
    for (let i = 0; i < room; i++) {
      if (options.signal?.aborted) return done('abort');
      const token = chooseToken(penalizeRepeats(logits, seen, sampling.repetitionPenalty), sampling, random);
      if (i === 0) firstAt = performance.now();
      // The model's own probability, not the tempered one; the normalizer from the core (a cold
      // JavaScript loop over a vocabulary costs a page tens of ms).
      logProb += logits[token] - logSumExpRows(this.mod, this.staging, logits, logits.length, [0])[0];
      if (ends.includes(token)) return done('eos', true);
      tokens.push(token);
      seen.add(token);
      // Feed it now: the next logits, and (when asked) its own attention row for the event.
      if (i + 1 < room || options.attention) logits = stepper.step([token], 1);
      if (stepper.attention) rows.push(stepper.attention);
      // Emit whole characters only: a byte token may end inside a UTF-8 sequence.
      const text = this.decodeIds(tokens);
      const ready = text.endsWith('\ufffd') ? emitted : text;
      options.onToken?.({ token, text: ready.slice(emitted.length), index: i, attention: stepper.attention });
      emitted = ready;
      if (stops.some((s) => text.includes(s))) return done('stop');
      await yieldToEventLoop();
      this.checkNotDisposed();
    }
    return done(options.signal?.aborted ? 'abort' : 'length');
  }

  /** Beam search, one step per turn of the event loop (the signal and dispose() are seen between steps). */
  private async beamDecode(stepper: Stepper, first: Float32Array, room: number, ends: readonly number[],
    options: Omit<GenerateOptions, 'prependBos'>): Promise<Decoded> {
    const search = new BeamSearch(stepper, first, { beams: options.beams ?? 1, maxNewTokens: room, endTokenId: ends, lengthPenalty: options.lengthPenalty });
    let firstAt = 0, aborted = true;
    while (!options.signal?.aborted) {
      const more = search.advance();
      firstAt ||= performance.now();
      if (!more) { aborted = false; break; }
      await yieldToEventLoop();
      this.checkNotDisposed();
    }
    const hypotheses = search.hypotheses();
    return { hypotheses, finishReason: aborted ? 'abort' : hypotheses[0].finished ? 'eos' : 'length', firstAt, steps: search.steps };
  }

  /** A dispose() while an awaited generate() was between steps ends it with a named error. */
  private checkNotDisposed(): void {
    if (this.disposed) throw new AttentionError('generate: the model was disposed during the generation', 'aborted');
  }

  private generateResult(promptTokens: number[], d: Decoded, stops: string[], t0: number): GenerateResult {
    const cut = (text: string) => stops.reduce((t, s) => (t.includes(s) ? t.slice(0, t.indexOf(s)) : t), text);
    const outputs = d.hypotheses.map((h) => ({ tokens: h.tokens, text: cut(this.decodeIds(h.tokens)), score: h.score }));
    const best = d.hypotheses[0], now = performance.now(), firstAt = d.firstAt || now;
    return {
      promptTokens, tokens: best.tokens, text: outputs[0].text, finishReason: d.finishReason,
      score: best.score, finished: best.finished, hypotheses: outputs,
      timeToFirstTokenMs: firstAt - t0, tokensPerSecond: d.steps > 1 && now > firstAt ? (d.steps - 1) / ((now - firstAt) / 1000) : 0,
      ...(d.attention ? { tokenAttention: d.attention } : {}),
    };
  }

  /** The token that ends a generation, if any (GPT-2: config.json's eos_token_id, <|endoftext|>). */
  get eosTokenId(): number | undefined {
    return this.eosId;
  }

  private generating = false;

  /** The KV cache as the decoding loop sees it. attention: the last step's n_layer x n_head x length (one new token). */
  private stepper(capacity: number, wantAttention: boolean): Stepper & { attention?: Float32Array } {
    const handle = this.live(), st = this.staging;
    const { vocab: V, layers: L, heads: H } = this.shape;
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
