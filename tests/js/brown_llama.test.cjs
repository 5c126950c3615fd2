// The shipped Llama-style model (web/models/brown-llama, trained by tools/train/run_llama.sh) loads
// through the public API, folder and package module alike, and reproduces what PyTorch computed
// from the same exported file (tools/train/heldout_sample.py with tools/train/llama_model.py):
// the tokens, each held-out sentence's loss, the largest logits at every position, the greedy
// continuations; and its heads do what heads.json says.
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load, argmaxRows } = require('./helpers.cjs');

const folder = path.join(root, 'web/models/brown-llama');
const sample = JSON.parse(fs.readFileSync(path.join(folder, 'heldout-sample.json'), 'utf8'));
const heads = JSON.parse(fs.readFileSync(path.join(folder, 'heads.json'), 'utf8'));
// float16 weights, float32 arithmetic on both sides; only summation order differs (and the
// fixture's logits are rounded to 5 decimals). Measured: at most 9.1e-6 (scalar), 8.9e-6 (simd,
// simd-threads); each greedy step's top-2 gap must be 10x this tolerance (checked below; the
// fixture's smallest is 4.9e-3), so a near tie cannot make the token comparison flaky.
const LOGIT_TOL = 1e-4;

describe.each(variants)('%s build', (variant) => {
  let model;
  beforeAll(async () => { model = await (await load(variant)).loadModel(folder); });
  afterAll(() => model.dispose());

  test('a Llama with real K/V groups: 8 query heads over 2 K/V heads, 4 consecutive query heads each', () => {
    expect(model.type).toBe('llama');
    const { num_attention_heads: H, num_key_value_heads: KV } = model.config;
    expect([H, KV]).toEqual([8, 2]);
    expect(Array.from({ length: H }, (_, h) => model.kvHeadOf(h))).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    for (const h of heads.heads) expect(h.kv_head).toBe(model.kvHeadOf(h.head));
  });

  test("the tokenizer.json gives the trainer's ids (bpe.py) for every held-out sentence, <|endoftext|> first", () => {
    for (const s of sample.sentences) {
      expect(model.tokenizer.encode(s.text)).toEqual(s.ids);
      expect(model.tokenizer.encode(s.text, { addSpecialTokens: false })).toEqual(s.ids.slice(1));
    }
    expect(model.tokenizer.decode(sample.sentences[3].ids.slice(1))).toBe(sample.sentences[3].text);
  });

  test(`held-out loss ${sample.mean_loss.toFixed(4)} nats/token (PyTorch), and every position's argmax`, () => {
    let nll = 0, count = 0;
    const V = model.config.vocab_size;
    for (const s of sample.sentences) {
      const run = model.run(s.text);
      expect(run.tokens).toEqual(s.ids);
      const { loss } = model.loss(run);
      expect(Math.abs(loss - s.loss)).toBeLessThan(1e-4);
      nll += loss * (s.ids.length - 1);
      count += s.ids.length - 1;
      expect(argmaxRows(run.logits, V, s.ids.length)).toEqual(s.argmax_next);
    }
    expect(count).toBe(sample.predicted_tokens);
    expect(Math.abs(nll / count - sample.mean_loss)).toBeLessThan(1e-4);
  });

  test(`the 8 largest logits at every position equal PyTorch's within ${LOGIT_TOL}`, () => {
    const V = model.config.vocab_size;
    expect(sample.logits_check.length).toBeGreaterThanOrEqual(3);
    sample.logits_check.forEach((expected, i) => {
      const s = sample.sentences[i], run = model.run(s.ids);
      expect(expected.ids).toHaveLength(s.ids.length);
      let worst = 0;
      expected.ids.forEach((ids, t) => ids.forEach((id, k) => {
        worst = Math.max(worst, Math.abs(run.logits[t * V + id] - expected.logits[t][k]));
      }));
      expect(worst).toBeLessThan(LOGIT_TOL);
    });
  });

  test('greedy generation (KV cache) gives the tokens PyTorch chose by re-running the whole sequence', async () => {
    for (const g of sample.greedy) {
      expect(g.min_top2_gap).toBeGreaterThan(10 * LOGIT_TOL);
      const eot = g.new_tokens.at(-1) === sample.eot_id;
      const out = await model.generate(g.prompt, { maxNewTokens: g.new_tokens.length });
      expect(out.promptTokens).toEqual(g.ids);
      // The result leaves out a final end-of-text token.
      expect(out.tokens).toEqual(eot ? g.new_tokens.slice(0, -1) : g.new_tokens);
    }
  });

  // The demo's labels (tools/heads/label_heads.mjs) re-measured on other held-out text: the
  // strongest previous-token head is the same head and about as strong, and every head labelled
  // a sink still rests on position 0.
  test('its heads do what heads.json measured, on other held-out sentences', () => {
    const { num_hidden_layers: L, num_attention_heads: H } = model.config;
    const prev = new Float64Array(L * H), sink = new Float64Array(L * H);
    let nPrev = 0, nSink = 0;
    for (const s of sample.sentences) {
      const n = s.ids.length, run = model.run(s.ids, { attention: true });
      const at = (lh, q, k) => run.attention[(lh * n + q) * n + k];
      for (let lh = 0; lh < L * H; lh++)
        for (let t = 2; t < n; t++) { prev[lh] += at(lh, t, t - 1); sink[lh] += at(lh, t, 0); }
      nPrev += n - 2;
      nSink += n - 2;
    }
    const idx = (h) => h.layer * H + h.head;
    const best = heads.heads.reduce((a, b) => (b.scores.previous > a.scores.previous ? b : a));
    const ours = Array.from(prev, (v) => v / nPrev);
    expect(ours.indexOf(Math.max(...ours))).toBe(idx(best));
    expect(Math.abs(ours[idx(best)] - best.scores.previous)).toBeLessThan(0.1);
    for (const h of heads.heads.filter((x) => x.label === 'sink')) expect(sink[idx(h)] / nSink).toBeGreaterThan(0.4);
  });
});

test('the package module attention-wasm/models/brown-llama loads the same model', async () => {
  const shipped = require(path.join(root, 'dist/models/brown-llama/index.cjs'));
  expect(shipped.name).toBe('brown-llama');
  expect(shipped.type).toBe('llama');
  expect(Object.keys(shipped.files).sort()).toEqual(
    ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
  const model = await (await load('simd')).loadModel(shipped);
  try {
    const s = sample.sentences[0];
    const run = model.run(s.text);
    expect(run.tokens).toEqual(s.ids);
    expect(Math.abs(model.loss(run).loss - s.loss)).toBeLessThan(1e-4);
  } finally {
    model.dispose();
  }
});

test("the model card reports the held-out loss reproduced above, and the file's size and type", () => {
  const card = fs.readFileSync(path.join(folder, 'MODEL_CARD.md'), 'utf8');
  expect(card).toContain(`mean loss ${sample.mean_loss.toFixed(4)} nats/token`);
  const bytes = fs.statSync(path.join(folder, 'model.safetensors')).size;
  expect(card).toContain(`float16, ${bytes.toLocaleString('en-US')} bytes`);
  expect(bytes).toBeLessThanOrEqual(8 * 1024 * 1024);
});
