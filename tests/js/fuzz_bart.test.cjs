// BART's public API under hostile input (issue 21 items 7, 8; issue 26 unknown keys): every
// argument and option key of generate, run, pronounce and encodeSource gets the shared fuzz
// harness's values; each call gives a result or an AttentionError naming the function, and the
// shipped spelling-to-sound model answers as before afterwards.
const fs = require('node:fs');
const path = require('node:path');
const { root, load } = require('./helpers.cjs');
const { HOSTILE, hostileOptions, fuzz, expectNamed } = require('./fuzz.cjs');

const folder = path.join(root, 'web/models/g2p-bart');
const GENERATE_KEYS = ['beams', 'maxNewTokens', 'lengthPenalty', 'traceLayer', 'traceKind'];

let attn, model, before;
/** Throws unless the model still gives the first answers (phonemes, scores, cross-attention). */
function same() {
  const g = model.generate('phone', { beams: 2 });
  const r = model.run('cat', [2, 40]);
  const equal = (a, b) => a.length === b.length && Array.prototype.every.call(a, (x, i) => Object.is(x, b[i]));
  if (!equal(g.tokens, before.g.tokens) || g.score !== before.g.score || !equal(g.crossAttention, before.g.crossAttention) || !equal(r.logits, before.r.logits))
    throw new Error('a call after the hostile one differs from the one before');
}

beforeAll(async () => {
  attn = await load('simd');
  model = await attn.loadModel(folder);
  before = { g: model.generate('phone', { beams: 2 }), r: model.run('cat', [2, 40]) };
});
afterAll(() => model.dispose());

describe('generate', () => {
  test('hostile sources; token ids must come framed as <s> ... </s>', async () => {
    const { bos_token_id: bos, eos_token_id: eos } = model.config;
    const sources = [...HOSTILE, [20, 12], [bos, 20, 12], [20, 12, eos], [bos, eos], [bos, 99999, eos], [bos, 5.5, eos],
      [bos, 12n, eos], Array(1e6).fill(20), ...HOSTILE.map((v) => [bos, v, eos])];
    expect(await fuzz(sources, (s) => model.generate(s), same)).toEqual([]);
    await expectNamed(() => model.generate([20, 12]), /^generate: token ids must be framed as <s> \.\.\. <\/s> \(first 0, last 2, at least one token between\), got \[20, 12\]$/);
    await expectNamed(() => model.generate([bos, 12n, eos]), /^generate: token 12n \(a BigInt\) at position 1 is outside the vocabulary of 70$/);
    await expectNamed(() => model.generate(null), /^generate: the source must be a string or token ids framed as <s> \.\.\. <\/s>, got null$/);
    await expectNamed(() => model.generate([bos, , eos]), /^generate: token undefined at position 1 is outside the vocabulary of 70$/);
    expect(model.generate([bos, 20, 12, eos]).tokens.length).toBeGreaterThan(0);
  });

  test('hostile options, unknown keys, traceKind and the beam cap', async () => {
    expect(await fuzz(hostileOptions(GENERATE_KEYS), (o) => model.generate('cat', o), same)).toEqual([]);
    await expectNamed(() => model.generate('cat', null), /^generate: options must be an object \(or left out\), got null$/);
    await expectNamed(() => model.generate('cat', { traceKind: 'x' }), /^generate: traceKind must be one of "cross", "self", got "x"$/);
    await expectNamed(() => model.generate('cat', { beams: 100000 }), /^generate: beams must be an integer from 1 to 64, got 100000$/);
    await expectNamed(() => model.generate('cat', { beam: 4 }), /^generate: unknown option 'beam' \(did you mean 'beams'\?\)$/);
    await expectNamed(() => model.generate('cat', { lengthPenalty: 1e9 }), /^generate: lengthPenalty must be a finite number >= -10 and <= 10, got 1000000000$/);
    await expectNamed(() => model.generate('cat', { traceLayer: 99 }), /^generate: traceLayer must be an integer from 0 to \d, got 99$/);
  });
});

describe('run and encodeSource', () => {
  test('hostile sources, decoder inputs and options', async () => {
    expect(await fuzz(HOSTILE, (s) => model.run(s, [2]), same)).toEqual([]);
    const decoderInputs = [...HOSTILE, [40], [2, 99999], [2, 1.5], Array(1e6).fill(2), ...HOSTILE.map((v) => [2, v])];
    expect(await fuzz(decoderInputs, (d) => model.run('cat', d), same)).toEqual([]);
    expect(await fuzz(hostileOptions(['traceLayer', 'traceKind']), (o) => model.run('cat', [2, 40], o), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (s) => model.encodeSource(s), same)).toEqual([]);
    await expectNamed(() => model.run('cat', [40, 2]), /^run: the decoder input must start with decoder_start_token_id \(2\), got \[40, 2\]$/);
    await expectNamed(() => model.run('cat', [2], { beams: 2 }), /^run: unknown option 'beams'/);
    await expectNamed(() => model.run('cat', null), /^run: the decoder input must be an array of token ids/);
    await expectNamed(() => model.run('cat', [2, , 40]), /^run: decoder token undefined at position 1 is outside the vocabulary of 70$/);
    await expectNamed(() => model.encodeSource([20, 12]), /^encodeSource: token ids must be framed as <s> \.\.\. <\/s>/);
  });
});

describe('pronounce', () => {
  test('null, undefined and numbers are named; digits are refused, not dropped', async () => {
    for (const v of [null, undefined, 123]) await expectNamed(() => model.pronounce(v), /^pronounce: text must be a string, got /);
    await expectNamed(() => model.pronounce('x2y'), /^pronounce: the text has the digit "2" at index 1; this model reads letters only: write numbers as words/);
    await expectNamed(() => model.pronounce('cat ٣'), /the digit "٣" at index 4/);
  });

  test('the word limit, the letter limit and options', async () => {
    const words = (n) => Array.from({ length: n }, () => 'cat').join(' ');
    expect(model.pronounce(words(64))).toHaveLength(64);
    await expectNamed(() => model.pronounce(words(65)), /^pronounce: the text has more than 64 words; pronounce reads at most 64 per call$/);
    await expectNamed(() => model.pronounce('x'.repeat(1000)), /^pronounce: the word "x{40}…\(1000 characters\)" is longer than the 62 letters this model reads/);
    expect(model.pronounce('x'.repeat(62))[0].word).toHaveLength(62);
    // Hyphens, punctuation and symbols separate words; apostrophes stay inside one.
    expect(model.pronounce("well-known don't").map((p) => p.word)).toEqual(['well', 'known', "don't"]);
    expect(await fuzz(hostileOptions(GENERATE_KEYS), (o) => model.pronounce('cat', o), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (t) => model.pronounce(t), same)).toEqual([]);
    await expectNamed(() => model.pronounce('cat', { traceKind: 'x' }), /^pronounce: traceKind must be one of "cross", "self", got "x"$/);
  });
});

test('every documented key is accepted (no false positive)', () => {
  const all = { beams: 3, maxNewTokens: 8, lengthPenalty: 0.5, traceLayer: 0, traceKind: 'self' };
  const g = model.generate('knight', all);
  expect(g.hypotheses).toHaveLength(3);
  expect(g.trace).toBeDefined();
  expect(model.pronounce('knight', { ...all, traceKind: 'cross' })[0].result.trace).toBeDefined();
  expect(model.run('knight', [2, 40], { traceLayer: 0, traceKind: 'cross' }).trace).toBeDefined();
  expect(model.run([0, 20, 2], [2], {}).logits.length).toBe(model.config.vocab_size);
  same();
});

test('config.json values: a BigInt or a Symbol is named through show()', async () => {
  const files = (edit) => ({
    config: { ...JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8')), ...edit },
    weights: fs.readFileSync(path.join(folder, 'model.safetensors')),
    tokenizer: { vocab: JSON.parse(fs.readFileSync(path.join(folder, 'vocab.json'), 'utf8')) },
  });
  await expect(attn.loadModel(files({ d_model: 256n }))).rejects.toThrow(/^config\.json: d_model must be a positive integer, got 256n \(a BigInt\)$/);
  await expect(attn.loadModel(files({ eos_token_id: 2n }))).rejects.toThrow(/^config\.json: eos_token_id must be an integer >= 0, got 2n \(a BigInt\)$/);
  await expect(attn.loadModel(files({ activation_function: Symbol('gelu') }))).rejects.toThrow(/activation_function a Symbol is not supported/);
  same();
});

test('after dispose every method gives a named error', async () => {
  const m = await attn.loadModel(folder);
  m.dispose();
  await expectNamed(() => m.generate('cat'), /has been disposed/);
  await expectNamed(() => m.run('cat', [2]), /has been disposed/);
  await expectNamed(() => m.pronounce('cat'), /has been disposed/);
  same();
});
