// The Llama family from a GGUF file (llama.cpp's format): its metadata read as the config.json the
// same checkpoint has on the Hub, its tensors under Hugging Face's names, held as stored (Q4_K stays
// Q4_K), and the tokenizer from tokenizer.ggml.*. Architectures: "llama" (also Mistral's and
// SmolLM2's files), "qwen2", "qwen3", "smollm3", "gemma3" and "phi3" (Phi-3 and Phi-4-mini).
//
// llama.cpp rotates adjacent pairs (2i, 2i + 1) of each head's dims; Hugging Face rotates the
// halves (i, i + d/2). So that both compute one network, llama.cpp's converter stores the "llama"
// architecture's q_proj and k_proj rows (and biases) permuted: within each head, stored row 2i + k
// is the checkpoint's row k d/2 + i (k = 0, 1). The rows are moved back here, whole, in whatever
// type they are stored: a row is whole blocks. Qwen2's and Qwen3's are stored as they are
// (llama.cpp rotates their halves, as Hugging Face), and so are Gemma 3's and Phi-3's.
//
// Phi-3's converter (convert_hf_to_gguf.py's Phi3MiniModel) keeps the fused qkv_proj and
// gate_up_proj as attn_qkv and ffn_up (gate rows first, as llama.cpp's swiglu splits them), writes
// the rotated part of each head as rope.dimension_count (partial_rotary_factor), and longrope's
// factors as two F32 tensors (rope_factors_long / rope_factors_short, one for all layers) with the
// original context (rope.scaling.original_context_length) and the cos/sin scale
// (rope.scaling.attn_factor) as keys. They are read back into config.json's fields; the model then
// uses the short factors within the original context and the long ones past it, as Hugging Face
// does (llama.cpp picks one set for a whole context by its size).
//
// Gemma 3's converter stores each RMSNorm gain as the 1 + weight it multiplies by (Hugging Face
// stores the weight): 1 is taken off again here, so that the model reads the checkpoint's values.
import { AttentionError } from '../errors.js';
import type { CheckpointTensor, CheckpointTensors, StreamedTensors } from '../loading/checkpoint.js';
import type { GgufFile, GgufHeader, GgufValue } from '../loading/gguf.js';
import type { GgufStream } from '../loading/gguf_stream.js';
import type { GgufEntry } from '../loading/gguf_writer.js';
import { ggufTokenizer, ggufTokenizerInfo } from '../tokenizers/gguf_tokenizer.js';
import { show } from '../validate.js';
import type { LlamaFiles, LlamaModelType } from './llama_types.js';

/** general.architecture -> the model_type its config.json would say, and whether Q/K rows are permuted. */
const ARCHITECTURES: Record<string, { modelType: LlamaModelType; permuted: boolean }> = {
  llama: { modelType: 'llama', permuted: true },
  qwen2: { modelType: 'qwen2', permuted: false },
  qwen3: { modelType: 'qwen3', permuted: false },
  // (llama.cpp rotates SmolLM3's adjacent pairs, as Llama's, and skips every 4th layer: no key says so)
  smollm3: { modelType: 'smollm3', permuted: true },
  gemma3: { modelType: 'gemma3_text', permuted: false },
  phi3: { modelType: 'phi3', permuted: false },
};
export const LLAMA_GGUF_ARCHITECTURES = Object.keys(ARCHITECTURES);

/** Hugging Face's name -> llama.cpp's (tensor_mapping in gguf-py). */
const LAYER_NAMES: Record<string, string> = {
  'input_layernorm.weight': 'attn_norm.weight',
  'self_attn.q_proj.weight': 'attn_q.weight', 'self_attn.q_proj.bias': 'attn_q.bias',
  'self_attn.k_proj.weight': 'attn_k.weight', 'self_attn.k_proj.bias': 'attn_k.bias',
  'self_attn.v_proj.weight': 'attn_v.weight', 'self_attn.v_proj.bias': 'attn_v.bias',
  'self_attn.o_proj.weight': 'attn_output.weight',
  'self_attn.q_norm.weight': 'attn_q_norm.weight', 'self_attn.k_norm.weight': 'attn_k_norm.weight',
  'post_attention_layernorm.weight': 'ffn_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight', 'mlp.up_proj.weight': 'ffn_up.weight', 'mlp.down_proj.weight': 'ffn_down.weight',
};
/** Gemma 3's four norms a layer (post_attention_layernorm is on the attention's output there). */
const GEMMA_LAYER_NAMES: Record<string, string> = {
  ...LAYER_NAMES,
  'post_attention_layernorm.weight': 'post_attention_norm.weight',
  'pre_feedforward_layernorm.weight': 'ffn_norm.weight',
  'post_feedforward_layernorm.weight': 'post_ffw_norm.weight',
};
/** Phi-3's fused projections, each one tensor in both files. */
const PHI3_LAYER_NAMES: Record<string, string> = {
  'input_layernorm.weight': 'attn_norm.weight', 'self_attn.qkv_proj.weight': 'attn_qkv.weight',
  'self_attn.o_proj.weight': 'attn_output.weight', 'post_attention_layernorm.weight': 'ffn_norm.weight',
  'mlp.gate_up_proj.weight': 'ffn_up.weight', 'mlp.down_proj.weight': 'ffn_down.weight',
};
const layerNames = (arch: string) => (arch === 'gemma3' ? GEMMA_LAYER_NAMES : arch === 'phi3' ? PHI3_LAYER_NAMES : LAYER_NAMES);
/** Phi-3's longrope factors (long, short), each rope.dimension_count / 2 F32 values. */
export const ROPE_FACTOR_TENSORS = ['rope_factors_long.weight', 'rope_factors_short.weight'] as const;
/** The factors' values as read from the file (each tensor's bytes), when it has them. */
export type RopeFactorBytes = Map<string, Uint8Array>;
const MODEL_NAMES: Record<string, string> = {
  'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight', 'lm_head.weight': 'output.weight',
};

/** The GGUF name of a Llama-family tensor's Hugging Face name (undefined for one GGUF does not
 * hold), in an architecture's file. */
export function llamaGgufName(hfName: string, arch = 'llama'): string | undefined {
  if (MODEL_NAMES[hfName]) return MODEL_NAMES[hfName];
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hfName);
  const part = m && layerNames(arch)[m[2]];
  return part ? `blk.${m[1]}.${part}` : undefined;
}

/** A metadata value checked to be a number meeting `ok`, or `fallback` when absent. */
function metaNumber(file: GgufHeader, key: string, fallback: number | undefined, ok: (v: number) => boolean, expected: string): number {
  const v: GgufValue | undefined = file.metadata.get(key);
  if (v === undefined && fallback !== undefined) return fallback;
  if (v === undefined) throw new AttentionError(`GGUF: metadata ${key} is missing (the model's ${expected})`);
  if (typeof v !== 'number' || !ok(v)) throw new AttentionError(`GGUF: metadata ${key} must be ${expected}, got ${show(v)}`);
  return v;
}
const positiveInt = (v: number) => Number.isInteger(v) && v >= 1;

/** The architecture of a GGUF file this family runs, or a named error. */
function architecture(file: GgufHeader): string {
  const arch = file.metadata.get('general.architecture');
  if (typeof arch !== 'string' || !(arch in ARCHITECTURES))
    throw new AttentionError(`GGUF: general.architecture ${show(arch)} is not one the Llama family runs (${LLAMA_GGUF_ARCHITECTURES.join(', ')})`);
  return arch;
}

/** A longrope factor tensor's values: rotary / 2 positive F32 numbers. */
function ropeFactorValues(file: GgufHeader, name: string, bytes: Uint8Array, rotary: number): number[] {
  const t = file.tensors.get(name)!;
  if (t.type !== 'F32' || t.shape.length !== 1 || t.shape[0] !== rotary / 2)
    throw new AttentionError(`GGUF: tensor ${name} must be ${rotary / 2} F32 values (half of phi3.rope.dimension_count, ${rotary}), got ${t.type} of shape [${t.shape.join(', ')}]`);
  const values = Array.from(new Float32Array(bytes.slice().buffer));
  if (!values.every((v) => v > 0 && Number.isFinite(v)))
    throw new AttentionError(`GGUF: tensor ${name} must hold positive numbers, got [${values.join(', ')}]`);
  return values;
}

/** Phi-3's config.json fields: the rotated share of each head, the original context, the window
 * (the converter writes 0 for none) and longrope from the factor tensors (`factors`: their bytes). */
function phi3Config(file: GgufHeader, headDim: number, rotary: number, factors: RopeFactorBytes): Record<string, unknown> {
  if (rotary % 2 !== 0 || rotary > headDim)
    throw new AttentionError(`GGUF: phi3.rope.dimension_count must be an even number up to the head size ${headDim}, got ${rotary}`);
  // (Hugging Face rotates int(head_dim x partial_rotary_factor) values: a factor that floors to `rotary`)
  const partial = Math.floor(headDim * (rotary / headDim)) === rotary ? rotary / headDim : (rotary + 0.5) / headDim;
  const context = metaNumber(file, 'phi3.context_length', undefined, positiveInt, 'a positive integer');
  const window = metaNumber(file, 'phi3.attention.sliding_window', 0, (v) => Number.isInteger(v) && v >= 0, 'a whole number');
  const [long, short] = ROPE_FACTOR_TENSORS.map((name) => file.tensors.has(name));
  if (long !== short) throw new AttentionError(`GGUF: a phi3 file has either both ${ROPE_FACTOR_TENSORS.join(' and ')} (longrope) or neither; this one has only ${ROPE_FACTOR_TENSORS[long ? 0 : 1]}`);
  const [longFactor, shortFactor] = long ? ROPE_FACTOR_TENSORS.map((name) => ropeFactorValues(file, name, factors.get(name)!, rotary)) : [];
  return {
    partial_rotary_factor: partial,
    original_max_position_embeddings: metaNumber(file, 'phi3.rope.scaling.original_context_length', context, positiveInt, 'a positive integer'),
    sliding_window: window > 0 ? window : null,
    // (llama.cpp scales cos and sin by attn_factor, 1 when absent; its converter writes it with the factors)
    ...(long ? { rope_scaling: { rope_type: 'longrope', long_factor: longFactor, short_factor: shortFactor,
      attention_factor: metaNumber(file, 'phi3.rope.scaling.attn_factor', 1, (v) => v > 0 && Number.isFinite(v), 'a positive number') } } : {}),
  };
}

/** The config.json of the checkpoint a Llama-family GGUF file was converted from (the fields
 * readLlamaConfig reads), from its metadata, its tensors' shapes and (Phi-3's longrope) the bytes
 * of the tensors ROPE_FACTOR_TENSORS names. */
export function llamaGgufConfig(file: GgufHeader, factors: RopeFactorBytes = new Map()): Record<string, unknown> {
  const arch = architecture(file);
  const int = (key: string, fallback?: number) => metaNumber(file, `${arch}.${key}`, fallback, positiveInt, 'a positive integer');
  const embed = file.tensors.get('token_embd.weight');
  if (!embed || embed.shape.length !== 2) throw new AttentionError('GGUF: tensor token_embd.weight (the token embeddings, 2-D) is missing');
  const hidden = int('embedding_length'), heads = int('attention.head_count');
  const headDim = int('attention.key_length', hidden / heads);
  const rotary = int('rope.dimension_count', headDim);
  if (rotary !== headDim && arch !== 'phi3')
    throw new AttentionError(`GGUF: ${arch}.rope.dimension_count ${rotary} is not the head size ${headDim} (rotary on part of each head is not supported)`);
  if (file.tensors.has('rope_freqs.weight'))
    throw new AttentionError('GGUF: tensor rope_freqs.weight (per-dimension rope factors, as Llama 3.1 scaling) is not supported');
  const scaling = file.metadata.get(`${arch}.rope.scaling.type`);
  let ropeScaling: Record<string, unknown> | null = null;
  if (scaling === 'linear') ropeScaling = { rope_type: 'linear', factor: metaNumber(file, `${arch}.rope.scaling.factor`, undefined, (v) => v >= 1, 'a number >= 1') };
  else if (scaling !== undefined && scaling !== 'none' && !(arch === 'phi3' && scaling === 'longrope'))
    throw new AttentionError(`GGUF: ${arch}.rope.scaling.type ${show(scaling)} is not supported (supported: none, linear; longrope in phi3 files)`);
  const window = file.metadata.get(`${arch}.attention.sliding_window`);
  // llama.cpp's Gemma 3: every 6th layer global, the others windowed with rope base 10000, the
  // scores scaled by 1/sqrt(head size) (query_pre_attn_scalar = head_dim; fixed there, no key).
  const gemma = arch === 'gemma3' ? {
    sliding_window: int('attention.sliding_window'), sliding_window_pattern: 6, rope_local_base_freq: 10000,
    query_pre_attn_scalar: headDim, hidden_activation: 'gelu_pytorch_tanh',
  } : {};
  const tokenId = (key: string) => {
    const v = file.metadata.get(`tokenizer.ggml.${key}`);
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
  };
  return {
    model_type: typeof window === 'number' && window > 0 && arch === 'llama' ? 'mistral' : ARCHITECTURES[arch].modelType,
    vocab_size: embed.shape[0],
    max_position_embeddings: int('context_length'),
    hidden_size: hidden,
    intermediate_size: int('feed_forward_length'),
    num_hidden_layers: int('block_count'),
    num_attention_heads: heads,
    num_key_value_heads: int('attention.head_count_kv', heads),
    head_dim: headDim,
    rms_norm_eps: metaNumber(file, `${arch}.attention.layer_norm_rms_epsilon`, undefined, (v) => v > 0 && v <= 0.1, 'a number in (0, 0.1]'),
    rope_theta: metaNumber(file, `${arch}.rope.freq_base`, 10000, (v) => v > 1 && Number.isFinite(v), 'a number above 1'),
    rope_scaling: ropeScaling,
    attention_bias: file.tensors.has('blk.0.attn_q.bias'),
    tie_word_embeddings: !file.tensors.has('output.weight'),
    ...(typeof window === 'number' && window > 0 && arch === 'llama' ? { sliding_window: window } : {}),
    ...(arch === 'smollm3' ? { no_rope_layer_interval: 4 } : {}),  // (llama.cpp's n_no_rope_layer_step)
    ...gemma,
    ...(arch === 'phi3' ? phi3Config(file, headDim, rotary, factors) : {}),
    bos_token_id: tokenId('bos_token_id'),
    eos_token_id: tokenId('eos_token_id'),
  };
}

/** A tensor's rows moved between Hugging Face's halves and llama.cpp's adjacent-pair order (see
 * the top of this file): heads x d rows of whatever bytes each row holds, `toGguf` for the way a
 * converter moves them, else back. A new array. */
export function moveRotaryRows(bytes: Uint8Array, heads: number, rows: number, toGguf: boolean): Uint8Array {
  const d = rows / heads, rowBytes = bytes.length / rows;
  if (!Number.isInteger(d) || d % 2 !== 0 || !Number.isInteger(rowBytes))
    throw new AttentionError(`GGUF: ${rows} rows are not ${heads} heads of an even size`);
  const out = new Uint8Array(bytes.length);
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < d / 2; i++)
      for (let k = 0; k < 2; k++) {
        const gguf = (h * d + 2 * i + k) * rowBytes, hf = (h * d + k * (d / 2) + i) * rowBytes;
        const [from, to] = toGguf ? [hf, gguf] : [gguf, hf];
        out.set(bytes.subarray(from, from + rowBytes), to);
      }
  return out;
}

/** The GGUF architecture a model_type is written as (the one read back as it), or undefined: the
 * reader's table inverted, with Mistral's files as llama's and gemma3's text part as gemma3. */
export function llamaGgufArchitecture(modelType: LlamaModelType): string | undefined {
  const type = modelType === 'mistral' ? 'llama' : modelType === 'gemma3' ? 'gemma3_text' : modelType;
  return Object.keys(ARCHITECTURES).find((arch) => ARCHITECTURES[arch].modelType === type);
}

/** Whether an architecture's files hold Q and K rows permuted (moveRotaryRows). */
export const rotaryRowsPermuted = (arch: string): boolean => ARCHITECTURES[arch]?.permuted ?? false;

/** A Gemma 3 norm's stored gains (1 + weight, F32 as llama.cpp keeps norms) as the weights. */
function unitOffsetRemoved(bytes: Uint8Array): Uint8Array {
  const gains = new Float32Array(bytes.slice().buffer);
  for (let i = 0; i < gains.length; i++) gains[i] -= 1;
  return new Uint8Array(gains.buffer);
}

/** The file's tensor names -> Hugging Face's, and each tensor's bytes as the checkpoint's (Q and
 * K rows back in Hugging Face's order). */
function tensorNaming(file: GgufHeader, config: Record<string, unknown>): { hfName: Map<string, string>; bytesOf: (hf: string, bytes: Uint8Array, rows: number) => Uint8Array } {
  const arch = architecture(file);
  const layers = config.num_hidden_layers as number;
  const hfName = new Map<string, string>();
  for (const hf of Object.keys(MODEL_NAMES)) hfName.set(llamaGgufName(hf)!, hf);
  for (let l = 0; l < layers; l++)
    for (const part of Object.keys(layerNames(arch))) hfName.set(llamaGgufName(`model.layers.${l}.${part}`, arch)!, `model.layers.${l}.${part}`);
  if (arch === 'gemma3')
    for (const [name, t] of file.tensors)
      if (name.endsWith('norm.weight') && t.type !== 'F32') throw new AttentionError(`GGUF: ${name} must be F32 (a norm's gains), got ${t.type}`);
  const bytesOf = (hf: string, bytes: Uint8Array, rows: number) => {
    if (arch === 'gemma3' && hf.endsWith('norm.weight')) return unitOffsetRemoved(bytes);
    const q = hf.includes('q_proj.'), k = hf.includes('k_proj.');
    if (!ARCHITECTURES[arch].permuted || !(q || k)) return bytes;
    return moveRotaryRows(bytes, (q ? config.num_attention_heads : config.num_key_value_heads) as number, rows, false);
  };
  return { hfName, bytesOf };
}

/** config.json checked for what un-permuting needs (head counts that divide). */
function readConfig(file: GgufHeader, factors: RopeFactorBytes): Record<string, unknown> {
  const config = llamaGgufConfig(file, factors);
  const eosIds = file.metadata.get(HF_TOKENIZER_KEYS.eosIds);
  if (eosIds instanceof Uint32Array) config.eos_token_id = Array.from(eosIds);
  const heads = config.num_attention_heads as number, kv = config.num_key_value_heads as number;
  if (heads % kv !== 0) throw new AttentionError(`GGUF: ${architecture(file)}.attention.head_count (${heads}) is not a multiple of head_count_kv (${kv})`);
  return config;
}

/** Where a file saved from a model loaded out of a folder keeps its tokenizer files (as JSON
 * text): tokenizer.json under GGUF's own key for it, the other two under this package's names. */
export const HF_TOKENIZER_KEYS = Object.freeze({
  tokenizer: 'tokenizer.huggingface.json', config: 'attention_wasm.tokenizer_config.json', generation: 'attention_wasm.generation_config.json',
  /** config.json's eos_token_id when a list (tokenizer.ggml.eos_token_id holds one). */
  eosIds: 'attention_wasm.eos_token_ids',
});

/** A key of HF_TOKENIZER_KEYS parsed (undefined when absent), or a named error. */
function jsonKey(file: GgufHeader, key: string): object | undefined {
  const text = file.metadata.get(key);
  if (text === undefined) return undefined;
  try {
    const value: unknown = typeof text === 'string' ? JSON.parse(text) : undefined;
    if (typeof value === 'object' && value !== null) return value;
  } catch {
    // (named below)
  }
  throw new AttentionError(`GGUF: metadata ${key} must be a JSON object as text`);
}

/** The tokenizer and chat template: tokenizer.ggml.* (llama.cpp's), or the tokenizer files a
 * model saved by this package from a folder carries (HF_TOKENIZER_KEYS). */
function tokenizerOf(file: GgufHeader): Pick<LlamaFiles, 'tokenizer' | 'chatTemplate'> {
  const tokenizer = file.metadata.has('tokenizer.ggml.model') ? undefined : jsonKey(file, HF_TOKENIZER_KEYS.tokenizer);
  const template = tokenizer ? file.metadata.get('tokenizer.chat_template') : ggufTokenizerInfo(file.metadata).chatTemplate;
  const chatTemplate = typeof template === 'string' ? { chatTemplate: template } : {};
  if (!tokenizer) return { tokenizer: ggufTokenizer(file.metadata), ...chatTemplate };
  const config = jsonKey(file, HF_TOKENIZER_KEYS.config), generation = jsonKey(file, HF_TOKENIZER_KEYS.generation);
  return { tokenizer: { tokenizer, ...(config ? { config } : {}), ...(generation ? { generation } : {}) }, ...chatTemplate };
}

/** The key-values a saved copy of the file keeps as they are: the tokenizer's (tokenizer.*) and
 * this package's (attention_wasm.*). */
function keptKeys(file: GgufHeader): Map<string, GgufEntry> {
  const kept = new Map<string, GgufEntry>();
  for (const [key, value] of file.metadata)
    if (key.startsWith('tokenizer.') || key.startsWith('attention_wasm.')) kept.set(key, { type: file.metadataTypes.get(key)!, value });
  return kept;
}

/** A Llama-family GGUF file in memory as the family's files: config, tensors and tokenizer. */
export function readLlamaGguf(file: GgufFile): LlamaFiles {
  const factors: RopeFactorBytes = new Map(ROPE_FACTOR_TENSORS.filter((n) => file.tensors.has(n)).map((n) => [n, file.tensors.get(n)!.data]));
  const config = readConfig(file, factors);
  const { hfName, bytesOf } = tensorNaming(file, config);
  const tensors = new Map<string, CheckpointTensor>();
  for (const [name, t] of file.tensors) {
    const hf = hfName.get(name);
    if (hf) tensors.set(hf, { dtype: t.type, shape: t.shape, bytes: bytesOf(hf, t.data, t.shape[0]) });
  }
  const weights: CheckpointTensors = { tensors };
  return { config, weights, ...tokenizerOf(file), ggufKeys: keptKeys(file) };
}

/** The same for a GGUF file being read: the tensors go into the model as they arrive (Phi-3's rope
 * factors, which the config needs, read ahead: its converter writes them first). */
export async function readLlamaGgufStream(stream: GgufStream): Promise<LlamaFiles> {
  const file = stream.header;
  const factors: RopeFactorBytes = new Map();
  if (file.metadata.get('general.architecture') === 'phi3')
    for (const name of ROPE_FACTOR_TENSORS) if (file.tensors.has(name)) factors.set(name, await stream.tensorAhead(name));
  const config = readConfig(file, factors);
  const { hfName, bytesOf } = tensorNaming(file, config);
  const tensors = new Map<string, { dtype: string; shape: number[]; byteLength: number }>();
  for (const [name, t] of file.tensors) {
    const hf = hfName.get(name);
    if (hf) tensors.set(hf, { dtype: t.type, shape: t.shape, byteLength: t.byteLength });
  }
  async function* arrivals(): AsyncGenerator<{ name: string; bytes: Uint8Array }> {
    for await (const { info, bytes } of stream.tensors()) {
      const hf = hfName.get(info.name);
      if (hf) yield { name: hf, bytes: bytesOf(hf, bytes, info.shape[0]) };
    }
  }
  const weights: StreamedTensors = { tensors, arrivals: arrivals() };
  return { config, weights, ...tokenizerOf(file), ggufKeys: keptKeys(file) };
}
