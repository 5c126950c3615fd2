// The packaged <attention-view> (dist/widget/) asks a model folder only for the optional files it
// holds (quality.json, heads.json, generation_config.json, tokenizer_config.json): its own models'
// lists, the files attribute, or for a plain folder the Hugging Face ones; so a plain folder logs
// no 404. The dtype attribute loads the model at that precision.
const fs = require('node:fs');
const path = require('node:path');
const { serve } = require('../../scripts/static_server.cjs');
const { launch, open } = require('./chromium.cjs');

const root = path.resolve(__dirname, '../..');
const folders = path.join(root, 'build/widget-files');
let server, base, browser;

/** A copy of web/models/<from> with only `files`, served at /build/widget-files/<name>/. */
function folder(name, from, files) {
  const dir = path.join(folders, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of files) fs.copyFileSync(path.join(root, 'web/models', from, f), path.join(dir, f));
  return `/build/widget-files/${name}/`;
}

beforeAll(async () => {
  fs.rmSync(folders, { recursive: true, force: true });
  ({ server, url: base } = await serve(root));
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  server?.close();
  fs.rmSync(folders, { recursive: true, force: true });
});

/** Shows one widget with these attributes; returns the files asked for under `under`, the failed
 * answers, the console errors and what the widget loaded. */
async function show(attributes, under) {
  const asked = [], failed = [];
  const onResponse = (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith(under)) asked.push(url.pathname.slice(under.length));
    if (r.status() >= 400) failed.push(`${r.status()} ${url.pathname}`);
  };
  browser.context.on('response', onResponse);
  const { page, errors } = await open(browser.context, `${base}/tests/browser/pages/widget_files.html`);
  try {
    await page.waitForFunction(() => customElements.get('attention-view'));
    await page.evaluate((attributes) => {
      const v = document.createElement('attention-view');
      v.id = 'w';
      for (const [k, val] of Object.entries(attributes)) v.setAttribute(k, val);
      document.body.append(v);
    }, attributes);
    await page.waitForFunction(() => {
      const v = document.getElementById('w');
      return v.dataset.ready === '1' || v.shadowRoot?.querySelector('.status.error');
    }, null, { timeout: 90000 });
    const state = await page.$eval('#w', (v) => ({
      status: v.shadowRoot.querySelector('.status').textContent, dtype: v.result?.value?.info?.dtype, rows: v.shadowRoot.querySelectorAll('.attn-row').length,
    }));
    return { asked: asked.sort(), failed, errors, state };
  } finally {
    browser.context.off('response', onResponse);
    await page.close();
  }
}

test('the package\'s own model: its optional files are asked for, nothing else, no 404', async () => {
  const { asked, failed, errors, state } = await show({ sentence: 'The cat sat on the mat.', layer: '3', head: '2' }, '/dist/models/brown-gpt2/');
  expect(state.status).toBe('');
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
  expect(asked).toEqual(['config.json', 'heads.json', 'merges.txt', 'model.safetensors', 'quality.json', 'vocab.json']);
});

test('a plain GPT-2 folder with dtype="q8": no optional file asked for, no 404 in the console, held at q8', async () => {
  const url = folder('plain-gpt2', 'brown-gpt2', ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt']);
  const { asked, failed, errors, state } = await show({ model: url, sentence: 'The cat sat on the mat.', dtype: 'q8' }, url);
  expect(state.status).toBe('');
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
  expect(asked).toEqual(['config.json', 'merges.txt', 'model.safetensors', 'vocab.json']);
  expect(state.dtype).toBe('q8');
});

test('files="..." lists what a folder holds: a Llama folder without generation_config.json is not asked for it', async () => {
  const url = folder('llama-no-generation', 'brown-llama', ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'heads.json']);
  const { asked, failed, errors, state } = await show({ model: url, sentence: 'The cat sat on the mat.', files: 'tokenizer_config.json heads.json', dtype: 'q4' }, url);
  expect(state.status).toBe('');
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
  expect(asked).toEqual(['config.json', 'heads.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
  expect(state.dtype).toBe('q4');
});

test('a bad dtype is named in the widget', async () => {
  const url = folder('plain-gpt2-bad-dtype', 'brown-gpt2', ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt']);
  const { state } = await show({ model: url, sentence: 'The cat', dtype: 'q3' }, url);
  expect(state.status).toMatch(/dtype/);
});
