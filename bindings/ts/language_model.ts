// A GPT-2-style language model in WASM: loads config.json + model.safetensors + the BPE
// tokenizer, runs the forward pass, and returns logits, per-head attention and a layer's trace.
import { BpeTokenizer } from './bpe_tokenizer.js';
import type { TokenizerFiles } from './bpe_tokenizer.js';
import { AttentionError, throwIfError } from './errors.js';
import { isNode, readBytes } from './loader.js';
import { readMhaTrace } from './multi_head_attention.js';
import type { MultiHeadTrace } from './multi_head_attention.js';
import { parseSafetensors } from './safetensors.js';
import type { SafetensorsFile } from './safetensors.js';
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

/** Everything in memory: parsed config, safetensors bytes, tokenizer files. */
export interface ModelFiles {
  config: Gpt2Config;
  weights: ArrayBuffer | Uint8Array;
  tokenizer: TokenizerFiles | BpeTokenizer;
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

export interface Prediction { id: number; text: string; probability: number }

// The C++ GptTensor enum, in order; names as in Hugging Face GPT-2 checkpoints.
const GLOBAL_TENSORS = ['wte.weight', 'wpe.weight', 'ln_f.weight', 'ln_f.bias'];
const LAYER_TENSORS = ['ln_1.weight', 'ln_1.bias', 'attn.c_attn.weight', 'attn.c_attn.bias', 'attn.c_proj.weight',
  'attn.c_proj.bias', 'ln_2.weight', 'ln_2.bias', 'mlp.c_fc.weight', 'mlp.c_fc.bias', 'mlp.c_proj.weight', 'mlp.c_proj.bias'];

function expectedShape(name: string, c: Gpt2Config): number[] {
  const D = c.n_embd;
  const shapes: Record<string, number[]> = {
    'wte.weight': [c.vocab_size, D], 'wpe.weight': [c.n_positions, D], 'attn.c_attn.weight': [D, 3 * D],
    'attn.c_attn.bias': [3 * D], 'attn.c_proj.weight': [D, D], 'mlp.c_fc.weight': [D, 4 * D], 'mlp.c_fc.bias': [4 * D],
    'mlp.c_proj.weight': [4 * D, D],
  };
  return shapes[name] ?? [D];
}

function checkConfig(raw: unknown): Gpt2Config {
  if (typeof raw !== 'object' || raw === null) throw new AttentionError('config.json: not an object');
  const c = raw as Record<string, unknown>;
  const out: Record<string, number> = {};
  for (const key of ['vocab_size', 'n_embd', 'n_layer', 'n_head']) {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new AttentionError(`config.json: ${key} must be a positive integer, got ${JSON.stringify(v)}`);
    out[key] = v;
  }
  const positions = c.n_positions ?? c.n_ctx;
  if (typeof positions !== 'number' || !Number.isInteger(positions) || positions < 1)
    throw new AttentionError(`config.json: n_positions must be a positive integer, got ${JSON.stringify(positions)}`);
  const act = c.activation_function ?? 'gelu_new';
  if (act !== 'gelu_new' && act !== 'gelu_pytorch_tanh')
    throw new AttentionError(`config.json: activation_function "${String(act)}" is not supported (GPT-2 uses gelu_new)`);
  const eps = c.layer_norm_epsilon ?? 1e-5;
  if (typeof eps !== 'number' || !(eps > 0)) throw new AttentionError('config.json: layer_norm_epsilon must be a positive number');
  return { vocab_size: out.vocab_size, n_embd: out.n_embd, n_layer: out.n_layer, n_head: out.n_head, n_positions: positions, layer_norm_epsilon: eps };
}

/** Strips the optional "transformer." prefix of GPT2LMHeadModel checkpoints. */
function tensorLookup(file: SafetensorsFile) {
  return (name: string) => file.tensors.get(name) ?? file.tensors.get('transformer.' + name);
}

export class LanguageModel extends WasmObject<Gpt2Handle> {
  readonly config: Required<Omit<Gpt2Config, 'n_ctx' | 'activation_function' | 'bos_token_id'>>;
  readonly tokenizer: BpeTokenizer;
  /** config.json's bos_token_id, if any. */
  readonly bosTokenId: number | undefined;

  /** @internal use AttentionModule.loadModel */
  constructor(mod: WasmModule, files: ModelFiles) {
    const config = checkConfig(files.config);
    const tokenizer = files.tokenizer instanceof BpeTokenizer ? files.tokenizer : new BpeTokenizer(files.tokenizer);
    if (tokenizer.vocabSize > config.vocab_size)
      throw new AttentionError(`tokenizer has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${config.vocab_size}`);
    const file = parseSafetensors(files.weights);
    super(mod, new mod.Gpt2Handle(), 'LanguageModel');
    this.config = { ...config, layer_norm_epsilon: config.layer_norm_epsilon ?? 1e-5 };
    this.tokenizer = tokenizer;
    const bos = (files.config as Gpt2Config).bos_token_id;
    this.bosTokenId = Number.isInteger(bos) && bos! >= 0 && bos! < config.vocab_size ? bos : undefined;
    const handle = this.live();
    try {
      throwIfError(handle.configure(config.vocab_size, config.n_positions, config.n_embd, config.n_layer, config.n_head, this.config.layer_norm_epsilon), 'loadModel');
      const lookup = tensorLookup(file);
      const load = (id: number, layer: number, name: string, fullName: string) => {
        const entry = lookup(fullName);
        if (!entry) throw new AttentionError(`loadModel: missing tensor "${fullName}" (also tried "transformer.${fullName}")`);
        const want = expectedShape(name, config);
        if (entry.shape.length !== want.length || entry.shape.some((d, i) => d !== want[i]))
          throw new AttentionError(`loadModel: tensor "${fullName}" has shape [${entry.shape.join(', ')}] but config.json implies [${want.join(', ')}]`);
        const data = entry.toFloat32();
        const region = this.staging.plan(data.length * 4);
        try {
          this.staging.commit();
          this.staging.writeF32(region, data);
          throwIfError(handle.setTensor(id, layer, region.ptr, data.length), 'loadModel');
        } finally {
          this.staging.release();
        }
      };
      GLOBAL_TENSORS.forEach((name, id) => load(id, 0, name, name));
      for (let l = 0; l < config.n_layer; l++)
        LAYER_TENSORS.forEach((name, i) => load(GLOBAL_TENSORS.length + i, l, name, `h.${l}.${name}`));
      throwIfError(handle.finalize(), 'loadModel');
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
    const row = result.logits.subarray(position * V, (position + 1) * V);
    const probs = softmax(row);
    const order = Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a]).slice(0, k);
    return order.map((id) => ({ id, text: this.tokenizer.tokenText(id), probability: probs[id] }));
  }

  /** Mean next-token negative log-likelihood (nats) over the run's tokens, and its exp. */
  loss(result: RunResult): { loss: number; perplexity: number } {
    const V = this.config.vocab_size;
    let total = 0;
    for (let i = 0; i + 1 < result.tokens.length; i++) {
      const row = result.logits.subarray(i * V, (i + 1) * V);
      let max = -Infinity;
      for (const v of row) max = Math.max(max, v);
      let sum = 0;
      for (const v of row) sum += Math.exp(v - max);
      total += Math.log(sum) + max - row[result.tokens[i + 1]];
    }
    const loss = total / Math.max(1, result.tokens.length - 1);
    return { loss, perplexity: Math.exp(loss) };
  }
}

function softmax(row: Float32Array): Float64Array {
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  const out = new Float64Array(row.length);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += (out[i] = Math.exp(row[i] - max));
  for (let i = 0; i < row.length; i++) out[i] /= sum;
  return out;
}

/** A folder URL or path -> URL of a file in it. Node: plain strings are file paths. */
async function resolveIn(base: string | URL, file: string): Promise<URL> {
  let baseUrl: URL;
  if (base instanceof URL) baseUrl = base;
  else if (/^[a-z][a-z0-9+.-]*:/i.test(base)) baseUrl = new URL(base);
  else if (isNode) {
    const urlModule = 'node:url', pathModule = 'node:path';
    const [{ pathToFileURL }, { resolve }] = await Promise.all([import(urlModule), import(pathModule)]);
    baseUrl = pathToFileURL(resolve(base) + '/');
  } else baseUrl = new URL(base, (globalThis as { document?: { baseURI: string } }).document?.baseURI);
  if (!baseUrl.pathname.endsWith('/')) baseUrl = new URL(baseUrl.href + '/');
  return new URL(file, baseUrl);
}

const text = async (url: URL) => new TextDecoder().decode(await readBytes(url));

/** Fetches config.json, model.safetensors and vocab.json + merges.txt (or tokenizer.json) from a folder. */
export async function fetchModelFiles(folder: string | URL): Promise<ModelFiles> {
  const at = (f: string) => resolveIn(folder, f);
  const [config, weights] = await Promise.all([
    at('config.json').then(text).then((t) => JSON.parse(t) as Gpt2Config),
    at('model.safetensors').then(readBytes),
  ]);
  // vocab.json + merges.txt (GPT-2's own files); tokenizer.json only when those cannot be read.
  let files: [string, string] | null = null;
  try {
    files = await Promise.all([at('vocab.json').then(text), at('merges.txt').then(text)]);
  } catch { /* no GPT-2 tokenizer files: try tokenizer.json below */ }
  let tokenizer: TokenizerFiles | BpeTokenizer;
  if (files) {
    let vocab: Record<string, number>;
    try {
      vocab = JSON.parse(files[0]);
    } catch (e) {
      throw new AttentionError(`vocab.json is not valid JSON: ${(e as Error).message}`);
    }
    tokenizer = { vocab, merges: files[1] };
  } else {
    tokenizer = BpeTokenizer.fromTokenizerJson(JSON.parse(await at('tokenizer.json').then(text)));
  }
  return { config, weights, tokenizer };
}
