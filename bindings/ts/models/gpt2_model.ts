// GPT-2 in WASM: config.json + model.safetensors + the byte-level BPE tokenizer. run / predictNext /
// loss / generate are the decoder-only models' shared ones (decoder_model.ts).
import { BpeTokenizer } from '../tokenizers/bpe_tokenizer.js';
import { checkTiedHead, configEps, configInt, configTokenIds, heldDtype, loadCheckpoint } from '../loading/checkpoint.js';
import type { WeightTypes } from '../loading/checkpoint.js';
import type { DtypeName } from '../runtime/wasm_module.js';
import { DecoderModel, vocabTokenId } from './decoder_model.js';
import { readGenerationConfig } from './decoding.js';
import type { ModelLoadOptions } from '../loading/weight_dtype.js';
import { AttentionError, throwIfError } from '../errors.js';
import type { FilesReader } from '../loading/model_files.js';
import type { SafetensorsWeights } from '../loading/safetensors.js';
import type { TokenizerFiles } from '../tokenizers/bpe_tokenizer.js';
import { readMhaTrace } from '../attention/multi_head_attention.js';
import { readBlockTrace } from '../attention/block_trace.js';
import type { MultiHeadTrace } from '../attention/multi_head_attention.js';
import { parseWeights } from '../loading/safetensors.js';
import type { Gpt2Handle, WasmModule } from '../runtime/wasm_module.js';

export type { GenerateOptions, GenerateResult, RunOptions, RunResult, TokenEvent } from './decoder_model.js';

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

/** A GPT-2 checkpoint in memory: parsed config.json, safetensors bytes, tokenizer files. */
export interface Gpt2Files {
  config: Record<string, unknown>;
  weights: SafetensorsWeights;
  tokenizer: TokenizerFiles | BpeTokenizer;
  /** generation_config.json, parsed (its sampling defaults and end ids: see generationDefaults). */
  generation?: object;
}

class Failed { constructor(readonly failed: unknown) {} }

/** GPT-2's files: vocab.json + merges.txt (its own files); tokenizer.json only when those are
 * missing; generation_config.json when there is one. */
export const readGpt2Files: FilesReader = async (files, config, weights) => {
  // (A file that failed is marked by its own class: vocab.json may hold any JSON, "x" or null.)
  const failed = (e: unknown) => new Failed(e);
  const [weightBytes, vocab, merges, generationJson] = await Promise.all([weights, files.json('vocab.json').catch(failed), files.text('merges.txt').catch(failed),
    files.optional(files.json('generation_config.json'))]);
  const generation = generationJson === undefined ? {} : { generation: generationJson as object };
  for (const part of [vocab, merges]) if (part instanceof Failed && !files.isMissing(part.failed)) throw part.failed;
  if (typeof merges === 'string' && !(vocab instanceof Failed)) return { config, weights: weightBytes, tokenizer: { vocab: vocab as Record<string, number>, merges }, ...generation };
  const tokenizerJson = await files.json('tokenizer.json').catch((e) => {
    if (!files.isMissing(e)) throw e;
    // Name the file that is missing: merges.txt beside a vocab.json, else the tokenizer as a whole.
    if (!(vocab instanceof Failed)) throw files.missing((merges as Failed).failed, "GPT-2's byte-level BPE needs merges.txt beside vocab.json, or a tokenizer.json");
    throw files.missing(e, 'a GPT-2 needs vocab.json + merges.txt or tokenizer.json; none was found');
  });
  return { config, weights: weightBytes, tokenizer: BpeTokenizer.fromTokenizerJson(tokenizerJson), ...generation };
};

/** config.json, checked (a named error for what the core does not run). */
export function readGpt2Config(c: Record<string, unknown>): Gpt2Config {
  const out = {
    vocab_size: configInt(c, 'vocab_size'), n_embd: configInt(c, 'n_embd'), n_layer: configInt(c, 'n_layer'),
    n_head: configInt(c, 'n_head'), n_positions: configInt(c, 'n_positions', c.n_ctx),
    layer_norm_epsilon: configEps(c, 'layer_norm_epsilon', 1e-5),
  };
  configTokenIds(c, 'bos_token_id', out.vocab_size);
  configTokenIds(c, 'eos_token_id', out.vocab_size);
  const act = c.activation_function ?? 'gelu_new';
  if (act !== 'gelu_new' && act !== 'gelu_pytorch_tanh')
    throw new AttentionError(`config.json: activation_function "${String(act)}" is not supported (GPT-2 uses gelu_new)`);
  return out;
}

/** GPT2LMHeadModel checkpoints prefix every name with "transformer.". */
const gpt2Names = (name: string) => [name, 'transformer.' + name];

/** A GPT-2 (decoder-only) language model. */
export class Gpt2Model extends DecoderModel<BpeTokenizer, Gpt2Handle> {
  /** Each weight tensor's type as the model holds it, by its checkpoint name ('F32', 'F16', 'Q8_0',
   * 'Q4_K', ...): the dtype asked for, or F16 where a matrix's width is not whole 32-value blocks. */
  weightTypes: WeightTypes = {};

  /** The type most of its tensors are held in ('F16', 'Q8_0', 'Q4_K', ...; its F32 norms and biases
   * aside): the precision it was loaded at, as weightTypes names it. */
  get dtype(): DtypeName {
    return heldDtype(this.weightTypes);
  }
  readonly type = 'gpt2' as const;

  /** Saving is the Llama family's (LlamaModel.save(): a GGUF file); a GPT-2 model is refused with
   * an AttentionError of code 'unsupported'. */
  save(): never {
    throw new AttentionError('save: GPT-2 models cannot be saved yet (only the Llama family writes GGUF files); load this one from its files', 'unsupported');
  }
  readonly config: Required<Omit<Gpt2Config, 'n_ctx' | 'activation_function' | 'bos_token_id'>>;

  /** @internal use AttentionModule.loadModel */
  constructor(mod: WasmModule, files: Gpt2Files, options: ModelLoadOptions = {}) {
    const config = readGpt2Config(files.config);
    const tokenizer = files.tokenizer instanceof BpeTokenizer ? files.tokenizer : new BpeTokenizer(files.tokenizer);
    if (tokenizer.vocabSize > config.vocab_size)
      throw new AttentionError(`tokenizer has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${config.vocab_size}`);
    const file = parseWeights(files.weights);
    const V = config.vocab_size;
    checkTiedHead(file, ['lm_head.weight'], [V, config.n_embd]);  // (GPT-2's head is always the table)
    super(mod, new mod.Gpt2Handle(), 'Gpt2Model', tokenizer, { vocab: V, layers: config.n_layer, heads: config.n_head, context: config.n_positions },
      vocabTokenId(files.config.bos_token_id, V), vocabTokenId(files.config.eos_token_id, V), {}, readGenerationConfig(files.generation, V));
    this.config = { ...config, layer_norm_epsilon: config.layer_norm_epsilon ?? 1e-5 };
    const handle = this.live();
    try {
      throwIfError(handle.configure(this.config), 'loadModel');
      this.weightTypes = loadCheckpoint(mod, handle, this.staging, file, gpt2Names, options.dtype);
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  protected readTrace(handle: Gpt2Handle, n: number): MultiHeadTrace {
    const H = this.config.n_head, dK = this.config.n_embd / H;
    const trace = readMhaTrace(this.mod, handle, { numHeads: H, dK, dV: dK, dModel: this.config.n_embd }, 1, n, n);
    return { ...trace, block: readBlockTrace(this.mod, handle, 'pre-norm', n, this.config.n_embd) };
  }
}
