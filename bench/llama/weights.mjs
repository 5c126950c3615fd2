// A random Llama in Hugging Face's layout (names, shapes, rotate-half Q/K rows), the same values
// wherever it is built: the bench page (our side), the GGUF writer (llama.cpp's side) and the
// tests. Browser-safe. Each tensor has its own generator seeded from its name, so any one tensor
// can be made alone (the GGUF writer streams them). Values are truncated to bfloat16 as SmolLM2's
// checkpoint stores them: f32 and bf16 hold them exactly, f16 all but the few below its normal
// range (6e-5), which both sides round the same way (to nearest even).

/** SmolLM2-135M's shape (config.json), without eos: a benchmark generation never stops early. */
export const SMOLLM2_135M = {
  model_type: 'llama', vocab_size: 49152, max_position_embeddings: 8192, hidden_size: 576, intermediate_size: 1536,
  num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, head_dim: 64, rms_norm_eps: 1e-5,
  rope_theta: 100000, tie_word_embeddings: true,
};

/** A small model of the same kind for the tests (seconds, not minutes). */
export const TINY_LLAMA = {
  model_type: 'llama', vocab_size: 512, max_position_embeddings: 512, hidden_size: 64, intermediate_size: 128,
  num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, rms_norm_eps: 1e-5,
  rope_theta: 10000, tie_word_embeddings: true,
};

// The other families llama.cpp and this package both load from GGUF, tiny: each with what sets it
// apart from the Llama above within reach of a 128-token text (prompt and generation).
/** Qwen3: q/k norms, head_dim (32) not hidden / heads (16). */
export const TINY_QWEN3 = { ...TINY_LLAMA, model_type: 'qwen3', head_dim: 32, rms_norm_eps: 1e-6, rope_theta: 1000000 };
/** Gemma 3: six layers (the 6th global, the others windowed over 16 positions with rope base 1e4).
 * Its own head: tied to the embeddings this random network says one token forever (its sandwich
 * norms leave each position's residual mostly the layers' smooth attention averages). */
export const TINY_GEMMA3 = {
  ...TINY_LLAMA, model_type: 'gemma3_text', num_hidden_layers: 6, head_dim: 32, rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: false,
  rope_local_base_freq: 10000, sliding_window: 16, sliding_window_pattern: 6, query_pre_attn_scalar: 32,
  hidden_activation: 'gelu_pytorch_tanh', final_logit_softcapping: null,
};
/** SmolLM3: four layers, the 4th without rotary positions. */
export const TINY_SMOLLM3 = { ...TINY_LLAMA, model_type: 'smollm3', num_hidden_layers: 4, no_rope_layer_interval: 4 };
/** Phi-4-mini's kind of Phi-3: fused qkv_proj and gate_up_proj, 3/4 of each head rotated, longrope
 * (the short factors within the 512-position original context, as llama.cpp picks them for a
 * context no longer than it). */
export const TINY_PHI3 = {
  ...TINY_LLAMA, model_type: 'phi3', partial_rotary_factor: 0.75, max_position_embeddings: 4096, original_max_position_embeddings: 512,
  rope_scaling: { rope_type: 'longrope', short_factor: [1, 1.1, 1.3, 1.6, 2, 2.5], long_factor: [1, 2, 4, 8, 16, 32] },
};
export const TINY_FAMILIES = { llama: TINY_LLAMA, qwen3: TINY_QWEN3, gemma3: TINY_GEMMA3, smollm3: TINY_SMOLLM3, phi3: TINY_PHI3 };

/** The same families at SmolLM2-135M's size (its shapes; the decode bench's rows). */
export const SMOLLM2_SIZED = {
  llama: SMOLLM2_135M,
  qwen3: { ...SMOLLM2_135M, model_type: 'qwen3', rms_norm_eps: 1e-6, rope_theta: 1000000 },
  gemma3: {
    ...SMOLLM2_135M, model_type: 'gemma3_text', rms_norm_eps: 1e-6, rope_theta: 1000000, rope_local_base_freq: 10000,
    sliding_window: 512, sliding_window_pattern: 6, query_pre_attn_scalar: 64, hidden_activation: 'gelu_pytorch_tanh', final_logit_softcapping: null,
  },
  smollm3: { ...SMOLLM2_135M, model_type: 'smollm3', no_rope_layer_interval: 4 },
  // (Phi-4-mini's 3/4 of each head rotated; its fused projections hold the same values as Llama's three and two)
  phi3: { ...SMOLLM2_135M, model_type: 'phi3', partial_rotary_factor: 0.75 },
};

const isGemma = (c) => c.model_type === 'gemma3_text';
const hasQkNorm = (c) => c.model_type === 'qwen3' || isGemma(c);
const isPhi3 = (c) => c.model_type === 'phi3';

/** The bench's prompt: `n` ids spread over the vocabulary, none of the three specials (0-2). */
export const benchPrompt = (c, n = 64) => Array.from({ length: n }, (_, i) => 3 + ((i * 7919 + 11) % (c.vocab_size - 3)));

/** [name, shape] of every tensor, in Hugging Face's names and nn.Linear's out x in shapes. */
export function llamaShapes(c) {
  const D = c.hidden_size, F = c.intermediate_size, V = c.vocab_size;
  const hd = c.head_dim ?? D / c.num_attention_heads, H = c.num_attention_heads, KV = c.num_key_value_heads;
  const list = [['model.embed_tokens.weight', [V, D]]];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    list.push([`${p}input_layernorm.weight`, [D]]);
    if (isPhi3(c)) list.push([`${p}self_attn.qkv_proj.weight`, [(H + 2 * KV) * hd, D]]);
    else list.push([`${p}self_attn.q_proj.weight`, [H * hd, D]], [`${p}self_attn.k_proj.weight`, [KV * hd, D]], [`${p}self_attn.v_proj.weight`, [KV * hd, D]]);
    if (hasQkNorm(c)) list.push([`${p}self_attn.q_norm.weight`, [hd]], [`${p}self_attn.k_norm.weight`, [hd]]);
    list.push([`${p}self_attn.o_proj.weight`, [D, H * hd]], [`${p}post_attention_layernorm.weight`, [D]]);
    // (Gemma 3's post_attention_layernorm is on the attention's output; its MLP has a norm before and after)
    if (isGemma(c)) list.push([`${p}pre_feedforward_layernorm.weight`, [D]], [`${p}post_feedforward_layernorm.weight`, [D]]);
    if (isPhi3(c)) list.push([`${p}mlp.gate_up_proj.weight`, [2 * F, D]]);
    else list.push([`${p}mlp.gate_proj.weight`, [F, D]], [`${p}mlp.up_proj.weight`, [F, D]]);
    list.push([`${p}mlp.down_proj.weight`, [D, F]]);
  }
  list.push(['model.norm.weight', [D]]);
  if (!c.tie_word_embeddings) list.push(['lm_head.weight', [V, D]]);
  return list;
}

/** FNV-1a of the name and the seed: each tensor's own stream. */
function seedOf(name, seed) {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/**
 * The matrices' range: uniform +- 2.4 / sqrt(hidden) (0.1 for SmolLM2's 576). Smaller weights
 * leave the residual stream to the embeddings and greedy decoding repeats one token (at 1.2 /
 * sqrt(hidden) SmolLM2's shape gave 18 distinct tokens of 64, the tiny model 2); at 2.4 the tokens
 * vary (64 and 56 distinct), so that comparing two implementations' tokens says something.
 */
export const weightScale = (c) => 2.4 / Math.sqrt(c.hidden_size);

/** One tensor of the model of config `c` (bfloat16-rounded float32): norms 1 +- 0.1 (Gemma 3's,
 * which multiply by 1 + weight, 0 +- 0.1), matrices +- weightScale. */
export function llamaTensor(c, name, shape, seed = 1) {
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  const [base, scale] = shape.length === 1 ? [isGemma(c) ? 0 : 1, 0.1] : [0, weightScale(c)];
  let s = seedOf(name, seed);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = base + scale * (2 * (s / 4294967296) - 1);
    bits[i] &= 0xffff0000;  // truncate to bfloat16: exact in f32, bf16 and (mostly) f16
  }
  return out;
}

/** A safetensors file of the given tensors ({ name: [shape, Float32Array] }), stored as F32. */
export function safetensorsF32(tensors) {
  const header = {};
  let off = 0;
  for (const [name, [shape, x]] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape, data_offsets: [off, off + x.byteLength] };
    off += x.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const buf = new Uint8Array(8 + json.length + off);
  new DataView(buf.buffer).setBigUint64(0, BigInt(json.length), true);
  buf.set(new TextEncoder().encode(json), 8);
  for (const [name, [, x]] of Object.entries(tensors)) buf.set(new Uint8Array(x.buffer, x.byteOffset, x.byteLength), 8 + json.length + header[name].data_offsets[0]);
  return buf;
}

/** A tokenizer.json for our side that covers no ids: the bench passes token ids, not text. */
export function idsOnlyTokenizer() {
  const vocab = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [String.fromCharCode(0x100 + i), i]));
  return { tokenizer: { version: '1.0', normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, added_tokens: [], model: { type: 'BPE', vocab, merges: [] } } };
}
