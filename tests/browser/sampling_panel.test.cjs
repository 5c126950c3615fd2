// The next-token panel's temperature and top-k (issue 37): the distribution shown is what the
// library's generate() samples from, softmax(logits / T) over the k largest logits, recomputed here
// in Node from brown-gpt2's own logits; temperature 0 continues the text greedily, as generate() does.
// Screenshot: tests/browser/screenshots/sampling-panel.png.
const path = require('node:path');
const { demoSite, referenceGpt2, shots } = require('./demo_site.cjs');
const { continueText } = require('./demo_phases.cjs');

const site = demoSite('web-test-sampling');
const { demo, settled } = site;
const SENTENCE = "The animal didn't cross the street because it was too tired";
let reference;
beforeAll(async () => { reference = await referenceGpt2(); });
afterAll(() => reference?.dispose());

/** softmax(logits / T) over the top-k of the sentence's last row, in float64 (ties by id). */
function expected(T, k) {
  const r = reference.run(SENTENCE, { prependBos: true, logitsToKeep: 1 });
  const ids = Array.from(r.logits.keys()).sort((a, b) => r.logits[b] - r.logits[a] || a - b).slice(0, k || undefined);
  const w = ids.map((i) => (T === 0 ? Number(i === ids[0]) : Math.exp((r.logits[i] - r.logits[ids[0]]) / T)));
  const total = w.reduce((a, b) => a + b, 0);
  return ids.slice(0, 8).map((id, i) => [id, w[i] / total]).filter(([, p]) => p > 0);
}

const shown = (page) => page.$$eval('#sampling tr', (rows) => rows.map((r) => [Number(r.dataset.tokenId), Number(r.querySelector('[data-probability]').dataset.probability)]));

test('the shown distribution follows the temperature and top-k, as generate() samples', async () => {
  const { page, errors } = await demo('?t=0.5&k=5');
  for (const [T, k] of [[0.5, 5], [1.4, 0], [0.8, 40]]) {
    if (T !== 0.5) {
      await page.$eval('#temperature', (e, v) => { e.value = String(v); e.dispatchEvent(new Event('input')); }, T);
      await page.selectOption('#top-k', String(k));
      await settled(page);
    }
    const want = expected(T, k), got = await shown(page);
    expect(got.map(([id]) => id)).toEqual(want.map(([id]) => id));
    got.forEach(([, p], i) => expect(Math.abs(p - want[i][1])).toBeLessThan(1e-5));
  }
  expect(new URL(page.url()).searchParams.get('t')).toBeNull(); // 0.8 and 40: the defaults
  await (await page.$('#next-panel')).screenshot({ path: path.join(shots, 'sampling-panel.png') });
  expect(errors).toEqual([]);
  await page.close();
});

test('temperature 0: one token at 100 %, and the text continues greedily', async () => {
  const { page, errors } = await demo('?t=0');
  expect(await shown(page)).toEqual(expected(0, 40).map(([id]) => [id, 1]));
  await continueText(page);
  const ids = [reference.bosTokenId, ...reference.tokenizer.encode(SENTENCE)];
  const greedy = await reference.generate(ids, { maxNewTokens: 30, temperature: 0 });
  expect(await page.$eval('#sentence', (e) => e.value)).toBe(SENTENCE + greedy.text);
  expect(errors).toEqual([]);
  await page.close();
});
