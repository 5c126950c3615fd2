// "Test this head" (issue 24) in the demo: for brown-gpt2's induction head the page writes random
// words twice, outlines each second-copy row's target (the token after the word's first
// occurrence) and prints each row's weight; for its previous-token head it outlines the cells just
// left of the diagonal. The numbers must equal the library's, computed here in Node on the same
// text (dist/, the model folder the site serves) without the page's code. 1280x800 and 390x844.
// Screenshots: tests/browser/screenshots/head-test-<kind>-<width>.png.
const fs = require('node:fs');
const path = require('node:path');
const { demoSite, referenceGpt2, root } = require('./demo_site.cjs');

const site = demoSite('web-test-head-test');
const { demo, settled, shot } = site;
const heads = JSON.parse(fs.readFileSync(path.join(root, 'web/models/brown-gpt2/heads.json'), 'utf8')).heads;
const labelled = (label) => heads.filter((h) => h.label === label).sort((a, b) => b.score - a.score)[0];
let reference;
beforeAll(async () => { reference = await referenceGpt2(); });
afterAll(() => reference?.dispose());

/** The library's rows for a test: [query, target, weight] for every row the test should score. */
function expectedRows(kind, text, layer, head) {
  const r = reference.run(text, { prependBos: true, attention: true });
  const n = r.tokens.length, H = reference.config.n_head;
  const weight = (q, k) => r.attention[((layer * H + head) * n + q) * n + k];
  const rows = [];
  for (let q = 2; q < n; q++) {
    if (kind === 'previous') rows.push([q, q - 1, weight(q, q - 1)]);
    else {
      // The token's latest earlier occurrence p (not just before it): the target is p + 1.
      const p = r.tokens.lastIndexOf(r.tokens[q], q - 1);
      if (p >= 0 && p + 1 < q) rows.push([q, p + 1, weight(q, p + 1)]);
    }
  }
  return rows;
}

/** Opens the demo on `head`, presses "Test this head", returns what the page shows. */
async function pressTest(page, head) {
  await page.selectOption('#layer', { value: String(head.layer) });
  await settled(page);
  await page.selectOption('#head', { value: String(head.head) });
  await settled(page);
  expect(await page.$eval('#test-head', (b) => b.hidden)).toBe(false);
  await page.click('#test-head');
  await settled(page);
  return page.evaluate(() => {
    const result = document.getElementById('head-test');
    return {
      view: document.body.dataset.view, text: document.getElementById('sentence').value, hidden: result.hidden, summary: result.textContent,
      kind: result.dataset.kind, mean: Number(result.dataset.mean), top: Number(result.dataset.top), rows: JSON.parse(result.dataset.rows),
      outlined: [...document.querySelectorAll('.heatmap-view .test-target')].map((r) => [Number(r.dataset.query), Number(r.dataset.key)]),
      scores: [...document.querySelectorAll('.heatmap-view .test-score')].map((t) => t.textContent),
    };
  });
}

describe.each([[1280, 800], [390, 844]])('at %ix%i', (width, height) => {
  test.each([['induction', 'induction'], ['previous', 'previous-token']])('%s: the outlined cells and numbers are the library\'s', async (kind, label) => {
    const head = labelled(label);
    const { page, errors } = await demo('', { width, height });
    const shown = await pressTest(page, head);
    expect([shown.view, shown.hidden, shown.kind]).toEqual(['heatmap', false, kind]);
    if (kind === 'induction') {
      // Ten words written twice.
      const words = shown.text.split(' ');
      expect(words).toHaveLength(20);
      expect(words.slice(10)).toEqual(words.slice(0, 10));
    }
    const want = expectedRows(kind, shown.text, head.layer, head.head);
    expect(want.length).toBeGreaterThan(kind === 'induction' ? 7 : 5);
    expect(shown.rows.map(([q, t]) => [q, t])).toEqual(want.map(([q, t]) => [q, t]));
    shown.rows.forEach(([, , w], i) => expect(Math.abs(w - want[i][2])).toBeLessThan(1e-5));
    const mean = want.reduce((a, r) => a + r[2], 0) / want.length;
    expect(Math.abs(shown.mean - mean)).toBeLessThan(1e-5);
    expect(shown.summary).toContain(`mean weight on the outlined cells ${mean.toFixed(2)} over ${want.length} rows`);
    expect(shown.summary).toContain(`on held-out text the score was ${head.score.toFixed(2)}`);
    expect(shown.outlined).toEqual(want.map(([q, t]) => [q, t]));
    expect(shown.scores).toEqual(want.map(([, , w]) => w.toFixed(2)));
    await shot(page, `head-test-${kind}-${width}`);
    // Another head: the test ends (its outlines and numbers go).
    await page.selectOption('#head', { value: String((head.head + 1) % 4) });
    await settled(page);
    expect(await page.$eval('#head-test', (p) => p.hidden)).toBe(true);
    expect(await page.$$eval('.test-target', (r) => r.length)).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});

test('no test is offered for a head whose label has none (a sink, a broad head)', async () => {
  const { page, errors } = await demo('?layer=4&head=4');
  expect(await page.$eval('#head option:checked', (o) => o.textContent)).toMatch(/sink · 0\.9\d$/);
  expect(await page.$eval('#test-head', (b) => b.hidden)).toBe(true);
  expect(errors).toEqual([]);
  await page.close();
});

test('the widget: test="induction" on a heatmap draws the same check, its numbers the library\'s', async () => {
  const head = labelled('induction');
  const { page, errors } = await demo('', { page: 'embed-example.html', width: 900 });
  await page.evaluate(({ layer, h }) => {
    document.body.replaceChildren();
    const v = document.createElement('attention-view');
    for (const [k, val] of Object.entries({ view: 'heatmap', layer: String(layer + 1), head: String(h + 1), test: 'induction', seed: '3' })) v.setAttribute(k, val);
    document.body.append(v);
  }, { layer: head.layer, h: head.head });
  await page.waitForFunction(() => document.querySelector('attention-view')?.dataset.ready === '1', null, { timeout: 90000 });
  const shown = await page.evaluate(() => {
    const root = document.querySelector('attention-view').shadowRoot, result = root.querySelector('.head-test');
    return {
      hidden: result.hidden, summary: result.textContent, rows: JSON.parse(result.dataset.rows), mean: Number(result.dataset.mean),
      tokens: JSON.parse(document.querySelector('attention-view').dataset.tokens),
      outlined: [...root.querySelectorAll('.test-target')].map((r) => [Number(r.dataset.query), Number(r.dataset.key)]),
    };
  });
  expect(shown.hidden).toBe(false);
  // Random words written twice (after <|endoftext|>), decoded back to the text the widget ran.
  const text = shown.tokens.slice(1).join('').replace(/␣/g, ' ');
  const words = text.split(' ');
  expect(words.slice(10)).toEqual(words.slice(0, 10));
  const want = expectedRows('induction', text, head.layer, head.head);
  expect(shown.outlined).toEqual(want.map(([q, t]) => [q, t]));
  shown.rows.forEach(([, , w], i) => expect(Math.abs(w - want[i][2])).toBeLessThan(1e-5));
  expect(shown.summary).toContain(`on held-out text the score was ${head.score.toFixed(2)}`);
  await page.screenshot({ path: path.join(__dirname, 'screenshots', 'head-test-widget.png'), fullPage: true });
  expect(errors).toEqual([]);
  await page.close();
});
