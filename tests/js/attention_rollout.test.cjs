// attentionRollout(run, { heads | layers, part }) against a float64 rollout written here from its
// definition (Abnar & Zuidema 2020): R_1 = Â_1, R_l = Â_l R_(l-1), Â_l = rows of
// 0.5 mean_h A_l,h + 0.5 I divided by their sums; on runs of a GPT-2, a BERT and a BART fixture
// (the encoder's and the decoder's self-attention). Then bad input, named.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { api, root, load } = require('./helpers.cjs');
const { expectNamed } = require('./fuzz.cjs');

/** The rollout in float64, as nested arrays: L x n x n. */
function referenceRollout(attention, L, H, n) {
  const at = (l, h, i, j) => attention[((l * H + h) * n + i) * n + j];
  const layers = [];
  let previous = null;
  for (let l = 0; l < L; l++) {
    const a = Array.from({ length: n }, (_, i) => {
      const row = Array.from({ length: n }, (_, j) => {
        let mean = 0;
        for (let h = 0; h < H; h++) mean += at(l, h, i, j);
        return 0.5 * (mean / H) + (i === j ? 0.5 : 0);
      });
      const sum = row.reduce((s, v) => s + v, 0);
      return row.map((v) => v / sum);
    });
    const r = previous ? a.map((row) => previous[0].map((_, j) => row.reduce((s, v, k) => s + v * previous[k][j], 0))) : a;
    layers.push(r);
    previous = r;
  }
  return layers;
}

function expectRollout(got, attention, L, H, n) {
  expect(got).toBeInstanceOf(Float32Array);
  expect(got.length).toBe(L * n * n);
  const want = referenceRollout(attention, L, H, n);
  let worst = 0;
  for (let l = 0; l < L; l++)
    for (let i = 0; i < n; i++) {
      let rowSum = 0;
      for (let j = 0; j < n; j++) {
        worst = Math.max(worst, Math.abs(got[(l * n + i) * n + j] - want[l][i][j]));
        rowSum += got[(l * n + i) * n + j];
      }
      expect(Math.abs(rowSum - 1)).toBeLessThan(1e-5);  // each row still a distribution
    }
  // float32 storage of values <= 1: half an ulp at 1 is 6e-8.
  expect(worst).toBeLessThan(1e-7);
}

const fixture = (family, name) => path.join(root, 'tests/fixtures', family, name);
const config = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
let mod;
beforeAll(async () => { mod = await load('simd'); });

test('GPT-2 (causal): from { heads } and from { layers }, the same float64 rollout', async () => {
  const dir = fixture('gpt2', 'f32_tiny'), c = config(dir);
  const vocab = Object.fromEntries(Array.from({ length: c.vocab_size }, (_, i) => [String.fromCharCode(0x21 + i), i]));
  const model = await mod.loadModel({ config: c, weights: fs.readFileSync(path.join(dir, 'model.safetensors')), tokenizer: { vocab, merges: '' } });
  try {
    const run = model.run([5, 27, 0, 18, 6, 16, 4, 30, 3], { attention: true }), n = 9;
    const rollout = api.attentionRollout(run, { heads: c.n_head });
    expectRollout(rollout, run.attention, c.n_layer, c.n_head, n);
    expect(api.attentionRollout(run, { layers: c.n_layer })).toEqual(rollout);
    // Causal attention rolls out causal: nothing flows from a later token.
    for (let l = 0; l < c.n_layer; l++)
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) expect(rollout[(l * n + i) * n + j]).toBe(0);
  } finally {
    model.dispose();
  }
});

test('BERT (bidirectional)', async () => {
  const dir = fixture('bert', 'f32_mlm_prefixed'), c = config(dir);
  const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: c.vocab_size - 5 }, (_, i) => `t${i + 5}`)].join('\n');
  const model = await mod.loadModel({ config: c, weights: fs.readFileSync(path.join(dir, 'model.safetensors')), tokenizer: { vocab } });
  try {
    const run = model.run({ tokens: [2, 9, 4, 17, 30, 11, 3] }, { attention: true });
    expectRollout(api.attentionRollout(run, { heads: c.num_attention_heads }), run.attention, c.num_hidden_layers, c.num_attention_heads, 7);
  } finally {
    model.dispose();
  }
});

test('BART: the encoder\'s self-attention (default) and the decoder\'s (part "decoder")', async () => {
  const dir = fixture('bart', 'f32_prefixed'), c = config(dir);
  const model = await mod.loadModel(dir);
  try {
    const run = model.run('abcde', [2, 9, 13, 9]), S = run.sourceTokens.length;
    expectRollout(api.attentionRollout(run, { heads: c.encoder_attention_heads }), run.encoderAttention, c.encoder_layers, c.encoder_attention_heads, S);
    expectRollout(api.attentionRollout(run, { heads: c.decoder_attention_heads, part: 'decoder' }), run.selfAttention, c.decoder_layers, c.decoder_attention_heads, 4);
  } finally {
    model.dispose();
  }
});

test('the analysis entry (an ES module, read in a child process) exports it too', () => {
  // 1 layer, 1 head, 2 tokens: row 2 is (0.5 x 0.25, 0.5 x 0.75 + 0.5), already summing to 1.
  const script = `import { attentionRollout } from ${JSON.stringify(path.join(root, 'dist/analysis.js'))};
    console.log(JSON.stringify(Array.from(attentionRollout({ tokens: [1, 2], attention: Float32Array.from([1, 0, 0.25, 0.75]) }, { heads: 1 }))));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(JSON.parse(out)).toEqual([1, 0, 0.125, 0.875]);
});

test('bad input is named', async () => {
  const attention = new Float32Array(2 * 3 * 4 * 4).fill(0.25);
  const run = { tokens: [1, 2, 3, 4], attention };
  await expectNamed(() => api.attentionRollout(run), /pass \{ heads \}/);
  await expectNamed(() => api.attentionRollout(run, { heads: 5 }), /not layers x 5 x 4 x 4/);
  await expectNamed(() => api.attentionRollout(run, { heads: 0 }), /heads must be an integer >= 1, got 0/);
  await expectNamed(() => api.attentionRollout({ tokens: [1, 2, 3, 4] }, { heads: 3 }), /no attention: call run\(\) with \{ attention: true \}/);
  await expectNamed(() => api.attentionRollout(null, { heads: 3 }), /run must be what a model's run\(\) returned/);
  await expectNamed(() => api.attentionRollout({ attention }, { heads: 3 }), /run.tokens must be an array/);
  await expectNamed(() => api.attentionRollout({ ...run, encoderAttention: attention, sourceTokens: [1, 2, 3, 4] }, { heads: 3, part: 'cross' }), /part must be 'encoder' or 'decoder', got "cross"/);
  expect(api.attentionRollout(run, { heads: 3 })).toHaveLength(2 * 16);
});
