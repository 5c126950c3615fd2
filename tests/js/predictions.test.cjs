// predictNext / fillMask pick the k most probable tokens without sorting the whole vocabulary:
// checked against a full sort of the float64 softmax (ties: lower id first), for small and large k,
// on the shipped models and on a tiny model whose LM head has identical rows (tied logits).
// Probabilities (exponentials in the core) to one part in 10^6 of the float64 softmax.
const fs = require('node:fs');
const path = require('node:path');
const { root, load } = require('./helpers.cjs');

/** The reference: every id by probability, most probable first, ties by id; float64 softmax. */
function ranking(row) {
  let max = -Infinity;
  for (const x of row) max = Math.max(max, x);
  const e = Array.from(row, (x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  const p = e.map((x) => x / sum);
  return { p, ids: p.map((_, i) => i).sort((a, b) => p[b] - p[a] || a - b) };
}

function expectTop(preds, row, k) {
  const { p, ids } = ranking(row);
  expect(preds.map((x) => x.id)).toEqual(ids.slice(0, k));
  // The core's float32 exponentials (summed in double) against float64: a few parts in 10^7.
  preds.forEach((x) => expect(Math.abs(x.probability - p[x.id])).toBeLessThanOrEqual(1e-6 * p[x.id] + 1e-15));
}

test('brown-gpt2: logitsToKeep computes only the last rows (equal to the full run\'s), enough to predict; loss needs them all', async () => {
  const attn = await load('simd');
  const model = await attn.loadModel(path.join(root, 'web/models/brown-gpt2'));
  try {
    const text = 'The jury said that the city';
    const full = model.run(text, { prependBos: true, attention: true });
    const n = full.tokens.length, V = model.config.vocab_size;
    expect(full.logitsFrom).toBe(0);
    for (const keep of [0, 1, 3, n]) {
      const r = model.run(text, { prependBos: true, attention: true, logitsToKeep: keep });
      expect(r.logitsFrom).toBe(n - keep);
      expect(r.logits).toEqual(full.logits.subarray((n - keep) * V));  // the same kernel on the same rows
      expect(r.attention).toEqual(full.attention);
    }
    const last = model.run(text, { prependBos: true, attention: true, logitsToKeep: 1 });
    expect(model.predictNext(last, 5)).toEqual(model.predictNext(full, 5));
    expect(() => model.predictNext(last, 5, n - 2)).toThrow(`predictNext: position ${n - 2} has no logits (the run kept positions ${n - 1} to ${n - 1}: logitsToKeep)`);
    expect(() => model.loss(last)).toThrow('loss: needs the logits of every position; the run kept only the last 1 (logitsToKeep)');
    expect(() => model.loss(model.run(text, { prependBos: true, logitsToKeep: 0 }))).toThrow('loss: needs the logits of every position; the run kept none (logitsToKeep)');
    for (const bad of [-1, n, 1.5])
      expect(() => model.predictNext(full, 5, bad)).toThrow(`predictNext: position must be an integer in [0, ${n - 1}] (the run's tokens), got ${bad}`);
    for (const bad of [-1, n + 1, 1.5, NaN])
      expect(() => model.run(text, { prependBos: true, logitsToKeep: bad })).toThrow(`run: logitsToKeep must be an integer in [0, ${n}] (the run's tokens), got ${bad}`);
    expect(model.loss(model.run(text, { prependBos: true, attention: true })).loss).toBe(model.loss(full).loss);  // still usable
  } finally {
    model.dispose();
  }
});

test('brown-gpt2: predictNext(k) is the head of the full ranking, for k from 0 to the vocabulary', async () => {
  const attn = await load('simd');
  const model = await attn.loadModel(path.join(root, 'web/models/brown-gpt2'));
  try {
    const run = model.run('The jury said that the city', { prependBos: true });
    const V = model.config.vocab_size;
    for (const position of [0, run.tokens.length - 1]) {
      const row = run.logits.subarray(position * V, (position + 1) * V);
      for (const k of [0, 1, 9, 64, 65, 300]) expectTop(model.predictNext(run, k, position), row, k);
    }
    expect(model.predictNext(run, V + 5)).toHaveLength(V);
  } finally {
    model.dispose();
  }
});

test('brown-bert: fillMask(k) is the head of the full ranking of the allowed tokens', async () => {
  const attn = await load('simd');
  const model = await attn.loadModel(path.join(root, 'web/models/brown-bert'));
  try {
    for (const k of [1, 5, 40]) {
      const [blank] = model.fillMask('The [MASK] sat on the mat.', k);
      expect(blank.predictions).toHaveLength(k);
      for (let i = 1; i < k; i++) expect(blank.predictions[i - 1].probability).toBeGreaterThanOrEqual(blank.predictions[i].probability);
      expect(blank.predictions.map((x) => x.text).every((t) => !/^\[.*\]$/.test(t))).toBe(true); // no special tokens
    }
    // The same k first entries whatever k: a larger k only appends.
    const five = model.fillMask('The [MASK] sat on the mat.', 5)[0].predictions.map((x) => x.id);
    const big = model.fillMask('The [MASK] sat on the mat.', 100)[0].predictions.map((x) => x.id);
    expect(big.slice(0, 5)).toEqual(five);
  } finally {
    model.dispose();
  }
});

test('tied logits keep id order, as a stable sort would', async () => {
  // The tiny PyTorch fixture with LM-head (= wte) rows 8..15 made identical: equal logits there.
  const dir = path.join(root, 'tests/fixtures/gpt2/f32_tiny');
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors')));
  const n = Number(Buffer.from(bytes).readBigUInt64LE(0));
  const wte = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'))['wte.weight'];
  const C = config.n_embd, start = 8 + n + wte.data_offsets[0];
  const rows = new Float32Array(bytes.buffer.slice(start, wte.data_offsets[1] - wte.data_offsets[0] + start));
  for (let r = 9; r <= 15; r++) rows.copyWithin(r * C, 8 * C, 9 * C);
  bytes.set(new Uint8Array(rows.buffer), start);
  const vocab = {};
  for (let i = 0; i < config.vocab_size; i++) vocab[String.fromCharCode(0x21 + i)] = i;
  const attn = await load('simd');
  const model = await attn.loadModel({ config, weights: bytes, tokenizer: { vocab, merges: '' } });
  try {
    const run = model.run([1, 2, 3, 4]);
    const V = config.vocab_size;
    for (let pos = 0; pos < 4; pos++) {
      const row = run.logits.subarray(pos * V, (pos + 1) * V);
      for (let r = 9; r <= 15; r++) expect(row[r]).toBe(row[8]); // the ties are there
      for (const k of [1, 5, 12, 37]) expectTop(model.predictNext(run, k, pos), row, k);
    }
  } finally {
    model.dispose();
  }
});

test('k past the vocabulary gives all of it; a k that is not a count is a named error', async () => {
  const attn = await load('simd');
  const model = await attn.loadModel(path.join(root, 'web/models/brown-gpt2'));
  try {
    const run = model.run('The', { prependBos: true });
    expect(model.predictNext(run, 1e9)).toHaveLength(model.config.vocab_size);
    for (const k of [2.5, -1, NaN, Infinity, '3', null])
      expect(() => model.predictNext(run, k)).toThrow(/^predictNext: k must be an integer >= 0, got /);
  } finally {
    model.dispose();
  }
});
