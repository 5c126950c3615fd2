// The demo's "Modern decoder (Llama-style)" preset and <attention-view model="llama"> in headless
// Chromium, at 1280x800 and 390x844: the heads drawn in their K/V groups (the groups equal the
// library's kvHeadOf), attention rows equal to the library's in Node, the rotation step's numbers
// (Q and K before and after the rotation, the pair's score at its positions and moved) equal to
// the library's trace, the widget, the model card page, and a sentence that is markup staying text.
// Runs on web/models/brown-llama/ when it is there, else on a random-weight Llama of its shape
// (llama_demo_model.cjs). Screenshots: tests/browser/screenshots/llama-*.png.
const path = require('node:path');
const fs = require('node:fs');
const { llamaFolder } = require('./llama_demo_model.cjs');
const { demoSite, rowsOf, stepRow, sum, expectClose, root, open } = require('./demo_site.cjs');
const { continueText } = require('./demo_phases.cjs');

const llama = llamaFolder();
process.env.DEMO_LLAMA = llama.dir; // (read by scripts/build_web.mjs in demoSite's beforeAll)
if (!llama.trained) console.warn(`demo_llama: web/models/brown-llama/ is not there yet: testing on random weights (${path.relative(root, llama.dir)})`);

const site = demoSite('web-test-llama');
const { demo, settled, shot } = site;
const PHONE = { width: 390, height: 844 };
const SENTENCE = 'The old man walked to the river and sat down by the water';

let lm = null, attn = null;
beforeAll(async () => {
  const { loadAttention } = require(path.join(root, 'dist/index.cjs'));
  attn = await loadAttention({ threads: 1 });
  lm = await attn.loadModel(llama.dir);
});
afterAll(() => lm?.dispose());

/** The library's run on the page's tokens (the page reads the ids from its worker). */
const reference = (ids, traceLayer) => lm.run(ids, { attention: true, traceLayer });
const rowOf = (t, head, row, n, d) => Array.from(t.subarray((head * n + row) * d, (head * n + row + 1) * d));

test('the preset draws its heads in their K/V groups, with the library\'s attention', async () => {
  const { page, errors } = await demo(`?model=llama&s=${encodeURIComponent(SENTENCE)}&layer=2&head=3`, { width: 1280, height: 800 });
  expect(await page.$eval('input[name=preset][value=llama]', (r) => r.checked)).toBe(true);
  const H = lm.config.num_attention_heads, KV = lm.config.num_key_value_heads;
  expect(KV).toBeLessThan(H); // grouped-query: there are groups to show
  // The head picker names each query head's K/V head: the library's kvHeadOf.
  const options = await page.$$eval('#head option', (o) => o.map((x) => [x.value, x.textContent]));
  const groups = options.filter(([v]) => v !== 'all').map(([, text]) => Number(text.match(/\(K\/V (\d+)\)/)[1]) - 1);
  expect(groups).toEqual(Array.from({ length: H }, (_, h) => lm.kvHeadOf(h)));
  // The head view's lines: the library's attention for layer 2, head 3 (rows sum to 1).
  const tokens = await page.$$eval('#tokens .token', (b) => b.map((e) => e.dataset.token));
  const ids = lm.tokenizer.encode(SENTENCE);
  expect(tokens.length).toBe(ids.length);
  const ref = reference(ids, 1);
  const n = ids.length, rows = await rowsOf(page);
  expect(rows.length).toBe(n);
  rows.forEach((r, i) => {
    expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5);
    expectClose(r, Array.from(ref.attention.subarray(((1 * H + 2) * n + i) * n, ((1 * H + 2) * n + i + 1) * n)), 1e-5, `layer 2 head 3 row ${i}`);
  });
  expect(await page.$eval('#view-graphic svg', (s) => s.textContent)).toContain(`Head 3 (K/V ${lm.kvHeadOf(2) + 1})`);
  await shot(page, 'llama-heads-1280');

  // "All heads": the lines of one K/V group share a hue (shades of it), other groups another.
  await page.selectOption('#head', 'all');
  await settled(page);
  const strokes = await page.$$eval('#view-graphic .attn-row[data-query="0"]', (g) => g.map((e) => [Number(e.dataset.head), e.getAttribute('stroke')]));
  expect(strokes.length).toBe(H);
  const hue = (hex) => {
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
    const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
    const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    return (h * 60 + 360) % 360;
  };
  const near = (a, b) => Math.min(Math.abs(a - b), 360 - Math.abs(a - b)) < 6;
  for (const [h1, c1] of strokes) for (const [h2, c2] of strokes)
    if (h1 < h2) expect([h1, h2, near(hue(c1), hue(c2))]).toEqual([h1, h2, lm.kvHeadOf(h1) === lm.kvHeadOf(h2)]);
  await shot(page, 'llama-all-heads-1280');

  // The model view: one bracket per K/V head over the query heads that read it.
  await page.click('#tab-model');
  await settled(page);
  const brackets = await page.$$eval('.model-view .kv-group', (g) => g.map((e) => [Number(e.dataset.kv), e.dataset.heads, e.textContent]));
  expect(brackets.length).toBe(KV);
  for (const [kv, heads] of brackets) {
    const [first, last] = heads.split(',').map(Number);
    for (let h = 0; h < H; h++) expect(lm.kvHeadOf(h) === kv).toBe(h >= first && h <= last);
  }
  await shot(page, 'llama-model-1280');
  expect(errors).toEqual([]);
});

test('the rotation step shows the library\'s q and k before and after the rotation, and the pair moved', async () => {
  const layer = 2, head = 6; // counted from 1, as in the address
  const { page, errors } = await demo(`?model=llama&s=${encodeURIComponent(SENTENCE)}&view=steps&layer=${layer}&head=${head}`, { width: 1280, height: 800 });
  const ids = lm.tokenizer.encode(SENTENCE);
  const n = ids.length, d = lm.config.head_dim, h = head - 1, kv = lm.kvHeadOf(h);
  const { trace } = reference(ids, layer - 1);
  const titles = await page.$$eval('#steps-body .step h3', (t) => t.map((e) => e.textContent));
  expect(titles[1]).toContain(`K/V head ${kv + 1}`);
  expect(titles[2]).toMatch(/Rotate each query and key by its position/);
  const qi = await page.$eval('#steps-body [data-step="qPre"] [data-row]', (e) => Number(e.dataset.row));
  expect(qi).toBe(Math.floor((n - 1) / 2)); // the step view opens on a middle token (its row has masked keys)
  // q before and after: the trace's rows (the page shows them at 4 decimals; data-values holds 7 digits).
  expectClose(await stepRow(page, 'qPre', qi), rowOf(trace.qBeforeRotary, h, qi, n, d), 1e-5, 'q before rotation');
  expectClose(await stepRow(page, 'qRot', qi), rowOf(trace.q, h, qi, n, d), 1e-5, 'q after rotation');
  expectClose(await stepRow(page, 'q', qi), rowOf(trace.qBeforeRotary, h, qi, n, d), 1e-5, 'step 2 Q (as projected)');
  // The keys: those of the query head's K/V head (shared with its group), before and after.
  for (const j of [0, 1, Math.min(5, n - 1)]) {
    expectClose(await stepRow(page, 'kPre', j), rowOf(trace.kBeforeRotary, kv, j, n, d), 1e-5, `k ${j} before rotation`);
    expectClose(await stepRow(page, 'kRot', j), rowOf(trace.k, kv, j, n, d), 1e-5, `k ${j} after rotation`);
    expectClose(await stepRow(page, 'k', j), rowOf(trace.kBeforeRotary, kv, j, n, d), 1e-5, `step 2 K row ${j}`);
  }
  // The pair: its score after the rotation (the page rotates q and k itself, rotary.js) is the
  // library's scaled score; moved together it stays; the unrotated score is q·k/√d.
  const pair = async () => page.$eval('#steps-body .rotary-detail', (e) => ({ ...e.dataset }));
  const check = async () => {
    const p = await pair();
    const j = Number(p.key);
    expect(Number(p.query)).toBe(qi);
    expect(j).toBeLessThanOrEqual(qi);
    expect(Math.abs(Number(p.after) - trace.scaledScores[(h * n + qi) * n + j])).toBeLessThan(2e-4);
    const qb = rowOf(trace.qBeforeRotary, h, qi, n, d), kb = rowOf(trace.kBeforeRotary, kv, j, n, d);
    expect(Math.abs(Number(p.before) - qb.reduce((a, x, i) => a + x * kb[i], 0) / Math.sqrt(d))).toBeLessThan(1e-5);
    const moved = JSON.parse(p.moved);
    expect(moved.length).toBeGreaterThan(2);
    for (const [qPos, kPos, score] of moved) {
      expect(qPos - kPos).toBe(qi - j);
      expect(Math.abs(score - Number(p.after))).toBeLessThan(1e-9 * Math.max(1, Math.abs(score)) + 1e-9);
    }
    const curve = p.curve.split(',').map(Number);
    expect(curve.length).toBe(lm.config.max_position_embeddings);
    expect(Math.abs(curve[qi - j] - Number(p.after))).toBeLessThan(1e-5);
    // Moved apart, the score changes (rotation is what makes attention depend on distance).
    expect(Math.max(...curve) - Math.min(...curve)).toBeGreaterThan(1e-3);
    return j;
  };
  const first = await check();
  // Another key: the pair follows.
  const other = first === 0 ? 1 : 0;
  await page.selectOption('#steps-body .rotary-detail select', String(other));
  expect(Number((await pair()).key)).toBe(other);
  await check();
  await shot(page, 'llama-steps-1280');
  // The step view exported as SVG carries the rotation step and the pair's numbers in words.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  const exported = fs.readFileSync(await download.path(), 'utf8');
  expect(exported).toContain('Rotate each query and key by its position');
  expect(exported).toContain(`after ${Number((await pair()).after).toFixed(4)}`);
  // Every row: step 4's Kᵀ is the rotated keys of the K/V head (its row 1: dimension 1 of each key).
  await page.click('#steps-all-rows');
  await settled(page);
  expectClose(await stepRow(page, 'kT', 0), Array.from({ length: n }, (_, j) => trace.k[(kv * n + j) * d]), 1e-5, 'Kᵀ row 1 (rotated)');
  await page.click('#steps-all-rows');
  await settled(page);

  // On a phone: the same step, nothing wider than the screen but the scrolling matrices.
  await page.setViewportSize(PHONE);
  await page.evaluate(() => document.querySelector('#steps-body [data-step-id="rotary"]').scrollIntoView());
  const overflow = await page.$eval('#steps-body [data-step-id="rotary"]', (s) => {
    const right = document.documentElement.clientWidth;
    return [...s.querySelectorAll('p, table, .rotary-chart, h3')].filter((e) => e.getBoundingClientRect().right > right + 1).map((e) => e.tagName);
  });
  expect(overflow).toEqual([]);
  await shot(page, 'llama-steps-390', { fullPage: false });
  expect(errors).toEqual([]);
});

test('on a phone the preset opens and its picture fits', async () => {
  const { page, errors } = await demo('?model=llama', PHONE);
  const rows = await rowsOf(page);
  expect(rows.length).toBeGreaterThan(1);
  rows.forEach((r) => expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5));
  await shot(page, 'llama-heads-390');
  await page.click('#tab-model');
  await settled(page);
  expect(await page.$$eval('.model-view .kv-group', (g) => g.length)).toBe(lm.config.num_key_value_heads);
  await shot(page, 'llama-model-390');
  // "Continue the text": tokens stream in through the KV cache (which holds only the K/V heads).
  const before = await page.$$eval('#tokens .token', (b) => b.length);
  await page.click('#tab-heads');
  await continueText(page);
  expect(await page.$$eval('#tokens .token', (b) => b.length)).toBeGreaterThan(before);
  (await rowsOf(page)).forEach((r) => expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5));
  expect(errors).toEqual([]);
});

test('a sentence that is markup stays text, and the model card page opens', async () => {
  const evil = '<img src=x onerror="window.__pwned=1"> <b>bold</b>';
  const { page, errors } = await demo(`?model=llama&s=${encodeURIComponent(evil)}`, { width: 1280, height: 800 });
  expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
  expect(await page.$$eval('#app img, #app b', (e) => e.length)).toBe(0);
  const tokens = await page.$$eval('#tokens .token', (b) => b.map((e) => e.dataset.token).join(''));
  expect(tokens).toContain('<img');
  const card = await page.$eval('#model-info a', (a) => a.href);
  expect(card).toContain('model-card.html');
  // The card page asks for the model's optional files too (quality.json may not be measured yet):
  // a 404 is allowed for those only.
  const missing = [];
  page.on('response', (r) => { if (r.status() >= 400) missing.push(`${r.status()} ${new URL(r.url()).pathname}`); });
  await page.goto(card);
  await page.waitForSelector('#card[data-ready="1"]');
  expect(await page.$eval('#card h1', (e) => e.textContent.length)).toBeGreaterThan(0);
  await page.click('#back');
  await settled(page);
  expect(await page.$eval('input[name=preset][value=llama]', (r) => r.checked)).toBe(true);
  for (const m of missing) expect(m).toMatch(/^404 \/models\/[^/]+\/(quality|heads|generation_config)\.json$/);
  expect(errors.filter((e) => !(missing.length && /status of 404/.test(e)))).toEqual([]);
});

test('<attention-view model="llama"> draws its K/V groups and the rotation step', async () => {
  const file = 'llama-widget.html';
  fs.writeFileSync(path.join(site.dir, file), '<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">\n'
    + '<script type="module" src="attention-view.js"></script>\n<body style="margin: 8px">\n'
    + `<attention-view id="m" model="llama" sentence="${SENTENCE}" view="model"></attention-view>\n`
    + `<attention-view id="h" model="llama" sentence="${SENTENCE}" layer="1" head="5"></attention-view>\n`
    + `<attention-view id="s" model="llama" sentence="${SENTENCE}" view="steps" head="2"></attention-view>\n</body>\n`);
  const { page, errors } = await open(site.browser.context, `${site.base}/${file}`);
  await page.setViewportSize(PHONE);
  await page.waitForFunction(() => ['m', 'h', 's'].every((id) => document.getElementById(id).dataset.ready === '1'), null, { timeout: 90000 });
  const inShadow = (id, selector, fn) => page.evaluate(([id, selector, fn]) =>
    new Function('els', `return (${fn})(els)`)([...document.getElementById(id).shadowRoot.querySelectorAll(selector)]), [id, selector, fn.toString()]);
  expect(await inShadow('m', '.kv-group', (g) => g.length)).toBe(lm.config.num_key_value_heads);
  expect(await inShadow('m', '.title', (t) => t[0].textContent)).toBe(`${lm.config.num_hidden_layers} layers × ${lm.config.num_attention_heads} heads in ${lm.config.num_key_value_heads} K/V groups: click one to open it`);
  expect(await inShadow('h', '.title', (t) => t[0].textContent)).toBe(`Layer 1 · head 5 (K/V ${lm.kvHeadOf(4) + 1})`);
  const rows = await inShadow('h', '.attn-row', (r) => r.map((e) => e.getAttribute('data-weights').split(',').map(Number)));
  const ids = lm.tokenizer.encode(SENTENCE);
  const n = ids.length, H = lm.config.num_attention_heads, ref = reference(ids, 0);
  expect(rows.length).toBe(n);
  rows.forEach((r, i) => expectClose(r, Array.from(ref.attention.subarray(((0 * H + 4) * n + i) * n, ((0 * H + 4) * n + i + 1) * n)), 1e-5, `widget row ${i}`));
  expect(await inShadow('s', '[data-step-id="rotary"]', (s) => s.length)).toBe(1);
  expect(await inShadow('s', '.rotary-detail', (s) => s.length)).toBe(1);
  expect(await inShadow('s', '.status', (s) => s[0].textContent)).toBe('');
  await page.screenshot({ path: path.join(root, 'tests/browser/screenshots/llama-widget-390.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForFunction(() => ['m', 'h', 's'].every((id) => document.getElementById(id).dataset.ready === '1'));
  await page.screenshot({ path: path.join(root, 'tests/browser/screenshots/llama-widget-1280.png') });
  expect(errors).toEqual([]);
});

// The head labels measured on held-out text (tools/heads/label_heads.mjs writes the folder's
// heads.json), sinks included: each in the model view and the head picker, with its score.
const headsFile = path.join(llama.dir, 'heads.json');
const heads = fs.existsSync(headsFile) ? JSON.parse(fs.readFileSync(headsFile, 'utf8')).heads : null;
if (!heads) console.warn(`demo_llama: ${path.relative(root, headsFile)} is not there: the head-label test is skipped`);
(heads ? test : test.skip)('the measured head labels, sinks included, are shown with their scores', async () => {
  const { page, errors } = await demo('?model=llama&view=model&layer=1&head=1', { width: 1280, height: 800 });
  const text = (h) => (Number.isFinite(h.score) ? `${h.label} · ${h.score.toFixed(2)}` : h.label);
  const thumbs = await page.$$eval('.model-view .thumb', (g) => g.map((e) => [Number(e.dataset.layer), Number(e.dataset.head), e.getAttribute('aria-label')]));
  const labelled = heads.filter((h) => typeof h.label === 'string');
  expect(labelled.length).toBeGreaterThan(0);
  for (const h of labelled) {
    const thumb = thumbs.find(([l, hd]) => l === h.layer && hd === h.head);
    expect(thumb[2]).toContain(text(h));
  }
  // The picker of a layer with a sink head names it (the sinks the page labels are the measured ones).
  const sink = labelled.find((h) => h.label === 'sink');
  if (sink) {
    await page.selectOption('#layer', String(sink.layer));
    await settled(page);
    const option = await page.$eval(`#head option[value="${sink.head}"]`, (o) => o.textContent);
    expect(option).toBe(`${sink.head + 1} (K/V ${lm.kvHeadOf(sink.head) + 1}) · ${text(sink)}`);
  }
  expect(errors).toEqual([]);
});

test('a Llama-family model from the Hub takes the preset\'s place and draws the same attention', async () => {
  const { startHubServer, readFolder } = require('../js/hub_server.cjs');
  const hub = await startHubServer({ 'someone/small-llama': { files: readFolder(llama.dir, (f) => !/\.(json|safetensors)$/.test(f)) } });
  try {
    const shipped = await demo(`?model=llama&s=${encodeURIComponent(SENTENCE)}`);
    const expected = await rowsOf(shipped.page);
    await shipped.page.close();
    const { page, errors } = await demo(`?hub=${encodeURIComponent(hub.url)}&s=${encodeURIComponent(SENTENCE)}`);
    await page.fill('#hub-id', 'someone/small-llama');
    await page.click('#hub-load');
    await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('hub-status').dataset.state), null, { timeout: 60000 });
    expect(await page.$eval('#hub-status', (s) => s.textContent)).toContain('Loaded someone/small-llama (llama, weights as stored): shown as the Llama-style decoder model.');
    await settled(page);
    expect(await page.$eval('input[name=preset][value=llama]', (r) => r.checked)).toBe(true);
    expect(await page.$eval('#model-info', (d) => d.textContent)).toContain('someone/small-llama');
    const rows = await rowsOf(page);
    expect(rows.length).toBe(expected.length);
    rows.forEach((r, i) => expectClose(r, expected[i], 1e-6, `Hub model row ${i}`));
    expect(errors).toEqual([]);
  } finally {
    await hub.close();
  }
});

test('a Mistral from the Hub: its sliding window is masked in the heatmap and the step view', async () => {
  const { startHubServer } = require('../js/hub_server.cjs');
  const { checkpoint, safetensors } = require('../js/llama_checkpoint.cjs');
  const { byteLevelTokenizer } = require('./llama_demo_model.cjs');
  const tokenizer = byteLevelTokenizer(path.join(root, 'web/models/brown-gpt2'));
  const eot = tokenizer.added_tokens[0].id, W = 4;
  const config = { model_type: 'mistral', vocab_size: eot + 1, max_position_embeddings: 64, hidden_size: 32, intermediate_size: 48,
    num_hidden_layers: 1, num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, tie_word_embeddings: true,
    sliding_window: W, bos_token_id: eot, eos_token_id: eot };
  const files = new Map([['config.json', Buffer.from(JSON.stringify(config))], ['tokenizer.json', Buffer.from(JSON.stringify(tokenizer))],
    ['model.safetensors', Buffer.from(safetensors(checkpoint(config, 7)))]]);
  const hub = await startHubServer({ 'someone/tiny-mistral': { files } });
  try {
    const { page, errors } = await demo(`?hub=${encodeURIComponent(hub.url)}&view=heatmap&s=${encodeURIComponent(SENTENCE)}`);
    await page.fill('#hub-id', 'someone/tiny-mistral');
    await page.click('#hub-load');
    await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('hub-status').dataset.state), null, { timeout: 60000 });
    expect(await page.$eval('#hub-status', (s) => s.dataset.state)).toBe('done');
    await settled(page);
    const cells = await page.$$eval('#view-graphic .attn-row', (rows) => rows.map((r) => ({
      weights: r.dataset.weights.split(',').map(Number), fills: [...r.querySelectorAll('rect')].map((c) => c.getAttribute('fill')) })));
    expect(cells.length).toBeGreaterThan(W + 2);
    cells.forEach(({ weights, fills }, i) => weights.forEach((w, j) => {
      const masked = j > i || i - j >= W;
      expect([i, j, masked ? w : 'seen', fills[j] === '#d9d9d9']).toEqual([i, j, masked ? 0 : 'seen', masked]);
    }));
    await page.click('#tab-steps');
    await settled(page);
    expect(await page.$eval('#steps-body [data-step-id="maskedScores"] h3', (h) => h.textContent)).toContain(`sliding window of ${W}`);
    expect(errors).toEqual([]);
  } finally {
    await hub.close();
  }
});

test('Qwen3, Gemma 3, SmolLM3 and Phi-4-mini from the Hub: the step view shows what each adds', async () => {
  // Tiny random checkpoints of each model_type (llama_checkpoint.cjs) with brown-gpt2's tokenizer.
  const { startHubServer } = require('../js/hub_server.cjs');
  const { checkpoint, safetensors } = require('../js/llama_checkpoint.cjs');
  const { byteLevelTokenizer } = require('./llama_demo_model.cjs');
  const tokenizer = byteLevelTokenizer(path.join(root, 'web/models/brown-gpt2'));
  const eot = tokenizer.added_tokens[0].id;
  const base = { vocab_size: eot + 1, max_position_embeddings: 64, hidden_size: 32, intermediate_size: 48, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, tie_word_embeddings: true, bos_token_id: eot, eos_token_id: eot };
  const configs = {
    qwen3: { ...base, model_type: 'qwen3', head_dim: 8 },
    gemma3: { ...base, model_type: 'gemma3_text', head_dim: 8, sliding_window: 3, layer_types: ['sliding_attention', 'full_attention'],
      query_pre_attn_scalar: 16, rope_local_base_freq: 10000, rope_theta: 1e6 },
    smollm3: { ...base, model_type: 'smollm3', no_rope_layers: [1, 0] },
    phi3: { ...base, model_type: 'phi3', partial_rotary_factor: 0.75 },
  };
  const repos = Object.fromEntries(Object.entries(configs).map(([name, config]) => [`someone/tiny-${name}`, { files: new Map([
    ['config.json', Buffer.from(JSON.stringify(config))], ['tokenizer.json', Buffer.from(JSON.stringify(tokenizer))],
    ['model.safetensors', Buffer.from(safetensors(checkpoint(config, 11)))]]) }]));
  const hub = await startHubServer(repos);
  const models = {};
  try {
    const { page, errors } = await demo(`?hub=${encodeURIComponent(hub.url)}&view=steps&s=${encodeURIComponent(SENTENCE)}`);
    /** Picks a layer (from 1) and returns the step titles. */
    const pick = async (layer) => {
      await page.selectOption('#layer', { value: String(layer - 1) });  // (a bare '1' would match the label of layer 1)
      await settled(page);
      return page.$$eval('#steps-body .step h3', (t) => t.map((e) => e.textContent));
    };
    /** Loads a repository, then picks a layer. */
    const open = async (name, layer) => {
      await page.fill('#hub-id', `someone/tiny-${name}`);
      await page.click('#hub-load');
      await page.waitForFunction((id) => {
        const st = document.getElementById('hub-status');
        return st.dataset.state === 'error' || (st.dataset.state === 'done' && st.textContent.includes(`Loaded ${id}`));
      }, `someone/tiny-${name}`, { timeout: 60000 });
      expect(await page.$eval('#hub-status', (st) => st.dataset.state)).toBe('done');
      await settled(page);
      return pick(layer);
    };
    const reference = async (name, layer) => {
      models[name] ??= await attn.loadModel({ config: configs[name], weights: repos[`someone/tiny-${name}`].files.get('model.safetensors'), tokenizer: { tokenizer } });
      const ids = models[name].tokenizer.encode(SENTENCE);
      return { ids, n: ids.length, trace: models[name].run(ids, { attention: true, traceLayer: layer - 1 }).trace };
    };

    // Qwen3: a step normalizing each head's q and k, between the projections and the rotation,
    // with the library's rows before and after the norm.
    let titles = await open('qwen3', 1);
    expect(titles[2]).toMatch(/Normalize each head’s query and key \(q_norm, k_norm\)/);
    expect(titles[3]).toMatch(/Rotate each query and key by its position/);
    const queryRow = () => page.$eval('#steps-body [data-step="q"] [data-row]', (e) => Number(e.dataset.row));
    let qi = await queryRow();
    let { n, trace } = await reference('qwen3', 1);
    expectClose(await stepRow(page, 'qPreNorm', qi), rowOf(trace.qBeforeNorm, 0, qi, n, 8), 1e-5, 'q before its norm');
    expectClose(await stepRow(page, 'qNormed', qi), rowOf(trace.qBeforeRotary, 0, qi, n, 8), 1e-5, 'q after its norm');
    expectClose(await stepRow(page, 'q', qi), rowOf(trace.qBeforeNorm, 0, qi, n, 8), 1e-5, 'step 2 Q as projected');
    const stepBox = (id) => page.$eval(`#steps-body [data-step-id="${id}"]`, (e) => {
      const r = e.getBoundingClientRect();
      return { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: Math.min(r.height, 900) };
    });
    await shot(page, 'llama-qwen3-norm-step-1280', { clip: await stepBox('qkNorm') });

    // Gemma 3: layer 1 is windowed (its own rope base; the heatmap's masked cells and the mask
    // step say so), layer 2 global; its scale is query_pre_attn_scalar's.
    titles = await open('gemma3', 1);
    expect(titles.some((t) => /sliding window of 3/.test(t))).toBe(true);
    expect(titles.some((t) => /√query_pre_attn_scalar = √16 = 4\.0000/.test(t))).toBe(true);
    expect(await page.$eval('#steps-body [data-step-id="rotary"]', (st) => st.textContent)).toContain('θ = 10000, this windowed layer’s own base');
    titles = await pick(2);
    expect(titles.some((t) => /sliding window/.test(t))).toBe(false);
    expect(await page.$eval('#steps-body [data-step-id="rotary"]', (st) => st.textContent)).toContain('θ = 1000000');
    ({ n, trace } = await reference('gemma3', 2));
    qi = await queryRow();
    expectClose(await stepRow(page, 'qNormed', qi), rowOf(trace.qBeforeRotary, 0, qi, n, 8), 1e-5, 'gemma q after its norm');

    // SmolLM3: layer 2 does not rotate (no_rope_layers [1, 0]): its step says so in place of the rotation.
    titles = await open('smollm3', 2);
    expect(titles[2]).toBe('3 No rotation in this layer');
    ({ n, trace } = await reference('smollm3', 2));
    qi = await queryRow();
    expectClose(await stepRow(page, 'q', qi), rowOf(trace.q, 0, qi, n, 8), 1e-5, 'smollm3 Q (not rotated)');
    titles = await pick(1);
    expect(titles[2]).toMatch(/Rotate each query and key/);

    // Phi-4-mini's layout: Q, K and V as the columns of one qkv_proj; only 6 of each head's 8 numbers turn.
    await open('phi3', 1);
    const qkv = await page.$eval('#steps-body [data-step-id="qkv"]', (st) => st.textContent);
    expect(qkv).toContain('of qkv_proj (64 columns: Q’s 32, then K’s 16, then V’s 16');
    expect(await page.$eval('#steps-body [data-step-id="rotary"]', (st) => st.textContent)).toContain('Only the first 6 of a head’s 8 numbers turn');
    await shot(page, 'llama-phi3-steps-1280', { clip: await stepBox('qkv') });
    expect(errors).toEqual([]);
    await page.close();
  } finally {
    for (const m of Object.values(models)) m.dispose();
    await hub.close();
  }
}, 240000);
