// attention-wasm/worker in headless Chromium: loadAttentionWorker() loads brown-gpt2 and generates
// in its own module worker while a PerformanceObserver ('longtask') watches the page's main thread;
// the worker's numbers are the library's on the page; onToken streams, an AbortSignal stops it
// (posted across as an abort message), errors keep their name, dispose() frees the model. Served
// from the page's origin (the bundler-style `new URL('./worker-entry.js', import.meta.url)`) and
// from another origin (as from a CDN: the blob: worker that imports the script's URL).
const path = require('node:path');
const { open, servedRepository } = require('./chromium.cjs');

const root = path.resolve(__dirname, '../..');
const site = servedRepository(root);

/** Runs the page's worker phase under a long-task observer, then the reference on the page. */
async function workerRun(url) {
  const { page, errors } = await open(site.browser.context, url);
  await page.waitForFunction(() => window.ready === true);
  const longTasks = await page.evaluate(async () => {
    const tasks = [];
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) tasks.push(e.duration); });
    observer.observe({ type: 'longtask' });
    await window.phase();
    // A task we know is long, so an observer that saw nothing is shown to be watching.
    await new Promise((r) => setTimeout(r, 0));
    const t0 = performance.now();
    while (performance.now() - t0 < 120);
    await new Promise((r) => setTimeout(r, 100));
    observer.disconnect();
    return tasks;
  });
  const result = await page.evaluate(() => window.reference());
  await page.close();
  return { longTasks, result, errors };
}

function expectSameAsPage(result) {
  expect(result.tokens[0]).toEqual(result.tokens[1]);
  expect(result.tokenTexts[0]).toEqual(result.tokenTexts[1]);
  // The worker may run the threaded build and the page the same or another: float32 sums in
  // another order, so a tolerance; the greedy choices are equal.
  expect(result.logitsDiff).toBeLessThan(1e-4);
  expect(result.attentionDiff).toBeLessThan(1e-5);
  expect(result.logitsWhole).toBe(true);
  expect(result.next[0]).toEqual(result.next[1]);
  expect(result.generated[0]).toHaveLength(12);
  expect(result.generated[0]).toEqual(result.generated[1]);
  expect(result.generated[2]).toEqual(result.generated[0]);  // every token streamed, in order
  expect(result.texts[0]).toBe(result.texts[1]);
  // The abort crosses as a message: it lands a few tokens after the third, well before the 60th.
  expect(result.stopped.reason).toBe('abort');
  expect(result.stopped.count).toBeGreaterThanOrEqual(3);
  expect(result.stopped.count).toBeLessThan(60);
  expect(result.none.reason).toBe('abort');
  expect(result.none.count).toBe(0);
  expect(result.error).toEqual({ name: 'AttentionError', message: expect.stringMatching(/^run: /) });
  expect(result.afterError).toBeGreaterThan(0);
  expect(result.tokenizerIds[0]).toEqual(result.tokenizerIds[1]);
  expect(result.tokenAttention[0]).toHaveLength(3);
  expect(result.tokenAttention[0][0].length).toBeGreaterThan(0);
  expect(result.tokenAttention[1]).toEqual(result.tokenAttention[0]);
  expect(result.memoryBytes).toBeGreaterThan(0);
  expect(result.disposed).toBe(true);
  expect(result.disposedError).toMatch(/disposed/);
}

test('from the page\'s origin: the threaded build in the worker (the page is cross-origin isolated), no main-thread task over 50 ms while it loads and generates', async () => {
  const { longTasks, result, errors } = await workerRun(`${site.base}/tests/browser/pages/worker.html`);
  expect(errors).toEqual([]);
  expect(result.variant).toBe('simd-threads');
  expect(result.threads).toBeGreaterThan(1);
  expectSameAsPage(result);
  // The deliberate 120 ms task is the only long one.
  expect(longTasks.length).toBe(1);
  expect(longTasks[0]).toBeGreaterThanOrEqual(100);
}, 120000);

test('a result\'s buffers are transferred, not copied: detached in the worker once sent', async () => {
  const { page, errors } = await open(site.browser.context, `${site.base}/tests/browser/pages/worker.html`);
  await page.waitForFunction(() => window.ready === true);
  const { spied, logits } = await page.evaluate(() => window.transfers());
  await page.close();
  expect(errors).toEqual([]);
  expect(logits).toBeGreaterThan(0);
  // run's result: its logits and attention went as transfers, and the worker's copies are gone.
  const results = spied.filter((s) => s.of === 'result');
  expect(results.some((s) => s.sent >= 2)).toBe(true);
  for (const s of results) expect(s.detached).toBe(s.sent);
}, 120000);

test('bad options are named: a misspelt one on the page, a bad value by the worker\'s loadAttention', async () => {
  const { page, errors } = await open(site.browser.context, `${site.base}/tests/browser/pages/worker.html`);
  await page.waitForFunction(() => window.ready === true);
  const r = await page.evaluate(() => window.badOptions());
  await page.close();
  expect(errors).toEqual([]);
  expect(r.misspelt).toEqual({ name: 'AttentionError', message: "loadAttentionWorker: unknown option 'workerURL' (did you mean 'workerUrl'?)" });
  expect(r.value).toEqual({ name: 'AttentionError', message: expect.stringMatching(/^loadAttention: threads must be/) });
}, 60000);

test('from another origin (a CDN): the worker starts from a blob: URL importing the script', async () => {
  const other = site.base.replace('127.0.0.1', 'localhost');
  const { result, errors } = await workerRun(`${other}/tests/browser/pages/worker.html?lib=${encodeURIComponent(site.base)}`);
  expect(errors).toEqual([]);
  expectSameAsPage(result);
}, 120000);
