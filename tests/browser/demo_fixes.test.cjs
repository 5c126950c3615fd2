// Small fixes of issue 24 in the demo: BERT's [MASK] is not carried to GPT-2 (the hidden word, or
// BERT's best guess for a typed one, comes back); the model card's back link returns to the view
// it was opened from (also right after the tutorial preset); the step view of a causal model opens
// on a query whose row has masked keys, with masked cells on screen (desktop and phone).
// Screenshots: tests/browser/screenshots/fixes-steps-mask-<width>.png.
const path = require('node:path');
const { demoSite } = require('./demo_site.cjs');

const site = demoSite('web-test-demo-fixes');
const { demo, settled, shot } = site;
const textOf = (page) => page.$eval('#sentence', (t) => t.value);
const tokensOf = (page) => page.$$eval('#tokens .token', (b) => b.map((e) => e.dataset.token));

/** The step view's masked scores: some −∞ cell lies inside the viewport once the step is scrolled to. */
async function expectMaskedOnScreen(page, width, shotName) {
  const step = page.locator('#steps-body [data-step="maskedScores"]');
  await step.scrollIntoViewIfNeeded();
  const cells = await page.$$eval('#steps-body [data-step="maskedScores"] .mx-c', (c) => c.filter((e) => e.textContent.includes('−∞'))
    .map((e) => { const r = e.getBoundingClientRect(); return [r.left, r.right]; }));
  expect(cells.length).toBeGreaterThan(0);
  expect(cells.some(([l, r]) => l >= 0 && r <= width)).toBe(true);
  await step.screenshot({ path: path.join(__dirname, 'screenshots', `${shotName}.png`) });
}

test('[MASK] stays with BERT: a masked word comes back, a typed [MASK] takes BERT\'s best guess', async () => {
  const { page, errors } = await demo('?model=bert');
  const original = await textOf(page);
  await page.click('.fill-word[data-index="1"]');
  await settled(page);
  expect(await textOf(page)).toContain('[MASK]');
  await page.check('input[name="preset"][value="gpt2"]');
  await settled(page);
  expect(await textOf(page)).toBe(original);
  // Typed by hand: no word behind it, so BERT's first guess fills it.
  await page.check('input[name="preset"][value="bert"]');
  await settled(page);
  await page.fill('#sentence', 'The cat sat on the [MASK] all day.');
  await settled(page);
  const guess = (await page.$eval('.fill-blank .fill-preds', (b) => b.textContent)).trim();
  await page.check('input[name="preset"][value="gpt2"]');
  await settled(page);
  const text = await textOf(page);
  expect(text).not.toContain('[MASK]');
  expect(text).toMatch(/^The cat sat on the \S+ all day\.$/);
  expect(guess).toContain(text.split(' ')[5]);
  expect((await tokensOf(page)).some((t) => t.includes('['))).toBe(false);
  expect(errors).toEqual([]);
  await page.close();
});

test('the model card\'s back link returns to the model\'s own view, also after the tutorial preset', async () => {
  const { page, errors } = await demo('');
  await page.check('input[name="preset"][value="seed"]');
  await settled(page);
  await page.check('input[name="preset"][value="bert"]');
  await settled(page);
  const here = await page.evaluate(() => location.href);
  expect(new URL(here).searchParams.get('model')).toBe('bert');
  const back = await page.$eval('#model-info a', (a) => new URL(a.href).searchParams.get('back'));
  expect(back).toBe(here);
  await page.click('#model-info a');
  await page.waitForSelector('#card[data-ready="1"]');
  await page.click('#back');
  await settled(page);
  expect(await page.evaluate(() => location.href)).toBe(here);
  expect(await page.$eval('input[name="preset"][value="bert"]', (r) => r.checked)).toBe(true);
  expect(errors).toEqual([]);
  await page.close();
});

test.each([[1280, 800], [390, 844]])('GPT-2\'s step view opens on a row with masked keys, masked cells on screen (%ix%i)', async (width, height) => {
  const { page, errors } = await demo('?view=steps', { width, height });
  const n = (await tokensOf(page)).length;
  const query = Number(await page.$eval('#query', (s) => s.value));
  expect(query).toBe(Math.floor((n - 1) / 2));
  // Every key after the query scores −∞; some of those cells are inside the viewport as it opens.
  await expectMaskedOnScreen(page, width, `fixes-steps-mask-${width}`);
  expect(errors).toEqual([]);
  await page.close();
});

test.each([[1280, 800], [390, 844]])('BERT in a batch: the step view opens on a padded row with its [PAD] keys\' −∞ on screen (%ix%i)', async (width, height) => {
  const partner = 'The old man walked slowly along the river bank in the cold morning light, looking for the small boat he had lost';
  const { page, errors } = await demo(`?model=bert&view=steps&batch=1&bw=${encodeURIComponent(partner)}`, { width, height });
  const tokens = await tokensOf(page);
  expect(tokens[tokens.length - 1]).toBe('[PAD]');
  await expectMaskedOnScreen(page, width, `fixes-steps-bert-batch-${width}`);
  expect(errors).toEqual([]);
  await page.close();
});
