// The shipped models by name, as a new user reaches them: the packed tarball installed into an
// empty app, `import brownGpt2 from 'attention-wasm/models/brown-gpt2'` and `loadModel(brownGpt2)`,
// in Node (ESM and CommonJS) and in Chromium through Vite (dev, build, preview) and webpack 5,
// with no file copied by hand and no bundler configuration. Each must give the prediction the
// repository's own model folder gives.
const fs = require('node:fs');
const path = require('node:path');
const { serve } = require('../../scripts/static_server.cjs');
const { api } = require('../js/helpers.cjs');
const { launch, open } = require('./chromium.cjs');
const { installModuleApp, root, run, startServer } = require('./packed_app.cjs');

const VITE = path.join(root, 'node_modules/vite/bin/vite.js');
const TEXT = 'The jury said it';

// What the user writes (no top-level await: every bundler's default target takes it).
const MAIN = `import { loadAttention } from 'attention-wasm';
import brownGpt2 from 'attention-wasm/models/brown-gpt2';
async function main() {
  const attn = await loadAttention();
  const model = await attn.loadModel(brownGpt2);
  const [p] = model.predictNext(model.run(${JSON.stringify(TEXT)}, { prependBos: true }), 1);
  return { name: brownGpt2.name, id: p.id, probability: p.probability, folder: typeof location === 'undefined' ? null : await folderUrl(attn) };
}
// The mistake the import avoids: the package's folder as a URL works in vite dev only.
async function folderUrl(attn) {
  try {
    (await attn.loadModel(new URL('/node_modules/attention-wasm/dist/models/brown-gpt2/', location.href))).dispose();
    return 'loaded';
  } catch (e) {
    return e.message;
  }
}
main().then((r) => { globalThis.__result = r; if (typeof process !== 'undefined') console.log(JSON.stringify(r)); },
  (e) => { globalThis.__result = { error: String(e) }; if (typeof process !== 'undefined') console.log(JSON.stringify(globalThis.__result)); });
`;
const MAIN_CJS = `const { loadAttention } = require('attention-wasm');
const brownGpt2 = require('attention-wasm/models/brown-gpt2');
loadAttention().then(async (attn) => {
  const model = await attn.loadModel(brownGpt2);
  const [p] = model.predictNext(model.run(${JSON.stringify(TEXT)}, { prependBos: true }), 1);
  console.log(JSON.stringify({ name: brownGpt2.name, id: p.id, probability: p.probability }));
});
`;

let app, browser, expected;
const servers = [];
beforeAll(async () => {
  const attn = await api.loadAttention();
  const model = await attn.loadModel(path.join(root, 'web/models/brown-gpt2'));
  const [p] = model.predictNext(model.run(TEXT, { prependBos: true }), 1);
  expected = { name: 'brown-gpt2', id: p.id, probability: p.probability };
  model.dispose();
  app = installModuleApp('shipped', MAIN);
  fs.writeFileSync(path.join(app.dir, 'main.cjs'), MAIN_CJS);
  browser = await launch();
}, 180000);
afterAll(async () => {
  await browser?.close();
  for (const s of servers) s.close();
  app?.remove();
});

function expectPrediction(result) {
  expect(result.error).toBeUndefined();
  expect(result.name).toBe(expected.name);
  expect(result.id).toBe(expected.id);
  expect(Math.abs(result.probability - expected.probability)).toBeLessThan(1e-5);
}

/** Opens the app's page; no request may fail (a model file the bundler did not emit would) but
 * the folder URL's, whose error the page records (`folder`): that is returned for the test. */
async function runPage(url) {
  const { page, errors } = await open(browser.context, 'about:blank');
  const failed = [];
  page.on('response', (r) => { if (r.status() >= 400 && !r.url().includes('/node_modules/')) failed.push(`${r.url()}: HTTP ${r.status()}`); });
  page.on('requestfailed', (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
  await page.goto(url);
  await page.waitForFunction(() => globalThis.__result, null, { timeout: 60000 });
  const result = await page.evaluate(() => globalThis.__result);
  await page.close();
  expectPrediction(result);
  expect(failed).toEqual([]);
  // The folder URL's 404 is logged by Chromium without its URL; any other failed request is in `failed`.
  expect(errors.filter((e) => !e.includes('/node_modules/') && !/^Failed to load resource: .* 404/.test(e))).toEqual([]);
  return result.folder;
}

test('the package exports each shipped model and lists their names', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(app.pkg, 'package.json'), 'utf8'));
  expect(pkg.exports['./models/*']).toBeDefined();
  for (const name of api.SHIPPED_MODELS)
    for (const f of ['index.js', 'index.cjs', 'index.d.ts', 'config.json', 'model.safetensors'])
      expect(fs.existsSync(path.join(app.pkg, 'dist/models', name, f))).toBe(true);
});

test('Node, ES module and CommonJS: loadModel(import of attention-wasm/models/brown-gpt2)', async () => {
  fs.writeFileSync(path.join(app.dir, 'main.mjs'), MAIN);
  expectPrediction(JSON.parse((await run(process.execPath, ['main.mjs'], { cwd: app.dir })).trim()));
  expectPrediction(JSON.parse((await run(process.execPath, ['main.cjs'], { cwd: app.dir })).trim()));
}, 60000);

test('Vite dev server, then Vite build + vite preview, no config', async () => {
  const dev = await startServer([VITE], app.dir, /ready in/i);
  try {
    expect(await runPage(`${dev.url}/`)).toBe('loaded');
    expect(dev.log()).not.toMatch(/warn|error/i);
  } finally {
    dev.stop();
  }
  const out = await run(process.execPath, [VITE, 'build', '--logLevel', 'info'], { cwd: app.dir, env: { ...process.env, NO_COLOR: '1' } });
  expect(out).not.toMatch(/warn|\(!\)/i);
  // The model's files are in the build (the weights as an asset of their own).
  expect(fs.readdirSync(path.join(app.dir, 'dist/assets')).some((f) => f.endsWith('.safetensors'))).toBe(true);
  const preview = await startServer([VITE, 'preview'], app.dir, /127\.0\.0\.1:\d+/);
  try {
    // After a build the folder is gone and the server answers index.html: the error says so, with the URL.
    expect(await runPage(`${preview.url}/`)).toMatch(new RegExp(`${preview.url}/node_modules/attention-wasm/dist/models/brown-gpt2/config\\.json.*an HTML page \\(text/html\\), not JSON: is the folder URL right\\? A bundler may serve index\\.html for missing files`));
  } finally {
    preview.stop();
  }
}, 180000);

test('webpack 5, no config: the model files are emitted as assets and load', async () => {
  const webpack = require('webpack');
  const outDir = path.join(app.dir, 'webpack-dist');
  const stats = await new Promise((resolve, reject) => webpack({ mode: 'production', context: app.dir, entry: './src/main.js', output: { path: outDir } },
    (err, s) => (err ? reject(err) : resolve(s))));
  const { warnings, errors } = stats.toJson({ all: false, warnings: true, errors: true });
  expect(errors).toEqual([]);
  // webpack warns about assets over 244 KiB (performance hints): the weights are one, by design.
  expect(warnings.map((w) => w.message).filter((m) => !/asset size limit|entrypoint size limit|performance/i.test(m))).toEqual([]);
  fs.writeFileSync(path.join(outDir, 'index.html'), '<!doctype html><link rel="icon" href="data:,"><script src="main.js"></script>\n');
  const site = await serve(outDir);
  servers.push(site.server);
  expect(await runPage(`${site.url}/index.html`)).toMatch(new RegExp(`${site.url}/node_modules/attention-wasm/dist/models/brown-gpt2/config\\.json.*404`));
}, 120000);

test('esbuild resolves the model import; it copies no assets, so the model files go beside the bundle (as README says)', async () => {
  const esbuild = require('esbuild');
  const outDir = path.join(app.dir, 'esbuild-dist');
  const result = await esbuild.build({ entryPoints: [path.join(app.dir, 'src/main.js')], bundle: true, format: 'esm', platform: 'browser', outdir: outDir, absWorkingDir: app.dir, logLevel: 'silent' });
  expect(result.warnings).toEqual([]);
  const dist = path.join(app.pkg, 'dist');
  for (const f of fs.readdirSync(dist).filter((f) => /^attention_.*\.(wasm|cjs)$/.test(f))) fs.copyFileSync(path.join(dist, f), path.join(outDir, f));
  for (const f of fs.readdirSync(path.join(dist, 'models/brown-gpt2')).filter((f) => !/^index\.|\.md$/.test(f)))
    fs.copyFileSync(path.join(dist, 'models/brown-gpt2', f), path.join(outDir, f));
  fs.writeFileSync(path.join(outDir, 'index.html'), '<!doctype html><link rel="icon" href="data:,"><script type="module" src="main.js"></script>\n');
  const site = await serve(outDir);
  servers.push(site.server);
  await runPage(`${site.url}/index.html`);
}, 60000);
