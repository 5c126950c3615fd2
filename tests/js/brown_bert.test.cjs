// The shipped encoder (web/models/brown-bert, trained by tools/train/bert) loads through the public
// API, tokenizes held-out Brown text exactly as the Python trainer did, and reproduces the masked-LM
// loss and accuracy, embeddings and top guesses of its held-out sample (recomputed with our WASM forward).
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load, expectClose, api } = require('./helpers.cjs');

const folder = path.join(root, 'web/models/brown-bert');
const sample = JSON.parse(fs.readFileSync(path.join(folder, 'heldout-sample.json'), 'utf8'));

describe.each(variants)('%s build', (variant) => {
  let model;
  beforeAll(async () => { model = await (await load(variant)).loadModel(folder); });
  afterAll(() => model.dispose());

  test('a BERT with the masked-LM head, under 6 MB', () => {
    expect(model.type).toBe('bert');
    expect(model.hasMaskedLmHead).toBe(true);
    expect(fs.statSync(path.join(folder, 'model.safetensors')).size).toBeLessThanOrEqual(6e6);
  });

  test('the tokenizer gives the trainer\'s ids for every held-out sentence', () => {
    for (const e of sample.examples) {
      const ids = e.input_ids.slice();
      e.masked_positions.forEach((p, i) => { ids[p] = e.original_ids[i]; });
      expect(model.tokenizer.encode(e.text).ids).toEqual(ids);
    }
  });

  test(`held-out masked-LM loss ${sample.loss.toFixed(4)} nats, accuracy ${(100 * sample.accuracy).toFixed(1)} %`, () => {
    let nll = 0, right = 0, count = 0;
    for (const e of sample.examples) {
      const r = model.run({ tokens: e.input_ids, tokenTypes: e.token_type_ids }, { logits: true });
      const m = model.maskedLmLoss(r, e.masked_positions, e.original_ids);
      nll += m.loss * e.masked_positions.length;
      right += m.accuracy * e.masked_positions.length;
      count += e.masked_positions.length;
      if (e.top5_at_first_mask) {
        const V = model.config.vocab_size, p = e.masked_positions[0];
        const row = Array.from(r.logits.subarray(p * V, (p + 1) * V));
        const top5 = row.map((v, i) => [v, i]).sort((a, b) => b[0] - a[0]).slice(0, 5).map(([, i]) => i);
        expect(top5).toEqual(e.top5_at_first_mask);
      }
    }
    expect(count).toBe(sample.masked_tokens);
    // float16 weights, float32 arithmetic on both sides; only summation order differs.
    expect(Math.abs(nll / count - sample.loss)).toBeLessThan(1e-3);
    expect(Math.abs(right - sample.accuracy * count)).toBeLessThanOrEqual(1);  // a near-tie may flip
  });

  test('sentence embeddings match the trainer\'s (mean-pooled, normalized)', () => {
    const firsts = sample.examples.filter((e) => e.embedding_first8);
    const e = model.embed(firsts.map((x) => ({ tokens: x.input_ids })), { pooling: 'mean', normalize: true });
    firsts.forEach((x, i) => expectClose(e.row(i).subarray(0, 8), x.embedding_first8, { abs: 1e-4, rel: 1e-3 }, `embedding ${i}`));
  });

  test('fill-mask gives real words, most likely first', () => {
    const [blank] = model.fillMask('The [MASK] sat on the mat.', 5);
    expect(blank.position).toBe(2);
    expect(blank.predictions).toHaveLength(5);
    for (const p of blank.predictions) expect(p.text).not.toMatch(/^\[.*\]$/);
    const probs = blank.predictions.map((p) => p.probability);
    expect(probs).toEqual([...probs].sort((a, b) => b - a));
    expect(api.cosineSimilarity(...['He went home.', 'She went home.'].map((t) => model.embed([t]).row(0)))).toBeGreaterThan(0.5);
  });
});
