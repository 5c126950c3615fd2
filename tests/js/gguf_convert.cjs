// A Llama-family checkpoint written as GGUF the way llama.cpp's converter writes it (its tensor
// names, Q and K rows permuted for llama.cpp's rotation where the architecture is, llama.* keys and
// the tokenizer as tokenizer.ggml.* via gguf_model_write.mjs), the matrices encoded by the library's
// own encoders (attn.encodeWeights): shared by gguf_load.test.cjs and the demo's browser fixtures.
// The names and the permutation are written out here, apart from the loader's tables.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const BROWN = path.resolve(__dirname, '../../web/models/brown-llama');
const GGML = { F32: 0, F16: 1, Q4_0: 2, Q4_1: 3, Q5_0: 6, Q5_1: 7, Q8_0: 8, Q2_K: 10, Q3_K: 11, Q4_K: 12, Q5_K: 13, Q6_K: 14 };
const LAYER = {
  'input_layernorm.weight': 'attn_norm.weight', 'self_attn.q_proj.weight': 'attn_q.weight', 'self_attn.k_proj.weight': 'attn_k.weight',
  'self_attn.v_proj.weight': 'attn_v.weight', 'self_attn.o_proj.weight': 'attn_output.weight', 'post_attention_layernorm.weight': 'ffn_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight', 'mlp.up_proj.weight': 'ffn_up.weight', 'mlp.down_proj.weight': 'ffn_down.weight',
  'self_attn.q_proj.bias': 'attn_q.bias', 'self_attn.k_proj.bias': 'attn_k.bias', 'self_attn.v_proj.bias': 'attn_v.bias',
  'self_attn.q_norm.weight': 'attn_q_norm.weight', 'self_attn.k_norm.weight': 'attn_k_norm.weight',
};

// Gemma 3's four norms a layer (its post_attention_layernorm is on the attention's output).
const GEMMA_LAYER = {
  ...LAYER, 'post_attention_layernorm.weight': 'post_attention_norm.weight', 'pre_feedforward_layernorm.weight': 'ffn_norm.weight',
  'post_feedforward_layernorm.weight': 'post_ffw_norm.weight',
};

// Phi-3's fused projections, kept whole (gguf-py's tensor_mapping: qkv_proj -> attn_qkv, gate_up_proj -> ffn_up).
const PHI3_LAYER = {
  'input_layernorm.weight': 'attn_norm.weight', 'self_attn.qkv_proj.weight': 'attn_qkv.weight', 'self_attn.o_proj.weight': 'attn_output.weight',
  'post_attention_layernorm.weight': 'ffn_norm.weight', 'mlp.gate_up_proj.weight': 'ffn_up.weight', 'mlp.down_proj.weight': 'ffn_down.weight',
};

/** llama.cpp's name for a Hugging Face tensor name. */
function ggufName(hf, arch = 'llama') {
  const top = { 'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight', 'lm_head.weight': 'output.weight' };
  if (top[hf]) return top[hf];
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hf);
  return `blk.${m[1]}.${(arch === 'gemma3' ? GEMMA_LAYER : arch === 'phi3' ? PHI3_LAYER : LAYER)[m[2]]}`;
}

/** Phi-3's longrope factors as its converter writes them: two F32 tensors, before the weights. */
function ropeFactorSpecs(config) {
  const r = config.rope_scaling;
  if (!r || (r.rope_type ?? r.type) !== 'longrope') return [];
  // (a factor list left out is a tensor left out: files the reader must refuse)
  return [['rope_factors_long.weight', r.long_factor], ['rope_factors_short.weight', r.short_factor]].filter(([, v]) => v).map(([name, v]) => (
    { name, dims: [v.length], type: GGML.F32, data: Buffer.from(new Float32Array(v).buffer).toString('base64') }));
}

/** The converter's permute: within each head of d rows, stored row 2i + k is row k d/2 + i (whole rows of any bytes). */
function permuteRows(bytes, heads, rows) {
  const d = rows / heads, rb = bytes.length / rows, out = new Uint8Array(bytes.length);
  for (let h = 0; h < heads; h++) for (let i = 0; i < d / 2; i++) for (let k = 0; k < 2; k++)
    out.set(bytes.subarray((h * d + k * d / 2 + i) * rb, (h * d + k * d / 2 + i + 1) * rb), (h * d + 2 * i + k) * rb);
  return out;
}

/**
 * Writes a Llama's tensors ({ name: { shape, values } }, Hugging Face's layout) as a GGUF file;
 * typeOf(name, shape) picks each matrix's type (vectors stay F32). attn: a loaded library (its
 * encoders). Returns the files written (the shards, when `shards` > 1).
 */
function writeLlamaGguf(attn, file, config, tensors, typeOf, { shards = 1, folder = BROWN, arch = 'llama' } = {}) {
  const specs = Object.entries(tensors).map(([hf, { shape, values }]) => {
    const type = shape.length === 1 ? 'F32' : typeOf(hf, shape);
    // (Gemma 3's converter stores each norm's gain as 1 + weight)
    const stored = arch === 'gemma3' && hf.endsWith('norm.weight') ? values.map((x) => x + 1) : values;
    let bytes = type === 'F32' ? new Uint8Array(stored.buffer.slice(0)) : attn.encodeWeights(stored, { type, cols: shape[shape.length - 1] });
    // (llama and smollm3: Qwen2's and Qwen3's converters store the rows as they are)
    const permuted = arch === 'llama' || arch === 'smollm3';
    if (permuted && /q_proj\.(weight|bias)$/.test(hf)) bytes = permuteRows(bytes, config.num_attention_heads, shape[0]);
    if (permuted && /k_proj\.(weight|bias)$/.test(hf)) bytes = permuteRows(bytes, config.num_key_value_heads, shape[0]);
    return { name: ggufName(hf, arch), dims: [...shape].reverse(), type: GGML[type], data: Buffer.from(bytes).toString('base64') };
  });
  const out = execFileSync(process.execPath, [path.join(__dirname, 'gguf_model_write.mjs')], {
    input: JSON.stringify({ file, arch, config, folder, shards, tensors: [...(arch === 'phi3' ? ropeFactorSpecs(config) : []), ...specs] }), maxBuffer: 1 << 27,
  });
  return JSON.parse(out.toString());
}

module.exports = { BROWN, GGML, ggufName, permuteRows, writeLlamaGguf };
