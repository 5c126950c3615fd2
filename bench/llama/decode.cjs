// `node bench/llama/decode.cjs`: generation speed of a SmolLM2-135M-shaped random Llama model
// (30 layers, 9 query heads over 3 K/V heads, hidden 576, vocab 49152; bfloat16 checkpoint made in
// memory) through the package (dist/), 64-token prompt + 64 greedy tokens, f32 / f16 / q8 at one
// thread and q8 at two. Ours only: the comparison with onnxruntime-web is not built yet.
const path = require('node:path');
const api = require(path.join(__dirname, '..', '..', 'dist', 'index.cjs'));
const C = { model_type: 'llama', vocab_size: 49152, max_position_embeddings: 8192, hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30,
  num_attention_heads: 9, num_key_value_heads: 3, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true, bos_token_id: 0, eos_token_id: 0 };
const D = 576, F = 1536, V = 49152, H = 9, KV = 3, d = 64;
const shapes = { 'model.embed_tokens.weight': [V, D], 'model.norm.weight': [D] };
for (let l = 0; l < 30; l++) { const p = `model.layers.${l}.`;
  Object.assign(shapes, { [p + 'input_layernorm.weight']: [D], [p + 'post_attention_layernorm.weight']: [D], [p + 'self_attn.q_proj.weight']: [H * d, D],
    [p + 'self_attn.k_proj.weight']: [KV * d, D], [p + 'self_attn.v_proj.weight']: [KV * d, D], [p + 'self_attn.o_proj.weight']: [D, H * d],
    [p + 'mlp.gate_proj.weight']: [F, D], [p + 'mlp.up_proj.weight']: [F, D], [p + 'mlp.down_proj.weight']: [D, F] }); }
const header = {}; let off = 0;
for (const [n, s] of Object.entries(shapes)) { const c = s.reduce((a, b) => a * b, 1); header[n] = { dtype: 'BF16', shape: s, data_offsets: [off, off + 2 * c] }; off += 2 * c; }
let json = JSON.stringify(header); json += ' '.repeat((8 - json.length % 8) % 8);
const buf = new Uint8Array(8 + json.length + off); new DataView(buf.buffer).setBigUint64(0, BigInt(json.length), true); buf.set(Buffer.from(json), 8);
const u16 = new Uint16Array(buf.buffer, 8 + json.length, off / 2); let s = 12345;
const f = new Float32Array(1), w = new Uint32Array(f.buffer);
for (const [n, sh] of Object.entries(shapes)) { const [a, b] = header[n].data_offsets; const norm = sh.length === 1; const scale = norm ? 0 : 0.05;
  for (let i = a / 2; i < b / 2; i++) { s = (s * 1664525 + 1013904223) >>> 0; f[0] = (norm ? 1 : 0) + scale * ((s / 4294967296) - 0.5) * 2; u16[i] = w[0] >>> 16; } }
// A stand-in tokenizer (token ids are given); ids past it decode to no text.
const vocab = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [String.fromCharCode(0x100 + i), i]));
const tokenizer = { tokenizer: { version: '1.0', normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, added_tokens: [], model: { type: 'BPE', vocab, merges: [] } } };
(async () => {
  for (const [threads, dtype] of [[1, 'f32'], [1, 'f16'], [1, 'q8'], [2, 'q8']]) {
    const mod = await api.loadAttention({ threads });
    const t0 = Date.now();
    const m = await mod.loadModel({ config: C, weights: buf, tokenizer }, { dtype });
    const loadMs = Date.now() - t0;
    const prompt = Array.from({ length: 64 }, (_, i) => (i * 37) % 200);
    const out = await m.generate(prompt, { maxNewTokens: 64 });
    console.log(`${mod.variant} threads=${threads} ${dtype}: load ${loadMs} ms, first token ${out.timeToFirstTokenMs.toFixed(0)} ms, decode ${out.tokensPerSecond.toFixed(1)} tokens/s (${out.tokens.length} new)`);
    m.dispose();
  }
})();
