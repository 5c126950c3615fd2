// The quality figures the demo shows (web/models/*/quality.json, written by
// tools/quality/measure_quality.mjs through the WASM forward) come from measuring code that agrees
// with PyTorch: the tool's own measures run on each model's heldout-sample.json (`--sample`), whose
// reference figures PyTorch computed (tools/train/heldout_sample.py), and must give the same
// numbers. Also: every quality.json names its measure, held-out data, training data and baseline.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '../..');
const models = path.join(root, 'web/models');
const sample = (name) => JSON.parse(fs.readFileSync(path.join(models, name, 'heldout-sample.json'), 'utf8'));
const quality = (name) => JSON.parse(fs.readFileSync(path.join(models, name, 'quality.json'), 'utf8'));
const sumOf = (xs) => xs.reduce((a, b) => a + b, 0);

let measured;
beforeAll(() => {
  measured = JSON.parse(execFileSync(process.execPath, [path.join(root, 'tools/quality/measure_quality.mjs'), '--sample'], { cwd: root, encoding: 'utf8' }));
}, 120000);

// Each decoder measured as the tool measures it: its own tokenizer, sentences as PyTorch tokenized them.
test.each([['brown-gpt2', 'gpt2'], ['brown-llama', 'llama']])('%s: the nats the tool sums equal PyTorch\'s loss on the held-out sample', (name, key) => {
  const s = sample(name), m = measured[key];
  expect(m.nats).toHaveLength(s.sentences.length);
  s.sentences.forEach(({ sum_nll: reference }, i) => expect(Math.abs(m.nats[i] - reference)).toBeLessThan(0.01));
  expect(Math.abs(sumOf(m.nats) / s.predicted_tokens - s.mean_loss)).toBeLessThan(1e-3);
  // Longer than the context (128): scored in windows, every token once, the first window as a run of its own.
  expect(m.long.nats).toHaveLength(199);
  expect(m.long.nats.every(Number.isFinite)).toBe(true);
  expect(m.long.nats.slice(0, 127)).toEqual(m.long.firstWindow);
});

test('brown-bert: the blanks the tool counts right match PyTorch\'s accuracy on the held-out sample', () => {
  const s = sample('brown-bert');
  // float16 weights computed in float32 here and in PyTorch: at most one near-tie may differ.
  expect(Math.abs(sumOf(measured.bert) - s.accuracy * s.masked_tokens)).toBeLessThanOrEqual(1);
});

test('g2p-bart: the tool\'s word and phoneme error rates match PyTorch\'s greedy ones on the held-out sample', () => {
  const s = sample('g2p-bart');
  expect(Math.abs(measured.bart.wer - s.wer)).toBeLessThanOrEqual(2 / s.words.length);
  expect(Math.abs(measured.bart.per - s.per)).toBeLessThan(0.005);
});

test.each([['brown-gpt2', true], ['brown-llama', true], ['brown-bert', true], ['g2p-bart', false]])('%s: quality.json names its measure, held-out data and training data', (name, hasBaseline) => {
  const q = quality(name);
  expect(q.model).toBe(name);
  expect(q.tool).toMatch(/measure_quality\.mjs/);
  expect(Number.isFinite(q.value)).toBe(true);
  expect(q.heldout).toMatch(/validation|test/);
  expect(q.trained_on.words).toBeGreaterThan(1000);
  expect(q.parameters).toBeGreaterThan(1e5);
  if (hasBaseline) {
    expect(Number.isFinite(q.baseline.value)).toBe(true);
    // The model beats its baseline.
    expect(q.lower_is_better ? q.value < q.baseline.value : q.value > q.baseline.value).toBe(true);
  } else {
    expect(q.phoneme_error_rate).toBeGreaterThan(0);
    expect(q.phoneme_error_rate).toBeLessThan(q.value);
  }
});
