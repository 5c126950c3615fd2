// The Llama family in WASM (model_type llama, qwen2, qwen3, mistral, phi3, smollm3, gemma3_text and
// gemma3's text part; SmolLM2 and TinyLlama are llama):
// config.json + model.safetensors under Hugging Face's names, unchanged, + tokenizer.json. Rotary
// positions, grouped-query attention (attention is returned per query head; kvHeadOf says which
// K/V head each reads), RMSNorm, SwiGLU. run / predictNext / loss / generate are the decoder-only
// models' shared ones (decoder_model.ts).
import { checkTiedHead, checkpointTensors, configEps, configInt, configTokenIds, isStreamed, heldDtype, loadCheckpoint, streamCheckpoint } from '../loading/checkpoint.js';
import type { WeightTypes } from '../loading/checkpoint.js';
import type { DtypeName } from '../runtime/wasm_module.js';
import type { StreamedTensors } from '../loading/checkpoint.js';
import { DecoderModel, vocabTokenId } from './decoder_model.js';
import { readGenerationConfig } from './decoding.js';
import type { ChatDefaults, RunOptions, RunResult, RunResultFor } from './decoder_model.js';
import { readChatTemplates } from './chat.js';
import { AttentionError, throwIfError } from '../errors.js';
import { HfTokenizer } from '../tokenizers/hf_tokenizer.js';
import { readMhaTrace } from '../attention/multi_head_attention.js';
import { readTrace } from '../runtime/heap.js';
import { readBlockTrace } from '../attention/block_trace.js';
import type { MultiHeadTrace } from '../attention/multi_head_attention.js';
import { show } from '../validate.js';
import type { LlamaHandle, WasmModule } from '../runtime/wasm_module.js';
import type { ModelLoadOptions } from '../loading/weight_dtype.js';
import type { FilesReader } from '../loading/model_files.js';
import type { LlamaConfig, LlamaFiles, LlamaModelType, RopeScaling } from './llama_types.js';
export type { LlamaConfig, LlamaFiles, LlamaModelType, RopeScaling } from './llama_types.js';
import { joinParts, partsStream } from '../loading/gguf_writer.js';
import { planLlamaGguf } from './llama_gguf_save.js';
import type { LlamaSaveSource } from './llama_gguf_save.js';


/** The Llama family's files: tokenizer.json, with the BOS/EOS (and chat_template) of
 * tokenizer_config.json and generation_config.json, and chat_template.jinja when there is one. */
export const readLlamaFiles: FilesReader = async (files, config, weights) => {
  const [weightBytes, tokenizer, tokenizerConfig, generation, chatTemplate] = await Promise.all([
    weights, files.json('tokenizer.json'), files.optional(files.json('tokenizer_config.json')), files.optional(files.json('generation_config.json')),
    files.optional(files.text('chat_template.jinja'))]);
  return { config, weights: weightBytes, tokenizer: { tokenizer, config: tokenizerConfig, generation }, ...(chatTemplate === undefined ? {} : { chatTemplate }) };
};

/** Gemma3TextConfig's defaults, for keys a config.json leaves out. */
const GEMMA3_DEFAULTS: Record<string, unknown> = {
  vocab_size: 262208, hidden_size: 2304, intermediate_size: 9216, num_hidden_layers: 26, num_attention_heads: 8,
  num_key_value_heads: 4, head_dim: 256, hidden_activation: 'gelu_pytorch_tanh', max_position_embeddings: 131072,
  rms_norm_eps: 1e-6, tie_word_embeddings: true, rope_theta: 1e6, rope_local_base_freq: 1e4,
  query_pre_attn_scalar: 256, sliding_window: 4096, sliding_window_pattern: 6,
};

const isGemma = (type: LlamaModelType) => type === 'gemma3_text' || type === 'gemma3';

/** The text model's config: gemma3's text_config (its language model), with the top level's
 * token ids where the text part has none; Gemma3TextConfig's defaults under it. Others as they are. */
export function textConfig(c: Record<string, unknown>): Record<string, unknown> {
  if (c.model_type === 'gemma3_text') return { ...GEMMA3_DEFAULTS, ...c };
  if (c.model_type !== 'gemma3') return c;
  const text = c.text_config ?? {};
  if (typeof text !== 'object' || text === null || Array.isArray(text))
    throw new AttentionError(`config.json: text_config must be an object, got ${show(text)}`);
  const ids = Object.fromEntries(['bos_token_id', 'eos_token_id', 'pad_token_id'].filter((k) => k in c).map((k) => [k, c[k]]));
  return { ...GEMMA3_DEFAULTS, ...ids, ...text, model_type: 'gemma3' };
}

const SCALINGS = ['linear', 'llama3', 'longrope'];

/** A number field of config.json (or its default), or a named error. */
function configNumber(c: Record<string, unknown>, key: string, fallback: number, ok: (v: number) => boolean, expected: string): number {
  const v = c[key] ?? fallback;
  if (typeof v !== 'number' || !ok(v)) throw new AttentionError(`config.json: ${key} must be ${expected}, got ${show(v)}`);
  return v;
}

/** longrope's factors (rotaryDim / 2 positive numbers each) and attention factor, as HF's
 * _compute_longrope_parameters reads them: the original context from config.json's
 * original_max_position_embeddings (Phi-3 keeps it there, and then the factor is
 * max_position_embeddings over it), else rope_scaling's; attention_factor, when not given,
 * sqrt(1 + ln(factor) / ln(original)) past 1. */
function readLongrope(c: Record<string, unknown>, r: Record<string, unknown>, rotaryDim: number): RopeScaling {
  const factors = (key: string) => {
    const v = r[key];
    if (!Array.isArray(v) || v.length !== rotaryDim / 2 || !v.every((x) => typeof x === 'number' && x > 0 && Number.isFinite(x)))
      throw new AttentionError(`config.json: rope_scaling ${key} must be ${rotaryDim / 2} positive numbers (half the rotated head), got ${show(v)}`);
    return v as number[];
  };
  const positiveInt = (v: number) => Number.isInteger(v) && v >= 1;
  const top = c.original_max_position_embeddings !== undefined;
  const original = top ? configNumber(c, 'original_max_position_embeddings', 0, positiveInt, 'a positive integer')
    : configNumber(r, 'original_max_position_embeddings', c.max_position_embeddings as number, positiveInt, 'a positive integer (rope_scaling)');
  const factor = top ? (c.max_position_embeddings as number) / original
    : configNumber(r, 'factor', 1, (v) => v > 0 && Number.isFinite(v), 'a positive number (rope_scaling)');
  const given = r.attention_factor;
  const attentionFactor = given !== undefined && given !== null
    ? configNumber(r, 'attention_factor', 1, (v) => v > 0 && Number.isFinite(v), 'a positive number (rope_scaling)')
    : factor <= 1 ? 1 : Math.sqrt(1 + Math.log(factor) / Math.log(original));
  return { type: 'longrope', factor: 1, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: original,
    shortFactor: factors('short_factor'), longFactor: factors('long_factor'), attentionFactor };
}

function readRopeScaling(c: Record<string, unknown>, rotaryDim: number): RopeScaling {
  const none: RopeScaling = { type: '', factor: 1, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192,
    shortFactor: [], longFactor: [], attentionFactor: 1 };
  const s = c.rope_scaling;
  if (s === undefined || s === null) return none;
  if (typeof s !== 'object' || Array.isArray(s)) throw new AttentionError(`config.json: rope_scaling must be an object or null, got ${show(s)}`);
  const r = s as Record<string, unknown>;
  const type = r.rope_type ?? r.type;
  if (type === 'default') return none;
  if (typeof type !== 'string' || !SCALINGS.includes(type))
    throw new AttentionError(`config.json: rope_scaling type ${show(type)} is not supported (supported: ${SCALINGS.join(', ')})`);
  if (type === 'longrope') return readLongrope(c, r, rotaryDim);
  const positive = (v: number) => v > 0 && Number.isFinite(v);
  // transformers requires factor for both types and llama3's three fields besides (no default:
  // a file without them is not the model its name says).
  const required = type === 'llama3' ? ['factor', 'low_freq_factor', 'high_freq_factor', 'original_max_position_embeddings'] : ['factor'];
  const missing = required.filter((k) => r[k] === undefined || r[k] === null);
  if (missing.length) throw new AttentionError(`config.json: rope_scaling of type ${show(type)} needs ${missing.join(', ')} (got ${show(JSON.stringify(r))})`);
  const out: RopeScaling = { ...none,
    type: type as RopeScaling['type'],
    factor: configNumber(r, 'factor', 1, (v) => v >= 1 && v <= 1e6, 'a number from 1 to 1e6 (rope_scaling)'),
    lowFreqFactor: configNumber(r, 'low_freq_factor', 1, positive, 'a positive number (rope_scaling)'),
    highFreqFactor: configNumber(r, 'high_freq_factor', 4, positive, 'a positive number (rope_scaling)'),
    originalMaxPositionEmbeddings: configNumber(r, 'original_max_position_embeddings', 8192, (v) => Number.isInteger(v) && v >= 1 && v <= 1 << 20, 'an integer from 1 to 1048576 (rope_scaling)'),
  };
  // (llama3 scales wavelengths between the two by (f - low) / (high - low))
  if (type === 'llama3' && !(out.lowFreqFactor < out.highFreqFactor))
    throw new AttentionError(`config.json: rope_scaling low_freq_factor (${out.lowFreqFactor}) must be below high_freq_factor (${out.highFreqFactor})`);
  return out;
}

/** The sliding window every layer attends within (Mistral), 0 for none. Qwen2's, on only the
 * layers from max_window_layers on, is refused. */
function readSlidingWindow(c: Record<string, unknown>, type: LlamaModelType): number {
  if (type !== 'mistral' && type !== 'llama' && c.use_sliding_window === true)
    throw new AttentionError(`config.json: use_sliding_window true is not supported for ${type} (a window on some layers only)`);
  if (type !== 'mistral' && type !== 'phi3' && !isGemma(type)) return 0;
  const w = c.sliding_window;
  if (w === undefined || w === null) return 0;
  // (bounded as the core's positions are: a larger window than any context is none, but must not wrap in int32)
  if (!Number.isInteger(w) || (w as number) < 1 || (w as number) > 1 << 20)
    throw new AttentionError(`config.json: sliding_window must be a positive integer up to 1048576 or null, got ${show(w)}`);
  return w as number;
}

/** SmolLM3's layers that rotate Q and K: no_rope_layers (1 = rotates), else every layer but each
 * no_rope_layer_interval-th (transformers' default); every layer for the other types. */
function readRopeLayers(c: Record<string, unknown>, type: LlamaModelType, layers: number): boolean[] {
  if (type !== 'smollm3') return Array(layers).fill(true);
  const list = c.no_rope_layers;
  if (Array.isArray(list) && list.length > 0) {
    if (list.length !== layers || !list.every((v) => v === 0 || v === 1))
      throw new AttentionError(`config.json: no_rope_layers must be ${layers} values of 0 or 1 (one per layer), got ${show(list)}`);
    return list.map((v) => v === 1);
  }
  const interval = configInt(c, 'no_rope_layer_interval', 4);
  return Array.from({ length: layers }, (_, l) => (l + 1) % interval !== 0);
}

/** Gemma 3's windowed layers: layer_types ('sliding_attention' / 'full_attention'), else every
 * layer but each sliding_window_pattern-th (Gemma3TextConfig's rule); true for every layer elsewhere. */
function readWindowLayers(c: Record<string, unknown>, type: LlamaModelType, layers: number): boolean[] {
  if (!isGemma(type)) return Array(layers).fill(true);
  const list = c.layer_types;
  if (list !== undefined && list !== null) {
    if (!Array.isArray(list) || list.length !== layers || !list.every((v) => v === 'sliding_attention' || v === 'full_attention'))
      throw new AttentionError(`config.json: layer_types must be ${layers} values of "sliding_attention" or "full_attention" (one per layer), got ${show(list)}`);
    return list.map((v) => v === 'sliding_attention');
  }
  const pattern = configInt(c, 'sliding_window_pattern', 6);
  return Array.from({ length: layers }, (_, l) => (l + 1) % pattern !== 0);
}

/** The rotated values of each head: head_dim x partial_rotary_factor (Phi-3's family only), even. */
function readRotaryDim(c: Record<string, unknown>, type: LlamaModelType, headDim: number): number {
  const partial = c.partial_rotary_factor ?? 1;
  if (partial === 1) return headDim;
  if (type !== 'phi3') throw new AttentionError(`config.json: partial_rotary_factor ${show(partial)} is not supported for ${type} (rotary on the whole head only)`);
  const dim = typeof partial === 'number' ? Math.floor(headDim * partial) : NaN;  // HF: int(head_dim * factor)
  if (!(dim >= 2 && dim % 2 === 0 && dim <= headDim))
    throw new AttentionError(`config.json: partial_rotary_factor must rotate an even number of a head's ${headDim} values, got ${show(partial)}`);
  return dim;
}

/** config.json of a Llama-family model, checked; variants the core does not run are refused by
 * name here, before any weights are read. */
export function readLlamaConfig(c: Record<string, unknown>): LlamaConfig {
  // config.json is data from JSON.parse; a hand-made one whose field throws when read is named.
  try {
    return readFields(c);
  } catch (e) {
    if (e instanceof AttentionError) throw e;
    throw new AttentionError(`config.json: a field could not be read (${show((e as Error)?.message ?? e)})`);
  }
}

function readFields(config: Record<string, unknown>): LlamaConfig {
  const c = textConfig(config);
  const type = c.model_type as LlamaModelType, gemma = isGemma(type);
  // Gemma names its activation hidden_activation; the tanh GELU there, silu elsewhere.
  const [actKey, expected] = gemma ? ['hidden_activation', 'gelu_pytorch_tanh'] : ['hidden_act', 'silu'];
  const act = c[actKey] ?? expected;
  if (act !== expected) throw new AttentionError(`config.json: ${actKey} ${show(act)} is not supported (${type} uses ${expected})`);
  if (c.mlp_bias === true) throw new AttentionError('config.json: mlp_bias true is not supported');
  if (gemma && c.use_bidirectional_attention === true)
    throw new AttentionError('config.json: use_bidirectional_attention true (an embedding model) is not supported');
  const heads = configInt(c, 'num_attention_heads');
  const attentionBias = type === 'qwen2' ? true : c.attention_bias ?? false;
  const layers = configInt(c, 'num_hidden_layers');
  if (typeof attentionBias !== 'boolean') throw new AttentionError(`config.json: attention_bias must be true or false, got ${show(attentionBias)}`);
  const tie = c.tie_word_embeddings ?? false;
  if (typeof tie !== 'boolean') throw new AttentionError(`config.json: tie_word_embeddings must be true or false, got ${show(tie)}`);
  const hidden = configInt(c, 'hidden_size'), kvHeads = configInt(c, 'num_key_value_heads', heads), vocab = configInt(c, 'vocab_size');
  configTokenIds(c, 'bos_token_id', vocab);
  configTokenIds(c, 'eos_token_id', vocab, true);
  if (heads % kvHeads !== 0)
    throw new AttentionError(`config.json: num_attention_heads (${heads}) is not a multiple of num_key_value_heads (${kvHeads})`);
  const headDim = configInt(c, 'head_dim', hidden / heads), rotaryDim = readRotaryDim(c, type, headDim);
  const above1 = (v: number) => v > 1 && Number.isFinite(v);
  const softcap = c.final_logit_softcapping ?? 0;  // (HF's Gemma 3 reads no attn_logit_softcapping: ignored as there)
  if (typeof softcap !== 'number' || !(softcap >= 0) || !Number.isFinite(softcap))
    throw new AttentionError(`config.json: final_logit_softcapping must be a positive number or null, got ${show(softcap)}`);
  return {
    model_type: type, vocab_size: vocab, max_position_embeddings: configInt(c, 'max_position_embeddings'),
    hidden_size: hidden, intermediate_size: configInt(c, 'intermediate_size'), num_hidden_layers: layers,
    num_attention_heads: heads, num_key_value_heads: kvHeads,
    head_dim: headDim, rms_norm_eps: configEps(c, 'rms_norm_eps', 1e-6),
    // (real ones reach 1e6-4e9; the core turns it into float32 frequencies)
    rope_theta: configNumber(c, 'rope_theta', 10000, (v) => v > 1 && v <= 1e12, 'a number above 1 and at most 1e12'),
    rope_scaling: readRopeScaling(c, rotaryDim), attention_bias: attentionBias, tie_word_embeddings: tie,
    sliding_window: readSlidingWindow(c, type),
    qk_norm: type === 'qwen3' || gemma,
    rope_layers: readRopeLayers(c, type, layers),
    fused_projections: type === 'phi3',
    rotary_dim: rotaryDim,
    window_layers: readWindowLayers(c, type, layers),
    rope_local_theta: gemma ? configNumber(c, 'rope_local_base_freq', 1e4, above1, 'a number above 1') : 0,
    attention_scale: gemma ? configNumber(c, 'query_pre_attn_scalar', 256, (v) => v > 0 && Number.isFinite(v), 'a positive number') ** -0.5 : 0,
    final_logit_softcapping: softcap,
    unit_offset_norms: gemma, sandwich_norms: gemma, scale_embeddings: gemma, gelu_mlp: gemma,
  };
}

/** Where a tensor is stored: under its own name, or in a gemma3 (image and text) checkpoint under
 * its language model's (transformers' model.language_model.X, or language_model.model.X and
 * language_model.lm_head as earlier versions saved it); the vision tower's tensors are not read. */
function checkpointNames(type: LlamaModelType): (name: string) => string[] {
  if (type !== 'gemma3') return (name) => [name];
  return (name) => (name.startsWith('model.')
    ? [name, `model.language_model.${name.slice(6)}`, `language_model.${name}`]
    : [name, `language_model.${name}`]);
}

/** The model's end-of-text token: config.json's eos_token_id (the first, when a list), else the
 * tokenizer's. */
function eosOf(config: Record<string, unknown>, tokenizer: HfTokenizer, vocab: number): number | undefined {
  const eos = Array.isArray(config.eos_token_id) ? config.eos_token_id[0] : config.eos_token_id;
  return vocabTokenId(eos, vocab) ?? vocabTokenId(tokenizer.eosIds[0], vocab);
}

/** tokenizer_config.json's bos_token / eos_token as text ("<s>" or { content: "<s>" }). */
function configTokenText(config: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = config?.[key];
  const content = typeof v === 'object' && v !== null ? (v as Record<string, unknown>).content : v;
  return typeof content === 'string' ? content : undefined;
}

/** What chat() needs of the files: the template (chat_template.jinja or GGUF's, else
 * tokenizer_config.json's), the BOS / EOS texts the template reads, and every end-of-turn id
 * (config.json's eos_token_id list and the tokenizer's: generation_config.json's list, or a
 * GGUF file's EOS / EOT / EOM). */
function chatDefaults(files: LlamaFiles, tokenizer: HfTokenizer, vocab: number): ChatDefaults {
  const tokenizerConfig = files.tokenizer instanceof HfTokenizer ? undefined : files.tokenizer.config as Record<string, unknown> | undefined;
  const templates = files.chatTemplate !== undefined ? readChatTemplates(files.chatTemplate, 'chat_template.jinja')
    : readChatTemplates(tokenizerConfig?.chat_template, 'tokenizer_config.json');
  const tokenText = (id: number | undefined) => (id === undefined ? undefined : tokenizer.idToToken(id));
  const eos = files.config.eos_token_id, configEos = (Array.isArray(eos) ? eos : [eos]).map((id) => vocabTokenId(id, vocab));
  const endIds = [...configEos, ...tokenizer.eosIds].filter((id): id is number => id !== undefined && id < vocab);
  return {
    templates,
    bosToken: configTokenText(tokenizerConfig, 'bos_token') ?? tokenText(vocabTokenId(files.config.bos_token_id, vocab) ?? tokenizer.bosId),
    eosToken: configTokenText(tokenizerConfig, 'eos_token') ?? tokenText(tokenizer.eosIds[0] ?? vocabTokenId(configEos[0], vocab)),
    endIds,
  };
}

/** A traced layer's walk: q and k are after the rotary embedding (the scores use them); these are
 * the same rows as projected, before it (shapes as shapes.q and shapes.k: k per K/V head). Row 0
 * is the same in both (position 0 is not rotated). A layer that does not rotate (SmolLM3's) has
 * them empty. With q/k norms (Qwen3, Gemma 3), qBeforeNorm / kBeforeNorm are the rows before each
 * head's RMSNorm (empty otherwise). */
export interface LlamaTrace extends MultiHeadTrace {
  qBeforeRotary: Float32Array;
  kBeforeRotary: Float32Array;
  qBeforeNorm: Float32Array;
  kBeforeNorm: Float32Array;
}

/** run()'s result; its trace (with traceLayer) shows Q and K before and after the rotation. */
export interface LlamaRunResult extends RunResult {
  trace?: LlamaTrace;
}

/** A Llama-family (decoder-only) language model. */
export class LlamaModel extends DecoderModel<HfTokenizer, LlamaHandle> {
  /** Each weight tensor's type as the model holds it, by its checkpoint name ('F32', 'F16', 'Q8_0',
   * 'Q4_K', ...): the dtype asked for, or F16 where a matrix's width is not whole 32-value blocks. */
  weightTypes: WeightTypes = {};

  /** The type most of its tensors are held in ('F16', 'Q8_0', 'Q4_K', ...; its F32 norms and biases
   * aside): the precision it was loaded at, as weightTypes names it. */
  get dtype(): DtypeName {
    return heldDtype(this.weightTypes);
  }
  readonly type = 'llama' as const;
  readonly config: LlamaConfig;
  /** @internal Settles once weights that stream in (a GGUF file being read) are all in. */
  readonly loading: Promise<void> | undefined;
  private readonly saveSource: LlamaSaveSource;

  /** @internal use AttentionModule.loadModel */
  constructor(mod: WasmModule, files: LlamaFiles, options: ModelLoadOptions = {}) {
    const config = readLlamaConfig(files.config);
    const tokenizer = files.tokenizer instanceof HfTokenizer ? files.tokenizer : new HfTokenizer(files.tokenizer);
    const V = config.vocab_size;
    if (tokenizer.vocabSize > V)
      throw new AttentionError(`tokenizer has ${tokenizer.vocabSize} tokens but config.json says vocab_size ${V}`);
    const weights = files.weights, file = isStreamed(weights) ? undefined : checkpointTensors(weights);
    if (config.tie_word_embeddings) checkTiedHead(file ?? (weights as StreamedTensors), ['lm_head.weight'], [V, config.hidden_size]);
    super(mod, new mod.LlamaHandle(), 'LlamaModel', tokenizer,
      { vocab: V, layers: config.num_hidden_layers, heads: config.num_attention_heads, context: config.max_position_embeddings },
      vocabTokenId(files.config.bos_token_id, V) ?? vocabTokenId(tokenizer.bosId, V), eosOf(files.config, tokenizer, V),
      chatDefaults(files, tokenizer, V),
      readGenerationConfig(files.tokenizer instanceof HfTokenizer ? undefined : files.tokenizer.generation, V));
    this.config = config;
    this.saveSource = {
      ggufKeys: files.ggufKeys, tokenizerFiles: files.tokenizer instanceof HfTokenizer ? undefined : files.tokenizer,
      chatTemplate: files.chatTemplate, bosTokenId: this.bosTokenId, eosTokenId: eosOf(files.config, tokenizer, V),
      ...(Array.isArray(files.config.eos_token_id) && files.config.eos_token_id.length > 1
        ? { eosTokenIds: files.config.eos_token_id.filter((id): id is number => vocabTokenId(id, V) !== undefined) } : {}),
    };
    const handle = this.live(), r = config.rope_scaling;
    try {
      const layerString = (flags: boolean[]) => (flags.every(Boolean) ? '' : flags.map(Number).join(''));
      throwIfError(handle.configure({ ...config, rope_layers: layerString(config.rope_layers), window_layers: layerString(config.window_layers),
        rope_scaling: { rope_type: r.type, factor: r.factor, low_freq_factor: r.lowFreqFactor, high_freq_factor: r.highFreqFactor,
          original_max_position_embeddings: r.originalMaxPositionEmbeddings, short_factor: r.shortFactor, long_factor: r.longFactor,
          attention_factor: r.attentionFactor } }), 'loadModel');
      const names = checkpointNames(config.model_type);
      if (file) this.weightTypes = loadCheckpoint(mod, handle, this.staging, file, names, options.dtype);
      else this.loading = streamCheckpoint(mod, handle, this.staging, weights as StreamedTensors, names, options.dtype)
        .then((types) => { this.weightTypes = types; }, (e) => {
          this.dispose();
          throw e;
        });
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  /**
   * The model as a GGUF file, at the precision it holds (model.dtype: a model loaded with
   * `dtype: 'q4'` saves Q4_0 blocks, 4.5 bits a weight; a GGUF file's K-quants stay as they are),
   * with its tokenizer and chat template: loadModel reads the bytes back to the same logits. The
   * whole file in one array; saveStream() hands it out a tensor at a time. Architectures: llama
   * (Llama, Mistral, SmolLM2), qwen2, qwen3, smollm3, gemma3, phi3; a config no GGUF key carries
   * (llama3 rope scaling, a Gemma 3 softcap) is an AttentionError of code 'unsupported'.
   */
  save(): Uint8Array {
    const plan = this.ggufPlan();
    return joinParts(plan.parts(), plan.layout.fileBytes);
  }

  /**
   * save()'s file as a stream, one part (the header, then each tensor) a pull, so that no copy
   * of the whole file is made: `new Response(model.saveStream())` for the Cache API or a Blob, a
   * FileSystemWritableFileStream (OPFS) through pipeTo, or Node's `Readable.fromWeb`. The model
   * must not be disposed before the stream is read to its end. Problems are checked before the
   * stream is returned.
   */
  saveStream(): ReadableStream<Uint8Array> {
    return partsStream(this.ggufPlan().parts());
  }

  /** The GGUF file's layout, and its parts read from the core when asked for. */
  private ggufPlan() {
    return planLlamaGguf(() => this.live(), this.config, this.saveSource, readLlamaConfig);
  }

  /** The key/value head query head `head` reads (grouped-query attention: num_attention_heads /
   * num_key_value_heads consecutive query heads share one). */
  kvHeadOf(head: number): number {
    const H = this.config.num_attention_heads;
    if (!Number.isInteger(head) || head < 0 || head >= H)
      throw new AttentionError(`kvHeadOf: head must be an integer in [0, ${H - 1}], got ${show(head)}`);
    return Math.floor(head / (H / this.config.num_key_value_heads));
  }

  /** Runs the model on text (tokenized with tokenizer.json, its template's BOS included) or on
   * token ids; the trace also holds Q and K before the rotation. */
  run<O extends RunOptions = RunOptions>(input: string | number[], opts?: O): RunResultFor<O, LlamaRunResult> {
    return super.run(input, opts) as RunResultFor<O, LlamaRunResult>;
  }

  /** A rendered chat's ids: its text as it is, the template having written BOS and the rest. */
  protected encodeChat(text: string): number[] {
    return this.tokenizer.encode(text, { addSpecialTokens: false, maxTokens: this.config.max_position_embeddings, caller: 'chat' });
  }

  /** The traced layer's walk: q per query head, k and v per K/V head, after and before rotation. */
  protected readTrace(handle: LlamaHandle, n: number): LlamaTrace {
    const { num_attention_heads: H, num_key_value_heads: KV, head_dim: d, hidden_size: D } = this.config;
    const trace = readMhaTrace(this.mod, handle, { numHeads: H, dK: d, dV: d, dModel: D }, 1, n, n);
    trace.shapes.k = [1, KV, n, d];
    trace.shapes.v = [1, KV, n, d];
    const slot = (name: 'QBeforeRotary' | 'KBeforeRotary' | 'QBeforeNorm' | 'KBeforeNorm') => readTrace(this.mod, handle, name);
    return { ...trace, block: readBlockTrace(this.mod, handle, 'pre-norm', n, D), qBeforeRotary: slot('QBeforeRotary'), kBeforeRotary: slot('KBeforeRotary'), qBeforeNorm: slot('QBeforeNorm'), kBeforeNorm: slot('KBeforeNorm') };
  }
}
