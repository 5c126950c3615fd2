// GGUF files (llama.cpp's format) in the demo and the widget (issue 33), in headless Chromium:
// - the Hub panel, against the local Hub stand-in (tests/js/hub_server.cjs, with its tree API): a
//   repository of GGUF files (no config.json) fills the Quantization picker from the files' names,
//   loads Q4_K_M by default, draws the heatmap and prints the step view's weights equal to the
//   library's in Node on the same file (headWeights: decoded from the blocks it holds), and says
//   which types the file stores; choosing F16 loads that file, whose attention is the shipped
//   brown-llama's; owner/name/file.gguf loads one file directly;
// - a .gguf file from the learner's disk (<input type="file">): the same attention, no download;
//   a sentence that is markup stays text;
// - <attention-view model="hf:owner/name" quant="F16" hub="…">: the widget draws the file's heads.
// The files are the shipped brown-llama written as llama.cpp's converter writes them
// (gguf_fixture.cjs). Screenshots: tests/browser/screenshots/gguf-*.png.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { demoSite, rowsOf, stepRow, expectClose, root, open } = require('./demo_site.cjs');
const { startHubServer } = require('../js/hub_server.cjs');
const { writeBrownGguf, BROWN } = require('./gguf_fixture.cjs');

const site = demoSite('web-test-gguf');
const { demo, settled, shot } = site;
const SENTENCE = 'The old man walked to the river and sat down';
const REPO = 'someone/brown-llama-GGUF';

let attn, api, dir, hub, files, models;
beforeAll(async () => {
  api = require(path.join(root, 'dist/index.cjs'));
  attn = await api.loadAttention({ threads: 1 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-gguf-'));
  files = {};
  for (const quant of ['F16', 'Q4_K_M']) files[quant] = writeBrownGguf(attn, api, path.join(dir, `brown-llama-${quant}.gguf`), quant);
  models = { F16: await attn.loadModel(files.F16), Q4_K_M: await attn.loadModel(files.Q4_K_M), folder: await attn.loadModel(BROWN) };
  hub = await startHubServer({
    [REPO]: { files: new Map([['README.md', Buffer.from('# brown-llama as GGUF\n')],
      ...Object.entries(files).map(([, f]) => [path.basename(f), fs.readFileSync(f)])]) },
  });
}, 180000);
afterAll(async () => {
  for (const m of Object.values(models ?? {})) m.dispose();
  await hub?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The library's attention rows for (layer, head) of `model` on the page's sentence. */
function referenceRows(model, layer, head) {
  const ids = model.tokenizer.encode(SENTENCE);
  const r = model.run(ids, { attention: true });
  const n = ids.length, H = model.config.num_attention_heads;
  return Array.from({ length: n }, (_, i) => Array.from(r.attention.subarray(((layer * H + head) * n + i) * n, ((layer * H + head) * n + i + 1) * n)));
}

const status = (page) => page.$eval('#hub-status', (s) => ({ state: s.dataset.state, text: s.textContent }));
async function waitLoaded(page) {
  await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('hub-status').dataset.state), null, { timeout: 90000 });
  const s = await status(page);
  if (s.state === 'error') throw new Error(`the Hub panel says: ${s.text}`);
  await settled(page);
  return s;
}

/** Picks layer and head (0-based) in the page's pickers and opens a view. */
async function show(page, { layer, head, view }) {
  // (by value: a string alone also matches the labels, counted from 1)
  await page.selectOption('#layer', { value: String(layer) });
  await settled(page);
  await page.selectOption('#head', { value: String(head) });
  await page.click(`#tab-${view}`);
  await settled(page);
}

test('a GGUF repository through the Hub panel: the quantization picker, Q4_K_M by default, the heatmap and the printed weights', async () => {
  const { page, errors } = await demo(`?hub=${encodeURIComponent(hub.url)}&s=${encodeURIComponent(SENTENCE)}`);
  expect(await page.$eval('#hub-quant-row', (r) => r.hidden)).toBe(true);
  await page.fill('#hub-id', REPO);
  await page.click('#hub-load');
  const loaded = await waitLoaded(page);
  expect(loaded.text).toBe(`Loaded ${REPO}/brown-llama-Q4_K_M.gguf (llama, GGUF Q4_K_M, weights as stored): shown as the Llama-style decoder model.`);
  // The picker: every .gguf file by the quantization its name says, Q4_K_M chosen.
  expect(await page.$eval('#hub-quant-row', (r) => r.hidden)).toBe(false);
  expect(await page.$$eval('#hub-quant option', (o) => o.map((x) => [x.value, x.textContent, x.selected])))
    .toEqual([['brown-llama-F16.gguf', 'F16', false], ['brown-llama-Q4_K_M.gguf', 'Q4_K_M', true]]);
  // The Hub was asked for config.json (absent), then the file list, then the one file.
  const asked = hub.requests.filter((r) => r.method === 'GET').map((r) => r.path);
  expect(asked).toEqual([`/${REPO}/resolve/main/config.json`, `/api/models/${REPO}/tree/main`, `/${REPO}/resolve/main/brown-llama-Q4_K_M.gguf`]);
  expect(await page.$eval('#hub-progress', (p) => p.value)).toBe(1);
  expect(await page.$eval('input[name=preset][value=llama]', (r) => r.checked)).toBe(true);
  const infoText = await page.$eval('#model-info', (d) => d.textContent);
  expect(infoText).toContain(`${REPO}/brown-llama-Q4_K_M.gguf`);
  expect(infoText).toContain('the GGUF file’s tokenizer.ggml.*');
  expect(infoText).toContain('Held as storedQ5_0 × 25, F32 × 9, F16 × 4 tensors'); // (the MLP's down_proj rows, 432 values, are no whole Q5_0 blocks)
  expect(await page.$eval('#model-info a', (a) => a.href)).toBe(`${hub.url}/${REPO}`);

  // The heatmap of layer 2, head 6: the library's attention on the same file.
  await show(page, { layer: 1, head: 5, view: 'heatmap' });
  const rows = await rowsOf(page);
  const expected = referenceRows(models.Q4_K_M, 1, 5);
  expect(rows.length).toBe(expected.length);
  rows.forEach((r, i) => expectClose(r, expected[i], 1e-5, `Q4_K_M heatmap row ${i}`));
  expect(await page.$eval('#tokens', (t) => t.textContent)).toContain('river');
  await shot(page, 'gguf-hub-heatmap', { fullPage: false });

  // The step view: W^Q, W^K, W^V, W^O printed as the model holds them (decoded from Q5_0 / F16
  // blocks): the library's headWeights on the same file, and the step says what the file stores.
  await show(page, { layer: 1, head: 5, view: 'steps' });
  const w = models.Q4_K_M.headWeights(1, 5);
  const d = w.dK, C = w.dModel;
  for (const key of ['wQ', 'wK', 'wV'])
    for (const r of [0, 7]) expectClose(await stepRow(page, key, r), Array.from(w[key].subarray(r * d, (r + 1) * d)), 1e-6, `${key} row ${r + 1}`);
  // W^O is printed whole: its first rows are head 1's (headWeights(layer, 0).wO).
  const wO = models.Q4_K_M.headWeights(1, 0).wO;
  for (const r of [0, 7]) expectClose(await stepRow(page, 'wO', r), Array.from(wO.subarray(r * C, (r + 1) * C)), 1e-6, `wO row ${r + 1}`);
  // (dequantized: not the safetensors folder's float16 values)
  const folderRow = Array.from(models.folder.headWeights(1, 5).wQ.subarray(0, d));
  expect(Math.max(...(await stepRow(page, 'wQ', 0)).map((v, i) => Math.abs(v - folderRow[i])))).toBeGreaterThan(1e-5);
  const explain = await page.$eval('#steps-body [data-step-id="qkv"]', (s) => s.textContent);
  expect(explain).toContain('The GGUF file stores this layer\'s WQ as Q5_0, WK as Q5_0, WV as Q5_0 and WO as Q5_0'); // (W^Q drawn as W with Q raised)
  expect(explain).toContain('round each row of X to 8 bits per block of 32 numbers');
  // The entry of Q worked out in words from X and the printed W^Q: the trace's Q but for the
  // rounding of X to 8 bits that the products with Q5_0 blocks do.
  const note = await page.$eval('#steps-body [data-step-id="qkv"] .step-note', (p) => Number(p.dataset.check));
  expect(note).toBeLessThan(0.02);
  await page.locator('#steps-body [data-step-id="qkv"]').scrollIntoViewIfNeeded();
  await shot(page, 'gguf-hub-steps', { fullPage: false });

  // Another quantization from the picker: F16, whose network is the shipped brown-llama's.
  await page.selectOption('#hub-quant', { value: 'brown-llama-F16.gguf' });
  expect((await waitLoaded(page)).text).toContain('(llama, GGUF F16, weights as stored)');
  await show(page, { layer: 1, head: 5, view: 'heatmap' });
  const f16 = await rowsOf(page), shipped = referenceRows(models.folder, 1, 5);
  f16.forEach((r, i) => expectClose(r, shipped[i], 1e-5, `F16 heatmap row ${i}`));
  expect(await page.$$eval('#hub-quant option', (o) => o.filter((x) => x.selected).map((x) => x.value))).toEqual(['brown-llama-F16.gguf']);

  // One file by name (owner/name/file.gguf, or its Hub page address): loads it, from the cache now.
  const before = hub.requests.length;
  await page.fill('#hub-id', `${hub.url}/${REPO}/blob/main/brown-llama-Q4_K_M.gguf`);
  await page.click('#hub-load');
  expect((await waitLoaded(page)).text).toContain(`Loaded ${REPO}/brown-llama-Q4_K_M.gguf (llama, GGUF Q4_K_M`);
  expect(hub.requests.slice(before)).toEqual([]);
  expect(await page.$eval('#hub-quant', (s) => s.value)).toBe('brown-llama-Q4_K_M.gguf'); // (the picker follows)
  await page.click('#hub-panel summary'); // (closed, then open again: the panel stays as it was)
  await page.click('#hub-panel summary');
  await page.locator('#hub-panel').scrollIntoViewIfNeeded();
  await shot(page, 'gguf-hub-panel');
  // On a phone: the panel's rows wrap (the picker, the address, the file input each on its own).
  await page.setViewportSize({ width: 390, height: 844 });
  await settled(page);
  await page.locator('#hub-panel').screenshot({ path: path.join(root, 'tests/browser/screenshots/gguf-hub-panel-390.png') });
  expect(errors).toEqual([]);
  await page.close();
});

test('a .gguf file from the disk: no download, the same attention; a sentence that is markup stays text', async () => {
  const markup = '<img src=x onerror="window.__injected=1"> The old man';
  const { page, errors } = await demo(`?s=${encodeURIComponent(SENTENCE)}`);
  const before = hub.requests.length;
  await page.setInputFiles('#hub-file', files.F16);
  const loaded = await waitLoaded(page);
  expect(loaded.text).toBe('Loaded brown-llama-F16.gguf (llama, GGUF F16, weights as stored): shown as the Llama-style decoder model.');
  expect(hub.requests.length).toBe(before);
  expect(await page.$eval('#model-info', (d) => d.textContent)).toContain('no model card (a GGUF file)');
  await show(page, { layer: 3, head: 7, view: 'heatmap' });
  const rows = await rowsOf(page), expected = referenceRows(models.folder, 3, 7);
  rows.forEach((r, i) => expectClose(r, expected[i], 1e-5, `local F16 row ${i}`));
  await shot(page, 'gguf-local-heatmap', { fullPage: false });

  // The step view's printed weights for this file, and the head view, for a sentence of markup.
  await page.fill('#sentence', markup);
  await settled(page);
  await show(page, { layer: 3, head: 7, view: 'steps' });
  const w = models.F16.headWeights(3, 7);
  expectClose(await stepRow(page, 'wQ', 0), Array.from(w.wQ.subarray(0, w.dK)), 1e-6, 'local wQ row 1');
  // F16 blocks multiply X as it is: the entry worked out is the trace's Q to float rounding.
  expect(await page.$eval('#steps-body [data-step-id="qkv"] .step-note', (p) => Number(p.dataset.check))).toBeLessThan(1e-4);
  expect(await page.$eval('#steps-body [data-step-id="qkv"]', (s) => s.textContent)).not.toContain('round each row of X');
  await page.click('#tab-heads');
  await settled(page);
  expect((await rowsOf(page)).length).toBeGreaterThan(0);
  // The model view: every layer x head, the query heads bracketed by the K/V head they share.
  await page.click('#tab-model');
  await settled(page);
  expect(await page.$$eval('.model-view .kv-group', (g) => g.length)).toBe(2);
  expect(await page.$$eval('#app img', (i) => i.length)).toBe(0);
  expect(await page.evaluate(() => window.__injected)).toBeUndefined();
  expect(await page.$$eval('#tokens .token', (b) => b.map((e) => e.textContent).join(''))).toContain('<img');
  expect(errors).toEqual([]);
  await page.close();
});

test('<attention-view model="hf:…" quant="F16" hub="…">: the widget draws a GGUF repository\'s file', async () => {
  const file = 'gguf-widget.html';
  fs.writeFileSync(path.join(site.dir, file), '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">\n'
    + '<script type="module" src="attention-view.js"></script>\n<body style="margin: 8px; max-width: 720px">\n'
    + `<attention-view id="q" model="hf:${REPO}" quant="F16" hub="${hub.url}" sentence="${SENTENCE}" layer="4" head="8" view="heatmap"></attention-view>\n`
    + `<attention-view id="f" model="hf:${REPO}/brown-llama-Q4_K_M.gguf" hub="${hub.url}" sentence="${SENTENCE}" view="steps" layer="2" head="6"></attention-view>\n</body>\n`);
  const { page, errors } = await open(site.browser.context, `${site.base}/${file}`);
  await page.setViewportSize({ width: 760, height: 900 });
  await page.waitForFunction(() => ['q', 'f'].every((id) => document.getElementById(id).dataset.ready === '1'), null, { timeout: 90000 });
  const inShadow = (id, selector, fn) => page.evaluate(([id, selector, fn]) =>
    new Function('els', `return (${fn})(els)`)([...document.getElementById(id).shadowRoot.querySelectorAll(selector)]), [id, selector, fn.toString()]);
  const rows = await inShadow('q', '.attn-row', (r) => r.map((e) => e.getAttribute('data-weights').split(',').map(Number)));
  const expected = referenceRows(models.folder, 3, 7);
  expect(rows.length).toBe(expected.length);
  rows.forEach((r, i) => expectClose(r, expected[i], 1e-5, `widget row ${i}`));
  expect(await inShadow('q', '.status', (s) => s[0].textContent)).toBe('');
  // (no "open in the demo": the demo opens on its own models, not this file)
  expect(await inShadow('q', '.bar a', (a) => a[0].hidden)).toBe(true);
  const w = models.Q4_K_M.headWeights(1, 5);
  const printed = await inShadow('f', '[data-step="wQ"] [data-row="0"]', (r) => r[0].dataset.values.split(',').map(Number));
  expectClose(printed, Array.from(w.wQ.subarray(0, w.dK)), 1e-6, 'widget wQ row 1');
  expect(await inShadow('f', '.status', (s) => s[0].textContent)).toBe('');
  await page.screenshot({ path: path.join(root, 'tests/browser/screenshots/gguf-widget.png') }); // (the heatmap and the step view's start)
  expect(errors).toEqual([]);

  // A GGUF repository named without its file or quantization: no config.json, and the error says what to add.
  await page.evaluate(([repo, hubUrl]) => {
    const w = document.createElement('attention-view');
    Object.assign(w, { id: 'bare' });
    w.setAttribute('model', `hf:${repo}`);
    w.setAttribute('hub', hubUrl);
    document.body.append(w);
  }, [REPO, hub.url]);
  await page.waitForFunction(() => document.getElementById('bare').shadowRoot.querySelector('.status.error'), null, { timeout: 30000 });
  const message = await inShadow('bare', '.status', (s) => s[0].textContent);
  expect(message).toContain('no config.json');
  expect(message).toContain(`if ${REPO} holds GGUF files, name one (model="hf:${REPO}/file.gguf") or its quantization (quant="Q4_K_M").`);
  expect(errors).toEqual([`<attention-view>: ${message}`]);
});
