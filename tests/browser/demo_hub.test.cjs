// The demo's "Load a model from the Hugging Face Hub" panel in headless Chromium, against the local
// Hub stand-in (tests/js/hub_server.cjs, on another port than the demo: cross-origin, as the real
// Hub is). A model loads with the progress bar reaching 100%, takes the place of the shipped model
// of its type and draws the same attention as the shipped copy of the same weights; a reload
// loads it again from the browser's cache with no request to the Hub; a model type the demo does
// not run is refused, naming it, before its weights are asked for.
// Screenshot: tests/browser/screenshots/hub-panel.png.
const path = require('node:path');
const { demoSite, rowsOf, root } = require('./demo_site.cjs');
const { startHubServer, readFolder } = require('../js/hub_server.cjs');

describe('the demo\'s Hub panel', () => {
  const site = demoSite('web-test-hub');
  const { demo, settled, shot } = site;
  let hub;
  const bertFiles = readFolder(path.join(root, 'web/models/brown-bert'), (f) => f === 'heldout-sample.json');

  beforeAll(async () => {
    hub = await startHubServer({
      'someone/brown-bert': { files: bertFiles },
      'someone/t5': { files: new Map([['config.json', Buffer.from('{"model_type": "t5"}')], ['model.safetensors', bertFiles.get('model.safetensors')]]) },
    });
  });
  afterAll(async () => { await hub?.close(); });

  /** Types the id, presses Load and waits for the status to say done or error. */
  async function loadFromHub(page, id) {
    await page.fill('#hub-id', id);
    await page.click('#hub-load');
    await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('hub-status').dataset.state), null, { timeout: 60000 });
    return page.$eval('#hub-status', (s) => ({ state: s.dataset.state, text: s.textContent }));
  }

  test('a BERT from the Hub: progress to 100%, loads, draws the attention of the same weights; a reload uses the cache', async () => {
    // The shipped BERT's attention, for comparison.
    const shipped = await demo('?model=bert');
    const expected = await rowsOf(shipped.page);
    await shipped.page.close();

    const { page, errors } = await demo(`?hub=${encodeURIComponent(hub.url)}`);
    expect(await page.$eval('#hub-panel', (d) => d.open)).toBe(true);
    expect(await page.$eval('#hub-url', (i) => i.value)).toBe(hub.url);
    expect(await page.$eval('#hub-types', (p) => p.textContent)).toMatch(/gpt2.*bert.*bart/s);
    // Progress reports as they arrive (the bar's value each time it changes).
    await page.evaluate(() => {
      window.__hubValues = [];
      new MutationObserver(() => window.__hubValues.push(Number(document.getElementById('hub-progress').dataset.loaded)))
        .observe(document.getElementById('hub-progress'), { attributes: true, attributeFilter: ['data-loaded'] });
    });
    const status = await loadFromHub(page, 'someone/brown-bert');
    expect(status).toEqual({ state: 'done', text: expect.stringContaining('Loaded someone/brown-bert (bert, weights as stored)') });
    await settled(page);
    const bar = await page.$eval('#hub-progress', (p) => ({ value: p.value, loaded: Number(p.dataset.loaded), total: Number(p.dataset.total), hidden: p.hidden }));
    const needed = ['config.json', 'model.safetensors', 'vocab.txt', 'tokenizer_config.json', 'heads.json'].reduce((a, f) => a + bertFiles.get(f).length, 0);
    expect(bar).toEqual({ value: 1, loaded: needed, total: needed, hidden: false });
    const values = await page.evaluate(() => window.__hubValues);
    expect(values.length).toBeGreaterThan(3);
    // The weights are the last and largest download: the bar's bytes only grow.
    // The Hub model replaced the shipped encoder: the encoder preset, its name, the same attention.
    expect(await page.$eval('input[name=preset][value=bert]', (r) => r.checked)).toBe(true);
    expect(await page.$eval('#model-info', (d) => d.textContent)).toContain('someone/brown-bert');
    expect(await page.$eval('#model-info a', (a) => a.href)).toBe(`${hub.url}/someone/brown-bert`);
    const drawn = await rowsOf(page);
    expect(drawn.length).toBeGreaterThan(0);
    expect(drawn).toEqual(expected);
    expect(hub.count('model.safetensors')).toBe(1);
    await shot(page, 'hub-panel');
    expect(errors).toEqual([]);
    await page.close();

    // A new page (a new worker): the files come from the Cache API, nothing is asked of the Hub.
    const before = hub.requests.length;
    const again = await demo(`?hub=${encodeURIComponent(hub.url)}`);
    const second = await loadFromHub(again.page, 'someone/brown-bert');
    expect(second.state).toBe('done');
    await settled(again.page);
    expect(await again.page.$eval('#hub-progress', (p) => p.value)).toBe(1);
    expect(hub.requests.slice(before)).toEqual([]);
    expect(await rowsOf(again.page)).toEqual(expected);
    // The panel's weight precision: the same model at 8 bits, from the cache again, draws attention
    // close to (not exactly) the stored 16-bit weights' (the library's q8 error bounds: weight_dtype.test).
    await again.page.selectOption('#hub-dtype', 'q8');
    const q8 = await loadFromHub(again.page, 'someone/brown-bert');
    expect(q8).toEqual({ state: 'done', text: expect.stringContaining('Loaded someone/brown-bert (bert, 8-bit weights)') });
    await settled(again.page);
    const rowsQ8 = await rowsOf(again.page);
    expect(rowsQ8.length).toBe(expected.length);
    const diff = Math.max(...rowsQ8.flatMap((row, i) => row.map((w, j) => Math.abs(w - expected[i][j]))));
    expect(diff).toBeGreaterThan(0);
    expect(diff).toBeLessThan(0.05);
    expect(hub.requests.slice(before)).toEqual([]);
    expect(again.errors).toEqual([]);
    await again.page.close();
  });

  test('a model type the demo does not run is named, and its weights are never asked for', async () => {
    const { page } = await demo(`?hub=${encodeURIComponent(hub.url)}`);
    const status = await loadFromHub(page, 'someone/t5');
    expect(status.state).toBe('error');
    expect(status.text).toContain('"t5"');
    expect(status.text).toContain('gpt2, bert, bart, llama');
    expect(hub.requests.filter((r) => r.path.startsWith('/someone/t5/')).map((r) => r.path)).toEqual(['/someone/t5/resolve/main/config.json']);
    // A malformed id is refused in the page.
    expect(await loadFromHub(page, 'not a model id')).toEqual({ state: 'error', text: expect.stringContaining('Write a model id') });
    await page.close();
  });
});
