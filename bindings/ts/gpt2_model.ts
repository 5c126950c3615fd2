// GPT-2 in WASM: config.json + model.safetensors + the byte-level BPE tokenizer; runs the forward
// pass and returns logits, per-head attention and a layer's trace.
import { BpeTokenizer } from './bpe_tokenizer.js';
import { configEps, configInt, loadCheckpoint } from './checkpoint.js';
import { AttentionError, throwIfError } from './errors.js';
import type { Gpt2Files } from './model_files.js';
import { readMhaTrace } from './multi_head_attention.js';
import type { MultiHeadTrace } from './multi_head_attention.js';
import { crossEntropy, topK } from './predictions.js';
import type { Prediction } from './predictions.js';
import { parseSafetensors } from './safetensors.js';
import type { Gpt2Handle, WasmModule } from './wasm_module.js';
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
}

export interface RunResult {
  tokens: number[];
  /** How each token reads on its own (" the", ","), for display. */
  tokenTexts: string[];
  /** n x vocab_size: the next-token logits after each position. */
  logits: Float32Array;
  attention?: Float32Array;
  trace?: MultiHeadTrace;
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
export class Gpt2Model extends WasmObject<Gpt2Handle> {
  readonly type = 'gpt2' as const;
  readonly config: Required<Omit<Gpt2Config, 'n_ctx' | 'activation_function' | 'bos_token_id'>>;
  readonly tokenizer: BpeTokenizer;
  /** config.json's bos_token_id, if any. */
  readonly bosTokenId: number | undefined;

  /** @internal use AttentionModule.loadModel */
  constructor(mod: WasmModule, files: Gpt2Files) {
    const config = checkConfig(files.config);
    const tokenizer = files.tokenizer instanceof BpeTokenizer ? files.tokenizer : new BpeTokenizer(files.tokenizer);
    if (tokenizer.vocabSize > config.vocab_size)
      throw new AttentionError(`tokenizer has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${config.vocab_size}`);
    const file = parseSafetensors(files.weights);
    super(mod, new mod.Gpt2Handle(), 'Gpt2Model');
    this.config = { ...config, layer_norm_epsilon: config.layer_norm_epsilon ?? 1e-5 };
    this.tokenizer = tokenizer;
    const bos = files.config.bos_token_id as number | undefined;
    this.bosTokenId = Number.isInteger(bos) && bos! >= 0 && bos! < config.vocab_size ? bos : undefined;
    const handle = this.live();
    try {
      throwIfError(handle.configure(config.vocab_size, config.n_positions, config.n_embd, config.n_layer, config.n_head, this.config.layer_norm_epsilon), 'loadModel');
      loadCheckpoint(handle, this.staging, file, gpt2Names);
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
    const trace = options.traceLayer;
    if (trace !== undefined && (!Number.isInteger(trace) || trace < 0 || trace >= L))
      throw new AttentionError(`run: traceLayer must be an integer in [0, ${L - 1}], got ${trace}`);
    const st = this.staging;
    const rt = st.plan(n * 4), rl = st.plan(n * V * 4), ra = st.plan(options.attention ? L * H * n * n * 4 : 0);
    try {
      st.commit();
      st.writeI32(rt, tokens);
      throwIfError(handle.forward(rt.ptr, n, rl.ptr, ra.ptr, trace ?? -1), 'run');
      const result: RunResult = {
        tokens, tokenTexts: tokens.map((t) => this.tokenizer.tokenText(t)), logits: st.readF32(rl, n * V),
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
    const V = this.config.vocab_size;
    return topK(result.logits.subarray(position * V, (position + 1) * V), k, (id) => this.tokenizer.tokenText(id));
  }

  /** Mean next-token negative log-likelihood (nats) over the run's tokens, and its exp. */
  loss(result: RunResult): { loss: number; perplexity: number } {
    const V = this.config.vocab_size;
    let total = 0;
    for (let i = 0; i + 1 < result.tokens.length; i++) total += crossEntropy(result.logits.subarray(i * V, (i + 1) * V), result.tokens[i + 1]);
    const loss = total / Math.max(1, result.tokens.length - 1);
    return { loss, perplexity: Math.exp(loss) };
  }
}
