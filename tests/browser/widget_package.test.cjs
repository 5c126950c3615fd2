// A tutorial author embeds <attention-view> from the npm package alone, the way a CDN (jsDelivr,
// unpkg) serves it: the packed tarball is installed into an empty folder, that folder's
// node_modules is served on one port with exactly the headers README's "Self-hosting the widget"
// lists (a content type and CORS, as CDNs send them), and the author's page, on another port (another origin), holds one script tag and two
// widgets. Both must draw the attention the library computes, with no error and nothing fetched
// from the author's origin but the page. A second page there imports attention-wasm/worker from
// the "CDN" and generates in the worker it starts (a blob: worker importing the CDN's script; the
// page is not cross-origin isolated, so the single-thread build). Then the places tutorials live,
// each page built from the code docs/widget.md shows: a Jupyter notebook (nbconvert), an Observable
// notebook (its parser and runtime) and an MDX page built as Docusaurus builds one
// (tutorial_platforms.mjs).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { launch, open } = require('./chromium.cjs');
const { installPackedApp, servePage, serveSelfHosted, root, run } = require('./packed_app.cjs');
const { serveFolder } = require('./static_folder.cjs');

let app, cdn, author, workerPage, browser;
const SENTENCE = 'The cat sat on the mat.';

beforeAll(async () => {
  app = installPackedApp('widget');
  cdn = await serveSelfHosted(path.join(app.dir, 'node_modules'));
  const script = `${cdn.url}/attention-wasm/dist/widget/attention-view.js`;
  author = await servePage(`<!doctype html><meta charset="utf-8"><title>A tutorial</title><link rel="icon" href="data:,">
<h1>Attention, explained</h1>
<script type="module" src="${script}"></script>
<attention-view id="w-gpt2" sentence="${SENTENCE}" layer="1" head="all"></attention-view>
<attention-view id="w-bert" model="bert" sentence="The jury said the election was fair." view="heads" head="all"></attention-view>
`);
  const lib = `${cdn.url}/attention-wasm/dist`;
  workerPage = await servePage(`<!doctype html><meta charset="utf-8"><title>A web app</title><link rel="icon" href="data:,">
<script type="module">
  import { loadAttentionWorker } from '${lib}/worker.js';
  import brownGpt2 from '${lib}/models/brown-gpt2/index.js';
  try {
    const attn = await loadAttentionWorker();
    const model = await attn.loadModel(brownGpt2);
    const streamed = [];
    const out = await model.generate('The jury said', { prependBos: true, maxNewTokens: 8, onToken: (e) => streamed.push(e.token) });
    window.result = { variant: attn.variant, isolated: crossOriginIsolated, tokens: out.tokens, streamed };
    attn.terminate();
  } catch (e) {
    window.result = { failed: String(e && e.stack || e) };
  }
</script>
`);
  browser = await launch();
}, 180000);

afterAll(async () => {
  await browser?.close();
  cdn?.server.close();
  author?.server.close();
  workerPage?.server.close();
  app?.remove();
});

const rowsOf = (page, id) => page.$eval(id, (v) => [...v.shadowRoot.querySelectorAll('.attn-row')].map((r) => r.dataset.weights.split(',').map(Number)));

/** The `lang` code blocks of docs/widget.md's section `heading`, the CDN's address made the local "CDN"'s. */
function documented(heading, lang) {
  const section = fs.readFileSync(path.join(root, 'docs/widget.md'), 'utf8').split(/^## /m).find((s) => s.startsWith(heading));
  const blocks = [...section.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((m) => m[1]);
  expect(blocks.length).toBeGreaterThan(0);
  return blocks.map((b) => b.replaceAll('https://cdn.jsdelivr.net/npm/attention-wasm@0.2', `${cdn.url}/attention-wasm`));
}

/** A page built by tutorial_platforms.mjs from `input`, served on its own plain origin. */
async function platformPage(input) {
  const dir = fs.mkdtempSync(path.join(app.dir, `${input.kind}-`));
  fs.writeFileSync(path.join(dir, 'input.json'), JSON.stringify(input));
  await run(process.execPath, [path.join(__dirname, 'tutorial_platforms.mjs'), dir]);
  return { ...(await serveFolder(dir)), html: fs.readFileSync(path.join(dir, 'index.html'), 'utf8') };
}

/** Opens `url`, waits for its one widget to draw; returns the page, the widget's rows, failed requests and console errors. */
async function widgetOn(url) {
  const { page, errors } = await open(browser.context, 'about:blank');
  const failed = [];
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('attention-view')?.dataset.ready === '1', null, { timeout: 90000 });
  return { page, rows: await rowsOf(page, 'attention-view'), failed, errors };
}

const sumsToOne = (rows) => {
  expect(rows.length).toBeGreaterThan(0);
  rows.forEach((r) => expect(Math.abs(r.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-4));
};

test('two widgets render on another origin from the installed package alone', async () => {
  const { page, errors } = await open(browser.context, 'about:blank');
  const requests = [], failed = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('requestfailed', (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.url()}: HTTP ${r.status()}`); });
  await page.goto(author.url);
  await page.waitForFunction(() => ['w-gpt2', 'w-bert'].every((id) => document.getElementById(id).dataset.ready === '1'), null, { timeout: 60000 });

  // GPT-2: what the widget draws is what the installed package computes in Node on the packaged model.
  const tokens = JSON.parse(await page.$eval('#w-gpt2', (v) => v.dataset.tokens));
  const n = tokens.length;
  const drawn = await rowsOf(page, '#w-gpt2');
  const { loadAttention } = require(path.join(app.pkg, 'dist/index.cjs'));
  const attn = await loadAttention({ threads: 1 });
  const lm = await attn.loadModel(path.join(app.pkg, 'dist/models/brown-gpt2'));
  const ids = [lm.config.bos_token_id ?? lm.tokenizer.tokenId('<|endoftext|>'), ...lm.tokenizer.encode(SENTENCE)];
  expect(ids.length).toBe(n);
  const H = lm.config.n_head;
  const { attention } = lm.run(ids, { attention: true });
  lm.dispose?.();
  expect(drawn.length).toBe(H * n); // layer 1, every head: one row per (head, query)
  drawn.forEach((row, k) => {
    const h = Math.floor(k / n), i = k % n;
    const ref = attention.subarray(((0 * H + h) * n + i) * n, ((0 * H + h) * n + i + 1) * n);
    row.forEach((w, j) => expect(Math.abs(w - ref[j])).toBeLessThan(1e-4));
    expect(row.slice(i + 1).every((w) => w === 0)).toBe(true);
  });

  // BERT: the second default model, from the same package folder.
  const bertTokens = JSON.parse(await page.$eval('#w-bert', (v) => v.dataset.tokens));
  expect(bertTokens[0]).toBe('[CLS]');
  const bertRows = await rowsOf(page, '#w-bert');
  expect(bertRows.length).toBeGreaterThan(0);
  expect(bertRows.length % bertTokens.length).toBe(0);
  bertRows.forEach((r) => expect(Math.abs(r.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-4));

  // One worker for both (started through a same-origin blob: that imports the CDN's worker.js).
  expect(page.workers().length).toBe(1);
  // The package has no demo page beside the widget: no dead "open in the demo" link.
  expect(await page.$eval('#w-gpt2', (v) => v.shadowRoot.querySelector('.bar a').hidden)).toBe(true);
  // Everything but the page itself came from the "CDN": the widget, its worker, the .wasm, the models.
  const fromAuthor = requests.filter((u) => u.startsWith(author.url) && new URL(u).pathname !== '/');
  expect(fromAuthor).toEqual([]);
  const fromCdn = requests.filter((u) => u.startsWith(cdn.url)).map((u) => new URL(u).pathname);
  expect(fromCdn).toEqual(expect.arrayContaining(['/attention-wasm/dist/widget/attention-view.js', '/attention-wasm/dist/widget/worker.js',
    '/attention-wasm/dist/attention_simd.wasm', '/attention-wasm/dist/models/brown-gpt2/model.safetensors', '/attention-wasm/dist/models/brown-bert/model.safetensors']));
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
  await page.screenshot({ path: path.join(__dirname, 'screenshots', 'widget-from-package.png'), fullPage: true }).catch(() => {});
  await page.close();
}, 120000);

test('attention-wasm/worker from the "CDN" on a plain page: a blob: worker, the single-thread build, the tokens Node generates', async () => {
  const { page, errors } = await open(browser.context, workerPage.url);
  await page.waitForFunction(() => window.result, null, { timeout: 90000 });
  const result = await page.evaluate(() => window.result);
  await page.close();
  expect(result.failed).toBeUndefined();
  expect(errors).toEqual([]);
  expect(result.isolated).toBe(false);
  expect(result.variant).toBe('relaxed');  // (one thread in Chromium: the relaxed-SIMD build, the same tokens)
  const { loadAttention } = require(path.join(app.pkg, 'dist/index.cjs'));
  const lm = await (await loadAttention({ threads: 1 })).loadModel(path.join(app.pkg, 'dist/models/brown-gpt2'));
  const out = await lm.generate('The jury said', { prependBos: true, maxNewTokens: 8 });
  lm.dispose();
  expect(result.tokens).toEqual(out.tokens);
  expect(result.streamed).toEqual(out.tokens);
}, 120000);

test('in a Jupyter notebook: a cell\'s IPython.display.HTML output, as nbconvert renders the notebook, draws the widget from the "CDN"', async () => {
  // The cell docs/widget.md shows, with its output as IPython gives it (HTML(...)'s text/html is the
  // string itself); the CDN's address is the local one.
  const html = `<script type="module" src="${cdn.url}/attention-wasm/dist/widget/attention-view.js"></script>\n`
    + '<attention-view id="w-nb" sentence="The cat sat on the mat" layer="3" head="2"></attention-view>';
  const notebook = {
    nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' }, language_info: { name: 'python' } },
    cells: [{
      cell_type: 'code', id: 'widget', execution_count: 1, metadata: {}, source: `from IPython.display import HTML\nHTML('''${html}''')`,
      outputs: [{ output_type: 'execute_result', execution_count: 1, metadata: {}, data: { 'text/html': html, 'text/plain': '<IPython.core.display.HTML object>' } }],
    }],
  };
  const dir = fs.mkdtempSync(path.join(app.dir, 'notebook-'));
  fs.writeFileSync(path.join(dir, 'tutorial.ipynb'), JSON.stringify(notebook));
  try {
    execFileSync('jupyter-nbconvert', ['--to', 'html', 'tutorial.ipynb'], { cwd: dir, stdio: 'ignore' });
  } catch (e) {
    throw new Error(`jupyter-nbconvert failed (is it installed? scripts/bootstrap.sh installs it): ${e.message}`);
  }
  const rendered = await servePage(fs.readFileSync(path.join(dir, 'tutorial.html'), 'utf8'));
  try {
    const { page, rows, failed, errors } = await widgetOn(rendered.url);
    await page.close();
    sumsToOne(rows);
    // The notebook page's own extras: Debian's nbconvert names its copies of require.js and MathJax
    // by file: URLs, which a page served over http may not load, and the page names no icon (the
    // browser's /favicon.ico is a 404 here). The widget needs none of them; nothing else may fail.
    expect(failed).toEqual([]);
    const own = (e) => /file:\/\/\/usr\/share\/javascript\//.test(e) || /^Failed to load resource: the server responded with a status of 404/.test(e);
    expect(errors.filter((e) => !own(e))).toEqual([]);
  } finally {
    rendered.server.close();
  }
}, 120000);

test('in an Observable notebook: the documented cells, through Observable\'s parser and runtime, draw the widget from the "CDN"', async () => {
  const site = await platformPage({ kind: 'observable', cells: documented('In an Observable notebook', 'javascript').map((c) => c.trim()) });
  try {
    const { page, rows, failed, errors } = await widgetOn(site.url);
    // Each cell's output is in the inspector's node: the script's module, then the element.
    const cells = await page.$$eval('#notebook > .observablehq', (ns) => ns.map((n) => ({ error: n.classList.contains('observablehq--error'), text: n.textContent.slice(0, 60), widget: !!n.querySelector('attention-view') })));
    const workers = page.workers().map((w) => w.url());
    await page.screenshot({ path: path.join(__dirname, 'screenshots', 'widget-observable.png'), fullPage: true }).catch(() => {});
    await page.close();
    expect(cells.map((c) => c.error)).toEqual([false, false]);
    expect(cells[0].text).toMatch(/^widget =\s*Module/);
    expect(cells[1].widget).toBe(true);
    sumsToOne(rows);
    expect(workers).toEqual([expect.stringMatching(/^blob:/)]); // the CDN's worker.js, started as cross-origin scripts allow
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    site.server.close();
  }
}, 120000);

test('in an MDX page built as Docusaurus builds it (MDX compiled, rendered to HTML, hydrated by React 19): the widget draws, no error', async () => {
  const [config] = documented('In an MDX page', 'javascript');
  const [, src, type] = /src: '([^']+)', type: '(\w+)'/.exec(config);
  const [mdx] = documented('In an MDX page', 'mdx');
  const site = await platformPage({ kind: 'mdx', mdx, scripts: [{ src, type }] });
  try {
    // The element is in the HTML the build wrote, with its attributes and its fallback text.
    expect(site.html).toMatch(/<attention-view sentence="The cat sat on the mat" layer="3" head="2"><p>Interactive attention view: needs JavaScript.<\/p><\/attention-view>/);
    const { page, rows, failed, errors } = await widgetOn(site.url);
    const state = await page.$eval('attention-view', (v) => ({ title: v.shadowRoot.querySelector('.title').textContent, fallback: v.querySelector('p').offsetHeight }));
    const workers = page.workers().map((w) => w.url());
    await page.screenshot({ path: path.join(__dirname, 'screenshots', 'widget-mdx.png'), fullPage: true }).catch(() => {});
    await page.close();
    sumsToOne(rows);
    expect(state.title).toMatch(/layer 3/i);
    expect(state.fallback).toBe(0); // the reader sees the view, not the no-JavaScript text
    expect(workers).toEqual([expect.stringMatching(/^blob:/)]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]); // (production React reports a hydration it had to give up here)
  } finally {
    site.server.close();
  }
}, 120000);
