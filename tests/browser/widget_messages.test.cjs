// What <attention-view> tells a tutorial author and a reader besides the view itself: the "open in
// the demo" link appears only once a view is drawn (never while loading or after an error), the
// marks in drawn tokens (␣, ##) are explained under them, a view the model cannot show gives a
// message naming the view and the model it needs, an unknown attribute (veiw="heads") is named
// once in a console.warn with the nearest known one while the widget still draws, and the
// element's own children (fallback content) show only until the script runs.
const fs = require('node:fs');
const path = require('node:path');
const { demoSite } = require('./demo_site.cjs');
const { open } = require('./chromium.cjs');

const site = demoSite('web-test-widget-messages');

// A bare page with the widget's script and no widget: each test adds the ones it needs.
const PAGE = 'widget-messages.html';
beforeAll(() => {
  fs.writeFileSync(path.join(site.dir, PAGE), '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">\n'
    + '<script type="module" src="attention-view.js"></script>\n<body style="width: 800px"></body>\n');
});

/** Opens the bare page, collecting errors and console warnings. */
async function bare() {
  const { page, errors } = await open(site.browser.context, `${site.base}/${PAGE}`);
  const warnings = [];
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  await page.waitForFunction(() => customElements.get('attention-view'));
  return { page, errors, warnings };
}

/** Adds <attention-view id=...> with these attributes to the page. */
const add = (page, id, attributes) => page.evaluate(([id, attributes]) => {
  const v = document.createElement('attention-view');
  v.id = id;
  for (const [k, val] of Object.entries(attributes)) v.setAttribute(k, val);
  document.body.append(v);
}, [id, attributes]);

const ready = (page, id) => page.waitForFunction((id) => document.getElementById(id).dataset.ready === '1', id, { timeout: 60000 });

/** What the widget shows: its link, status, the marks line and the body's text. */
const shown = (page, id) => page.$eval(`#${id}`, (v) => {
  const q = (s) => v.shadowRoot.querySelector(s);
  return {
    link: { hidden: q('.bar a').hidden, href: q('.bar a').getAttribute('href') },
    status: q('.status').textContent, error: q('.status').classList.contains('error'),
    marks: q('.marks').hidden ? null : q('.marks').textContent,
    body: q('.body').textContent, rows: v.shadowRoot.querySelectorAll('.attn-row').length,
  };
});

test('the demo link shows once a view is drawn: not while the model loads, not after an error', async () => {
  const { page, errors } = await bare();
  // Hold the model's weights until the widget has been seen loading (the worker's fetches pass
  // through the context's routes as the page's do).
  let release, holding = 0;
  const held = new Promise((r) => { release = r; });
  await site.browser.context.route('**/models/brown-gpt2/model.safetensors', async (route) => { holding++; await held; await route.continue(); });
  try {
    await add(page, 'w', { sentence: 'The cat sat on the mat.', layer: '3', head: '2' });
    for (let t = 0; t < 100 && holding === 0; t++) await page.waitForTimeout(100);
    expect(holding).toBe(1); // the weights are on hold: the widget cannot have drawn
    const loading = await shown(page, 'w');
    expect(loading.status).toBe('Loading…');
    expect(loading.link).toEqual({ hidden: true, href: null });
    release();
    await ready(page, 'w');
    const drawn = await shown(page, 'w');
    expect(drawn.rows).toBeGreaterThan(0);
    expect(drawn.link.hidden).toBe(false);
    expect(drawn.link.href).toMatch(/\/index\.html\?.*layer=3.*head=2/);
  } finally {
    release();
    await site.browser.context.unroute('**/models/brown-gpt2/model.safetensors');
  }
  // A model folder that is not there: an error in the status line, and no link.
  await page.$eval('#w', (v) => v.setAttribute('model', 'no-such-model/'));
  await page.waitForFunction(() => document.getElementById('w').shadowRoot.querySelector('.status.error'), null, { timeout: 90000 });
  const failed = await shown(page, 'w');
  expect(failed.status).toMatch(/^Could not compute: .*no-such-model/);
  expect(failed.link.hidden).toBe(true);
  // A bare word that names no model is read as a folder URL: the message says so, with the nearest name.
  await page.$eval('#w', (v) => v.setAttribute('model', 'brt'));
  await page.waitForFunction(() => /brt/.test(document.getElementById('w').shadowRoot.querySelector('.status.error')?.textContent), null, { timeout: 90000 });
  expect((await shown(page, 'w')).status).toMatch(/^Could not compute: .*\/brt\/config\.json: HTTP 404; model="brt" names no model \(gpt2, bert, bart, llama; did you mean 'bert'\?\), so it was read as a folder URL\.$/);
  // Back to a model that loads: the link returns with the drawn view.
  await page.$eval('#w', (v) => v.removeAttribute('model'));
  await ready(page, 'w');
  expect((await shown(page, 'w')).link.hidden).toBe(false);
  // Each failure also in the console, as the widget shows it (beside the browser's own 404 lines).
  expect(errors.filter((e) => !/^Failed to load resource: .* 404/.test(e))).toEqual([
    `<attention-view>: ${failed.status}`,
    expect.stringMatching(/^<attention-view>: Could not compute: .*\/brt\/config\.json: HTTP 404; model="brt" names no model/),
  ]);
  await page.close();
});

test('the marks in drawn tokens are explained under them: ␣ for GPT-2, ## for BERT, none for the seed example', async () => {
  const { page, errors } = await bare();
  await add(page, 'g', { sentence: 'The cat sat on the mat.', view: 'heads' });
  await add(page, 'b', { model: 'bert', sentence: 'The jury said the unbelievably thorough investigation was fair.', view: 'heads' });
  await add(page, 's', { preset: 'seed', view: 'heads' });
  for (const id of ['g', 'b', 's']) await ready(page, id);
  const g = await shown(page, 'g');
  expect(g.body).toContain('␣cat');
  expect(g.marks).toBe('“␣” is a space: a GPT-2 token carries the space before its word');
  // BERT: the explanation is there exactly when a drawn token carries ## (a word in pieces).
  const b = await shown(page, 'b');
  const bertTokens = JSON.parse(await page.$eval('#b', (v) => v.dataset.tokens));
  const pieces = bertTokens.some((t) => t.startsWith('##'));
  expect(pieces).toBe(true); // the sentence is chosen so that a word splits; if not, the test says nothing
  expect(b.marks).toBe('“##” joins a piece to the one before it: one word, several tokens');
  expect((await shown(page, 's')).marks).toBeNull();
  expect(errors).toEqual([]);
  await page.close();
});

test('a view the model cannot show: a message naming the view and the model it needs, no demo link', async () => {
  const { page, errors, warnings } = await bare();
  const cases = [
    ['g-fill', { sentence: 'The cat sat.', view: 'fill' }, 'view="fill" needs a masked-language model (model="bert"); this model is gpt2 (brown-gpt2).'],
    ['b-next', { model: 'bert', sentence: 'The cat sat.', view: 'next' }, 'view="next" needs a model that predicts the next word (model="gpt2"); this model is bert (brown-bert).'],
    ['g-pron', { sentence: 'phone', view: 'pronounce' }, 'view="pronounce" needs the spelling-to-sound model (model="bart"); this model is gpt2 (brown-gpt2).'],
    ['s-gen', { preset: 'seed', view: 'generate' }, 'view="generate" needs a model that writes text: a decoder (model="gpt2", model="llama") or the spelling-to-sound model (model="bart"); this is the tutorial’s example (preset="seed"), one attention layer and no model.'],
  ];
  for (const [id, attributes] of cases) await add(page, id, attributes);
  for (const [id, , message] of cases) {
    await ready(page, id);
    const s = await shown(page, id);
    expect(s.body).toBe(message);
    expect(s.link.hidden).toBe(true);
    expect(s.error).toBe(false);
  }
  // Switching to a view the model has draws it, with the link.
  await page.$eval('#g-fill', (v) => v.setAttribute('view', 'next'));
  await page.waitForFunction(() => document.getElementById('g-fill').shadowRoot.querySelector('.next-view, .prediction, li'), null, { timeout: 90000 });
  await ready(page, 'g-fill');
  const next = await shown(page, 'g-fill');
  expect(next.body).not.toMatch(/needs/);
  expect(next.link.hidden).toBe(false);
  expect(warnings).toEqual([]);
  expect(errors).toEqual([]);
  await page.close();
});

test('an unknown attribute is named once in a console.warn with the nearest known one; the widget still draws', async () => {
  const { page, errors, warnings } = await bare();
  await add(page, 'u', { sentence: 'The cat sat on the mat.', veiw: 'heads', layer: '3', head: '2' });
  // Global HTML attributes and data-/aria- ones are the page author's, not misspelt widget attributes.
  await add(page, 'ok', { sentence: 'The cat sat.', class: 'figure', title: 'A head', style: 'display:block', 'data-note': 'x', 'aria-label': 'attention', lang: 'en' });
  await ready(page, 'u');
  await ready(page, 'ok');
  const u = await shown(page, 'u');
  expect(u.rows).toBeGreaterThan(0); // drawn: the default view, layer 3 head 2
  expect(u.status).toBe("unknown attribute 'veiw' (did you mean 'view'?): ignored.");
  // Redraws (a resize, a click on a head) do not repeat the warning.
  await page.evaluate(() => { document.body.style.width = '600px'; });
  await page.waitForTimeout(300);
  await page.$eval('#u', (v) => v.setAttribute('layer', '4'));
  await page.waitForFunction(() => document.getElementById('u').shadowRoot.textContent.includes('Layer 4'), null, { timeout: 90000 });
  await ready(page, 'u');
  expect(warnings).toEqual(["<attention-view>: unknown attribute 'veiw' (did you mean 'view'?): ignored."]);
  // Fixed: the note goes with the next drawing (an attribute the widget does not know is not
  // observed, so removing it alone changes nothing; the corrected view="heads" is observed).
  await page.$eval('#u', (v) => { v.removeAttribute('veiw'); v.setAttribute('view', 'heads'); });
  await page.waitForFunction(() => document.getElementById('u').shadowRoot.querySelector('.status').textContent === '', null, { timeout: 90000 });
  expect((await shown(page, 'ok')).status).toBe('');
  expect(errors).toEqual([]);
  await page.close();
});

test('the element\'s own children are its fallback: shown before the script runs, hidden once it draws', async () => {
  const html = (script) => `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">${script}
<attention-view id="f" sentence="The cat sat."><p id="fallback">Attention diagram: needs JavaScript.</p></attention-view>`;
  fs.writeFileSync(path.join(site.dir, 'fallback-none.html'), html(''));
  fs.writeFileSync(path.join(site.dir, 'fallback.html'), html('<script type="module" src="attention-view.js"></script>'));
  const { page, errors } = await open(site.browser.context, `${site.base}/fallback-none.html`);
  expect(await page.$eval('#fallback', (p) => p.checkVisibility())).toBe(true);
  await page.goto(`${site.base}/fallback.html`);
  await ready(page, 'f');
  expect(await page.$eval('#fallback', (p) => p.checkVisibility())).toBe(false);
  expect(errors).toEqual([]);
  await page.close();
});
