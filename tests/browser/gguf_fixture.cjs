// GGUF files of the shipped brown-llama for the demo's GGUF tests, written as llama.cpp's converter
// writes them (tests/js/gguf_model_write.mjs: llama.* metadata, the tokenizer as tokenizer.ggml.*,
// Q and K rows permuted for llama.cpp's rotation), with the matrices encoded by the library's own
// encoders (attn.encodeWeights), as tests/js/gguf_load.test.cjs writes them.
//
// brown-llama's rows are 160 and 432 values long: no K-quant block (256 values) fits, and 432 is
// no whole number of 32-value blocks either. llama.cpp's quantizer then falls back per tensor (a
// K-quant to Q5_0 where a row is whole 32-value blocks, to F16 where it is not); `typeOf` here does
// the same, so a file named Q4_K_M holds what llama.cpp would write for this model.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const BROWN = path.join(root, 'web/models/brown-llama');
const GGML = { F32: 0, F16: 1, Q4_0: 2, Q4_1: 3, Q5_0: 6, Q5_1: 7, Q8_0: 8, Q2_K: 10, Q3_K: 11, Q4_K: 12, Q5_K: 13, Q6_K: 14 };
const LAYER = {
  'input_layernorm.weight': 'attn_norm.weight', 'self_attn.q_proj.weight': 'attn_q.weight', 'self_attn.k_proj.weight': 'attn_k.weight',
  'self_attn.v_proj.weight': 'attn_v.weight', 'self_attn.o_proj.weight': 'attn_output.weight', 'post_attention_layernorm.weight': 'ffn_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight', 'mlp.up_proj.weight': 'ffn_up.weight', 'mlp.down_proj.weight': 'ffn_down.weight',
};

function ggufName(hf) {
  const top = { 'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight', 'lm_head.weight': 'output.weight' };
  if (top[hf]) return top[hf];
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hf);
  return `blk.${m[1]}.${LAYER[m[2]]}`;
}

/** The converter's permute: within each head of d rows, stored row 2i + k is row k d/2 + i. */
function permuteRows(bytes, heads, rows) {
  const d = rows / heads, rb = bytes.length / rows, out = new Uint8Array(bytes.length);
  for (let h = 0; h < heads; h++) for (let i = 0; i < d / 2; i++) for (let k = 0; k < 2; k++)
    out.set(bytes.subarray((h * d + k * d / 2 + i) * rb, (h * d + k * d / 2 + i + 1) * rb), (h * d + 2 * i + k) * rb);
  return out;
}

/** A file type's matrices for brown-llama, with llama.cpp's per-tensor fallbacks (see above). */
function typesOf(quant) {
  const block = { F16: 1, F32: 1, Q8_0: 32, Q4_0: 32, Q5_0: 32 };
  const want = { F16: 'F16', F32: 'F32', Q8_0: 'Q8_0', Q4_0: 'Q4_0', Q4_K_M: 'Q5_0', Q6_K: 'Q8_0' }[quant];
  if (!want) throw new Error(`no brown-llama fixture for ${quant}`);
  return (name, shape) => (shape[shape.length - 1] % block[want] === 0 ? want : 'F16');
}

/**
 * Writes brown-llama as a GGUF of `quant` ('F16', 'F32', 'Q8_0', 'Q4_0', 'Q4_K_M' as llama.cpp
 * would write it for these row lengths) to `file`. attn: a loaded library (its encoders).
 */
function writeBrownGguf(attn, api, file, quant) {
  const config = JSON.parse(fs.readFileSync(path.join(BROWN, 'config.json'), 'utf8'));
  const st = api.parseSafetensors(fs.readFileSync(path.join(BROWN, 'model.safetensors')));
  const typeOf = typesOf(quant);
  const specs = [...st.tensors].map(([hf, e]) => {
    const shape = e.shape, values = e.toFloat32();
    const type = shape.length === 1 ? 'F32' : typeOf(hf, shape);
    let bytes = type === 'F32' ? new Uint8Array(values.buffer.slice(0)) : attn.encodeWeights(values, { type, cols: shape[shape.length - 1] });
    if (/q_proj\.weight$/.test(hf)) bytes = permuteRows(bytes, config.num_attention_heads, shape[0]);
    if (/k_proj\.weight$/.test(hf)) bytes = permuteRows(bytes, config.num_key_value_heads, shape[0]);
    return { name: ggufName(hf), dims: [...shape].reverse(), type: GGML[type], data: Buffer.from(bytes).toString('base64') };
  });
  execFileSync(process.execPath, [path.join(root, 'tests/js/gguf_model_write.mjs')], {
    input: JSON.stringify({ file, config, folder: BROWN, tensors: specs }), maxBuffer: 1 << 27,
  });
  return file;
}

module.exports = { writeBrownGguf, BROWN };
