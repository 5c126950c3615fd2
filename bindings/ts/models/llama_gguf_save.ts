// A loaded Llama-family model written as a GGUF file at the precision it holds (model.save()): each
// tensor read back from the core as held (Q4_0 blocks stay Q4_0, F32 is read out of the kernels'
// panels), under llama.cpp's names and metadata keys, so that loadModel reads it back to the same
// network (and llama.cpp runs it, when its tokenizer came from a GGUF file).
//
// What llama_gguf.ts reads is what is written: the architecture's keys from the config (hidden
// size, heads, context, rope base, epsilon, window), Q and K rows permuted back to llama.cpp's
// order for the architectures that permute them, Gemma 3's norms as the 1 + weight they hold. The
// header is then parsed back and its config read as loadModel will: a model whose config the
// file cannot carry (llama3 rope scaling, partial rotary outside Phi-3, a Gemma 3 layer pattern
// other than llama.cpp's) is refused by name, field by field, before any tensor is written. Phi-3's
// longrope factors go in as llama.cpp's two F32 tensors and its f32 attn_factor: rounded to float32
// (a model loaded from a GGUF file has them so already; a folder's decimal factors move by at most
// 6e-8 of themselves, and its logits then by about as little: not bit for bit).
//
// The tokenizer: a model loaded from a GGUF file keeps that file's tokenizer.* key-values and
// writes them as they were; one loaded from a folder writes its tokenizer.json under GGUF's
// tokenizer.huggingface.json key (tokenizer_config.json and generation_config.json beside it,
// chat_template.jinja as tokenizer.chat_template), which loadModel reads and llama.cpp does not.
import { AttentionError } from '../errors.js';
import { parseGgufHeader } from '../loading/gguf.js';
import type { GgufTypeName } from '../loading/gguf.js';
import { ggufLayout, ggufParts } from '../loading/gguf_writer.js';
import type { GgufEntry, GgufLayout, GgufTensorPlan } from '../loading/gguf_writer.js';
import type { LlamaHandle } from '../runtime/wasm_module.js';
import type { HfTokenizerFiles } from '../tokenizers/hf_tokenizer.js';
import { HF_TOKENIZER_KEYS, LLAMA_GGUF_ARCHITECTURES, ROPE_FACTOR_TENSORS, llamaGgufArchitecture, llamaGgufConfig, llamaGgufName, moveRotaryRows, rotaryRowsPermuted } from './llama_gguf.js';
import type { LlamaConfig } from './llama_types.js';

/** What a model keeps from its files to save its tokenizer: a GGUF file's key-values, or a
 * folder's tokenizer files (with chat_template.jinja's text). */
export interface LlamaSaveSource {
  ggufKeys?: ReadonlyMap<string, GgufEntry>;
  tokenizerFiles?: HfTokenizerFiles;
  chatTemplate?: string;
  bosTokenId?: number;
  eosTokenId?: number;
  /** config.json's eos_token_id, when it lists more than one. */
  eosTokenIds?: number[];
}

/** A GGUF file's plan: its header and tensors, and how to read each tensor's bytes. */
export interface LlamaGgufPlan {
  layout: GgufLayout;
  tensors: GgufTensorPlan[];
  parts: () => Generator<Uint8Array>;
}

const u32 = (value: number): GgufEntry => ({ type: 'u32', value });
/** A number as f32 (llama.cpp's type for these keys) when that keeps it exactly, else f64 (which
 * llama.cpp refuses, but loadModel reads: the same network rather than a rounded one). */
const float = (value: number): GgufEntry => ({ type: Math.fround(value) === value ? 'f32' : 'f64', value });

function architectureOf(config: LlamaConfig): string {
  const arch = llamaGgufArchitecture(config.model_type);
  if (!arch)
    throw new AttentionError(`save: a ${config.model_type} model has no GGUF architecture loadModel reads (${LLAMA_GGUF_ARCHITECTURES.join(', ')})`, 'unsupported');
  return arch;
}

/** The architecture's key-values (llama.cpp's LLM_KV names). */
function architectureKeys(arch: string, c: LlamaConfig): Map<string, GgufEntry> {
  const k = (key: string) => `${arch}.${key}`;
  const keys = new Map<string, GgufEntry>([
    ['general.architecture', { type: 'string', value: arch }],
    ['general.quantization_version', u32(2)],
    [k('vocab_size'), u32(c.vocab_size)],
    [k('context_length'), u32(c.max_position_embeddings)],
    [k('embedding_length'), u32(c.hidden_size)],
    [k('feed_forward_length'), u32(c.intermediate_size)],
    [k('block_count'), u32(c.num_hidden_layers)],
    [k('attention.head_count'), u32(c.num_attention_heads)],
    [k('attention.head_count_kv'), u32(c.num_key_value_heads)],
    [k('attention.key_length'), u32(c.head_dim)],
    [k('attention.value_length'), u32(c.head_dim)],
    // (f32 always: the core holds the epsilon as a float32, so its rounding changes nothing)
    [k('attention.layer_norm_rms_epsilon'), { type: 'f32', value: c.rms_norm_eps }],
    [k('rope.freq_base'), float(c.rope_theta)],
    [k('rope.dimension_count'), u32(c.rotary_dim)],
  ]);
  if (c.rope_scaling.type === 'linear') {
    keys.set(k('rope.scaling.type'), { type: 'string', value: 'linear' });
    keys.set(k('rope.scaling.factor'), float(c.rope_scaling.factor));
  }
  if (c.sliding_window > 0) keys.set(k('attention.sliding_window'), u32(c.sliding_window));
  if (arch === 'phi3') {
    keys.set(k('rope.scaling.original_context_length'), u32(c.rope_scaling.originalMaxPositionEmbeddings));
    if (c.rope_scaling.type === 'longrope') keys.set(k('rope.scaling.attn_factor'), { type: 'f32', value: c.rope_scaling.attentionFactor });
  }
  return keys;
}

/** Phi-3's longrope factors as llama.cpp stores them: two F32 tensors (ROPE_FACTOR_TENSORS: long,
 * short), from the config (the core holds no tensor of them). */
function ropeFactorTensors(c: LlamaConfig): { plan: GgufTensorPlan; bytes: Uint8Array }[] {
  if (c.rope_scaling.type !== 'longrope') return [];
  return ROPE_FACTOR_TENSORS.map((name, i) => {
    const values = Float32Array.from(i === 0 ? c.rope_scaling.longFactor : c.rope_scaling.shortFactor);
    return { plan: { name, dims: [values.length], type: 'F32' as const }, bytes: new Uint8Array(values.buffer) };
  });
}

/** The tokenizer's key-values (see the top of this file). */
function tokenizerKeys(source: LlamaSaveSource): Map<string, GgufEntry> {
  if (source.ggufKeys) return new Map(source.ggufKeys);
  const files = source.tokenizerFiles;
  if (!files) throw new AttentionError('save: the model has no tokenizer files to save');
  const text = (value: unknown): GgufEntry => ({ type: 'string', value: JSON.stringify(value) });
  const keys = new Map<string, GgufEntry>([[HF_TOKENIZER_KEYS.tokenizer, text(files.tokenizer)]]);
  if (files.config) keys.set(HF_TOKENIZER_KEYS.config, text(files.config));
  if (files.generation) keys.set(HF_TOKENIZER_KEYS.generation, text(files.generation));
  if (source.chatTemplate !== undefined) keys.set('tokenizer.chat_template', { type: 'string', value: source.chatTemplate });
  if (source.bosTokenId !== undefined) keys.set('tokenizer.ggml.bos_token_id', u32(source.bosTokenId));
  if (source.eosTokenId !== undefined) keys.set('tokenizer.ggml.eos_token_id', u32(source.eosTokenId));
  if (source.eosTokenIds) keys.set(HF_TOKENIZER_KEYS.eosIds, { type: 'array<u32>', value: Uint32Array.from(source.eosTokenIds) });
  return keys;
}

/** A config field as the file stores it: the epsilon (held as float32 by the core) and longrope's
 * factors (llama.cpp's F32 tensors and f32 attn_factor) rounded to float32. */
function asStored(key: keyof LlamaConfig, value: unknown): unknown {
  if (key === 'rms_norm_eps') return Math.fround(value as number);
  if (key !== 'rope_scaling') return value;
  const r = value as LlamaConfig['rope_scaling'];
  if (r.type !== 'longrope') return r;
  return { ...r, longFactor: r.longFactor.map(Math.fround), shortFactor: r.shortFactor.map(Math.fround), attentionFactor: Math.fround(r.attentionFactor) };
}

/** Config fields that read back differently from the file, as "field value (read back: value)". */
function configDifferences(config: LlamaConfig, back: LlamaConfig): string[] {
  const differ: string[] = [];
  for (const key of Object.keys(config) as (keyof LlamaConfig)[]) {
    if (key === 'model_type') continue;  // (gemma3's text part reads back as gemma3_text: one network)
    const a = JSON.stringify(asStored(key, config[key])), b = JSON.stringify(asStored(key, back[key]));
    if (a !== b) differ.push(`${key} ${a} (read back: ${b})`);
  }
  return differ;
}

/**
 * The GGUF file of a loaded model (see the top of this file). `reread` is readLlamaConfig: the
 * written header's config is read as loadModel reads it and must equal the model's.
 */
export function planLlamaGguf(handle: () => LlamaHandle, config: LlamaConfig, source: LlamaSaveSource,
  reread: (c: Record<string, unknown>) => LlamaConfig): LlamaGgufPlan {
  const arch = architectureOf(config), h = handle();
  // (Phi-3's rope factors first, as llama.cpp's converter writes them: a streamed load reads them
  // ahead of the weights, for the config)
  const factors = ropeFactorTensors(config);
  const tensors: GgufTensorPlan[] = factors.map((f) => f.plan), index: number[] = factors.map(() => -1);
  for (let i = 0; i < h.tensorCount(); i++) {
    const type = h.tensorHeldType(i), name = h.tensorName(i);
    if (type === '') continue;  // (an optional tensor the checkpoint did not have)
    const gguf = llamaGgufName(name, arch);
    if (!gguf) throw new AttentionError(`save: tensor ${name} has no name in a GGUF ${arch} file`, 'unsupported');
    tensors.push({ name: gguf, dims: [...h.tensorShape(i)].reverse(), type: type as GgufTypeName });
    index.push(i);
  }
  const metadata = new Map([...architectureKeys(arch, config), ...tokenizerKeys(source)]);
  const layout = ggufLayout(metadata, tensors);
  const read = parseGgufHeader(layout.header);
  if (!read.complete) throw new AttentionError('save: the GGUF header written does not parse back whole');
  const differ = configDifferences(config, reread(llamaGgufConfig(read.header, new Map(factors.map((f) => [f.plan.name, f.bytes])))));
  if (differ.length)
    throw new AttentionError(`save: this ${config.model_type} model's config has no GGUF form that loads back the same: ${differ.join('; ')}`, 'unsupported');
  const permuted = rotaryRowsPermuted(arch);
  const bytesOf = (t: number): Uint8Array => {
    if (index[t] < 0) return factors[t].bytes;
    const held = handle().heldTensor(index[t]);
    if ('error' in held) throw new AttentionError(`save: ${held.error}`);
    const bytes = held.bytes.slice(), name = tensors[t].name;  // (a copy: the view is the handle's)
    const q = /\.attn_q\.(weight|bias)$/.test(name), k = /\.attn_k\.(weight|bias)$/.test(name);
    if (!permuted || !(q || k)) return bytes;
    return moveRotaryRows(bytes, q ? config.num_attention_heads : config.num_key_value_heads, tensors[t].dims[tensors[t].dims.length - 1], true);
  };
  return { layout, tensors, parts: () => ggufParts(layout, tensors, bytesOf) };
}
