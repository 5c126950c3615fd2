// The tutorial preset's "two heads, d_k ≠ d_v" switch (issue 24): the tutorial's three words through
// a layer of 2 heads with d_k = 1 and d_v = 2, so Concat is 3 × 4 and a 4 × 2 W^O mixes the heads.
// Every number the step view prints for each head (Q, K, V, the weights, Z, Concat, the output) is
// recomputed here in float64 from the X and the weight slices the page prints, within 1e-4.
// The head picker offers both heads, undimmed, and steps back again with one.
// At 1280x800 and 390x844. Screenshots: tests/browser/screenshots/tutorial-two-heads-<width>.png.
const { demoSite, stepRow } = require('./demo_site.cjs');

const site = demoSite('web-test-tutorial-heads');
const { demo, shot } = site;

const matrix = async (page, key, rows) => Promise.all(Array.from({ length: rows }, (_, r) => stepRow(page, key, r)));
const times = (a, b) => a.map((row) => b[0].map((_, c) => row.reduce((s, v, k) => s + v * b[k][c], 0)));
const transpose = (a) => a[0].map((_, c) => a.map((row) => row[c]));
function softmaxRows(s) {
  return s.map((row) => {
    const max = Math.max(...row), e = row.map((v) => Math.exp(v - max)), sum = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / sum);
  });
}
function expectMatrix(actual, expected, what) {
  expect([what, actual.length, actual[0].length]).toEqual([what, expected.length, expected[0].length]);
  actual.forEach((row, r) => row.forEach((v, c) => {
    if (!(Math.abs(v - expected[r][c]) <= 1e-4)) throw new Error(`${what}[${r}][${c}] = ${v}, expected ${expected[r][c]}`);
  }));
}

test.each([[1280, 800], [390, 844]])('at %ix%i: two heads with d_k = 1, d_v = 2, their concatenation and W^O', async (width, height) => {
  const zs = [];
  let concat = null, out = null, wO = null;
  for (const head of [1, 2]) {
    const { page, errors } = await demo(`?preset=seed&dkdv=1&view=steps&head=${head}`, { width, height });
    expect(await page.$eval('#dkdv', (c) => c.checked)).toBe(true);
    // The head picker offers the two heads, undimmed (the tutorial's one head dimmed it before).
    expect(await page.$eval('#head', (s) => ({ disabled: s.disabled, opacity: getComputedStyle(s).opacity, value: s.value, n: s.options.length })))
      .toEqual({ disabled: false, opacity: '1', value: String(head - 1), n: 3 });
    const shapes = await page.$$eval('#steps-body [data-step]', (fs) => Object.fromEntries(fs.map((f) => [f.dataset.step, f.dataset.shape])));
    expect(shapes).toMatchObject({ wQ: '2x1', wK: '2x1', wV: '2x2', q: '3x1', k: '3x1', v: '3x2', z: '3x2', concat: '3x4', wO: '4x2', output: '3x2' });
    const x = await matrix(page, 'x', 3);
    const [wQ, wK, wV] = await Promise.all(['wQ', 'wK', 'wV'].map((k) => matrix(page, k, 2)));
    const q = times(x, wQ), k = times(x, wK), v = times(x, wV);
    expectMatrix(await matrix(page, 'q', 3), q, `Q_${head}`);
    expectMatrix(await matrix(page, 'k', 3), k, `K_${head}`);
    expectMatrix(await matrix(page, 'v', 3), v, `V_${head}`);
    const a = softmaxRows(times(q, transpose(k)).map((row) => row.map((s) => s / Math.sqrt(1))));
    expectMatrix(await matrix(page, 'weights', 3), a, `A_${head}`);
    zs.push(times(a, v));
    expectMatrix(await matrix(page, 'z', 3), zs[head - 1], `Z_${head}`);
    concat = await matrix(page, 'concat', 3);
    wO = await matrix(page, 'wO', 4);
    out = await matrix(page, 'output', 3);
    if (head === 2) await shot(page, `tutorial-two-heads-${width}`);
    expect(errors).toEqual([]);
    await page.close();
  }
  // Concat = [Z_1 | Z_2]; output = Concat × W^O, and W^O really mixes (it is no identity block).
  expectMatrix(concat, zs[0].map((row, r) => [...row, ...zs[1][r]]), 'Concat');
  expectMatrix(out, times(concat, wO), 'output');
  expect(wO.slice(2).some((row) => row.some((w) => w !== 0))).toBe(true);
  expect(out.some((row, r) => Math.abs(row[0] - concat[r][0]) > 1e-3)).toBe(true);
});

test('switching the two heads off gives the tutorial\'s one head back', async () => {
  const { page, errors } = await demo('?preset=seed&dkdv=1&view=steps');
  await page.click('#dkdv');
  await site.settled(page);
  expect(await page.$eval('#steps-body [data-step="concat"]', (f) => f.dataset.shape)).toBe('3x2');
  expect(await page.$eval('#head', (s) => [s.disabled, getComputedStyle(s).opacity])).toEqual([true, '0.6']);
  expect(await page.evaluate(() => location.search)).not.toContain('dkdv');
  expect(errors).toEqual([]);
  await page.close();
});
