// Issue 37 in the demo: "Switch heads off" (the chosen head's output zeroed before W^O, the model's
// next-token list with every head and without, side by side; "Test this head" offers it) and the
// "Through the layers" tab (attention rollout). The numbers shown must be the library's, computed
// here in Node on the same text (dist/, the model folders the site serves). 1280x800 and 390x844,
// with bounding-box checks that the panel's tables fit the screen.
// Screenshots: tests/browser/screenshots/ablation-<width>.png (and the panel alone: ablation-panel-<width>.png),
// rollout-<width>.png, ablation-bert.png.
const fs = require('node:fs');
const path = require('node:path');
const { demoSite, referenceGpt2, root, shots } = require('./demo_site.cjs');

const site = demoSite('web-test-ablation');
const { demo, settled, shot } = site;
const api = require(path.join(root, 'dist/index.cjs'));
const SENTENCE = "The animal didn't cross the street because it was too tired";  // the page's default
const PREVIOUS_TOKEN = { layer: 2, head: 1 };  // brown-gpt2's head 3.2 (heads.json: previous-token)
let reference;
beforeAll(async () => { reference = await referenceGpt2(); });
afterAll(() => reference?.dispose());

/** The ablation panel's rows: [before id, before p, after id, after p] per rank. */
const panelRows = (page) => page.$$eval('#ablate tbody tr[data-rank]', (rows) => rows.map((r) => {
  const cells = r.querySelectorAll('td');
  return [Number(cells[0].dataset.tokenId), cells[2].dataset.tokenId === undefined ? null : Number(cells[2].dataset.tokenId),
    Number(cells[3].dataset.probability)];
}));

/** Every element inside its container's box (nothing cut or past its edge), and the container
 * inside the screen's width. */
async function expectInside(page, container, selector, width) {
  const { outer, boxes } = await page.evaluate(([c, s]) => {
    const box = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.right]; };
    const root = document.querySelector(c);
    return { outer: box(root), boxes: [...root.querySelectorAll(s)].map(box) };
  }, [container, selector]);
  expect(boxes.length).toBeGreaterThan(0);
  expect(outer[0]).toBeGreaterThanOrEqual(0);
  expect(outer[1]).toBeLessThanOrEqual(width);
  for (const [left, right] of boxes) {
    expect(left).toBeGreaterThanOrEqual(outer[0] - 0.5);
    expect(right).toBeLessThanOrEqual(outer[1] + 0.5);
  }
}

describe.each([[1280, 800], [390, 844]])('at %ix%i', (width, height) => {
  test('switching head 3.2 off shows the library\'s next-token list without it, beside the list with every head', async () => {
    const { page, errors } = await demo(`?layer=${PREVIOUS_TOKEN.layer + 1}&head=${PREVIOUS_TOKEN.head + 1}`, { width, height });
    expect(await page.$eval('#switch-head', (b) => [b.hidden, b.textContent])).toEqual([false, 'Switch layer 3 · head 2 off']);
    await page.click('#switch-head');
    await settled(page);
    expect(await page.$eval('#switch-head', (b) => b.textContent)).toBe('Switch layer 3 · head 2 back on');
    expect(new URL(page.url()).searchParams.get('off')).toBe('3.2');
    const before = reference.predictNext(reference.run(SENTENCE, { prependBos: true }), 8);
    const after = reference.predictNext(reference.run(SENTENCE, { prependBos: true, ablate: [PREVIOUS_TOKEN] }), 8);
    const rows = await panelRows(page);
    expect(rows.map((r) => r[0])).toEqual(before.map((p) => p.id));
    expect(rows.map((r) => r[1])).toEqual(after.map((p) => p.id));
    rows.forEach((r, i) => expect(Math.abs(r[2] - after[i].probability)).toBeLessThan(1e-5));
    // The head matters: some probability moves by more than a point.
    expect(Math.max(...after.map((p) => Math.abs(p.probability - (before.find((q) => q.id === p.id)?.probability ?? 0))))).toBeGreaterThan(0.01);
    await page.$eval('#ablate-panel', (p) => p.scrollIntoView());
    await expectInside(page, '#ablate-panel', 'table, td, span, #ablate-heads button', width);
    await shot(page, `ablation-${width}`);
    await (await page.$('#ablate-panel')).screenshot({ path: path.join(shots, `ablation-panel-${width}.png`) });
    // Its chip switches it back on; the panel then compares nothing.
    await page.click('#ablate-heads button[data-off="self:2.1"]');
    await settled(page);
    expect(await page.$$eval('#ablate tbody tr', (r) => r.length)).toBe(0);
    expect(new URL(page.url()).searchParams.get('off')).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  });

  test('"Through the layers" draws the library\'s attention rollout for the chosen layer', async () => {
    const { page, errors } = await demo('?layer=4&view=rollout', { width, height });
    const r = reference.run(SENTENCE, { prependBos: true, attention: true }), n = r.tokens.length;
    const rollout = api.attentionRollout(r, { heads: reference.config.n_head });
    const rows = await page.$$eval('.attn-svg[data-view="rollout"] .attn-row', (gs) => gs.map((g) => g.dataset.weights.split(',').map(Number)));
    expect(rows).toHaveLength(n);
    rows.forEach((row, i) => row.forEach((v, j) => expect(Math.abs(v - rollout[(3 * n + i) * n + j])).toBeLessThan(1e-5)));
    expect(await page.$eval('.attn-svg[data-view="rollout"] text', (t) => t.textContent)).toMatch(/^Attention rollout, layers 1–4/);
    await expectInside(page, '#view', '.attn-svg[data-view="rollout"]', width);
    await shot(page, `rollout-${width}`);
    if (width === 1280) {
      // Its JSON export holds the rollout (every layer's, with the options), not the attention.
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
      const json = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
      const L = reference.config.n_layer;
      expect(download.suggestedFilename()).toMatch(/^attention-rollout-.*\.json$/);
      expect(json.ids).toEqual(Array.from(r.tokens));
      expect(json.tokens).toHaveLength(n);
      expect(json.rollout.shape).toEqual([L, n, n]);
      expect(json.rollout.options).toEqual({ heads: reference.config.n_head });
      expect(json.layer).toBe(4);
      expect(json.attention).toBeUndefined();
      expect(json.rollout.data).toHaveLength(L * n * n);
      json.rollout.data.forEach((v, i) => expect(Math.abs(v - rollout[i])).toBeLessThan(1e-6));
      json.selectedLayer.rollout.forEach((v, i) => expect(v).toBe(json.rollout.data[3 * n * n + i]));
    }
    expect(errors).toEqual([]);
    await page.close();
  });
});

test('"Test this head" offers the switch: its result has the button, and pressing it switches the head off', async () => {
  const { page, errors } = await demo(`?layer=${PREVIOUS_TOKEN.layer + 1}&head=${PREVIOUS_TOKEN.head + 1}`);
  await page.click('#test-head');
  await settled(page);
  const offer = await page.$eval('#head-test .test-switch', (b) => b.textContent);
  expect(offer).toBe('Switch layer 3 · head 2 off: does the prediction need it?');
  await page.click('#head-test .test-switch');
  await settled(page);
  expect(await page.$$eval('#ablate tbody tr[data-rank]', (r) => r.length)).toBe(8);
  expect(errors).toEqual([]);
  await page.close();
});

test('BERT: the blank\'s guesses without a head are fillMask\'s with ablate', async () => {
  const text = 'The jury said the [MASK] was conducted well.';
  const { page, errors } = await demo(`?model=bert&s=${encodeURIComponent(text)}&layer=2&head=3&off=2.3,4.1`);
  const attn = await api.loadAttention({ threads: 1 });
  const bert = await attn.loadModel(path.join(root, 'web/models/brown-bert'));
  try {
    const [want] = bert.fillMask(text, 8, { ablate: [{ layer: 1, head: 2 }, { layer: 3, head: 0 }] });
    const rows = await panelRows(page);
    expect(rows.map((r) => r[1])).toEqual(want.predictions.map((p) => p.id));
    rows.forEach((r, i) => expect(Math.abs(r[2] - want.predictions[i].probability)).toBeLessThan(1e-5));
    expect(await page.$$eval('#ablate-heads button[data-off]', (b) => b.map((x) => x.textContent))).toEqual(['layer 2 · head 3 ×', 'layer 4 · head 1 ×']);
    await shot(page, 'ablation-bert');
  } finally {
    bert.dispose();
  }
  expect(errors).toEqual([]);
  await page.close();
});
