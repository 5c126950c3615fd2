// BERT's public API under hostile input (issue 21 items 3, 7, 8; issue 26 unknown keys): every
// argument and option key of run, fillMask, maskedLmLoss, embed, cosineSimilarity and
// similarityMatrix gets the shared fuzz harness's values; each call gives a result or an
// AttentionError naming the function, and the model answers as before afterwards.
const fs = require('node:fs');
const path = require('node:path');
const { api, root, load } = require('./helpers.cjs');
const { HOSTILE, hostileOptions, fuzz, outcome, expectNamed } = require('./fuzz.cjs');

const folder = path.join(root, 'tests/fixtures/bert/f32_mlm_prefixed');
const config = () => JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8'));
/** The fixture is a random model: a stand-in vocab.txt with BERT's specials, then t5, t6, ... */
const vocab = (size) => ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: size - 5 }, (_, i) => `t${i + 5}`)].join('\n');
const files = (c = config()) => ({ config: c, weights: fs.readFileSync(path.join(folder, 'model.safetensors')), tokenizer: { vocab: vocab(48) } });

const RUN_KEYS = ['attention', 'traceLayer', 'logits', 'padTo'];
const EMBED_KEYS = ['pooling', 'normalize', 'maxLength', 'batchSize'];
const TEXT = 't5 t6 [MASK] t7';

let attn, model, before;
/** Throws unless the model still gives the first answers (hidden states, logits, embeddings). */
function same() {
  const r = model.run(TEXT, { logits: true });
  const e = model.embed([TEXT, ['t8', 't9 t10']]);
  const equal = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  if (!equal(r.hidden, before.run.hidden) || !equal(r.logits, before.run.logits) || !equal(e.data, before.embed.data))
    throw new Error('a run after the hostile call differs from the one before');
}

beforeAll(async () => {
  attn = await load('simd');
  model = await attn.loadModel(files());
  before = { run: model.run(TEXT, { logits: true }), embed: model.embed([TEXT, ['t8', 't9 t10']]) };
});
afterAll(() => model.dispose());

describe('run', () => {
  test('hostile inputs and token-id inputs', async () => {
    const inputs = [...HOSTILE, ['t5'], ['t5', 5], ['t5', 't6', 't7'], { tokens: [2, 5, 3], tokenType: [0, 0, 0] },
      ...HOSTILE.map((v) => ({ tokens: v })), ...HOSTILE.map((v) => ({ tokens: [2, 5, 3], tokenTypes: v })),
      ...HOSTILE.map((v) => ({ tokens: [2, v, 3] })), { tokens: Array(1e6).fill(5) }];
    expect(await fuzz(inputs, (v) => model.run(v), same)).toEqual([]);
  });

  test('hostile options', async () => {
    expect(await fuzz(hostileOptions(RUN_KEYS), (o) => model.run(TEXT, o), same)).toEqual([]);
    await expectNamed(() => model.run(TEXT, null), /^run: options must be an object \(or left out\), got null$/);
    await expectNamed(() => model.run(TEXT, { attentions: true }), /^run: unknown option 'attentions' \(did you mean 'attention'\?\)$/);
    await expectNamed(() => model.run(TEXT, { padTo: 1e9 }), /^run: padTo must be an integer from 1 to 24, got 1000000000$/);
    await expectNamed(() => model.run(TEXT, { traceLayer: 2 }), /^run: traceLayer must be an integer from 0 to 1, got 2$/);
    await expectNamed(() => model.run({ tokens: [2, 5, 3], tokenType: [0, 1, 1] }), /^run: unknown input key 'tokenType' \(did you mean 'tokenTypes'\?\)$/);
    await expectNamed(() => model.run(['t5', 5]), /^run: a text pair must be \[textA, textB\] \(two strings\), got \["t5", 5\]$/);
    // Holes are not skipped (forEach would): they are named as undefined ids.
    await expectNamed(() => model.run({ tokens: [2, , 3] }), /^run: token undefined at position 1 is outside the vocabulary of 48$/);
    await expectNamed(() => model.run({ tokens: [2, 5, 3], tokenTypes: [0, , 0] }), /^run: token type undefined at position 1/);
  });
});

describe('fillMask', () => {
  test('hostile inputs and k', async () => {
    expect(await fuzz(HOSTILE, (v) => model.fillMask(v), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (k) => model.fillMask(TEXT, k), same)).toEqual([]);
    await expectNamed(() => model.fillMask(TEXT, 1e9), /^fillMask: k must be an integer from 1 to 48, got 1000000000$/);
    await expectNamed(() => model.fillMask(TEXT, { k: 5 }), /^fillMask: k must be an integer from 1 to 48, got an object$/);
  });
});

describe('maskedLmLoss', () => {
  test('targets outside the vocabulary, fractional or negative: named errors, never NaN', async () => {
    const r = model.run(TEXT, { logits: true });
    await expectNamed(() => model.maskedLmLoss(r, [2], [99999]), /^maskedLmLoss: targets\[0\] must be an integer from 0 to 47, got 99999$/);
    await expectNamed(() => model.maskedLmLoss(r, [2], [-1]), /targets\[0\] must be an integer from 0 to 47, got -1/);
    await expectNamed(() => model.maskedLmLoss(r, [2], [2.5]), /targets\[0\] must be an integer from 0 to 47, got 2.5/);
    await expectNamed(() => model.maskedLmLoss(r, [6], [5]), /positions\[0\] must be an integer from 0 to 5, got 6/);
    const nan = { ...r, logits: r.logits.slice() };
    nan.logits[2 * 48 + 7] = NaN;
    await expectNamed(() => model.maskedLmLoss(nan, [2], [5]), /^maskedLmLoss: result\.logits at position 2, token 7 is NaN, not a finite number$/);
    await expectNamed(() => model.maskedLmLoss(model.run(TEXT), [2], [5]), /the result has no logits: run the model with \{ logits: true \}/);
    const { loss, perplexity, accuracy } = model.maskedLmLoss(r, [1, 2], [5, 6]);
    expect([loss, perplexity, accuracy].every(Number.isFinite)).toBe(true);
  });

  test('hostile results, positions and targets', async () => {
    const r = model.run(TEXT, { logits: true });
    const results = [...HOSTILE, ...HOSTILE.map((v) => ({ ...r, logits: v })), { logits: new Float32Array(47) }];
    expect(await fuzz(results, (v) => model.maskedLmLoss(v, [2], [5]), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (v) => model.maskedLmLoss(r, v, [5]), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (v) => model.maskedLmLoss(r, [2], v), same)).toEqual([]);
    // Whatever came back was a finite loss: the fuzzed values never produced NaN.
    for (const v of HOSTILE) {
      let out;
      if ((await outcome(() => { out = model.maskedLmLoss(r, [2], v); })) === 'ok') expect(Number.isFinite(out.loss)).toBe(true);
    }
  });
});

describe('embed', () => {
  test('hostile inputs, elements and options', async () => {
    expect(await fuzz(HOSTILE, (v) => model.embed(v), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (v) => model.embed([TEXT, v]), same)).toEqual([]);
    expect(await fuzz(hostileOptions(EMBED_KEYS), (o) => model.embed([TEXT], o), same)).toEqual([]);
    await expectNamed(() => model.embed([TEXT], { poolng: 'cls' }), /^embed: unknown option 'poolng' \(did you mean 'pooling'\?\)$/);
    await expectNamed(() => model.embed([TEXT], { batchSize: 1e9 }), /^embed: batchSize must be an integer from 1 to 256, got 1000000000$/);
    await expectNamed(() => model.embed([['t5', 't6']], { maxLength: 4 }), /^embed: maxLength 4 leaves no room for a pair/);
    await expectNamed(() => model.embed(null), /^embed: inputs must be an array/);
    await expectNamed(() => model.embed([, TEXT]), /^embed: the input must be a string, a pair \[textA, textB\] or \{ tokens, tokenTypes \}, got undefined$/);
  });
});

describe('cosineSimilarity and similarityMatrix', () => {
  test('non-finite numbers are named; huge and tiny finite ones do not overflow', async () => {
    await expectNamed(() => api.cosineSimilarity([1, Infinity], [1, 2]), /^cosineSimilarity: a\[1\] must be a finite number, got Infinity$/);
    await expectNamed(() => api.cosineSimilarity([1, 2], [-Infinity, 2]), /^cosineSimilarity: b\[0\] must be a finite number, got -Infinity$/);
    await expectNamed(() => api.cosineSimilarity(Float32Array.of(NaN), [1]), /a\[0\] must be a finite number, got NaN/);
    expect(api.cosineSimilarity([1e200, 1e200], [2e200, 2e200])).toBeCloseTo(1, 12);
    expect(api.cosineSimilarity([1e-200, 0], [0, 1e-200])).toBe(0);
    expect(api.cosineSimilarity([3e-320, 3e-320], [1, 1])).toBeCloseTo(1, 12);
    const bad = [];
    for (const a of HOSTILE) {
      for (const b of [[1, 2, 3], a]) {
        const r = await outcome(() => {
          const c = api.cosineSimilarity(a, b);
          if (Number.isNaN(c)) throw new Error('NaN');
        });
        if (r !== 'ok' && r !== 'named') bad.push(`${String(r && r.message)}`);
      }
    }
    expect(bad).toEqual([]);
  });

  test('similarityMatrix checks what it is given', async () => {
    await expectNamed(() => api.similarityMatrix(null), /^similarityMatrix: the embeddings must be an object .*got null$/);
    await expectNamed(() => api.similarityMatrix(undefined), /got undefined$/);
    const e = model.embed([TEXT, 't5', 't6 t7']);
    await expectNamed(() => api.similarityMatrix({ ...e, count: 1e9 }), /^similarityMatrix: embeddings\.count must be an integer from 0 to 8192, got 1000000000$/);
    await expectNamed(() => api.similarityMatrix({ ...e, count: 4 }), /embeddings\.data must be a Float32Array of count x dim = 4 x 32 numbers/);
    const inf = { ...e, data: e.data.slice() };
    inf.data[40] = Infinity;
    await expectNamed(() => api.similarityMatrix(inf), /^similarityMatrix: embeddings\.data\[40\] must be a finite number, got Infinity$/);
    const fields = ['data', 'count', 'dim'].flatMap((k) => HOSTILE.map((v) => ({ ...e, [k]: v })));
    expect(await fuzz([...HOSTILE, ...fields], (v) => api.similarityMatrix(v), same)).toEqual([]);
    const m = api.similarityMatrix(e);
    expect(m[1]).toBeCloseTo(api.cosineSimilarity(e.row(0), e.row(1)), 6);
  });
});

test('every documented key and input form is accepted (no false positive)', () => {
  const r = model.run(TEXT, { attention: true, traceLayer: 1, logits: true, padTo: 10 });
  expect(r.padding).toHaveLength(10);
  expect(r.trace).toBeDefined();
  model.run(['t5 t6', 't7'], {});
  model.run({ tokens: [2, 5, 6, 3], tokenTypes: [0, 0, 1, 1] }, undefined);
  for (const pooling of ['mean', 'cls']) {
    const e = model.embed([TEXT, ['t5', 't6'], { tokens: [2, 7, 3] }], { pooling, normalize: true, maxLength: 6, batchSize: 2 });
    expect(e.count).toBe(3);
  }
  expect(model.fillMask(TEXT, 48)[0].predictions.length).toBeGreaterThan(0);
  expect(Number.isFinite(model.maskedLmLoss(r, [2], [47]).loss)).toBe(true);
});

describe('config.json values', () => {
  test('a BigInt or a Symbol is named through show(); a layer_norm_eps out of (0, 0.1] is refused', async () => {
    await expect(attn.loadModel(files({ ...config(), hidden_size: 32n }))).rejects.toThrow(/^config\.json: hidden_size must be a positive integer, got 32n \(a BigInt\)$/);
    await expect(attn.loadModel(files({ ...config(), position_embedding_type: Symbol('x') }))).rejects.toThrow(/position_embedding_type a Symbol is not supported/);
    await expect(attn.loadModel(files({ ...config(), hidden_act: 7n }))).rejects.toThrow(/hidden_act 7n \(a BigInt\) is not supported/);
    for (const eps of [1e9, 0.5, 0, -1e-12, NaN, '1e-12'])
      await expect(attn.loadModel(files({ ...config(), layer_norm_eps: eps }))).rejects.toThrow(/^config\.json: layer_norm_eps must be a number > 0 and <= 0\.1, got /);
    const ok = await attn.loadModel(files({ ...config(), layer_norm_eps: 0.1 }));
    ok.dispose();
    same();
  });
});

test('after dispose every method gives a named error', async () => {
  const m = await attn.loadModel(files());
  const r = m.run(TEXT, { logits: true });
  m.dispose();
  await expectNamed(() => m.run(TEXT), /has been disposed/);
  await expectNamed(() => m.fillMask(TEXT), /has been disposed/);
  await expectNamed(() => m.maskedLmLoss(r, [2], [5]), /has been disposed/);
  await expectNamed(() => m.embed([TEXT]), /has been disposed/);
  same();
});
