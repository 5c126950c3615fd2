// The generate view (issue 37) in the demo and the widget: the model writes tokens, a slider scrubs
// the steps, and the row drawn for a step is the library's tokenAttention for that step (generate
// with attention: true, computed here in Node on the same folders, greedy so both write the same
// tokens): brown-gpt2, brown-llama (or its random stand-in), and BART's decoder self- and
// cross-attention. The page asks the worker for one generation and no run while it streams and the
// slider moves: every Worker message the page posts is counted.
// The view's JSON export holds every step's attention as generate() gave it.
// Screenshots (tests/browser/screenshots/): generate-gpt2-1280.png and -390.png, generate-llama-390.png
// and -1280.png, generate-bart-1280.png, generate-widget-390.png.
const fs = require('node:fs');
const path = require('node:path');
const { demoSite, root, shots } = require('./demo_site.cjs');
const { llamaFolder } = require('./llama_demo_model.cjs');

const llama = llamaFolder();
process.env.DEMO_LLAMA = llama.dir; // (read by scripts/build_web.mjs in demoSite's beforeAll)
const site = demoSite('web-test-generate');
const { demo } = site;
const api = require(path.join(root, 'dist/index.cjs'));
const PROMPT = 'The jury said that the city';
const SIZES = { 1280: 800, 390: 844 };
const NEW = 20; // the page's new tokens per generation
const models = {};

beforeAll(async () => {
  // Every message a page posts to a Worker, by what it asks ('run', 'generate', ...): the compute
  // service's request(type, ...) and generate(...) calls of the package's worker protocol.
  await site.browser.context.addInitScript(() => {
    if (typeof Worker === 'undefined') return;
    window.__posted = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (message, ...rest) {
      const asked = message?.type === 'call' ? (message.method === 'request' ? message.args[0] : message.method) : message?.type;
      if (asked) window.__posted.push(asked);
      return post.call(this, message, ...rest);
    };
  });
  const attn = await api.loadAttention({ threads: 1 });
  models.gpt2 = await attn.loadModel(path.join(root, 'web/models/brown-gpt2'));
  models.llama = await attn.loadModel(llama.dir);
  models.bart = await attn.loadModel(path.join(root, 'web/models/g2p-bart'));
});
afterAll(() => Object.values(models).forEach((m) => m.dispose()));

const posted = (page) => page.evaluate(() => window.__posted.slice());
const count = (types, type) => types.filter((t) => t === type).length;

/** The view's root in the page (or in a widget's shadow root: host). */
const view = (page, host) => (host ? page.locator(`${host} .generate-view`) : page.locator('#view .generate-view'));

/** Presses the view's button and waits until the generation has ended. */
async function generate(page, host) {
  await view(page, host).locator('.gen-start').click();
  await page.waitForFunction((h) => {
    const v = (h ? document.querySelector(h).shadowRoot : document).querySelector('.generate-view');
    return v.dataset.generating === '0' && Number(v.dataset.steps) > 0;
  }, host, { timeout: 90000 });
}

/** Moves the slider to step k (1-based) as a learner's drag does (an input event), and reads what is drawn. */
async function scrub(page, k, host) {
  return view(page, host).evaluate((v, step) => {
    const slider = v.querySelector('.gen-slider');
    slider.value = String(step);
    slider.dispatchEvent(new Event('input', { bubbles: true }));
    const rows = [...v.querySelectorAll('.gen-row')].map((r) => ({ part: r.dataset.part, query: Number(r.dataset.query),
      weights: r.dataset.weights.split(',').map(Number), shown: [...r.querySelectorAll('.gen-tok:not(.gen-later)')].map((t) => Number(t.dataset.weight)) }));
    const triangles = [...v.querySelectorAll('.gen-triangle svg')].map((s) => [Number(s.dataset.rows), Number(s.dataset.cols)]);
    return { ...v.dataset, rows, triangles, caption: v.querySelector('.gen-caption').textContent };
  }, k);
}

/** Row of the layer and head (0-based) in a step's L x H x len attention. */
const rowOf = (a, H, layer, head, len) => Array.from(a.subarray((layer * H + head) * len, (layer * H + head + 1) * len));

function expectRow(actual, expected, what) {
  expect({ what, length: actual.length }).toEqual({ what, length: expected.length });
  actual.forEach((v, j) => { if (!(Math.abs(v - expected[j]) <= 2e-6)) throw new Error(`${what}[${j}] = ${v}, the library's ${expected[j]}`); });
}

/** Every box of `selector` inside the screen's width. */
async function expectFits(page, selector, width) {
  const boxes = await page.$$eval(selector, (els) => els.map((e) => { const b = e.getBoundingClientRect(); return [b.left, b.right]; }));
  expect(boxes.length).toBeGreaterThan(0);
  for (const [left, right] of boxes) { expect(left).toBeGreaterThanOrEqual(0); expect(right).toBeLessThanOrEqual(width + 0.5); }
}

describe.each([
  ['gpt2', 1280, 800, { layer: 3, head: 2 }],
  ['llama', 390, 844, { layer: 2, head: 5 }],
])('%s at %i px', (model, width, height, { layer, head }) => {
  test('the slider\'s step draws that step\'s tokenAttention row and the triangle so far; one generation, no run', async () => {
    const lm = models[model];
    const ids = model === 'gpt2' ? [lm.bosTokenId, ...lm.tokenizer.encode(PROMPT)] : lm.tokenizer.encode(PROMPT);
    const want = await lm.generate(ids, { maxNewTokens: NEW, temperature: 0, attention: true });
    const H = model === 'gpt2' ? lm.config.n_head : lm.config.num_attention_heads;
    const { page, errors } = await demo(`?model=${model}&view=generate&s=${encodeURIComponent(PROMPT)}&t=0&layer=${layer + 1}&head=${head + 1}`, { width, height });
    expect(await page.$eval('#tab-generate', (t) => [t.hidden, t.getAttribute('aria-selected')])).toEqual([false, 'true']);
    const before = await posted(page);
    await generate(page);
    const T = want.tokens.length;
    const end = await scrub(page, T);
    expect([end.steps, end.layer, end.head]).toEqual([String(T), String(layer + 1), String(head + 1)]);
    // The tokens written are the library's: each step's label, and its id on the root.
    for (const k of [1, Math.ceil(T / 2), T]) {
      const shown = await scrub(page, k);
      const n = ids.length + k; // the step's row: its token at position n (from 1) and the n - 1 before it
      expect(shown.step).toBe(String(k));
      expect(Number(shown.token)).toBe(want.tokens[k - 1]);
      expect(shown.caption).toMatch(new RegExp(`^Step ${k}: .* \\(token ${n}\\) attends to the ${n - 1} tokens before it`));
      const [self] = shown.rows;
      expect(self.query).toBe(n);
      expectRow(self.weights, rowOf(want.tokenAttention[k - 1], H, layer, head, n), `step ${k}`);
      expectRow(self.shown, self.weights, `step ${k}'s shaded tokens`);
      expect(shown.triangles).toEqual([[k, n]]);
    }
    // The arrow keys move it too (a learner's keyboard), one step at a time; a click on a row of the
    // triangle goes back to that step.
    await view(page).locator('.gen-slider').focus();
    await page.keyboard.press('ArrowLeft');
    expect(await view(page).evaluate((v) => v.dataset.step)).toBe(String(T - 1));
    await view(page).locator('.gen-triangle .whole-row[data-row="1"] rect').first().click({ position: { x: 2, y: 2 } }); // (its number is centred)
    expect(await view(page).evaluate((v) => v.dataset.step)).toBe('2');
    await view(page).locator('.gen-slider').focus();
    await page.keyboard.press('End');
    expect(await view(page).evaluate((v) => v.dataset.step)).toBe(String(T));
    // One generation, no run of the text: not per token, not per step of the slider.
    const after = (await posted(page)).slice(before.length);
    expect([count(after, 'generate'), count(after, 'run')]).toEqual([1, 0]);
    // The JSON export: every step's attention, as generate() gave it.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    const json = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    expect([json.view, json.text, json.settings.temperature, json.step, json.layer, json.head]).toEqual(['generate', PROMPT, 0, T, layer + 1, head + 1]);
    expect(json.steps.map((x) => x.token)).toEqual(want.tokens);
    json.steps.forEach((x, t) => {
      expect(x.attention.shape).toEqual([lm.config.n_layer ?? lm.config.num_hidden_layers, H, ids.length + t + 1]);
      expectRow(x.attention.data, Array.from(want.tokenAttention[t]), `exported step ${t + 1}`);
    });
    // At both sizes: nothing past the screen's edge.
    for (const w of [width, width === 1280 ? 390 : 1280]) {
      if (w !== width) {
        await page.setViewportSize({ width: w, height: SIZES[w] });
        await page.waitForFunction((px) => Math.abs(document.querySelector('#view .gen-triangle svg').getBoundingClientRect().right) <= px, w);
      }
      await expectFits(page, '#view .generate-view, #view .gen-triangle svg, #view .gen-row, #view .gen-slider', w);
      await page.$eval('.tabs-row', (v) => v.scrollIntoView());
      await site.shot(page, `generate-${model}-${w}`, { fullPage: w > 400 });
    }
    expect(errors).toEqual([]);
    await page.close();
  });
});

test('BART: each step\'s decoder self-attention and cross-attention rows are generate()\'s tokenAttention', async () => {
  const words = 'phone knight', word = 1, layer = 1, head = 2;
  const want = models.bart.generate('knight', { attention: true });
  const H = models.bart.config.decoder_attention_heads, S = want.sourceTokens.length;
  const { page, errors } = await demo(`?model=bart&view=generate&words=${encodeURIComponent(words)}&word=${word + 1}&layer=${layer + 1}&head=${head + 1}`, { width: 1280, height: 800 });
  const before = await posted(page);
  await generate(page);
  const T = want.outputTexts.length;
  for (const k of [1, T]) {
    const shown = await scrub(page, k);
    expect(shown.steps).toBe(String(T));
    const [self, cross] = shown.rows;
    expect(shown.caption).toContain(`the decoder writes “${want.outputTexts[k - 1]}”`);
    expectRow(self.weights, rowOf(want.tokenAttention[k - 1].self, H, layer, head, k), `step ${k}, self`);
    expectRow(cross.weights, rowOf(want.tokenAttention[k - 1].cross, H, layer, head, S), `step ${k}, cross`);
    expect(shown.triangles).toEqual([[k, k], [k, S]]);
  }
  const after = (await posted(page)).slice(before.length);
  expect([count(after, 'generate'), count(after, 'run')]).toEqual([1, 0]);
  await site.shot(page, 'generate-bart-1280');
  expect(errors).toEqual([]);
  await page.close();
});

test('the widget (view="generate") draws the same rows, with no run per token', async () => {
  const lm = models.gpt2, layer = 1, head = 0;
  const ids = [lm.bosTokenId, ...lm.tokenizer.encode('The old man walked')];
  const want = await lm.generate(ids, { maxNewTokens: 8, temperature: 0, attention: true });
  fs.writeFileSync(path.join(site.dir, 'generate-widget.html'), '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">\n'
    + '<script type="module" src="attention-view.js"></script>\n<body></body>\n');
  const { page, errors } = await demo('', { page: 'generate-widget.html', width: 390, height: 844 });
  await page.evaluate(([l, h]) => {
    const v = document.createElement('attention-view');
    v.id = 'gen';
    for (const [k, val] of Object.entries({ sentence: 'The old man walked', view: 'generate', 'max-new': '8', temperature: '0', layer: String(l), head: String(h) })) v.setAttribute(k, val);
    document.body.prepend(v);
  }, [layer + 1, head + 1]);
  await page.waitForFunction(() => document.getElementById('gen').dataset.ready === '1', null, { timeout: 90000 });
  // Without about="" or tokens="", nothing stands between the widget's bar and the view (no empty strip).
  expect(await page.$eval('#gen', (v) => v.shadowRoot.querySelector('.generate-view').getBoundingClientRect().top
    - v.shadowRoot.querySelector('.bar').getBoundingClientRect().bottom)).toBeLessThan(12);
  const before = await posted(page);
  await generate(page, '#gen');
  const k = 3, n = ids.length + k;
  const shown = await scrub(page, k, '#gen');
  expect(Number(shown.token)).toBe(want.tokens[k - 1]);
  expectRow(shown.rows[0].weights, rowOf(want.tokenAttention[k - 1], lm.config.n_head, layer, head, n), 'the widget\'s step 3');
  const after = (await posted(page)).slice(before.length);
  expect([count(after, 'generate'), count(after, 'run')]).toEqual([1, 0]);
  await page.locator('#gen').screenshot({ path: path.join(shots, 'generate-widget-390.png') });
  expect(errors).toEqual([]);
  await page.close();
});
