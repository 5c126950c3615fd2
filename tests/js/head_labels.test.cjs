// Every head label of the four shipped models holds on text it was not measured on: the tool
// (tools/heads/label_heads.mjs --check, the rules of bindings/ts/analysis/head_rules.ts, the package's headRules) re-measures every head
// through this library's WebAssembly forward on other held-out sentences and words and another
// draw of random words, and each score must be within 0.05 of the model's heads.json.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { root } = require('./helpers.cjs');

const MODELS = ['brown-gpt2', 'brown-llama', 'brown-bert', 'g2p-bart'];
const TOLERANCE = 0.05;
const files = Object.fromEntries(MODELS.map((m) => [m, JSON.parse(fs.readFileSync(path.join(root, 'web/models', m, 'heads.json'), 'utf8'))]));
let check;

beforeAll(() => {
  // A child process: the tool and the rules are ES modules (the page imports the same file).
  const out = execFileSync(process.execPath, [path.join(root, 'tools/heads/label_heads.mjs'), '--check'],
    { encoding: 'utf8', maxBuffer: 1 << 26, timeout: 240000 });
  check = JSON.parse(out);
}, 300000);

const where = (m, h) => `${m} layer ${h.layer + 1} head ${h.head + 1}`;
const ruleOf = (label) => check.rules.find((r) => r.name === label);

describe.each(MODELS)('%s', (model) => {
  const heads = () => files[model].heads;

  test('every head of the model is in heads.json once, with a label and its scores', () => {
    expect(heads().map((h) => `${h.layer}/${h.head}`)).toEqual(check.heads[model].map((h) => `${h.layer}/${h.head}`));
    for (const h of heads()) {
      expect(typeof h.label).toBe('string');
      if (h.label === 'broad') expect(h.score).toBeNull();
      else expect(h.score).toBe(h.scores[ruleOf(h.label).score]);
    }
  });

  test(`every score re-measured on held-out text is within ${TOLERANCE} of heads.json`, () => {
    const off = [];
    heads().forEach((h, i) => {
      for (const [key, value] of Object.entries(h.scores)) {
        const again = check.heads[model][i].scores[key];
        if (!(Math.abs(again - value) <= TOLERANCE)) off.push(`${where(model, h)} ${key}: ${value} in heads.json, ${again} now`);
      }
    });
    expect(off).toEqual([]);
  });

  test('each labelled head clears its label\'s threshold in heads.json and (within the tolerance) again', () => {
    for (const [i, h] of heads().entries()) {
      if (h.label === 'broad') continue;
      const rule = ruleOf(h.label);
      expect(h.score).toBeGreaterThanOrEqual(rule.min);
      expect(check.heads[model][i].scores[rule.score]).toBeGreaterThanOrEqual(rule.min - TOLERANCE);
    }
  });

  test('no head is both sink-dominated and labelled induction (the sink rule wins)', () => {
    const sink = ruleOf('sink');
    heads().forEach((h, i) => {
      const dominated = h.scores.sink >= sink.min || check.heads[model][i].scores.sink >= sink.min;
      if (dominated) expect(`${where(model, h)}: ${h.label}`).toBe(`${where(model, h)}: sink`);
    });
  });
});

test('brown-gpt2 layer 4 head 4, which rests on <|endoftext|>, is a sink, not an induction head', () => {
  const h = files['brown-gpt2'].heads.find((x) => x.layer === 3 && x.head === 3);
  expect(h.label).toBe('sink');
  expect(h.score).toBeGreaterThan(0.9);
  expect(check.heads['brown-gpt2'][15].label).toBe('sink');
});

test('brown-llama: each head names the K/V head it reads, and the re-measure agrees (4 query heads per K/V head)', () => {
  const heads = files['brown-llama'].heads;
  expect(heads.map((h) => h.kv_head)).toEqual(check.heads['brown-llama'].map((h) => h.kvHead));
  expect(heads.map((h) => h.kv_head)).toEqual(heads.map((h) => Math.floor(h.head / 4)));
});
