// The browser build's side of loading (platform_browser.ts: fetch, the Cache API) in headless
// Chromium, on a folder served over http: onProgress reports every file's bytes, an aborted
// signal is refused before any request and one aborted mid-way stops the load (code 'aborted'),
// and `cache: '<name>'` keeps the files in that Cache API store: the second load fetches only
// the file the folder does not have, and computes the same logits.
const path = require('node:path');
const { open, servedRepository } = require('./chromium.cjs');

const root = path.resolve(__dirname, '../..');
const site = servedRepository(root);

test('a folder URL: progress, abort before and during, a named Cache API store', async () => {
  const { page, errors } = await open(site.browser.context, `${site.base}/tests/browser/pages/blank.html`);
  const result = await page.evaluate(async () => {
    const { loadAttention } = await import('/dist/index.js');
    const attn = await loadAttention({ threads: 1 });
    const folder = '/web/models/brown-llama/';
    const fetched = () => performance.getEntriesByType('resource').map((r) => new URL(r.name).pathname).filter((p) => p.startsWith(folder));
    const logits = (m) => Array.from(m.run('The jury said it').logits.slice(0, 32));
    const events = [];
    const first = await attn.loadModel(folder, { onProgress: (e) => events.push(e) });
    const want = logits(first);
    first.dispose();
    const outcome = (p) => p.then((m) => { m.dispose(); return 'loaded'; }, (e) => ({ name: e.name, code: e.code, message: e.message }));
    const before = new AbortController();
    before.abort();
    const n0 = fetched().length;
    const refused = await outcome(attn.loadModel(folder, { signal: before.signal }));
    const asked = fetched().length - n0;
    const during = new AbortController();
    const stopped = await outcome(attn.loadModel(folder, { signal: during.signal, onProgress: (e) => { if (e.file === 'model.safetensors' && !e.done) during.abort(); } }));
    const name = `attention-wasm-test-${Math.random().toString(36).slice(2)}`;
    (await attn.loadModel(folder, { cache: name })).dispose();
    const n1 = fetched().length;
    const cachedEvents = [];
    const second = await attn.loadModel(folder, { cache: name, onProgress: (e) => cachedEvents.push(e) });
    const again = logits(second);
    second.dispose();
    const secondFetched = fetched().slice(n1);
    const stored = (await (await caches.open(name)).keys()).map((r) => new URL(r.url).pathname).sort();
    await caches.delete(name);
    return { events, want, refused, asked, stopped, again, secondFetched, cachedEvents, stored };
  });
  await page.close();
  expect(errors.filter((e) => !/404/.test(e))).toEqual([]);
  const done = result.events.filter((e) => e.done);
  expect(done.map((e) => e.file).sort()).toEqual(['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
  for (const e of done) expect(e.total).toBe(e.loaded);
  // The weights arrive in several reports, each with the size the answer's Content-Length gave.
  const weights = done.find((e) => e.file === 'model.safetensors');
  const parts = result.events.filter((e) => e.file === 'model.safetensors' && !e.done);
  expect(parts.length).toBeGreaterThan(1);
  for (const e of parts) expect(e.total).toBe(weights.loaded);
  expect(result.refused).toMatchObject({ name: 'AttentionError', code: 'aborted' });
  expect(result.asked).toBe(0);
  expect(result.stopped).toMatchObject({ name: 'AttentionError', code: 'aborted', message: expect.stringMatching(/^loadModel: reading http:.* was aborted \(the signal passed to loadModel\)$/) });
  // From the store: only the file the folder does not have is asked for again.
  expect(result.secondFetched).toEqual(['/web/models/brown-llama/chat_template.jinja']);
  expect(result.again).toEqual(result.want);
  expect(result.cachedEvents.map((e) => e.file).sort()).toEqual(done.map((e) => e.file).sort());
  for (const e of result.cachedEvents) expect(e).toMatchObject({ done: true, cached: true });
  expect(result.stored).toEqual(done.map((e) => `/web/models/brown-llama/${e.file}`).sort());
});
