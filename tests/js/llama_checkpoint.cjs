// Tiny Llama-family checkpoints in Hugging Face's exact layout (config.json fields, tensor names,
// nn.Linear out x in), written as safetensors, and a float64 reference written from the
// architecture (RMSNorm, rotate-half rotary embeddings, grouped-query attention with an optional
// sliding window, SwiGLU): shared by llama.test.cjs, fuzz_llama.test.cjs and llama_hub.test.cjs.

// --- a checkpoint in the Hugging Face layout -------------------------------------------------

/** The upper 16 bits of each float32: bfloat16, exact for values that are bfloat16 already. */
function bf16Bytes(data) {
  const words = new Uint32Array(Float32Array.from(data).buffer);
  return new Uint8Array(Uint16Array.from(words, (w) => w >>> 16).buffer);
}

/** A float32 rounded to the nearest bfloat16 (ties to even), as a number. */
function toBf16(x) {
  const w = new Uint32Array(Float32Array.of(x).buffer)[0];
  const rounded = (w + 0x7fff + ((w >>> 16) & 1)) & 0xffff0000;
  return new Float32Array(Uint32Array.of(rounded >>> 0).buffer)[0];
}

/** safetensors bytes (an 8-byte header length, the JSON header, the data) of tensors stored as
 * F32, or as BF16 (values must then be bfloat16 already: see checkpoint's bf16). */
function safetensors(tensors, dtype = 'F32') {
  const size = dtype === 'BF16' ? 2 : 4, header = {};
  let offset = 0;
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + data.length * size] };
    offset += data.length * size;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(new TextEncoder().encode(json), 8);
  let at = 8 + json.length;
  for (const { data } of Object.values(tensors)) {
    out.set(dtype === 'BF16' ? bf16Bytes(data) : new Uint8Array(Float32Array.from(data).buffer), at);
    at += data.length * size;
  }
  return out;
}

/** mulberry32: the same weights every run. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

const LETTERS = 'abcdefghijklmnopqrstu'.split('');
const VOCAB = ['<s>', '</s>', ...LETTERS];  // 23 tokens

/** One character a token, <s> and </s> special: expectations need no BPE rules. */
function tokenizerFiles() {
  return {
    tokenizer: {
      version: '1.0', normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null,
      added_tokens: ['<s>', '</s>'].map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
      model: { type: 'BPE', vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])), merges: [] },
    },
    config: { bos_token: '<s>', eos_token: '</s>' },
  };
}

/** A config.json of this model type, and its tensors under Hugging Face's names (values float32;
 * with bf16, values that are bfloat16, as a checkpoint trained in it holds). */
function checkpoint(config, seed, bf16 = false) {
  const next = random(seed);
  const { hidden_size: D, intermediate_size: F, num_attention_heads: H, vocab_size: V } = config;
  const KV = config.num_key_value_heads, d = config.head_dim ?? D / H;
  const bias = config.model_type === 'qwen2' || config.attention_bias === true;
  const tensors = {};
  const add = (name, shape, around = 0) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const value = () => Math.fround(around + 0.8 * next());
    tensors[name] = { shape, data: Array.from({ length: n }, bf16 ? () => toBf16(value()) : value) };
  };
  // Gemma stores each norm gain as weight - 1 (Gemma3RMSNorm multiplies by 1 + weight): near 0.
  const gemma = config.model_type === 'gemma3_text', gain = gemma ? 0 : 1;
  add('model.embed_tokens.weight', [V, D]);
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    add(p + 'input_layernorm.weight', [D], gain);
    if (config.model_type === 'phi3') {  // Phi3Attention's qkv_proj: [Q | K | V] rows
      add(p + 'self_attn.qkv_proj.weight', [(H + 2 * KV) * d, D]);
    } else {
      add(p + 'self_attn.q_proj.weight', [H * d, D]);
      add(p + 'self_attn.k_proj.weight', [KV * d, D]);
      add(p + 'self_attn.v_proj.weight', [KV * d, D]);
    }
    if (bias) for (const m of ['q', 'k', 'v']) add(p + `self_attn.${m}_proj.bias`, [(m === 'q' ? H : KV) * d]);
    add(p + 'self_attn.o_proj.weight', [D, H * d]);
    if (config.model_type === 'qwen3' || gemma) for (const m of ['q', 'k']) add(p + `self_attn.${m}_norm.weight`, [d], gain);
    add(p + 'post_attention_layernorm.weight', [D], gain);
    if (gemma) for (const m of ['pre', 'post']) add(p + `${m}_feedforward_layernorm.weight`, [D], gain);
    if (config.model_type === 'phi3') add(p + 'mlp.gate_up_proj.weight', [2 * F, D]);  // Phi3MLP: [gate | up]
    else {
      add(p + 'mlp.gate_proj.weight', [F, D]);
      add(p + 'mlp.up_proj.weight', [F, D]);
    }
    add(p + 'mlp.down_proj.weight', [D, F]);
  }
  add('model.norm.weight', [D], gain);
  if (!config.tie_word_embeddings) add('lm_head.weight', [V, D]);
  return tensors;
}

// --- the float64 reference, from the architecture ----------------------------------------------

/** x (rows x in) W^T (+ b), W out x in as nn.Linear stores it. */
function linear(x, rows, W, b) {
  const [out, inn] = W.shape, y = new Float64Array(rows * out);
  for (let r = 0; r < rows; r++)
    for (let o = 0; o < out; o++) {
      let s = b ? b.data[o] : 0;
      for (let i = 0; i < inn; i++) s += x[r * inn + i] * W.data[o * inn + i];
      y[r * out + o] = s;
    }
  return y;
}

function rmsNorm(x, rows, g, eps) {
  const dim = g.data.length, y = new Float64Array(x.length);
  for (let r = 0; r < rows; r++) {
    let ss = 0;
    for (let i = 0; i < dim; i++) ss += x[r * dim + i] ** 2;
    const inv = 1 / Math.sqrt(ss / dim + eps);
    for (let i = 0; i < dim; i++) y[r * dim + i] = x[r * dim + i] * inv * g.data[i];
  }
  return y;
}

/** Frequencies theta^(-2i/d) over the d rotated values, stretched by rope_scaling linear
 * (positions / factor) or divided by longrope's factors (the long ones for a run of n positions
 * past original_max_position_embeddings: HF's longrope_frequency_update). */
function frequencies(config, d, n = 1, theta = config.rope_theta ?? 10000) {
  const r = config.rope_scaling, factor = r?.type === 'linear' ? r.factor : 1;
  const long = n > (config.original_max_position_embeddings ?? r?.original_max_position_embeddings);
  const ext = r?.type === 'longrope' ? (long ? r.long_factor : r.short_factor) : null;
  return Array.from({ length: d / 2 }, (_, i) => theta ** (-2 * i / d) / factor / (ext ? ext[i] : 1));
}

/** longrope's cos / sin scale: attention_factor, else sqrt(1 + ln(s) / ln(original)) with s the
 * context over the original (HF's _compute_longrope_parameters); 1 for other types. */
function ropeScale(config) {
  const r = config.rope_scaling;
  if (r?.type !== 'longrope') return 1;
  if (r.attention_factor) return r.attention_factor;
  const original = config.original_max_position_embeddings, s = config.max_position_embeddings / original;
  return s <= 1 ? 1 : Math.sqrt(1 + Math.log(s) / Math.log(original));
}

/** x * cos + rotate_half(x) * sin on the first `rot` values of each head of width d in a row, at
 * `pos` (the rest pass: Phi3's apply_rotary_pos_emb over q[..., :rotary_dim]); cos and sin scaled. */
function rotate(row, offset, heads, d, freq, pos, rot = d, scale = 1) {
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < rot / 2; i++) {
      const a = row[offset + h * d + i], b = row[offset + h * d + i + rot / 2];
      const c = scale * Math.cos(pos * freq[i]), s = scale * Math.sin(pos * freq[i]);
      row[offset + h * d + i] = a * c - b * s;
      row[offset + h * d + i + rot / 2] = b * c + a * s;
    }
}

/** Rows [from, from + count) of a matrix (a slice of a fused projection, as Phi-3's forward slices its output). */
function rows(W, from, count) {
  const cols = W.shape[1];
  return { shape: [count, cols], data: W.data.slice(from * cols, (from + count) * cols) };
}

/** logits (n x V) and attention (layers x H x n x n) of a token sequence; `blocks`, when given,
 * gets each layer's residual stream, normed inputs and MLP intermediates (as BlockTrace names them). */
function reference(config, weights, tokens, blocks = null) {
  // Phi-3: qkv_proj's output is split as query_pos = H d, then K d KV, then V; gate_up_proj's as
  // chunk(2): gate first. The same network under separate names.
  const w = { ...weights };
  if (config.model_type === 'phi3') {
    const D = config.hidden_size, H = config.num_attention_heads, KV = config.num_key_value_heads, d = config.head_dim ?? D / H;
    for (let l = 0; l < config.num_hidden_layers; l++) {
      const p = `model.layers.${l}.`, qkv = w[p + 'self_attn.qkv_proj.weight'], gu = w[p + 'mlp.gate_up_proj.weight'];
      w[p + 'self_attn.q_proj.weight'] = rows(qkv, 0, H * d);
      w[p + 'self_attn.k_proj.weight'] = rows(qkv, H * d, KV * d);
      w[p + 'self_attn.v_proj.weight'] = rows(qkv, (H + KV) * d, KV * d);
      w[p + 'mlp.gate_proj.weight'] = rows(gu, 0, config.intermediate_size);
      w[p + 'mlp.up_proj.weight'] = rows(gu, config.intermediate_size, config.intermediate_size);
    }
  }
  const n = tokens.length, { hidden_size: D, num_attention_heads: H, num_key_value_heads: KV, vocab_size: V } = config;
  const d = config.head_dim ?? D / H, eps = config.rms_norm_eps, rot = Math.floor(d * (config.partial_rotary_factor ?? 1));
  const freq = frequencies(config, rot, n), scale = ropeScale(config);
  // Gemma 3 (Gemma3ForCausalLM): Gemma3RMSNorm's 1 + weight, embeddings times sqrt(hidden_size),
  // sliding layers (layer_types) with rope_local_base_freq, query_pre_attn_scalar^-1/2, sandwich
  // norms, gelu_pytorch_tanh, final_logit_softcapping.
  const gemma = config.model_type === 'gemma3_text';
  const norm = (v, rows, g) => rmsNorm(v, rows, gemma ? { data: g.data.map((x) => 1 + x) } : g, eps);
  const localFreq = gemma ? frequencies({}, rot, n, config.rope_local_base_freq) : freq;
  const sliding = (l) => (gemma ? config.layer_types[l] === 'sliding_attention' : Boolean(config.sliding_window));
  const scoreScale = gemma ? config.query_pre_attn_scalar ** -0.5 : 1 / Math.sqrt(d);
  const x = new Float64Array(n * D), embedScale = gemma ? Math.sqrt(D) : 1;
  tokens.forEach((t, i) => { for (let j = 0; j < D; j++) x[i * D + j] = w['model.embed_tokens.weight'].data[t * D + j] * embedScale; });
  const attention = [];
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    const block = blocks ? { input: Float64Array.from(x) } : null;
    const h = norm(x, n, w[p + 'input_layernorm.weight']);
    const q = linear(h, n, w[p + 'self_attn.q_proj.weight'], w[p + 'self_attn.q_proj.bias']);
    const k = linear(h, n, w[p + 'self_attn.k_proj.weight'], w[p + 'self_attn.k_proj.bias']);
    const v = linear(h, n, w[p + 'self_attn.v_proj.weight'], w[p + 'self_attn.v_proj.bias']);
    // Qwen3Attention: q_norm / k_norm over each head's d values (view(..., -1, head_dim)), then the rotation.
    const qkNorm = config.model_type === 'qwen3' || gemma;
    const qn = qkNorm ? norm(q, n * H, w[p + 'self_attn.q_norm.weight']) : q;
    const kn = qkNorm ? norm(k, n * KV, w[p + 'self_attn.k_norm.weight']) : k;
    q.set(qn), k.set(kn);
    // SmolLM3Attention: use_rope = no_rope_layers[layer] (default: every layer but each interval-th).
    const interval = config.no_rope_layer_interval ?? 4;
    const useRope = config.model_type !== 'smollm3' || (config.no_rope_layers?.length ? config.no_rope_layers[l] === 1 : (l + 1) % interval !== 0);
    const f = sliding(l) ? localFreq : freq;
    for (let i = 0; i < n && useRope; i++) { rotate(q, i * H * d, H, d, f, i, rot, scale); rotate(k, i * KV * d, KV, d, f, i, rot, scale); }
    const z = new Float64Array(n * H * d);
    for (let hh = 0; hh < H; hh++) {
      const g = Math.floor(hh / (H / KV));  // repeat_kv: H / KV query heads per K/V head
      for (let i = 0; i < n; i++) {
        // Causal; with a sliding window W, only keys j > i - W (Mistral).
        const first = sliding(l) ? Math.max(0, i - config.sliding_window + 1) : 0;
        const s = [];
        for (let j = first; j <= i; j++) {
          let dot = 0;
          for (let t = 0; t < d; t++) dot += q[(i * H + hh) * d + t] * k[(j * KV + g) * d + t];
          s.push(dot * scoreScale);
        }
        const max = Math.max(...s), e = s.map((x) => Math.exp(x - max)), sum = e.reduce((a, b) => a + b, 0);
        for (let j = 0; j < n; j++) {
          const pj = j >= first && j <= i ? e[j - first] / sum : 0;
          attention.push(pj);
          for (let t = 0; t < d && pj > 0; t++) z[(i * H + hh) * d + t] += pj * v[(j * KV + g) * d + t];
        }
      }
    }
    const o0 = linear(z, n, w[p + 'self_attn.o_proj.weight']);
    const o = gemma ? norm(o0, n, w[p + 'post_attention_layernorm.weight']) : o0;
    for (let i = 0; i < x.length; i++) x[i] += o[i];
    if (block) Object.assign(block, { attentionInput: h, attention: o, afterAttention: Float64Array.from(x) });
    const h2 = norm(x, n, w[p + (gemma ? 'pre_feedforward_layernorm.weight' : 'post_attention_layernorm.weight')]);
    const gate = linear(h2, n, w[p + 'mlp.gate_proj.weight']), up = linear(h2, n, w[p + 'mlp.up_proj.weight']);
    const act = gemma ? (g) => 0.5 * g * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (g + 0.044715 * g ** 3))) : (g) => g / (1 + Math.exp(-g));
    if (block) Object.assign(block, { mlpInput: h2, gate: Float64Array.from(gate), up });
    for (let i = 0; i < gate.length; i++) gate[i] = act(gate[i]) * up[i];
    const m0 = linear(gate, n, w[p + 'mlp.down_proj.weight']);
    const m = gemma ? norm(m0, n, w[p + 'post_feedforward_layernorm.weight']) : m0;
    for (let i = 0; i < x.length; i++) x[i] += m[i];
    if (block) blocks.push(Object.assign(block, { activated: gate, mlp: m, afterMlp: Float64Array.from(x), output: Float64Array.from(x) }));
  }
  const final = norm(x, n, w['model.norm.weight']);
  const head = config.tie_word_embeddings ? w['model.embed_tokens.weight'] : w['lm_head.weight'];
  const logits = linear(final, n, head), cap = config.final_logit_softcapping;
  if (cap) for (let i = 0; i < logits.length; i++) logits[i] = cap * Math.tanh(logits[i] / cap);
  return { logits, attention: Float64Array.from(attention), vocab: V };
}

const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const argmax = (row) => row.reduce((best, x, i) => (x > row[best] ? i : best), 0);

/** A loadable model's files: config, its checkpoint's bytes and the one-character tokenizer. */
const modelFiles = (config, tensors) => ({ config, weights: safetensors(tensors), tokenizer: tokenizerFiles() });

module.exports = { safetensors, checkpoint, tokenizerFiles, reference, modelFiles, maxDiff, argmax, frequencies, rotate, random };
