// The one decoding loop every generating model uses. A model supplies a Stepper over its KV
// cache (feed new tokens, get the next-token logits; reorder sequences for beams); this file
// chooses tokens: greedy, sampling (temperature, top-k, top-p, min-p, seeded, a repetition
// penalty) or beam search, with a checkpoint's generation_config.json defaults.
import { AttentionError } from '../errors.js';
import { rankIds, selectTop } from './predictions.js';
import { is, show } from '../validate.js';
import type { Rule, Rules } from '../validate.js';

/** The most beams a beam search runs (GPT-2 and BART alike): each beam is one more sequence in the
 * KV cache, and every step ranks 2 x beams candidates of each beam, so the work grows as beams^2. */
export const MAX_BEAMS = 64;

/** A model's incremental decoder: the KV cache lives in WASM, one sequence per beam. */
export interface Stepper {
  readonly vocabSize: number;
  /** Feeds `n` new tokens of every sequence (batch x n, row-major); returns batch x vocab logits
   * of each sequence's last new position. */
  step(tokens: number[], n: number): Float32Array;
  /** Sequence b continues old sequence order[b]. */
  reorder(order: number[]): void;
}

export interface SamplingOptions {
  /** 0 (default) = greedy: always the most likely token. */
  temperature?: number;
  /** Sample only among the k most likely tokens (0 = all). */
  topK?: number;
  /** Sample only among the most likely tokens whose probabilities add up to p (1 = all). */
  topP?: number;
  /** Seed of the sampler: the same seed and options give the same tokens. */
  seed?: number;
  /** Sample only among the tokens whose probability is at least minP times the most likely
   * token's (0 = all; applied after topK and topP, as transformers' MinPLogitsWarper). */
  minP?: number;
  /** Discourages repeats (the CTRL paper's rule, as transformers applies it): the logit of every
   * token already in the prompt or the output is divided by this when positive and multiplied by
   * it when negative, before the token is chosen (greedy too). 1 (default) = off; > 1 penalizes. */
  repetitionPenalty?: number;
}

/**
 * What a checkpoint's generation_config.json sets for generate(): used unless an option says
 * otherwise. Read as transformers reads it: without `do_sample: true` decoding is greedy; with
 * it, temperature defaults to 1 and top_k to 50 (transformers' own defaults).
 */
export interface GenerationDefaults {
  temperature?: number;
  topK?: number;
  topP?: number;
  minP?: number;
  repetitionPenalty?: number;
  maxNewTokens?: number;
  /** generation_config.json's eos_token_id (a number or a list): generate() stops at any of them. */
  eosTokenIds?: number[];
}

/** generation_config.json's fields this library reads, checked (a named error for a wrong type). */
export function readGenerationConfig(json: unknown, vocab: number): GenerationDefaults {
  if (json === undefined || json === null) return {};
  if (typeof json !== 'object' || Array.isArray(json)) throw new AttentionError(`generation_config.json: expected an object, got ${show(json)}`);
  const c = json as Record<string, unknown>;
  const num = (key: string, min: number, max = Infinity, open = false): number | undefined => {
    const v = c[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || (open && v === min) || v > max)
      throw new AttentionError(`generation_config.json: ${key} must be a number ${open ? '>' : '>='} ${min}${max < Infinity ? ` and <= ${max}` : ''}, got ${show(v)}`);
    return v;
  };
  if (c.do_sample !== undefined && c.do_sample !== null && typeof c.do_sample !== 'boolean')
    throw new AttentionError(`generation_config.json: do_sample must be true or false, got ${show(c.do_sample)}`);
  const sample = c.do_sample === true, out: GenerationDefaults = {};
  const temperature = num('temperature', 0), topK = num('top_k', 0), topP = num('top_p', 0, 1, true), minP = num('min_p', 0, 1);
  const penalty = num('repetition_penalty', 0, Infinity, true), maxNew = num('max_new_tokens', 0);
  if (topK !== undefined && !Number.isInteger(topK)) throw new AttentionError(`generation_config.json: top_k must be an integer >= 0, got ${show(topK)}`);
  if (maxNew !== undefined && !Number.isInteger(maxNew)) throw new AttentionError(`generation_config.json: max_new_tokens must be an integer >= 0, got ${show(maxNew)}`);
  if (sample) Object.assign(out, { temperature: temperature ?? 1, topK: topK ?? 50, topP: topP ?? 1, minP: minP ?? 0 });
  if (penalty !== undefined) out.repetitionPenalty = penalty;
  if (maxNew !== undefined) out.maxNewTokens = maxNew;
  const eos = Array.isArray(c.eos_token_id) ? c.eos_token_id : c.eos_token_id === undefined || c.eos_token_id === null ? [] : [c.eos_token_id];
  const ids = eos.filter((id): id is number => Number.isInteger(id) && (id as number) >= 0 && (id as number) < vocab);
  if (ids.length > 0) out.eosTokenIds = ids;
  return out;
}

/** A small seeded generator (mulberry32): reproducible across engines, unlike Math.random. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function argmax(x: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
  return best;
}

/** log-sum-exp of one row, in float64: a token's log-probability is its logit minus this. */
export function logSumExp(x: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < x.length; i++) if (x[i] > max) max = x[i];
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += Math.exp(x[i] - max);
  return max + Math.log(sum);
}

/** Beam width and ranking: the options of every model that runs beamSearch. */
export interface BeamSearchOptions {
  /** Beam search with this many beams, 1 to MAX_BEAMS (default 1: greedy). */
  beams?: number;
  /** Finished beams are ranked by log-probability / length^lengthPenalty (default 1; 0 = by
   * log-probability alone, which favours short outputs; > 1 favours longer ones). */
  lengthPenalty?: number;
}

/** An integer a seed may be (any safe integer: it is taken modulo 2^32). */
const seedRule: Rule = (v, name) => {
  if (!Number.isSafeInteger(v)) throw new AttentionError(`${name} must be an integer, got ${show(v)}`);
};

/** is.signal, also for an object whose properties throw when read (a hostile Proxy): still named. */
export const signalRule: Rule = (v, name) => {
  try {
    is.signal(v, name);
  } catch (e) {
    if (e instanceof AttentionError) throw e;
    throw new AttentionError(`${name} must be an AbortSignal, got an object whose properties cannot be read`);
  }
};

export const SAMPLING_RULES: Rules<SamplingOptions> = {
  temperature: is.number(0), topK: is.int(0), topP: is.number(0, 1, { min: true }), seed: seedRule,
  minP: is.number(0, 1), repetitionPenalty: is.number(0, Infinity, { min: true }),
};

export const BEAM_RULES: Rules<BeamSearchOptions> = { beams: is.int(1, MAX_BEAMS), lengthPenalty: is.number() };

/** Checked sampling options (SAMPLING_RULES) with their defaults filled in: each option, else the
 * checkpoint's generation_config.json default, else greedy with nothing filtered or penalized. */
export function samplingDefaults(o: SamplingOptions, d: GenerationDefaults = {}): Required<SamplingOptions> {
  return {
    temperature: o.temperature ?? d.temperature ?? 0, topK: o.topK ?? d.topK ?? 0, topP: o.topP ?? d.topP ?? 1, seed: o.seed ?? 0,
    minP: o.minP ?? d.minP ?? 0, repetitionPenalty: o.repetitionPenalty ?? d.repetitionPenalty ?? 1,
  };
}

/** A row of logits with the repetition penalty applied to every token of `seen` (a copy; the row
 * itself when the penalty is 1). */
export function penalizeRepeats(logits: Float32Array, seen: Iterable<number>, penalty: number): Float32Array {
  if (penalty === 1) return logits;
  const out = logits.slice();
  for (const id of new Set(seen)) {
    if (id < 0 || id >= out.length) continue;
    out[id] = out[id] < 0 ? out[id] * penalty : out[id] / penalty;
  }
  return out;
}

/** Picks the next token from one row of logits: argmax at temperature 0, else a sample from
 * softmax(logits / T) restricted to the top-k, then to the top-p nucleus, then to the tokens of at
 * least minP times the most likely one's probability. (A repetition penalty is applied before:
 * penalizeRepeats.) */
export function chooseToken(logits: ArrayLike<number>, o: Required<SamplingOptions>, random: () => number): number {
  if (o.temperature === 0) return argmax(logits);
  const keep = rankIds(logits, o.topK);
  const top = logits[keep[0]];
  const weights = keep.map((i) => Math.exp((logits[i] - top) / o.temperature));
  const total = weights.reduce((a, b) => a + b, 0);
  let n = keep.length;
  if (o.topP < 1) {  // the smallest prefix whose probability reaches p
    let acc = 0;
    for (n = 0; n < keep.length && acc < o.topP * total; n++) acc += weights[n];
  }
  // weights[i] / weights[0] is token i's probability over the most likely one's, whatever the
  // normalization, so min-p keeps the prefix at or above minP (the most likely always stays).
  const below = o.minP > 0 ? weights.findIndex((w) => w < o.minP) : -1;
  if (below > 0) n = Math.min(n, below);
  const mass = weights.slice(0, n).reduce((a, b) => a + b, 0);
  let r = random() * mass;
  for (let i = 0; i < n; i++) {
    r -= weights[i];
    if (r < 0) return keep[i];
  }
  return keep[n - 1];
}

export interface BeamOptions {
  /** Beam width k (1 = greedy). */
  beams: number;
  maxNewTokens: number;
  /** The token (or tokens: a chat template's end-of-turn ids) that ends a hypothesis. */
  endTokenId: number | readonly number[];
  /** Finished hypotheses are ranked by sum of log-probabilities / length^lengthPenalty (length
   * counts the end token). Default 1. */
  lengthPenalty?: number;
}

export interface Hypothesis {
  /** The generated tokens, without the end token. */
  tokens: number[];
  /** Sum of the tokens' log-probabilities (the end token's included when it ended). */
  logProb: number;
  /** logProb / length^lengthPenalty: what the beams are ranked by. */
  score: number;
  finished: boolean;
}

/** A hypothesis's score: logProb / length^lengthPenalty, where the length counts the end token
 * when it ended (an empty one counts 1). */
export function lengthNormalized(logProb: number, tokens: number, ended: boolean, lengthPenalty: number): number {
  return logProb / Math.pow(tokens + (ended ? 1 : 0) || 1, lengthPenalty);
}

/** One output of a generation as its result shows it. */
export interface ScoredOutput {
  /** The generated tokens, without the end token. */
  tokens: number[];
  text: string;
  /** Its log-probability / length^lengthPenalty (see lengthNormalized). */
  score: number;
}

/** The scores every generating model's result carries (GPT-2's GenerateResult, BART's
 * Seq2SeqResult): one shape for greedy, sampling and beam search. */
export interface DecodingScores {
  /** The output's log-probability under the model (the end token's included when it ended) /
   * length^lengthPenalty: what beam search ranks by. */
  score: number;
  /** Whether the output ended with the end token. */
  finished: boolean;
  /** Every beam's hypothesis, best first (greedy and sampling: the one output). */
  hypotheses: ScoredOutput[];
}

/**
 * Beam search after the stepper has been fed its prefix (batch 1; `first` holds that prefix's
 * logits), one step per advance() so that a caller may yield between steps. Each step every live
 * beam proposes its continuations; the 2k best by total log-probability are walked in order
 * (ties: lower beam, then lower token id): an end token finishes a hypothesis, anything else
 * extends a live beam until k are live. It stops when k hypotheses have finished or at
 * maxNewTokens (live beams then count as finished). With k = 1 this is greedy decoding.
 */
export class BeamSearch {
  private live: { tokens: number[]; logProb: number }[] = [{ tokens: [], logProb: 0 }];
  private readonly finished: Hypothesis[] = [];
  private logits: Float32Array;
  private t = 0;
  private done: boolean;

  constructor(private readonly stepper: Stepper, first: Float32Array, private readonly o: BeamOptions) {
    this.logits = first;
    this.done = o.maxNewTokens === 0;  // then the one hypothesis is the empty live beam
  }

  /** Chooses one more token of every beam and feeds them; false once the search is over. */
  advance(): boolean {
    if (this.done) return false;
    const k = this.o.beams, V = this.stepper.vocabSize, finished = this.finished;
    const cands: { beam: number; token: number; logProb: number }[] = [];
    this.live.forEach((hyp, b) => {
      const row = this.logits.subarray(b * V, (b + 1) * V), lse = logSumExp(row);
      // Only the 2k best of each beam can be among the 2k best overall (selected, not sorted:
      // sorting the vocabulary for each of 64 beams took most of a step).
      for (const token of selectTop(row, 2 * k)) cands.push({ beam: b, token, logProb: hyp.logProb + (row[token] - lse) });
    });
    cands.sort((x, y) => y.logProb - x.logProb || x.beam - y.beam || x.token - y.token);
    const next: typeof this.live = [], order: number[] = [], tokens: number[] = [];
    for (const [rank, c] of cands.slice(0, 2 * k).entries()) {
      const seq = [...this.live[c.beam].tokens, c.token];
      if (this.ends(c.token)) {
        // An ending counts only when it is among the k best candidates (with k = 1: greedy's
        // choice); a lower-ranked one is a worse sequence than every live beam.
        if (rank < k && finished.length < k) this.finish(seq.slice(0, -1), c.logProb, true);
      } else if (next.length < k) {
        next.push({ tokens: seq, logProb: c.logProb });
        order.push(c.beam);
        tokens.push(c.token);
      }
    }
    this.live = next;
    if (finished.length >= k || ++this.t === this.o.maxNewTokens || next.length === 0) {
      this.done = true;
      return false;
    }
    this.stepper.reorder(order);
    this.logits = this.stepper.step(tokens, 1);
    return true;
  }

  private ends(token: number): boolean {
    const end = this.o.endTokenId;
    return typeof end === 'number' ? token === end : end.includes(token);
  }

  /** Steps taken: each chose one token of every beam. */
  get steps(): number {
    return this.t;
  }

  /** The hypotheses, best first: the finished ones, then (to make k, or when stopped early) the
   * best live beams as unfinished. */
  hypotheses(): Hypothesis[] {
    const out = [...this.finished];
    for (const h of this.live.slice(0, Math.max(0, this.o.beams - out.length))) out.push(this.scored(h.tokens, h.logProb, false));
    return out.sort((a, b) => b.score - a.score);
  }

  private finish(tokens: number[], logProb: number, ended: boolean): void {
    this.finished.push(this.scored(tokens, logProb, ended));
  }

  private scored(tokens: number[], logProb: number, ended: boolean): Hypothesis {
    return { tokens, logProb, score: lengthNormalized(logProb, tokens.length, ended, this.o.lengthPenalty ?? 1), finished: ended };
  }
}

/** A whole beam search at once (see BeamSearch). */
export function beamSearch(stepper: Stepper, first: Float32Array, o: BeamOptions): Hypothesis[] {
  const search = new BeamSearch(stepper, first, o);
  while (search.advance());
  return search.hypotheses();
}

/** Lets timers, events and AbortSignals run between tokens (setImmediate in Node, a message elsewhere). */
export function yieldToEventLoop(): Promise<void> {
  const g = globalThis as { setImmediate?: (f: () => void) => void };
  if (g.setImmediate) return new Promise((resolve) => g.setImmediate!(resolve));
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(null);
  });
}
