// Activations the weights overflow (issue 38), through loadModel on every family: a bfloat16
// checkpoint holding 1e38 weights (finite, and legal in bf16) where float32 overflows for certain
// on some inputs and not on others. The error names the model, the layer (from 0), the tensor and
// the position, says the weights made it (never "query contains NaN", which blamed the input),
// and the model then still runs the inputs that never reach those weights.
//   GPT-2, BERT, BART: one position's embedding row all 1e38 (the shipped models, rewritten as
//   bf16): the first LayerNorm after it sums the row to Infinity, so only inputs that long fail.
//   Llama: one gain of a layer's post_attention_layernorm at 1e38, with the MLP's gate and up
//   reading that feature positively and the feature's sign set by the token alone (the rows that
//   write it zeroed): silu(gate) * up overflows for the token 'a' only.
//   And one that must not fail: a Llama whose embeddings are in the 1e36s, finite throughout.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { load, root } = require('./helpers.cjs');
const { safetensors, checkpoint, modelFiles, reference, maxDiff } = require('./llama_checkpoint.cjs');

const HUGE = 1e38;
const TAIL = ": the model's weights produced it \\(float32 overflowed\\), not the input$";
const VALUE = '(NaN|-?Infinity)';

let attn;
const dirs = [];
beforeAll(async () => { attn = await load('simd'); });
afterAll(() => { for (const d of dirs) fs.rmSync(d, { recursive: true, force: true }); });

/** IEEE half -> number. */
function half(h) {
  const e = (h >> 10) & 0x1f, m = h & 0x3ff, s = h & 0x8000 ? -1 : 1;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
const HALVES = Float32Array.from({ length: 65536 }, (_, h) => half(h));

/** A shipped model's tensors ({ name: { shape, data } }, as float32) from its F16 safetensors. */
function readShipped(model) {
  const bytes = fs.readFileSync(path.join(root, 'web/models', model, 'model.safetensors'));
  const n = Number(bytes.readBigUInt64LE(0)), header = JSON.parse(bytes.subarray(8, 8 + n).toString());
  const tensors = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    expect(t.dtype).toBe('F16');
    const [a, b] = t.data_offsets, at = bytes.byteOffset + 8 + n + a;
    const halves = new Uint16Array(bytes.buffer.slice(at, at + b - a)), data = new Float32Array(halves.length);
    for (let i = 0; i < data.length; i++) data[i] = HALVES[halves[i]];
    tensors[name] = { shape: t.shape, data };
  }
  return tensors;
}

/** A folder with the shipped model's files but model.safetensors: `tensors` as BF16. */
function folder(model, tensors) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'overflow-'));
  dirs.push(dir);
  const from = path.join(root, 'web/models', model);
  for (const file of fs.readdirSync(from)) if (file !== 'model.safetensors') fs.symlinkSync(path.join(from, file), path.join(dir, file));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), safetensors(tensors, 'BF16'));
  return dir;
}

/** Row `row` of a rows x dim tensor set to 1e38. */
function hugeRow(tensor, row) {
  const dim = tensor.shape[1];
  tensor.data.fill(HUGE, row * dim, (row + 1) * dim);
}

const named = (fn, pattern) => expect(fn).toThrow(new RegExp(pattern));
const finite = (a) => a.every(Number.isFinite);

test('GPT-2: position 6\'s embedding overflows layer 0\'s ln_1; shorter runs and decoding steps before it work', async () => {
  const tensors = readShipped('brown-gpt2');
  hugeRow(tensors['wpe.weight'], 6);
  const model = await attn.loadModel(folder('brown-gpt2', tensors));
  try {
    const where = `GPT-2 model: NaN in layer 0's self-attention input \\(h\\.0\\.ln_1\\) at position 6, feature 0${TAIL}`;
    named(() => model.run([10, 11, 12, 13, 14, 15, 16, 17]), `^run: ${where}`);
    const good = model.run([10, 11, 12, 13, 14, 15]);
    expect(finite(good.logits)).toBe(true);
    // generate() runs the prompt through the KV cache: a prompt of 7 reaches position 6; one of 6
    // with a single new token (not fed back) does not.
    await expect(model.generate([10, 11, 12, 13, 14, 15, 16], { maxNewTokens: 3 })).rejects.toThrow(new RegExp(`^generate: ${where}`));
    await expect(model.generate([10, 11, 12, 13, 14, 15], { maxNewTokens: 1 })).resolves.toBeDefined();
    expect(model.run([10, 11, 12, 13, 14, 15]).logits).toEqual(good.logits);  // nothing left behind
  } finally {
    model.dispose();
  }
});

test('BERT: position 5\'s embedding is named with its sequence; shorter inputs and batches work', async () => {
  const tensors = readShipped('brown-bert');
  hugeRow(tensors['bert.embeddings.position_embeddings.weight'], 5);
  const model = await attn.loadModel(folder('brown-bert', tensors));
  try {
    const where = (seq) => `BERT model: NaN in the embeddings \\(embeddings\\.LayerNorm\\) at position 5${seq}, feature 0${TAIL}`;
    named(() => model.run({ tokens: [2, 40, 41, 42, 43, 44, 45, 3] }), `^run: ${where('')}`);
    const good = model.run({ tokens: [2, 40, 41, 3] });
    expect(finite(good.hidden)).toBe(true);
    // embed() pads a batch to its longest input: the second sequence reaches position 5.
    named(() => model.embed(['a b', 'the jury said that it did find']), `^embed: ${where(' of sequence 0')}`);
    expect(finite(model.embed(['a b', 'the jury']).data)).toBe(true);
  } finally {
    model.dispose();
  }
});

test('BART: the encoder\'s and the decoder\'s positions are named apart; shorter sources and outputs work', async () => {
  const tensors = readShipped('g2p-bart');
  hugeRow(tensors['model.encoder.embed_positions.weight'], 2 + 7);  // BART's positions start at row 2
  hugeRow(tensors['model.decoder.embed_positions.weight'], 2 + 3);
  const model = await attn.loadModel(folder('g2p-bart', tensors));
  try {
    const word = (w) => [0, ...[...w].map((c) => c.charCodeAt(0) - 97 + 5), 2];  // <s> letters </s>
    named(() => model.generate(word('pronounce'), { maxNewTokens: 2 }),
      `^generate: BART encoder: NaN in the embeddings \\(encoder\\.layernorm_embedding\\) at position 7, feature 0${TAIL}`);
    named(() => model.generate(word('plant'), { maxNewTokens: 8 }),  // P L AE N T: a 4th position
      `^generate: BART decoder: NaN in the embeddings \\(decoder\\.layernorm_embedding\\) at position 3(, feature 0| of sequence 0, feature 0)${TAIL}`);
    const good = model.generate(word('plant'), { maxNewTokens: 3 });  // positions 0-2 only
    expect(good.tokens.length).toBeGreaterThan(0);
    named(() => model.run(word('cat'), [2, 31, 32, 33, 34]),
      `^run: BART decoder: NaN in the embeddings \\(decoder\\.layernorm_embedding\\) at position 3, feature 0${TAIL}`);
    expect(finite(model.run(word('cat'), [2, 31, 32]).logits)).toBe(true);
  } finally {
    model.dispose();
  }
});

const LLAMA = {
  model_type: 'llama', vocab_size: 23, max_position_embeddings: 16, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, tie_word_embeddings: true,
};
const A = 2;  // the token 'a' (<s>, </s>, then a-u)

/** The Llama checkpoint: feature 0 of the residual stream is the token's own embedding (+0.5 for
 * 'a', -0.5 for the rest) up to layer 1's MLP, whose input gain there is 1e38 and whose gate and
 * up read it with +0.5: for 'a' both are about +1e38 and their product overflows; for the rest
 * the gate is about -1e38, silu(gate) is -0 and the product 0. */
function llamaTensors() {
  const t = checkpoint(LLAMA, 11, true), D = 16, F = 24;
  const column = (name, rows, cols, col, v) => { for (let r = 0; r < rows; r++) t[name].data[r * cols + col] = v; };
  const row = (name, r, cols, v) => t[name].data.fill(v, r * cols, (r + 1) * cols);
  for (let tok = 0; tok < LLAMA.vocab_size; tok++) t['model.embed_tokens.weight'].data[tok * D] = tok === A ? 0.5 : -0.5;
  for (const l of [0, 1]) row(`model.layers.${l}.self_attn.o_proj.weight`, 0, D, 0);  // attention writes no feature 0
  row('model.layers.0.mlp.down_proj.weight', 0, F, 0);  // nor does layer 0's MLP
  t['model.layers.1.post_attention_layernorm.weight'].data[0] = HUGE;
  column('model.layers.1.mlp.gate_proj.weight', F, D, 0, 0.5);
  column('model.layers.1.mlp.up_proj.weight', F, D, 0, 0.5);
  return t;
}

test('Llama: layer 1\'s MLP is named where the token that overflows it sits; other tokens run', async () => {
  const tensors = llamaTensors();
  const model = await attn.loadModel({ ...modelFiles(LLAMA, tensors), weights: safetensors(tensors, 'BF16') });
  try {
    const where = (pos) => `llama model: ${VALUE} in layer 1's MLP output \\(model\\.layers\\.1\\.mlp\\.down_proj\\) at position ${pos}, feature \\d+${TAIL}`;
    named(() => model.run([0, 4, A, 5]), `^run: ${where(2)}`);
    const good = model.run([0, 4, 3, 5]);
    expect(finite(good.logits)).toBe(true);
    named(() => model.run([0, 4, 3, 5, 6, A]), `^run: ${where(5)}`);
    await expect(model.generate([0, 4, A], { maxNewTokens: 1 })).rejects.toThrow(new RegExp(`^generate: ${where(2)}`));
    await expect(model.generate([0, 4, 3], { maxNewTokens: 1 })).resolves.toBeDefined();
    expect(model.run([0, 4, 3, 5]).logits).toEqual(good.logits);
  } finally {
    model.dispose();
  }
});

// A bf16 embedding table in the 1e36s: float32's sum of squares in every RMSNorm overflowed (~1e72),
// x / sqrt(Infinity) is 0, and the logits were all 0 with no error (the hostile run's case). The
// mean square is now taken in double: the logits are the float64 reference's.
test('Llama: embeddings in the 1e36s normalize as in float64, not to the all-zero logits of a float32 sum of squares', async () => {
  const config = { ...LLAMA, tie_word_embeddings: false };
  const tensors = checkpoint(config, 12, true);
  const embed = tensors['model.embed_tokens.weight'].data;
  for (let i = 0; i < embed.length; i++) embed[i] *= 2 ** 120;  // (1.3e36, a power of two: still bfloat16)
  const model = await attn.loadModel({ ...modelFiles(config, tensors), weights: safetensors(tensors, 'BF16') });
  try {
    const tokens = [0, 4, 3, 5], { logits } = model.run(tokens), ref = reference(config, tensors, tokens).logits;
    const top = ref.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    expect(top).toBeGreaterThan(0.1);
    expect(maxDiff(logits, ref) / top).toBeLessThan(1e-5);
  } finally {
    model.dispose();
  }
});
