// Hostile input at every entry point of a GPT-2 model (issues 21 and 26), on the shipped
// brown-gpt2: run / generate / predictNext / loss with each argument and each option key set to
// each hostile value, unknown keys, results passed back in (hand-made, altered, another model's),
// calls after dispose(). Every call gives a result or an AttentionError, and the model gives the
// same logits, loss and predictions afterwards; every documented key is accepted.
const path = require('node:path');
const { load, root } = require('./helpers.cjs');
const { HOSTILE, hostileOptions, fuzz, outcome, expectNamed } = require('./fuzz.cjs');
const { documentedKeys } = require('./documented_keys.cjs');

const TEXT = 'The jury said that the city';
const over = (base, cases) => cases.map((c) => (c && typeof c === 'object' && !Array.isArray(c) && !ArrayBuffer.isView(c) ? { ...base, ...c } : c));
const equal = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

// The check after every hostile call runs a short input (hundreds of checks); each test ends
// with the full text's check as well.
const CHECK = 'The jury';

let attn, model, run, good;
beforeAll(async () => {
  attn = await load('simd');
  model = await attn.loadModel(path.join(root, 'web/models/brown-gpt2'));
  run = model.run(TEXT, { prependBos: true });
  good = { [TEXT]: answer(TEXT), [CHECK]: answer(CHECK) };
});
afterAll(() => model.dispose());
afterEach(() => { same(TEXT); });

function answer(text) {
  const r = model.run(text, { prependBos: true });
  return { logits: r.logits, loss: model.loss(r).loss, next: JSON.stringify(model.predictNext(r, 3)) };
}

/** Throws unless the model still gives the first logits, loss and predictions. */
function same(text = CHECK) {
  const now = answer(text), then = good[text];
  if (!equal(now.logits, then.logits)) throw new Error('the logits changed');
  if (now.loss !== then.loss) throw new Error('the loss changed');
  if (now.next !== then.next) throw new Error('the predictions changed');
}

test('run: hostile inputs, and each option set to each hostile value', async () => {
  expect(await fuzz(HOSTILE, (input) => model.run(input), same)).toEqual([]);
  expect(await fuzz(hostileOptions(documentedKeys('RunOptions')), (o) => model.run(TEXT, o), same)).toEqual([]);
  await expectNamed(() => model.run(TEXT, { prependBOS: true }), /^run: unknown option 'prependBOS' \(did you mean 'prependBos'\?\)$/);
  await expectNamed(() => model.run(TEXT, null), /^run: options must be an object \(or left out\), got null$/);
  // Over-long text is refused before tokenizing (a token covers a bounded number of bytes).
  await expectNamed(() => model.run('!'.repeat(300000)), /^run: the input's 300000 characters exceed the model's context of 128 tokens/);
  await expectNamed(() => model.run('😀'.repeat(100000)), /^run: the input's 200000 characters exceed/);
});

test('generate: hostile prompts, and each option set to each hostile value', async () => {
  const short = { maxNewTokens: 2 };
  expect(await fuzz(HOSTILE, (prompt) => model.generate(prompt, short), same)).toEqual([]);
  expect(await fuzz(over(short, hostileOptions(documentedKeys('GenerateOptions'))), (o) => model.generate(TEXT, o), same)).toEqual([]);
  await expectNamed(() => model.generate(null), /^generate: the prompt must be a string or an array of token ids, got null$/);
  await expectNamed(() => model.generate(TEXT, null), /^generate: options must be an object \(or left out\), got null$/);
  await expectNamed(() => model.generate(TEXT, { maxTokens: 5 }), /^generate: unknown option 'maxTokens' \(did you mean 'maxNewTokens'\?\)$/);
  await expectNamed(() => model.generate(TEXT, { beams: 100000 }), /^generate: beams must be an integer from 1 to 64, got 100000$/);
});

test('predictNext and loss: hostile, hand-made, altered and foreign results', async () => {
  const V = model.config.vocab_size, n = run.tokens.length;
  const results = [
    ...HOSTILE,
    { ...run, tokens: [...run.tokens.slice(0, -1), 99999] }, { ...run, tokens: [...run.tokens.slice(0, -1), -1] },
    { ...run, tokens: [...run.tokens.slice(0, -1), 2.5] }, { ...run, tokens: [] }, { ...run, tokens: 'abc' },
    { ...run, logits: run.logits.subarray(V) }, { ...run, logits: Float64Array.from(run.logits) }, { ...run, logits: [...run.logits.subarray(0, 4)] },
    { ...run, logitsFrom: n + 1 }, { ...run, logitsFrom: -1 }, { ...run, logitsFrom: '0' }, { ...run, logitsFrom: 1 },
    { ...run, logits: run.logits.map((v, i) => (i === 7 ? NaN : v)) }, { tokens: run.tokens }, { logits: run.logits },
    Object.defineProperty({ ...run }, 'tokens', { get() { throw new Error('getter'); } }),
    new Proxy(run, { get() { throw new Error('trap'); } }),
    // Another model's result: a BART run (no tokens field, its own logits).
    { sourceTokens: [0, 5, 2], logits: new Float32Array(3 * 50), encoderOutput: new Float32Array(3) },
  ];
  expect(await fuzz(results, (r) => model.loss(r), same)).toEqual([]);
  expect(await fuzz(results, (r) => model.predictNext(r), same)).toEqual([]);
  expect(await fuzz(HOSTILE.filter((v) => v !== undefined), (k) => model.predictNext(run, k), same)).toEqual([]);
  expect(await fuzz(HOSTILE.filter((v) => v !== undefined), (p) => model.predictNext(run, 3, p), same)).toEqual([]);
  // An id outside the vocabulary, and NaN logits, are named: never a NaN loss.
  await expectNamed(() => model.loss({ ...run, tokens: [...run.tokens.slice(0, -1), 99999] }), /^loss: result\.tokens\[\d+\] is 99999, outside the vocabulary of 14336/);
  await expectNamed(() => model.loss({ ...run, logits: run.logits.map((v, i) => (i === 7 ? NaN : v)) }), /^loss: result\.logits\[7\] is NaN: logits must be finite$/);
  await expectNamed(() => model.predictNext({ tokens: [1, 2] }), /^predictNext: result\.logits must be a Float32Array of 2 x 14336/);
  await expectNamed(() => model.predictNext(run, 2.5), /^predictNext: k must be an integer >= 0, got 2\.5$/);
  // A hand-made result of the right shape is a result like any other.
  expect(model.loss({ tokens: run.tokens, logits: run.logits }).loss).toBe(good[TEXT].loss);
});

test('calls after dispose() are named errors', async () => {
  const gone = await attn.loadModel(path.join(root, 'web/models/brown-gpt2'));
  const r = gone.run(TEXT);
  gone.dispose();
  const calls = [() => gone.run(TEXT), () => gone.generate(TEXT), () => gone.predictNext(r), () => gone.loss(r), () => gone.run(TEXT, { bad: 1 })];
  for (const call of calls) await expectNamed(call, /^this Gpt2Model has been disposed$/);
});

test('no false positive: every documented key is accepted', async () => {
  const runOptions = { prependBos: true, attention: true, traceLayer: 1, logitsToKeep: 2, ablate: [{ layer: 1, head: 0 }] };
  expect(Object.keys(runOptions).sort()).toEqual(documentedKeys('RunOptions'));
  const r = model.run(TEXT, runOptions);
  expect(r.trace.weights.length).toBeGreaterThan(0);
  expect(model.predictNext(r, 3)).toHaveLength(3);
  const events = [];
  const options = {
    maxNewTokens: 3, stop: ['\u0000'], prependBos: true, beams: 1, lengthPenalty: 1, onToken: (e) => events.push(e), attention: true,
    signal: new AbortController().signal, temperature: 0.8, topK: 20, topP: 0.9, seed: 5, minP: 0.05, repetitionPenalty: 1.2,
  };
  expect(Object.keys(options).sort()).toEqual(documentedKeys('GenerateOptions'));
  const g = await model.generate(TEXT, options);
  expect(events.map((e) => e.token)).toEqual(g.tokens);
  expect(await outcome(() => model.generate(TEXT, { ...options, beams: 3, onToken: undefined }))).toBe('ok');
});
