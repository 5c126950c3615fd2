// The random Llama of weights.mjs (and its Qwen3, Gemma 3 and SmolLM3 kin) as llama.cpp loads it:
// GGUF names and metadata, Q and K rows permuted where llama.cpp's converter permutes them, Gemma 3's
// norms stored as the 1 + weight they multiply by, matrices at F32, F16, Q8_0 or Q4_0 (norms stay F32, as llama.cpp's converter
// keeps them), or as llama-quantize's Q4_K_M, Q5_K_M and Q6_K mixes (matrixTypes). Both sides then hold one network: our loader reads Hugging Face's layout, llama.cpp
// the permuted one. Browser-safe: tools/gguf/gguf_writer.mjs writes the file (writeGguf(file, llamaMetadata(...),
// llamaGgufTensors(...))).
//
// The permutation: Hugging Face rotates half-split pairs (i, i + d/2) of each head's d dims;
// llama.cpp's rope (LLAMA_ROPE_TYPE_NORM) rotates adjacent pairs (2i, 2i + 1). Its converter
// reorders each head's rows so that row 2i + k (k = 0, 1) is the original row k * d/2 + i.
import { encode, GGML_TYPE } from '../../tools/gguf/ggml_quant.mjs';
import { llamaShapes, llamaTensor } from './weights.mjs';

// general.file_type (llama.h's llama_ftype: LLAMA_FTYPE_MOSTLY_*)
export const FILE_TYPE = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 7, Q4_K_M: 15, Q5_K_M: 17, Q6_K: 18 };
/** The file types whose tensors are a mix of ggml types (llama-quantize's K-quant recipes). */
export const K_MIXES = ['Q4_K_M', 'Q5_K_M', 'Q6_K'];

// llama-quantize's choice of type per tensor for the K mixes (llama.cpp src/llama-quant.cpp,
// llama_tensor_get_type_impl and tensor_type_fallback), for a dense llama without imatrix:
// - the default type: Q4_K (Q4_K_M), Q5_K (Q5_K_M), Q6_K (Q6_K);
// - output.weight, or token_embd.weight when the head is tied: Q8_0 when a row is not whole
//   blocks of the default type (SmolLM2's 576), else Q6_K;
// - attn_v and ffn_down at Q4_K_M and Q5_K_M: Q6_K in the layers use_more_bits picks (the first
//   and last eighth and every third between: 14 of 30), else the default;
// - then the fallback: a row that is not whole 256-value blocks takes Q5_0 for Q4_K, Q5_1 for
//   Q5_K, Q8_0 for Q6_K (F16 if not whole 32-value blocks either). At SmolLM2's shape every matrix
//   but ffn_down (1536 a row) has 576 a row: the K-quants are ffn_down's, the rest falls back.
const K_DEFAULT = { Q4_K_M: 'Q4_K', Q5_K_M: 'Q5_K', Q6_K: 'Q6_K' };
const K_FALLBACK = { Q4_K: 'Q5_0', Q5_K: 'Q5_1', Q6_K: 'Q8_0' };
const BLOCK = (t) => (t.endsWith('_K') ? 256 : t === 'F32' || t === 'F16' ? 1 : 32);
/** llama-quant.cpp's use_more_bits (C's integer division). */
export const useMoreBits = (i, n) => i < Math.trunc(n / 8) || i >= Math.trunc((7 * n) / 8) || (i - Math.trunc(n / 8)) % 3 === 2;

/** The ggml type name of a matrix (GGUF name, `cols` values a row) in a file of `fileType`, for a model of `layers` layers, `tied` head. */
export function matrixType(fileType, gguf, cols, layers, tied) {
  if (!(fileType in K_DEFAULT)) return fileType;
  const base = K_DEFAULT[fileType];
  let t = base;
  const layer = Number(/^blk\.(\d+)\./.exec(gguf)?.[1]);
  if (gguf === 'output.weight' || (tied && gguf === 'token_embd.weight')) t = cols % BLOCK(base) ? 'Q8_0' : 'Q6_K';
  else if ((gguf.endsWith('.attn_v.weight') || gguf.endsWith('.ffn_down.weight')) && fileType !== 'Q6_K' && useMoreBits(layer, layers)) t = 'Q6_K';
  if (cols % BLOCK(t)) {
    t = K_FALLBACK[t] ?? t;
    if (cols % BLOCK(t)) t = 'F16';
  }
  return t;
}

/** { GGUF name: ggml type name } of every matrix of config `c` in a file of `fileType`. */
export function matrixTypes(c, fileType) {
  return Object.fromEntries(llamaShapes(c).filter(([, s]) => s.length === 2)
    .map(([hf, s]) => [ggufName(hf, c), matrixType(fileType, ggufName(hf, c), s[1], c.num_hidden_layers, !!c.tie_word_embeddings)]));
}

/** Rows of a q_proj / k_proj weight (heads x d rows of `cols`) reordered from rotate-half to adjacent pairs. */
export function permuteRotary(x, heads, cols) {
  const d = x.length / cols / heads;
  const out = new Float32Array(x.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < d / 2; i++) {
      for (let k = 0; k < 2; k++) {
        const from = (h * d + k * (d / 2) + i) * cols, to = (h * d + 2 * i + k) * cols;
        out.set(x.subarray(from, from + cols), to);
      }
    }
  }
  return out;
}

/** general.architecture of a config's model_type (llama.cpp's converter's choice). */
const GGUF_ARCH = { llama: 'llama', mistral: 'llama', qwen2: 'qwen2', qwen3: 'qwen3', gemma3_text: 'gemma3', smollm3: 'smollm3', phi3: 'phi3' };
export function ggufArchitecture(c) {
  const arch = GGUF_ARCH[c.model_type];
  if (!arch) throw new Error(`no GGUF architecture for model_type ${c.model_type}`);
  return arch;
}
/** Whether llama.cpp rotates adjacent pairs for the architecture (its converter then permutes Q/K rows). */
const permuted = (c) => ['llama', 'smollm3'].includes(ggufArchitecture(c));

const LAYER_PARTS = {
  'input_layernorm.weight': 'attn_norm.weight', 'post_attention_layernorm.weight': 'ffn_norm.weight',
  'self_attn.q_proj.weight': 'attn_q.weight', 'self_attn.k_proj.weight': 'attn_k.weight', 'self_attn.v_proj.weight': 'attn_v.weight',
  'self_attn.q_norm.weight': 'attn_q_norm.weight', 'self_attn.k_norm.weight': 'attn_k_norm.weight',
  'self_attn.o_proj.weight': 'attn_output.weight', 'mlp.gate_proj.weight': 'ffn_gate.weight', 'mlp.up_proj.weight': 'ffn_up.weight',
  'mlp.down_proj.weight': 'ffn_down.weight',
};
// Gemma 3's post_attention_layernorm normalizes the attention's output; the MLP's input norm is pre_feedforward_layernorm.
const GEMMA_PARTS = {
  ...LAYER_PARTS, 'post_attention_layernorm.weight': 'post_attention_norm.weight',
  'pre_feedforward_layernorm.weight': 'ffn_norm.weight', 'post_feedforward_layernorm.weight': 'post_ffw_norm.weight',
};

// Phi-3's fused projections stay whole: qkv_proj as attn_qkv, gate_up_proj (gate rows first) as ffn_up.
const PHI3_PARTS = {
  'input_layernorm.weight': 'attn_norm.weight', 'post_attention_layernorm.weight': 'ffn_norm.weight',
  'self_attn.qkv_proj.weight': 'attn_qkv.weight', 'self_attn.o_proj.weight': 'attn_output.weight',
  'mlp.gate_up_proj.weight': 'ffn_up.weight', 'mlp.down_proj.weight': 'ffn_down.weight',
};
const PARTS = { gemma3: GEMMA_PARTS, phi3: PHI3_PARTS };

/** The GGUF name of a Hugging Face tensor name (in a file of config `c`'s architecture; default Llama). */
export function ggufName(hf, c = { model_type: 'llama' }) {
  const fixed = { 'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight', 'lm_head.weight': 'output.weight' };
  if (fixed[hf]) return fixed[hf];
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hf);
  const part = (PARTS[ggufArchitecture(c)] ?? LAYER_PARTS)[m?.[2]];
  if (!part) throw new Error(`no GGUF name for ${hf}`);
  return `blk.${m[1]}.${part}`;
}

// wllama takes a prompt as text and answers with text. So that text names token ids one to one,
// every token from id 3 on is one character, U+20000 + id (CJK Extension B on: no space, no
// special meaning to a tokenizer), and no two characters merge (there is no longer token): the
// SentencePiece tokenizer of llama.cpp turns such a text into exactly those ids, and a generated
// text back into its ids. Ids 0-2 are <unk>, <s>, </s> (no text when generated: the bench then
// says so instead of guessing).
export const FIRST_TEXT_ID = 3;
export const tokenText = (id) => String.fromCodePoint(0x20000 + id);

/** The ids a text of tokenText characters names (null if a character is not one). */
export function textIds(text) {
  const ids = [];
  for (const ch of text) {
    const id = ch.codePointAt(0) - 0x20000;
    if (id < FIRST_TEXT_ID) return null;
    ids.push(id);
  }
  return ids;
}

/** A vocabulary llama.cpp accepts (SentencePiece kind, no space prefix): <unk>, <s>, </s>, then tokenText(id). */
export function vocabMetadata(V) {
  const tokens = Array.from({ length: V }, (_, i) => (i === 0 ? '<unk>' : i === 1 ? '<s>' : i === 2 ? '</s>' : tokenText(i)));
  const types = tokens.map((_, i) => (i === 0 ? 2 : i < 3 ? 3 : 1));  // UNKNOWN, CONTROL, NORMAL
  return {
    'tokenizer.ggml.model': { type: 'string', value: 'llama' },
    'tokenizer.ggml.tokens': { type: 'array', of: 'string', value: tokens },
    'tokenizer.ggml.scores': { type: 'array', of: 'f32', value: tokens.map(() => 0) },
    'tokenizer.ggml.token_type': { type: 'array', of: 'i32', value: types },
    'tokenizer.ggml.unknown_token_id': { type: 'u32', value: 0 },
    'tokenizer.ggml.bos_token_id': { type: 'u32', value: 1 },
    'tokenizer.ggml.eos_token_id': { type: 'u32', value: 2 },
    'tokenizer.ggml.add_bos_token': { type: 'bool', value: false },
    'tokenizer.ggml.add_eos_token': { type: 'bool', value: false },
    'tokenizer.ggml.add_space_prefix': { type: 'bool', value: false },
  };
}

const isLongrope = (c) => !!c.rope_scaling && (c.rope_scaling.rope_type ?? c.rope_scaling.type) === 'longrope';

/** Phi-3's keys as convert_hf_to_gguf.py's Phi3MiniModel writes them: the rotated dims
 * (int(partial_rotary_factor x hidden) // heads), the original context, the window (0 for none),
 * and with longrope the cos/sin scale it computes from the context ratio (config.json's own
 * attention_factor is not read). */
function phi3Metadata(c) {
  const original = c.original_max_position_embeddings ?? c.rope_scaling?.original_max_position_embeddings ?? c.max_position_embeddings;
  const scale = c.max_position_embeddings / original;
  return {
    'phi3.rope.dimension_count': { type: 'u32', value: Math.floor(Math.trunc((c.partial_rotary_factor ?? 1) * c.hidden_size) / c.num_attention_heads) },
    'phi3.rope.scaling.original_context_length': { type: 'u32', value: original },
    'phi3.attention.sliding_window': { type: 'u32', value: c.sliding_window ?? 0 },
    ...(isLongrope(c) ? { 'phi3.rope.scaling.attn_factor': { type: 'f32', value: scale > 1 ? Math.sqrt(1 + Math.log(scale) / Math.log(original)) : 1 } } : {}),
  };
}

/** Phi-3's longrope factors as its converter writes them: two F32 tensors, ahead of the weights. */
function ropeFactorTensors(c) {
  if (ggufArchitecture(c) !== 'phi3' || !isLongrope(c)) return [];
  return [['rope_factors_long.weight', c.rope_scaling.long_factor], ['rope_factors_short.weight', c.rope_scaling.short_factor]]
    .map(([name, v]) => ({ name, hf: null, dims: [v.length], type: GGML_TYPE.F32, bytes: () => encode(GGML_TYPE.F32, new Float32Array(v)) }));
}

// llama.cpp's vocabulary loader (llama-vocab.cpp) keys a Phi-3 tokenizer rule on general.name: a
// name holding "phi3" or "phi-3" makes it look "<|endoftext|>", "<unk>", "<s>" and "</s>" up by text,
// which fails ("unordered_map::at: key not found") on the stand-in vocabulary, which has no
// <|endoftext|>. The rule only strips spaces after special tokens (none in the bench's prompts), so
// the phi3 files are named around it.
const defaultName = (c) => (c.model_type === 'phi3' ? 'random-fused-partial-rotary' : `random-${c.model_type}`);

/** Key-values for a model of config `c` (Hugging Face's config.json fields) stored as `fileType`, under its architecture's prefix. */
export function llamaMetadata(c, fileType, name = defaultName(c)) {
  const u32 = (value) => ({ type: 'u32', value });
  const hd = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const arch = ggufArchitecture(c);
  // llama.cpp's Gemma 3 takes the window from here; its pattern (every 6th layer global), local
  // rope base (1e4) and score scale (1/sqrt(head_dim)) are fixed in its code: the config must agree.
  if (arch === 'gemma3' && (c.sliding_window_pattern !== 6 || c.rope_local_base_freq !== 10000 || c.query_pre_attn_scalar !== hd))
    throw new Error('llama.cpp\'s gemma3 has sliding_window_pattern 6, rope_local_base_freq 10000 and query_pre_attn_scalar = head_dim');
  if (arch === 'smollm3' && c.no_rope_layer_interval !== 4) throw new Error('llama.cpp\'s smollm3 skips the rotation on every 4th layer');
  return {
    'general.architecture': { type: 'string', value: arch },
    'general.name': { type: 'string', value: name },
    'general.file_type': u32(FILE_TYPE[fileType]),
    [`${arch}.vocab_size`]: u32(c.vocab_size),
    [`${arch}.context_length`]: u32(c.max_position_embeddings),
    [`${arch}.embedding_length`]: u32(c.hidden_size),
    [`${arch}.block_count`]: u32(c.num_hidden_layers),
    [`${arch}.feed_forward_length`]: u32(c.intermediate_size),
    [`${arch}.rope.dimension_count`]: u32(hd),
    [`${arch}.attention.head_count`]: u32(c.num_attention_heads),
    [`${arch}.attention.head_count_kv`]: u32(c.num_key_value_heads),
    [`${arch}.attention.key_length`]: u32(hd),
    [`${arch}.attention.value_length`]: u32(hd),
    [`${arch}.attention.layer_norm_rms_epsilon`]: { type: 'f32', value: c.rms_norm_eps },
    [`${arch}.rope.freq_base`]: { type: 'f32', value: c.rope_theta },
    ...(arch === 'gemma3' ? { [`${arch}.attention.sliding_window`]: u32(c.sliding_window) } : {}),
    ...(arch === 'phi3' ? phi3Metadata(c) : {}),
    ...vocabMetadata(c.vocab_size),
  };
}

/**
 * The tensors of the GGUF file: [{ name, dims (ne0 first), type, hf, bytes() }]. `values(hf, shape)`
 * gives a tensor's Float32Array in Hugging Face's layout (default: weights.mjs's). F32, F16, Q8_0
 * and Q4_0 are encoded by tools/gguf/ggml_quant.mjs (ggml's reference quantizers); every other type
 * of the K mixes by `codec.encodeWeights(x, { type, cols })` (the package's, from loadAttention()).
 */
export function llamaGgufTensors(c, fileType, values = (hf, shape) => llamaTensor(c, hf, shape), codec = null) {
  if (!(fileType in FILE_TYPE)) throw new Error(`GGUF type ${fileType}: expected one of ${Object.keys(FILE_TYPE).join(', ')}`);
  const types = matrixTypes(c, fileType);
  return [...ropeFactorTensors(c), ...llamaShapes(c).map(([hf, shape]) => {
    const name = ggufName(hf, c), typeName = shape.length === 1 ? 'F32' : types[name], type = GGML_TYPE[typeName];
    const bytes = () => {
      let x = values(hf, shape);
      if (permuted(c) && hf.endsWith('q_proj.weight')) x = permuteRotary(x, c.num_attention_heads, shape[1]);
      if (permuted(c) && hf.endsWith('k_proj.weight')) x = permuteRotary(x, c.num_key_value_heads, shape[1]);
      if (ggufArchitecture(c) === 'gemma3' && hf.endsWith('norm.weight')) x = x.map((w) => 1 + w);
      if (['F32', 'F16', 'Q8_0', 'Q4_0'].includes(typeName)) return encode(type, x);
      if (!codec) throw new Error(`${name} is ${typeName}: llamaGgufTensors needs a codec with encodeWeights (the package's loadAttention())`);
      return codec.encodeWeights(x, { type: typeName, cols: shape[1] });
    };
    return { name, hf, dims: [...shape].reverse(), type, bytes };
  })];
}
