// Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): how much
// of each input token reaches each position after l layers, when the residual connection is counted
// as half of every layer's mixing. Pure arithmetic on a run's attention: no WebAssembly needed, so
// the analysis entry (a page's main thread) carries it too.
import { AttentionError } from '../errors.js';
import { show } from '../validate.js';

export interface RolloutOptions {
  /** Query heads per layer (the config's n_head / num_attention_heads / encoder_attention_heads).
   * Either this or `layers` is needed: a run's attention is layers x heads x n x n. */
  heads?: number;
  /** Layers in the run's attention (the other way to split it). */
  layers?: number;
  /** A BART run (Seq2SeqRunResult): 'encoder' (default) rolls out the encoder's self-attention,
   * 'decoder' the decoder's masked self-attention. Ignored for other runs. */
  part?: 'encoder' | 'decoder';
}

/** What rollout reads of a run: its attention (L x H x n x n) and n (from its tokens). */
interface RolloutInput { attention: Float32Array; n: number }

/**
 * The attention rollout of a run made with `{ attention: true }`: L x n x n (row i of layer l:
 * how position i's state after layer l + 1 mixes the input tokens; each row sums to 1).
 * R_1 = Â_1, R_l = Â_l R_(l-1), with Â_l = 0.5 x (layer l's attention averaged over its query
 * heads) + 0.5 x I, each row divided by its sum. Accumulated in float64, returned as float32.
 */
export function attentionRollout(run: unknown, options: RolloutOptions = {}): Float32Array {
  const { attention, n } = rolloutInput(run, options.part);
  const L = splitLayers(attention.length, n, options);
  const H = attention.length / (L * n * n);
  const out = new Float32Array(L * n * n);
  let previous: Float64Array | null = null;
  for (let l = 0; l < L; l++) {
    const a = mixedLayer(attention, l, H, n);
    const r: Float64Array = previous ? multiply(a, previous, n) : a;
    for (let i = 0; i < n * n; i++) out[l * n * n + i] = r[i];
    previous = r;
  }
  return out;
}

/** Â_l: 0.5 x mean over heads + 0.5 x I, rows normalised (n x n, float64). */
function mixedLayer(attention: Float32Array, l: number, H: number, n: number): Float64Array {
  const a = new Float64Array(n * n), plane = n * n;
  for (let h = 0; h < H; h++) {
    const base = (l * H + h) * plane;
    for (let i = 0; i < plane; i++) a[i] += attention[base + i];
  }
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < n; j++) {
      const v = 0.5 * (a[i * n + j] / H) + (i === j ? 0.5 : 0);
      a[i * n + j] = v;
      sum += v;
    }
    for (let j = 0; j < n; j++) a[i * n + j] /= sum;
  }
  return a;
}

/** a b for n x n matrices (row-major, float64). */
function multiply(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const c = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let k = 0; k < n; k++) {
      const aik = a[i * n + k];
      if (aik === 0) continue;  // causal rows are half zeros
      for (let j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
    }
  return c;
}

/** The attention and n of a decoder / BERT run or one part of a BART run, checked. */
function rolloutInput(run: unknown, part: unknown): RolloutInput {
  if (typeof run !== 'object' || run === null)
    throw new AttentionError(`attentionRollout: run must be what a model's run() returned, got ${show(run)}`);
  const r = run as Record<string, unknown>;
  if (part !== undefined && part !== 'encoder' && part !== 'decoder')
    throw new AttentionError(`attentionRollout: part must be 'encoder' or 'decoder', got ${show(part)}`);
  let attention: unknown, n: number;
  if ('encoderAttention' in r) {  // BART: S source tokens, T decoder rows
    const decoder = part === 'decoder';
    attention = decoder ? r.selfAttention : r.encoderAttention;
    const source = r.sourceTokens;
    if (!Array.isArray(source)) throw new AttentionError('attentionRollout: run.sourceTokens must be an array (what BartModel.run() returned)');
    n = decoder ? bartDecoderRows(r, source.length) : source.length;
  } else {
    attention = r.attention;
    if (!Array.isArray(r.tokens)) throw new AttentionError('attentionRollout: run.tokens must be an array (what a model\'s run() returned)');
    n = r.tokens.length;
  }
  if (!(attention instanceof Float32Array))
    throw new AttentionError('attentionRollout: the run has no attention: call run() with { attention: true }');
  if (n < 1) throw new AttentionError('attentionRollout: the run has no tokens');
  return { attention, n };
}

/** T of a BART run: its logits' rows (T x vocab), from the cross-attention's size (T x S per head and layer). */
function bartDecoderRows(r: Record<string, unknown>, S: number): number {
  const self = r.selfAttention, cross = r.crossAttention;
  if (!(self instanceof Float32Array) || !(cross instanceof Float32Array) || S < 1)
    throw new AttentionError('attentionRollout: the BART run has no decoder attention');
  // self: L H T T, cross: L H T S, so self / cross = T / S.
  const T = Math.round((self.length / cross.length) * S);
  if (T < 1 || !Number.isInteger(self.length / (T * T)))
    throw new AttentionError('attentionRollout: the BART run\'s decoder attention does not fit its sizes');
  return T;
}

/** L from the options: `layers` given, or the attention's size over heads x n x n. */
function splitLayers(size: number, n: number, options: RolloutOptions): number {
  const { heads, layers } = options;
  const count = (v: unknown, name: string) => {
    if (!Number.isInteger(v) || (v as number) < 1)
      throw new AttentionError(`attentionRollout: ${name} must be an integer >= 1, got ${show(v)}`);
    return v as number;
  };
  if (heads === undefined && layers === undefined)
    throw new AttentionError('attentionRollout: pass { heads } (the model\'s heads per layer) or { layers }: the attention is layers x heads x n x n');
  const per = n * n;
  const L = layers !== undefined ? count(layers, 'layers') : size / (count(heads, 'heads') * per);
  const H = size / (L * per);
  if (!Number.isInteger(L) || !Number.isInteger(H) || L < 1 || H < 1 || (heads !== undefined && H !== heads))
    throw new AttentionError(`attentionRollout: the run's attention (${size} values) is not ${layers ?? 'layers'} x ${heads ?? 'heads'} x ${n} x ${n}`);
  return L;
}
