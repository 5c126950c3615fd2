// trace.block (bindings/ts/attention/block_trace.ts): the residual stream, the norms and the MLP of a
// traced layer, in all three builds, against float64 forwards written here (GPT-2, pre-LN with a
// GELU MLP; BERT, post-LN) or in llama_checkpoint.cjs (Llama with grouped K/V heads and SwiGLU;
// Gemma 3 with sandwich norms and GeGLU), each on a small random checkpoint built by the test.
// Tolerance: 5e-6 times the tensor's largest |value| (at least 1): float32 sums of a few dozen
// products against float64. The identities of each layout (afterAttention = input + attention, ...)
// are held to float32 rounding, and a layer's output is the next layer's input.
const fs = require('node:fs');
const path = require('node:path');
const { api, root, variants, load, relativeGap } = require('./helpers.cjs');
const { checkpoint, modelFiles, reference, safetensors } = require('./llama_checkpoint.cjs');

const fixture = (family, name) => path.join(root, 'tests/fixtures', family, name);
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** A seeded generator of uniform values in [-1, 1). */
function uniform(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

/** A random checkpoint with the names and shapes of a fixture's: gains near 1, the rest in ±0.4. */
function randomTensors(dir, seed) {
  const next = uniform(seed), out = {};
  for (const [name, t] of api.parseSafetensors(fs.readFileSync(path.join(dir, 'model.safetensors'))).tensors) {
    const gain = /(ln_\d|ln_f|LayerNorm)\.weight$/.test(name);
    const data = Float32Array.from({ length: t.shape.reduce((a, b) => a * b, 1) }, () => (gain ? 1 + 0.3 * next() : 0.4 * next()));
    // GPT-2's causal-mask buffers (h.N.attn.bias) stay as the fixture has them.
    out[name] = { shape: t.shape, data: /attn\.bias$/.test(name) ? t.toFloat32() : data };
  }
  return out;
}

// --- float64 pieces ----------------------------------------------------------------------------

/** x (rows x in) W (+ b); W stored in x out (GPT-2's Conv1D) or out x in (nn.Linear). */
function matmul(x, rows, W, b, inByOut) {
  const [a, c] = W.shape, inn = inByOut ? a : c, out = inByOut ? c : a, y = new Float64Array(rows * out);
  for (let r = 0; r < rows; r++)
    for (let o = 0; o < out; o++) {
      let s = b ? b.data[o] : 0;
      for (let i = 0; i < inn; i++) s += x[r * inn + i] * (inByOut ? W.data[i * out + o] : W.data[o * inn + i]);
      y[r * out + o] = s;
    }
  return y;
}

function layerNorm(x, rows, g, b, eps) {
  const dim = g.data.length, y = new Float64Array(x.length);
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * dim, (r + 1) * dim);
    const mean = row.reduce((s, v) => s + v, 0) / dim, variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / dim;
    for (let i = 0; i < dim; i++) y[r * dim + i] = (row[i] - mean) / Math.sqrt(variance + eps) * g.data[i] + b.data[i];
  }
  return y;
}

/** softmax(Q K^T / sqrt(d) + mask) V per head, Q K V rows x (H d) side by side. */
function attend(q, k, v, n, H, d, causal) {
  const z = new Float64Array(n * H * d);
  for (let h = 0; h < H; h++)
    for (let i = 0; i < n; i++) {
      const last = causal ? i : n - 1, s = [];
      for (let j = 0; j <= last; j++) {
        let dot = 0;
        for (let t = 0; t < d; t++) dot += q[i * H * d + h * d + t] * k[j * H * d + h * d + t];
        s.push(dot / Math.sqrt(d));
      }
      const max = Math.max(...s), e = s.map((x) => Math.exp(x - max)), sum = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j <= last; j++) for (let t = 0; t < d; t++) z[i * H * d + h * d + t] += (e[j] / sum) * v[j * H * d + h * d + t];
    }
  return z;
}

const add = (a, b) => a.map((x, i) => x + b[i]);
const geluTanh = (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
/** erf by its Taylor series (the activations here stay within |x| < 6, where it converges to
 * float64 precision before cancellation matters). */
function erf(x) {
  let sum = 0, term = x;
  for (let n = 0; n < 200 && Math.abs(term) > 1e-18; n++) {
    sum += term / (2 * n + 1);
    term *= (-x * x) / (n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}
const geluErf = (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));

/** Largest |a - b| over the largest |b| (at least 1). */
const relDiff = (a, b) => relativeGap(a, b, 1);

const TOL = 5e-6;
const worst = {};
afterAll(() => console.log('block trace vs float64 (max relative):', JSON.stringify(worst)));

/** Every slot the reference has, against the trace's, within TOL. */
function expectBlock(block, ref, what) {
  for (const [key, want] of Object.entries(ref)) {
    const got = block[key];
    expect(got).toBeInstanceOf(Float32Array);
    const d = relDiff(got, want);
    worst[what] = Math.max(worst[what] ?? 0, d);
    if (!(d < TOL)) throw new Error(`${what}: ${key} differs from float64 by ${d} (relative)`);
  }
}

/** afterAttention = input + attention and the rest of the layout's sums, to float32 rounding. */
function expectIdentities(block) {
  const sum = (a, b) => a.map((x, i) => x + b[i]);
  expect(relDiff(block.afterAttention, sum(block.input, block.attention))).toBeLessThan(1e-6);
  expect(relDiff(block.afterMlp, sum(block.layout === 'pre-norm' ? block.afterAttention : block.mlpInput, block.mlp))).toBeLessThan(1e-6);
  if (block.layout === 'pre-norm') expect(block.output).toEqual(block.afterMlp);
  expect(block.up.length).toBe(block.n * block.ffnDim);
  expect(block.activated.length).toBe(block.n * block.ffnDim);
}

describe.each(variants)('%s build', (variant) => {
  let mod;
  beforeAll(async () => { mod = await load(variant); });

  test('GPT-2 (pre-LN, gelu_new): every layer\'s stream, norms and MLP as the float64 forward', async () => {
    const dir = fixture('gpt2', 'f32_tiny'), config = readJson(path.join(dir, 'config.json'));
    const w = randomTensors(dir, 11), tokens = [3, 17, 8, 8, 30, 1, 22, 5];
    const vocab = Object.fromEntries(Array.from({ length: config.vocab_size }, (_, i) => [String.fromCharCode(0x21 + i), i]));
    const model = await mod.loadModel({ config, weights: safetensors(w), tokenizer: { vocab, merges: '' } });
    try {
      const { n_embd: C, n_head: H, layer_norm_epsilon: eps } = config, n = tokens.length;
      let x = new Float64Array(n * C);
      tokens.forEach((t, i) => { for (let c = 0; c < C; c++) x[i * C + c] = w['wte.weight'].data[t * C + c] + w['wpe.weight'].data[i * C + c]; });
      for (let l = 0; l < config.n_layer; l++) {
        const p = `h.${l}.`, input = x;
        const h = layerNorm(x, n, w[p + 'ln_1.weight'], w[p + 'ln_1.bias'], eps);
        const qkv = matmul(h, n, w[p + 'attn.c_attn.weight'], w[p + 'attn.c_attn.bias'], true);
        const part = (k) => Float64Array.from({ length: n * C }, (_, i) => qkv[Math.floor(i / C) * 3 * C + k * C + (i % C)]);
        const attention = matmul(attend(part(0), part(1), part(2), n, H, C / H, true), n, w[p + 'attn.c_proj.weight'], w[p + 'attn.c_proj.bias'], true);
        const afterAttention = add(input, attention);
        const mlpInput = layerNorm(afterAttention, n, w[p + 'ln_2.weight'], w[p + 'ln_2.bias'], eps);
        const up = matmul(mlpInput, n, w[p + 'mlp.c_fc.weight'], w[p + 'mlp.c_fc.bias'], true), activated = up.map(geluTanh);
        const mlp = matmul(activated, n, w[p + 'mlp.c_proj.weight'], w[p + 'mlp.c_proj.bias'], true);
        x = add(afterAttention, mlp);
        const { trace } = model.run(tokens, { traceLayer: l, logitsToKeep: 0 });
        const block = trace.block;
        expect(block.layout).toBe('pre-norm');
        expect([block.n, block.dModel, block.ffnDim]).toEqual([n, C, 4 * C]);
        expectBlock(block, { input, attention, afterAttention, mlpInput, up, activated, mlp, afterMlp: x, output: x }, `gpt2 ${variant}`);
        expectBlock(trace, { x: h }, `gpt2 ${variant}`); // the attention's X is ln_1 of the block's input
        expect(block.gate).toBeNull();
        expect(block.cross).toBeNull();
        expect(block.norms.map((m) => [m.gain, m.bias])).toEqual([[w[p + 'ln_1.weight'].data, w[p + 'ln_1.bias'].data], [w[p + 'ln_2.weight'].data, w[p + 'ln_2.bias'].data]]);
        expect(block.norms.map((m) => m.eps)).toEqual([Math.fround(eps), Math.fround(eps)]);
        expectIdentities(block);
      }
    } finally {
      model.dispose();
    }
  });

  test('BERT (post-LN, erf GELU): every layer as the float64 forward, padding rows included', async () => {
    const dir = fixture('bert', 'f32_mlm_prefixed'), config = readJson(path.join(dir, 'config.json'));
    const w = randomTensors(dir, 23), tokens = [2, 9, 4, 17, 30, 3];
    const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: config.vocab_size - 5 }, (_, i) => `t${i + 5}`)].join('\n');
    const model = await mod.loadModel({ config, weights: safetensors(w), tokenizer: { vocab } });
    try {
      const { hidden_size: C, num_attention_heads: H, layer_norm_eps: eps } = config, n = tokens.length, e = 'bert.embeddings.';
      const sum = new Float64Array(n * C);
      tokens.forEach((t, i) => {
        for (let c = 0; c < C; c++)
          sum[i * C + c] = w[e + 'word_embeddings.weight'].data[t * C + c] + w[e + 'position_embeddings.weight'].data[i * C + c] + w[e + 'token_type_embeddings.weight'].data[c];
      });
      let x = layerNorm(sum, n, w[e + 'LayerNorm.weight'], w[e + 'LayerNorm.bias'], eps);
      for (let l = 0; l < config.num_hidden_layers; l++) {
        const p = `bert.encoder.layer.${l}.`, input = x, lin = (name, v) => matmul(v, n, w[p + name + '.weight'], w[p + name + '.bias'], false);
        const attention = lin('attention.output.dense', attend(lin('attention.self.query', x), lin('attention.self.key', x), lin('attention.self.value', x), n, H, C / H, false));
        const afterAttention = add(input, attention);
        const mlpInput = layerNorm(afterAttention, n, w[p + 'attention.output.LayerNorm.weight'], w[p + 'attention.output.LayerNorm.bias'], eps);
        const up = lin('intermediate.dense', mlpInput), activated = up.map(geluErf), mlp = lin('output.dense', activated);
        const afterMlp = add(mlpInput, mlp);
        x = layerNorm(afterMlp, n, w[p + 'output.LayerNorm.weight'], w[p + 'output.LayerNorm.bias'], eps);
        const block = model.run({ tokens }, { traceLayer: l }).trace.block;
        expect(block.layout).toBe('post-norm');
        expectBlock(block, { input, attention, afterAttention, mlpInput, up, activated, mlp, afterMlp, output: x }, `bert ${variant}`);
        expect(block.norms.map((m) => m.gain)).toEqual([w[p + 'attention.output.LayerNorm.weight'].data, w[p + 'output.LayerNorm.weight'].data]);
        expect(block.norms.map((m) => m.bias)).toEqual([w[p + 'attention.output.LayerNorm.bias'].data, w[p + 'output.LayerNorm.bias'].data]);
        expectIdentities(block);
      }
      // The last layer's output is what run() returns as hidden.
      expect(relDiff(model.run({ tokens }).hidden, x)).toBeLessThan(TOL);
    } finally {
      model.dispose();
    }
  });

  test.each([
    ['Llama, 2 K/V heads, SwiGLU', { model_type: 'llama', vocab_size: 23, max_position_embeddings: 64, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, hidden_act: 'silu', tie_word_embeddings: false }],
    ['Gemma 3, sandwich norms, GeGLU', { model_type: 'gemma3_text', vocab_size: 23, max_position_embeddings: 64, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 6, rms_norm_eps: 1e-6, bos_token_id: 0, eos_token_id: 1,
      hidden_activation: 'gelu_pytorch_tanh', sliding_window: 4, layer_types: ['sliding_attention', 'full_attention'], rope_theta: 1e6, rope_local_base_freq: 1e4, query_pre_attn_scalar: 5, tie_word_embeddings: true }],
  ])('%s: every layer as llama_checkpoint\'s float64 forward', async (what, config) => {
    const tensors = checkpoint(config, 7), tokens = [0, 5, 9, 2, 2, 17, 11, 4, 20];
    const blocks = [];
    reference(config, tensors, tokens, blocks);
    const model = await mod.loadModel(modelFiles(config, tensors));
    try {
      const gemma = config.model_type === 'gemma3_text';
      for (let l = 0; l < config.num_hidden_layers; l++) {
        const { trace } = model.run(tokens, { traceLayer: l, logitsToKeep: 0 });
        const { attentionInput, ...ref } = blocks[l], block = trace.block;
        expect(block.layout).toBe('pre-norm');
        expect(block.ffnDim).toBe(config.intermediate_size);
        expectBlock(block, ref, `${config.model_type} ${variant}`);
        expectBlock(trace, { x: attentionInput }, `${config.model_type} ${variant}`);
        // The gains the core used: Gemma's are 1 + the stored weight; no bias (RMSNorm).
        const stored = tensors[`model.layers.${l}.input_layernorm.weight`].data;
        expect(relDiff(block.norms[0].gain, gemma ? stored.map((g) => 1 + g) : stored)).toBeLessThan(1e-7);
        expect(block.norms.map((m) => m.bias)).toEqual([null, null]);
        expectIdentities(block);
      }
    } finally {
      model.dispose();
    }
  });

  test('BART decoder layer: the cross-attention between, three norms, and a layer\'s output is the next one\'s input', async () => {
    const dir = fixture('bart', 'f32_prefixed'), config = readJson(path.join(dir, 'config.json'));
    const { source, decoder_input: decoderInput } = readJson(path.join(dir, 'reference.json')).cases[2];
    const bytes = fs.readFileSync(path.join(dir, 'model.safetensors'));
    const model = await mod.loadModel({ config, weights: bytes, tokenizer: { vocab: readJson(path.join(dir, 'vocab.json')) } });
    try {
      const [b0, b1] = [0, 1].map((l) => model.run(source, decoderInput, { traceLayer: l }).trace.block);
      expect(b0.layout).toBe('post-norm');
      expect(b0.norms).toHaveLength(3);
      expect(b0.cross.length).toBe(b0.n * b0.dModel);
      const sum = (a, b) => a.map((x, i) => x + b[i]);
      expect(relDiff(b0.afterAttention, sum(b0.input, b0.attention))).toBeLessThan(1e-6);
      expect(relDiff(b0.afterMlp, sum(b0.mlpInput, b0.mlp))).toBeLessThan(1e-6);
      // (to float32 rounding: a traced attention sums in another order than an untraced one)
      expect(relDiff(b1.input, b0.output)).toBeLessThan(1e-6);
    } finally {
      model.dispose();
    }
  });

  test('a standalone attention layer\'s trace has no block', async () => {
    const mha = mod.createMultiHeadAttention({ dModel: 4, numHeads: 2, bias: false });
    try {
      mha.setWeights({ wQ: new Float32Array(16), wK: new Float32Array(16), wV: new Float32Array(16), wO: new Float32Array(16) });
      const out = mha.forward(Float32Array.from({ length: 8 }, (_, i) => i / 8), { trace: true });
      expect(out.trace.q).toHaveLength(8);
      expect(out.trace.block).toBeUndefined();
    } finally {
      mha.dispose();
    }
  });
});
