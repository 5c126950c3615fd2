// The shipped model (web/models/brown-gpt2, trained by tools/train) loads through the public API,
// tokenizes held-out Brown text exactly as the Python trainer did, and reproduces the held-out
// loss and perplexity its model card reports (recomputed here with our WASM forward).
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load, argmaxRows } = require('./helpers.cjs');

const folder = path.join(root, 'web/models/brown-gpt2');
const sample = JSON.parse(fs.readFileSync(path.join(folder, 'heldout-sample.json'), 'utf8'));
const heads = JSON.parse(fs.readFileSync(path.join(folder, 'heads.json'), 'utf8'));
const labelled = (label) => heads.heads.filter((h) => h.label === label);

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
      expect(argmaxRows(run.logits, V, s.ids.length)).toEqual(s.argmax_next);
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

// The heads are the model's, not a build's: measured once, in the SIMD build (the loss above holds
// each build to the trainer's forward).
describe('simd build: the card\'s heads', () => {
  let model;
  beforeAll(async () => { model = await (await load('simd')).loadModel(folder); });
  afterAll(() => model.dispose());

  // The card's head measurements (analyze_heads.py, first 500 validation sentences), re-measured
  // through our WASM forward on other held-out text (the fixture's sentences), with its rules:
  // the strongest previous-token head is the same head and about as strong; every head the card
  // labels a previous-token or induction/copy head passes that label's threshold here too; and a
  // sentence said twice gets the card's easier-second-copy ratio.
  test('its heads do what the card measured, on other held-out sentences', () => {
    const { n_layer: L, n_head: H, n_positions: P, vocab_size: V } = model.config;
    const at = (run, n, l, h, q, k) => run.attention[((l * H + h) * n + q) * n + k];
    const prev = new Float64Array(L * H), ind = new Float64Array(L * H);
    let nPrev = 0, nInd = 0, nllFirst = 0, nllSecond = 0;
    for (const s of sample.sentences) {
      const words = s.ids.slice(1), n1 = words.length;
      // Plain sentence: attention from t >= 2 to t - 1.
      const plain = model.run(s.ids, { attention: true });
      for (let lh = 0; lh < L * H; lh++)
        for (let t = 2; t < s.ids.length; t++) prev[lh] += at(plain, s.ids.length, Math.floor(lh / H), lh % H, t, t - 1);
      nPrev += s.ids.length - 2;
      if (2 * n1 + 2 > P) continue;
      // Said twice: EOT s EOT s. Token s_i of the second copy (position n1+1+i) looking at
      // s_{i+1} of the first copy (position i+1) is the induction/copy pattern.
      const ids = [s.ids[0], ...words, s.ids[0], ...words], n = ids.length;
      const run = model.run(ids, { attention: true });
      for (let lh = 0; lh < L * H; lh++)
        for (let i = 1; i < n1; i++) ind[lh] += at(run, n, Math.floor(lh / H), lh % H, n1 + 1 + i, i + 1);
      nInd += n1 - 1;
      const nll = (t) => {  // -ln p(ids[t] | ids[0..t-1]); indexed loops (a spread or iterator over 14k logits is ~5x slower)
        const logits = run.logits, start = (t - 1) * V;
        let max = -Infinity;
        for (let j = start; j < start + V; j++) max = Math.max(max, logits[j]);
        let z = 0;
        for (let j = start; j < start + V; j++) z += Math.exp(logits[j] - max);
        return Math.log(z) + max - logits[start + ids[t]];
      };
      for (let t = 2; t <= n1; t++) nllFirst += nll(t);
      for (let t = n1 + 3; t <= 2 * n1 + 1; t++) nllSecond += nll(t);
    }
    expect(nInd).toBeGreaterThan(200);
    const idx = (h) => h.layer * H + h.head;
    const cardBest = heads.heads.reduce((a, b) => (b.scores.previous > a.scores.previous ? b : a));
    const ours = Array.from(prev, (v) => v / nPrev);
    expect(ours.indexOf(Math.max(...ours))).toBe(idx(cardBest));
    expect(Math.abs(ours[idx(cardBest)] - cardBest.scores.previous)).toBeLessThan(0.1);
    for (const h of labelled('previous-token')) expect(ours[idx(h)]).toBeGreaterThanOrEqual(0.4);
    for (const h of labelled('induction')) expect(ind[idx(h)] / nInd).toBeGreaterThanOrEqual(0.25);
    const card = heads.repeat_test.loss_second_copy / heads.repeat_test.loss_first_copy;
    expect(Math.abs(nllSecond / nllFirst - card)).toBeLessThan(0.1);
  });
});
