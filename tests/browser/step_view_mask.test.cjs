// Issue 37's step view, at 1280x800 and 390x844: it opens on the mask (the masked-scores step at
// the top of the screen, its whole S x S matrix drawn, −∞ cells inside the first screen), a sticky
// bar jumps to any step, the weights are folded, the followed row is outlined, the default query
// has masked keys (not the last token, not a marker) and stays when the view changes, positions
// count from 1, and nothing pinned (row labels, the corner, the softmax table's columns) covers
// another cell. Screenshots (the first screen, as a learner sees it):
// tests/browser/screenshots/steps-first-screen-<model>-<width>.png.
const path = require('node:path');
const { demoSite, shots } = require('./demo_site.cjs');

const site = demoSite('web-test-step-mask');
const { demo, settled } = site;

/** Opens the step view from the heads view, as a learner does; returns the query picked before. */
async function openSteps(page) {
  const before = await page.$eval('#query', (s) => s.value);
  await page.click('#tab-steps');
  await settled(page);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return before;
}

/** What the first screen shows of the mask step, and where the pinned parts sit. */
const firstScreen = (page) => page.evaluate(() => {
  const inView = (b) => b.width > 0 && b.top >= 0 && b.bottom <= innerHeight && b.left >= 0 && b.right <= innerWidth;
  const whole = document.querySelector('[data-step-id="maskedScores"] .whole-matrix');
  const box = whole.getBoundingClientRect(), pane = document.getElementById('steps-body').getBoundingClientRect();
  const infinities = [...whole.querySelectorAll('text')].filter((t) => t.textContent === '−∞').map((t) => t.getBoundingClientRect());
  const bar = document.querySelector('.steps-bar').getBoundingClientRect();
  const followed = whole.querySelector('.whole-followed');
  return {
    infinitiesInView: infinities.filter(inView).length, rows: Number(whole.dataset.rows), cols: Number(whole.dataset.cols),
    wholeFits: box.left >= pane.left - 0.5 && box.right <= pane.right + 0.5, barTop: bar.top,
    followed: !!followed, stepTop: document.querySelector('[data-step-id="maskedScores"]').getBoundingClientRect().top,
    folds: [...document.querySelectorAll('#steps-body details.mx-fold')].map((d) => [d.dataset.fold, d.open]),
  };
});

/** Every pinned cell (row label, corner, the softmax key column) is the topmost element at its own centre. */
const coveredPins = (page) => page.evaluate(() => {
  const covered = [];
  for (const pin of document.querySelectorAll('#steps-body .mx-row, #steps-body .mx-corner, #steps-body .softmax-table th:first-child')) {
    const b = pin.getBoundingClientRect();
    if (b.width === 0 || b.bottom < 0 || b.top > innerHeight) continue;
    const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
    if (hit && hit !== pin && !pin.contains(hit) && !hit.closest('.steps-bar')) covered.push(`${pin.className}: ${hit.className || hit.tagName}`);
  }
  // No cell shows half under a pinned row label (a digit or two beside the label, the rest hidden).
  for (const label of document.querySelectorAll('#steps-body .mx-row')) {
    const l = label.getBoundingClientRect();
    for (const cell of label.parentElement.querySelectorAll('.mx-c')) {
      const c = cell.getBoundingClientRect();
      if (Math.abs(c.top - l.top) < 1 && c.left < l.right - 0.5 && c.right > l.right + 0.5) covered.push(`a cell half under “${label.textContent}”`);
    }
  }
  // The softmax table fits its box: no column is pinned over another one's digits.
  for (const scroll of document.querySelectorAll('#steps-body .softmax-detail .mx-scroll'))
    if (scroll.scrollWidth > scroll.clientWidth + 1) covered.push(`softmax table ${scroll.scrollWidth} px in ${scroll.clientWidth}`);
  return covered;
});

describe.each([[1280, 800], [390, 844]])('at %ix%i', (width, height) => {
  test('GPT-2: opens on the mask with −∞ in sight, the whole matrix scaled to fit, the query kept', async () => {
    const { page, errors } = await demo('', { width, height });
    const query = await openSteps(page);
    const shown = await firstScreen(page);
    await page.screenshot({ path: path.join(shots, `steps-first-screen-gpt2-${width}.png`) });
    expect(shown.infinitiesInView).toBeGreaterThan(10);
    expect([shown.rows, shown.cols]).toEqual([13, 13]);  // <|endoftext|> and the 12 tokens of the sentence
    expect(shown.wholeFits).toBe(true);
    expect(shown.followed).toBe(true);
    expect(shown.stepTop).toBeLessThan(120);
    expect(shown.folds).toEqual([['wQ', false], ['wK', false], ['wV', false], ['wO', false]]);
    // The default query: a word in the middle (masked keys after it), the same in every view.
    const picked = await page.$eval('#query', (s) => [s.value, s.selectedOptions[0].textContent]);
    expect(picked[0]).toBe(query);
    expect(Number(picked[0])).toBeGreaterThan(0);
    expect(Number(picked[0])).toBeLessThan(12);
    expect(picked[1]).not.toMatch(/endoftext/);
    expect(await coveredPins(page)).toEqual([]);
    // The bar stays at the top while the steps scroll, and jumps.
    await page.click('.steps-bar [data-step-link="weights"]');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
    const after = await page.evaluate(() => ({ bar: document.querySelector('.steps-bar').getBoundingClientRect().top,
      step: document.querySelector('[data-step-id="weights"]').getBoundingClientRect().top }));
    expect(Math.abs(after.bar)).toBeLessThan(1);
    expect(after.step).toBeGreaterThan(0);
    expect(after.step).toBeLessThan(140);
    expect(await coveredPins(page)).toEqual([]);
    // Back to the heads: the same query.
    await page.click('#tab-heads');
    await settled(page);
    expect(await page.$eval('#query', (s) => s.value)).toBe(query);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('Llama: the rotation step counts tokens from 1, as the query picker does', async () => {
    const { page, errors } = await demo('?model=llama&view=steps', { width, height });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.screenshot({ path: path.join(shots, `steps-first-screen-llama-${width}.png`) });
    expect((await firstScreen(page)).infinitiesInView).toBeGreaterThan(5);
    const { picker, options, text } = await page.evaluate(() => ({
      picker: document.getElementById('query').selectedOptions[0].textContent,
      options: [...document.querySelectorAll('.rotary-detail select option')].map((o) => o.textContent),
      text: document.querySelector('.rotary-detail').textContent,
    }));
    const token = Number(picker.split(':')[0]);
    expect(options[0]).toMatch(/^1: /);
    expect(options).toHaveLength(token);
    expect(text).toContain(`(token ${token})`);
    expect(await coveredPins(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

test('BERT and BART open on a word, not [SEP] or </s>', async () => {
  for (const [query, marker] of [['?model=bert&view=steps', /\[(SEP|CLS)\]/], ['?model=bart&view=steps', /<\/?s>/]]) {
    const { page, errors } = await demo(query);
    const picked = await page.$eval('#query', (s) => s.selectedOptions[0].textContent);
    expect(picked).not.toMatch(marker);
    expect(errors).toEqual([]);
    await page.close();
  }
});

test('the widget\'s step view has a query picker of its own (tokens from 1) that moves the followed row', async () => {
  const { page, errors } = await demo('', { page: 'embed-example.html', width: 900 });
  await page.evaluate(() => {
    document.body.replaceChildren();
    const v = document.createElement('attention-view');
    v.setAttribute('view', 'steps');
    document.body.append(v);
  });
  const ready = () => page.waitForFunction(() => document.querySelector('attention-view')?.dataset.ready === '1', null, { timeout: 90000 });
  await ready();
  const picker = () => page.evaluate(() => {
    const root = document.querySelector('attention-view').shadowRoot, select = root.querySelector('select.steps-query');
    return { options: [...select.options].map((o) => o.textContent), value: select.value, note: root.querySelector('.steps-rows').textContent };
  });
  const before = await picker();
  expect(before.options[0]).toMatch(/^1: /);
  expect(before.note).toContain('pick another token here');
  expect(before.note).not.toContain('above');
  await page.evaluate(() => {
    const select = document.querySelector('attention-view').shadowRoot.querySelector('select.steps-query');
    select.value = '2';
    select.dispatchEvent(new Event('change'));
  });
  await page.waitForFunction(() => document.querySelector('attention-view').shadowRoot.querySelector('select.steps-query')?.value === '2', null, { timeout: 30000 });
  expect((await picker()).note).toContain(`“${before.options[2].replace(/^3: /, '')}”`);
  expect(errors).toEqual([]);
  await page.close();
});
