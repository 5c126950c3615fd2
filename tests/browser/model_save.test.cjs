// model.save() in headless Chromium, as a web app keeps a quantized model (issue 36): brown-llama
// loaded at q4 on the page, its saveStream() put in the Cache API as a Response body, read back from
// the cache as a Blob and loaded: the same logits, bit for bit. Through attention-wasm/worker, the
// model's save() comes back to the page as the file's bytes and loads there to the same logits.
const path = require('node:path');
const { open, servedRepository } = require('./chromium.cjs');

const root = path.resolve(__dirname, '../..');
const site = servedRepository(root);

test('saveStream() into the Cache API and back; save() through the worker', async () => {
  const { page, errors } = await open(site.browser.context, `${site.base}/tests/browser/pages/blank.html`);
  const r = await page.evaluate(async () => {
    const { loadAttention } = await import('/dist/index.js');
    const { loadAttentionWorker } = await import('/dist/worker.js');
    const { default: brownLlama } = await import('/dist/models/brown-llama/index.js');
    const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
    const attn = await loadAttention();
    const model = await attn.loadModel(brownLlama, { dtype: 'q4' });
    const expected = model.run('The jury said').logits;
    const cache = await caches.open('model-save-test');
    await cache.put('/brown-llama-q4.gguf', new Response(model.saveStream()));
    const blob = await (await cache.match('/brown-llama-q4.gguf')).blob();
    const fromCache = await attn.loadModel(blob);
    const cached = { size: blob.size, dtype: fromCache.dtype, same: same(fromCache.run('The jury said').logits, expected) };
    fromCache.dispose();
    await caches.delete('model-save-test');

    const worker = await loadAttentionWorker();
    const remote = await worker.loadModel(brownLlama, { dtype: 'q4' });
    const bytes = await remote.save();
    const fromWorker = await attn.loadModel(bytes);
    const viaWorker = { isBytes: bytes instanceof Uint8Array, size: bytes.length, same: same(fromWorker.run('The jury said').logits, expected) };
    worker.terminate();
    return { cached, viaWorker, size: model.save().length };
  });
  await page.close();
  expect(errors).toEqual([]);
  expect(r.cached).toEqual({ size: r.size, dtype: 'Q4_0', same: true });
  expect(r.viaWorker).toEqual({ isBytes: true, size: r.size, same: true });
}, 120000);
