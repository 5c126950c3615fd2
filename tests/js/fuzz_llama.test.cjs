// Hostile input at every entry point of a Llama-family model (issues 21 and 26) on a tiny random
// checkpoint: loadModel with hostile config.json fields, run / generate / predictNext / loss /
// kvHeadOf with each argument and each option set to each hostile value, calls after dispose().
// Every call gives a result or an AttentionError, and the model gives the same logits, loss and
// predictions afterwards; every documented key is accepted.
const { load } = require('./helpers.cjs');
const { HOSTILE, hostileOptions, fuzz, expectNamed } = require('./fuzz.cjs');
const { documentedKeys } = require('./documented_keys.cjs');
const { checkpoint, modelFiles } = require('./llama_checkpoint.cjs');

const CONFIG = {
  model_type: 'llama', vocab_size: 23, max_position_embeddings: 16, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, tie_word_embeddings: true,
};
const TENSORS = checkpoint(CONFIG, 3);
const TEXT = 'abcde';
const equal = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

let attn, model, good;
beforeAll(async () => {
  attn = await load('simd');
  model = await attn.loadModel(modelFiles(CONFIG, TENSORS));
  good = answer();
});
afterAll(() => model.dispose());

function answer() {
  const r = model.run(TEXT);
  return { logits: r.logits, loss: model.loss(r).loss, next: JSON.stringify(model.predictNext(r, 3)) };
}

/** Throws unless the model still gives the first logits, loss and predictions. */
function same() {
  const now = answer();
  if (!equal(now.logits, good.logits)) throw new Error('the logits changed');
  if (now.loss !== good.loss) throw new Error('the loss changed');
  if (now.next !== good.next) throw new Error('the predictions changed');
}

test('loadModel: each config.json field set to each hostile value gives a model or a named error', async () => {
  const fields = ['num_key_value_heads', 'head_dim', 'rope_theta', 'rope_scaling', 'rms_norm_eps', 'tie_word_embeddings', 'attention_bias',
    'sliding_window', 'hidden_act', 'partial_rotary_factor', 'max_position_embeddings', 'eos_token_id'];
  const values = fields.flatMap((key) => HOSTILE.map((v) => ({ key, v })));
  const bad = await fuzz(values, async ({ key, v }) => {
    const m = await attn.loadModel(modelFiles({ ...CONFIG, model_type: 'mistral', [key]: v }, TENSORS));
    m.dispose();
  }, same);
  expect(bad).toEqual([]);
  await expectNamed(() => attn.loadModel(modelFiles({ ...CONFIG, rope_scaling: { type: 'dynamic', factor: 2 } }, TENSORS)),
    /^config.json: rope_scaling type "dynamic" is not supported \(supported: linear, llama3, longrope\)$/);
});

test('run, predictNext, loss, kvHeadOf: hostile arguments and options', async () => {
  expect(await fuzz(HOSTILE, (input) => model.run(input), same)).toEqual([]);
  expect(await fuzz(hostileOptions(documentedKeys('RunOptions')), (o) => model.run(TEXT, o), same)).toEqual([]);
  const run = model.run(TEXT);
  expect(await fuzz(HOSTILE, (k) => model.predictNext(run, k), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (r) => model.loss(r), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (h) => model.kvHeadOf(h), same)).toEqual([]);
  await expectNamed(() => model.run(new Array(17).fill(2)), /^run: 17 tokens exceed the model's context of 16$/);
});

test('generate: hostile prompts and options', async () => {
  const short = { maxNewTokens: 2 };
  expect(await fuzz(HOSTILE, (prompt) => model.generate(prompt, short), same)).toEqual([]);
  const options = hostileOptions(documentedKeys('GenerateOptions')).map((o) => (o && typeof o === 'object' && !Array.isArray(o) && !ArrayBuffer.isView(o) ? { ...short, ...o } : o));
  expect(await fuzz(options, (o) => model.generate(TEXT, o), same)).toEqual([]);
});

test('no false positive: every documented key is accepted', async () => {
  const run = {};
  for (const key of documentedKeys('RunOptions')) run[key] = { prependBos: true, attention: true, traceLayer: 1, logitsToKeep: 2, ablate: [{ layer: 0, head: 1 }] }[key];
  expect(Object.values(run).every((v) => v !== undefined)).toBe(true);
  expect(model.run(TEXT, run).trace.shapes.k).toEqual([1, 2, 6, 4]);  // bos + 5 letters
  const out = await model.generate(TEXT, { maxNewTokens: 3, temperature: 0.8, topK: 5, topP: 0.9, seed: 1, stop: ['zz'], attention: true, onToken: () => {} });
  expect(out.promptTokens.length).toBe(5);
  same();
});

test('every entry point after dispose() is a named error', async () => {
  const m = await attn.loadModel(modelFiles(CONFIG, TENSORS));
  const run = m.run(TEXT);
  m.dispose();
  await expectNamed(() => m.run(TEXT), /this LlamaModel has been disposed/);
  await expectNamed(() => m.generate(TEXT), /this LlamaModel has been disposed/);
  await expectNamed(() => m.predictNext(run), /this LlamaModel has been disposed/);
  await expectNamed(() => m.loss(run), /this LlamaModel has been disposed/);
  m.dispose();
});
