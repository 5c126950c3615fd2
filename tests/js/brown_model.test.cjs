// The shipped model (web/models/brown-gpt2, trained by tools/train) loads through the public API,
// tokenizes held-out Brown text exactly as the Python trainer did, and reproduces the held-out
// loss and perplexity its model card reports (recomputed here with our WASM forward).
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load } = require('./helpers.cjs');

const folder = path.join(root, 'web/models/brown-gpt2');
const sample = JSON.parse(fs.readFileSync(path.join(folder, 'heldout-sample.json'), 'utf8'));

describe.each(variants)('%s build', (variant) => {
  let model;
  beforeAll(async () => { model = await (await load(variant)).loadModel(folder); });
  afterAll(() => model.dispose());

  test('the tokenizer gives the trainer\'s ids for every held-out sentence', () => {
    for (const s of sample.sentences) expect(model.tokenizer.encode(s.text)).toEqual(s.ids.slice(1));
    expect(model.tokenizer.encode('<|endoftext|>' + sample.sentences[0].text)).toEqual(sample.sentences[0].ids);
    expect(model.tokenizer.decode(sample.sentences[3].ids.slice(1))).toBe(sample.sentences[3].text);
  });

  test(`held-out loss ${sample.mean_loss.toFixed(4)} nats/token, perplexity ${sample.perplexity.toFixed(2)}`, () => {
    let nll = 0, count = 0;
    for (const s of sample.sentences) {
      const run = model.run(s.text, { prependBos: true });
      expect(run.tokens).toEqual(s.ids);
      const { loss } = model.loss(run);
      // float16 weights, float32 arithmetic on both sides; only summation order differs.
      expect(Math.abs(loss - s.loss)).toBeLessThan(1e-3);
      nll += loss * (s.ids.length - 1);
      count += s.ids.length - 1;
      const V = model.config.vocab_size;
      const argmax = s.ids.map((_, t) => {
        const row = run.logits.subarray(t * V, (t + 1) * V);
        return row.indexOf(Math.max(...row));
      });
      expect(argmax).toEqual(s.argmax_next);
    }
    expect(count).toBe(sample.predicted_tokens);
    expect(Math.abs(nll / count - sample.mean_loss)).toBeLessThan(1e-4);
    expect(Math.abs(Math.exp(nll / count) - sample.perplexity)).toBeLessThan(0.01);
  });

  test('it has learned something: sensible next words and attention rows that sum to 1', () => {
    const run = model.run('The jury said it did not', { prependBos: true, attention: true });
    const next = model.predictNext(run, 10).map((p) => p.text);
    expect(next.some((t) => [' have', ' know', ' be', ' want', ' think', ' see', ' say', ' seem'].includes(t))).toBe(true);
    const n = run.tokens.length, { n_layer: L, n_head: H } = model.config;
    expect(run.attention).toHaveLength(L * H * n * n);
    for (let row = 0; row < L * H * n; row++) {
      let sum = 0;
      for (let j = 0; j < n; j++) sum += run.attention[row * n + j];
      expect(sum).toBeCloseTo(1, 5);
    }
  });
});
