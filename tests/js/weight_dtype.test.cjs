// loadModel's dtype (issue 22): the shipped models held at f32, auto (as stored: F16), f16, q8 and
// q4. brown-gpt2's held-out perplexity against f32's (targets: f16 within 0.1 %, q8 within 1 %, q4
// within 5 %) and the bytes its weights take; brown-bert's sentence embeddings and g2p-bart's
// pronunciations against f32's; the GPT-2 PyTorch fixtures at f32 and f16; named errors for a dtype
// that is unknown or a model it cannot hold.
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load } = require('./helpers.cjs');
const { HOSTILE, expectNamed, fuzz } = require('./fuzz.cjs');

const folder = (name) => path.join(root, 'web/models', name);
const sample = JSON.parse(fs.readFileSync(path.join(folder('brown-gpt2'), 'heldout-sample.json'), 'utf8'));
const DTYPES = ['f32', 'auto', 'f16', 'q8', 'q4'];
// The most held-out perplexity may rise over f32's (issue 22's targets).
const PERPLEXITY_BOUND = { f16: 0.001, q8: 0.01, q4: 0.05 };
// The least cosine similarity of a brown-bert sentence embedding to f32's (measured: f16 1.000000,
// q8 0.999989, q4 0.999241).
const COSINE_BOUND = { auto: 0.9999, f16: 0.9999, q8: 0.9995, q4: 0.995 };
const SENTENCES = ['The man went to the store.', 'She said that the committee would meet on Monday.',
  'It was a long and cold winter in the north.'];
const WORDS = 'hello world attention transformer pronunciation cat elephant music language computer quickly';

/** Mean held-out loss (nats/token) over the card's sample, and the bytes the weights take. */
function heldOut(model) {
  let nll = 0, count = 0;
  for (const s of sample.sentences) {
    const run = model.run(s.text, { prependBos: true });
    nll += model.loss(run).loss * (s.ids.length - 1);
    count += s.ids.length - 1;
  }
  // (live(): the embind handle, internal to the API; weightBytes() is the core's own count)
  return { loss: nll / count, bytes: model.live().weightBytes() };
}

function minCosine(a, b) {
  let least = 1;
  for (let i = 0; i < a.count; i++) {
    let ab = 0, aa = 0, bb = 0;
    for (let j = 0; j < a.dim; j++) {
      const x = a.data[i * a.dim + j], y = b.data[i * b.dim + j];
      ab += x * y, aa += x * x, bb += y * y;
    }
    least = Math.min(least, ab / Math.sqrt(aa * bb));
  }
  return least;
}

/** A GPT-2 fixture of tests/fixtures/gpt2 (random weights, a float64 PyTorch reference), as files
 * in memory; f32_tiny's n_embd of 16 fits no block of 32. */
function tinyGpt2(name = 'f32_tiny') {
  const dir = path.join(root, 'tests/fixtures/gpt2', name);
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const vocab = {};
  for (let i = 0; i < config.vocab_size; i++) vocab[String.fromCharCode(0x21 + i)] = i;
  return { config, weights: fs.readFileSync(path.join(dir, 'model.safetensors')), tokenizer: { vocab, merges: '' } };
}

describe.each(variants)('%s build', (variant) => {
  const gpt2 = {}, bert = {}, bart = {};
  beforeAll(async () => {
    const attn = await load(variant);
    for (const dtype of DTYPES) {
      const g = await attn.loadModel(folder('brown-gpt2'), { dtype });
      gpt2[dtype] = heldOut(g);
      g.dispose();
      const b = await attn.loadModel(folder('brown-bert'), { dtype });
      bert[dtype] = b.embed(SENTENCES);
      b.dispose();
      const s = await attn.loadModel(folder('g2p-bart'), { dtype });
      bart[dtype] = s.pronounce(WORDS).map((p) => p.phonemes.join(' ')).join(' | ');
      s.dispose();
    }
  }, 300000);

  test('f32 reproduces the model card; auto holds the F16 checkpoint as f16, to the bit', () => {
    expect(Math.abs(gpt2.f32.loss - sample.mean_loss)).toBeLessThan(1e-4);
    expect(gpt2.auto).toEqual(gpt2.f16);
  });

  test.each(Object.keys(PERPLEXITY_BOUND))('brown-gpt2 at %s: held-out perplexity within its bound of f32', (dtype) => {
    const rise = Math.exp(gpt2[dtype].loss - gpt2.f32.loss) - 1;
    expect(Math.abs(rise)).toBeLessThanOrEqual(PERPLEXITY_BOUND[dtype]);
  });

  test('brown-gpt2\'s weights: half at f16, under 0.3 at q8, less again at q4', () => {
    const f32 = gpt2.f32.bytes;
    expect(gpt2.f16.bytes / f32).toBeGreaterThan(0.49);
    expect(gpt2.f16.bytes / f32).toBeLessThan(0.51);  // (biases and LayerNorms stay float32)
    expect(gpt2.q8.bytes / f32).toBeLessThan(0.3);
    expect(gpt2.q4.bytes).toBeLessThan(gpt2.q8.bytes);
  });

  test.each(Object.keys(COSINE_BOUND))('brown-bert at %s: sentence embeddings within their bound of f32', (dtype) => {
    expect(minCosine(bert[dtype], bert.f32)).toBeGreaterThanOrEqual(COSINE_BOUND[dtype]);
  });

  test.each(['auto', 'f16', 'q8'])('g2p-bart at %s pronounces as f32 does', (dtype) => {
    expect(bart[dtype]).toBe(bart.f32);
  });
});

// The GPT-2 fixtures against PyTorch's float64 logits: f32 within the fixture's tolerance; f16 the
// same for an F16 checkpoint (held exactly as stored), and for an F32 one within 2e-3 of the
// logits' largest magnitude (measured 4.3e-4 and 7.8e-4: each weight rounded to f16).
describe.each(variants)('%s build: PyTorch fixtures at f32 and f16', (variant) => {
  test.each(['f16_prefixed', 'f32_tiny', 'f32_wider'])('%s', async (name) => {
    const attn = await load(variant);
    const want = JSON.parse(fs.readFileSync(path.join(root, 'tests/fixtures/gpt2', name, 'expected.json'), 'utf8'));
    const largest = Math.max(...want.logits.map(Math.abs));
    for (const dtype of ['f32', 'f16']) {
      const model = await attn.loadModel(tinyGpt2(name), { dtype });
      const { logits } = model.run(want.tokens);
      model.dispose();
      const exact = dtype === 'f32' || name.startsWith('f16');
      const gap = Math.max(...want.logits.map((v, i) => Math.abs(logits[i] - v) - (exact ? want.tolerance.rel * Math.abs(v) : 0)));
      expect(gap).toBeLessThanOrEqual(exact ? want.tolerance.abs : 2e-3 * largest);
    }
  });
});

describe('named errors', () => {
  test('an unknown dtype, a misspelt key; q8/q4 on a model whose sizes are not blocks of 32 fall back to f16', async () => {
    const attn = await load('simd');
    await expectNamed(() => attn.loadModel(tinyGpt2(), { dtype: 'q3' }),
      /^loadModel: dtype must be one of "auto", "f32", "f16", "q8", "q4", got "q3" \(did you mean 'q8'\?\)$/);
    await expectNamed(() => attn.loadModel(tinyGpt2(), { dtyp: 'q8' }), /dtyp.*did you mean 'dtype'/);
    for (const dtype of ['q8', 'q4']) {  // 16-wide: held at F16, as llama.cpp's quantizer falls back
      const m = await attn.loadModel(tinyGpt2(), { dtype });
      expect(m.weightTypes['wte.weight']).toBe('F16');
      m.dispose();
    }
    const ok = await attn.loadModel(tinyGpt2(), { dtype: 'f16' });
    expect(ok.run('!"#').logits.length).toBe(3 * 37);
    ok.dispose();
  });

  test('hostile dtype values: each a named error or a load, and the module still loads models', async () => {
    const attn = await load('simd');
    const good = async () => (await attn.loadModel(tinyGpt2())).dispose();
    const bad = await fuzz(HOSTILE.filter((v) => v !== undefined).map((v) => ({ dtype: v })), async (o) => {
      (await attn.loadModel(tinyGpt2(), o)).dispose();
    }, good);
    expect(bad).toEqual([]);
  });
});
