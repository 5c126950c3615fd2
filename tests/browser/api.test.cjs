// The npm package in real headless Chromium: straight from dist/ as an ES module, and bundled by
// esbuild into a user's page with the wasmUrl option.
const fs = require('node:fs');
const path = require('node:path');
const { build } = require('esbuild');
const { open, servedRepository } = require('./chromium.cjs');

const root = path.resolve(__dirname, '../..');
const site = servedRepository(root);

async function resultOf(url) {
  const { page, errors } = await open(site.browser.context, url);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 90000 });
  const result = await page.evaluate(() => window.result);
  await page.close();
  return { result, errors };
}

test('the ES module loads in Chromium, picks SIMD (threaded: the test server is cross-origin isolated), computes the seed example and throws typed errors', async () => {
  const { result, errors } = await resultOf(`${site.base}/tests/browser/pages/api.html`);
  expect(result.failed).toBeUndefined();
  expect(errors).toEqual([]);
  expect(result.variant).toBe('simd-threads');
  const want = [0.35639, 0.3979, 0.24571, 0.34136, 0.60328, 0.05536, 0.06909, 0.02997, 0.90093];
  result.attention.forEach((a, i) => expect(Math.abs(a - want[i])).toBeLessThan(6e-5));
  const causal = [1, 0, 0, 0.36136, 0.63864, 0, 0.06909, 0.02997, 0.90093];
  result.causal.forEach((a, i) => expect(Math.abs(a - causal[i])).toBeLessThan(6e-5));
  expect(result.error).toEqual({ name: 'AttentionError', typed: true, message: expect.stringMatching(/query has 5 elements/) });
});

test('an esbuild bundle of a page importing "attention-wasm" runs with wasmUrl', async () => {
  const out = path.join(__dirname, 'bundle-out');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  await build({
    entryPoints: [path.join(__dirname, 'pages/bundle_entry.js')],
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022',
    outfile: path.join(out, 'bundle.js'), alias: { 'attention-wasm': root }, logLevel: 'error',
  });
  fs.copyFileSync(path.join(__dirname, 'pages/bundle.html'), path.join(out, 'index.html'));
  fs.copyFileSync(path.join(root, 'dist/attention_simd.wasm'), path.join(out, 'attention_simd.wasm'));
  const { result, errors } = await resultOf(`${site.base}/tests/browser/bundle-out/index.html`);
  expect(errors).toEqual([]);
  expect(result.variant).toBe('simd');
  expect(result.output).toHaveLength(12);
  result.output.forEach((v) => expect(v).toBeCloseTo(0.16, 6));
});

test('a cross-origin isolated page gets the threaded build, with the same numbers', async () => {
  const { result, errors } = await resultOf(`${site.base}/tests/browser/pages/threads.html`);
  expect(result.failed).toBeUndefined();
  expect(errors).toEqual([]);
  expect(result.isolated).toBe(true);
  expect(result.variant).toBe('simd-threads');
  expect(result.threads).toBeGreaterThan(1);
  expect(result.maxDiff).toBeLessThan(1e-5);
});
