// config.json as a trust boundary (issue 38): every number in a message as the file gives it (no
// wrap through the core's 32-bit integers), every field a family reads held to the range it
// needs before it reaches the core, and the inconsistencies a careless or hostile checkpoint can
// carry (rope_scaling without its fields, token ids outside the vocabulary, a tied head of the
// wrong shape) refused by name. The model files are built here (a tiny random Llama).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { load, root } = require('./helpers.cjs');
const { expectNamed } = require('./fuzz.cjs');
const { checkpoint, modelFiles } = require('./llama_checkpoint.cjs');

const CONFIG = {
  model_type: 'llama', vocab_size: 23, max_position_embeddings: 16, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, tie_word_embeddings: true,
};
const TENSORS = checkpoint(CONFIG, 5);

let attn;
beforeAll(async () => { attn = await load('simd'); });

const loads = async (config, tensors = TENSORS) => (await attn.loadModel(modelFiles(config, tensors))).dispose();
const refused = (patch, message, tensors) => expectNamed(() => loads({ ...CONFIG, ...patch }, tensors), message);

test('sizes past what the core holds are named with the number as given', async () => {
  const cases = [['hidden_size', 16384], ['vocab_size', 1048576], ['intermediate_size', 65536], ['num_hidden_layers', 1024],
    ['num_attention_heads', 1024], ['max_position_embeddings', 1048576], ['head_dim', 1024], ['num_key_value_heads', 1024]];
  for (const [key, max] of cases) {
    await refused({ [key]: 1e12 }, new RegExp(`^config\\.json: ${key} must be between 1 and ${max}, got 1000000000000$`));
    await refused({ [key]: 2 ** 32 + 16 }, new RegExp(`^config\\.json: ${key} must be between 1 and ${max}, got 4294967312$`));
  }
  await refused({ hidden_size: 1.5 }, /^config\.json: hidden_size must be a positive integer, got 1\.5$/);
});

test('GPT-2 and BERT sizes too', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-range-'));
  try {
    const gpt2 = path.join(root, 'web/models/brown-gpt2');
    for (const file of ['vocab.json', 'merges.txt', 'model.safetensors']) fs.symlinkSync(path.join(gpt2, file), path.join(dir, file));
    const config = JSON.parse(fs.readFileSync(path.join(gpt2, 'config.json'), 'utf8'));
    const write = (patch) => fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...config, ...patch }));
    for (const [key, max] of [['n_embd', 16384], ['n_layer', 1024], ['n_positions', 1048576]]) {
      write({ [key]: 1e12 });
      await expectNamed(() => attn.loadModel(dir), new RegExp(`^config\\.json: ${key} must be between 1 and ${max}, got 1000000000000$`));
    }
    for (const bos of [1e9, -1, 'x', 2.5]) {
      write({ bos_token_id: bos });
      await expectNamed(() => attn.loadModel(dir), /^config\.json: bos_token_id must be a token id \(an integer from 0 to vocab_size - 1 = \d+\), got /);
    }
    write({});
    (await attn.loadModel(dir)).dispose();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('rope_scaling needs its fields, rope_theta a usable range', async () => {
  await refused({ rope_scaling: { type: 'linear' } }, /^config\.json: rope_scaling of type "linear" needs factor/);
  await refused({ rope_scaling: { rope_type: 'llama3', factor: 8 } },
    /^config\.json: rope_scaling of type "llama3" needs low_freq_factor, high_freq_factor, original_max_position_embeddings/);
  await refused({ rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 4, high_freq_factor: 1, original_max_position_embeddings: 8 } },
    /^config\.json: rope_scaling low_freq_factor \(4\) must be below high_freq_factor \(1\)$/);
  await refused({ rope_scaling: { type: 'linear', factor: 1e300 } }, /^config\.json: factor must be a number from 1 to 1e6 \(rope_scaling\), got 1e\+300$/);
  for (const theta of [1e308, 0, -5, 1, 'x', Infinity, NaN]) {
    await refused({ rope_theta: theta }, /^config\.json: rope_theta must be a number above 1 and at most 1e12, got /);
  }
  await loads({ ...CONFIG, rope_theta: 5e5, rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8 } });
  await loads({ ...CONFIG, rope_scaling: { type: 'linear', factor: 2 } });
});

test('bos / eos token ids outside the vocabulary or not integers are refused', async () => {
  for (const id of [1e9, 23, -1, 'x', 0.5, true]) {
    await refused({ bos_token_id: id }, /^config\.json: bos_token_id must be a token id \(an integer from 0 to vocab_size - 1 = 22\), got /);
    await refused({ eos_token_id: id }, /^config\.json: eos_token_id must be a token id or a list of them \(an integer from 0 to vocab_size - 1 = 22\), got /);
  }
  await refused({ eos_token_id: [1, 99] }, /^config\.json: eos_token_id must be a token id or a list of them/);
  await loads({ ...CONFIG, bos_token_id: null, eos_token_id: [1, 2] });
});

test('a tied head stored with the wrong shape is refused; with the table\'s shape it loads', async () => {
  const head = (rows, cols) => ({ 'lm_head.weight': { shape: [rows, cols], data: Array(rows * cols).fill(0.5) } });
  await refused({}, /^loadModel: tensor "lm_head\.weight" has shape \[22, 16\] but the embeddings are tied \(tie_word_embeddings\), so it must be the embedding table's \[23, 16\]$/,
    { ...TENSORS, ...head(22, 16) });
  await loads(CONFIG, { ...TENSORS, ...head(23, 16) });
  // The module is usable after each refusal.
  const model = await attn.loadModel(modelFiles(CONFIG, TENSORS));
  expect(model.run('abc').logits.every(Number.isFinite)).toBe(true);
  model.dispose();
});
