// What the page says it shows (issue 24): a "what you are looking at" box per model above the
// picture, with the measured quality of web/models/<model>/quality.json and a link to the card; the
// card page opening with that summary and its file tables last; on a phone the picture first (the
// fill-in-the-blank and pronunciation inputs above it, the model choice after it); the pieces of a
// word grouped in the token strip and byte chips explained; on a laptop (issue 37) the picture
// starting on the first screen; at either size no control over another. At 1280x800 and 390x844.
// Screenshots: tests/browser/screenshots/orientation-<model>-<width>.png, first-screen-<model>-<width>.png
// (the first screen only), card-<model>.png, tokens-<model>.png.
const fs = require('node:fs');
const path = require('node:path');
const { demoSite, root, shots } = require('./demo_site.cjs');

const site = demoSite('web-test-orientation');
const { demo, shot } = site;
const SIZES = [[1280, 800], [390, 844]];
const MODELS = [['gpt2', 'brown-gpt2'], ['bert', 'brown-bert'], ['bart', 'g2p-bart']];
// The Llama-style decoder's box too (its quality.json measured as brown-gpt2's).
const BOXES = [...MODELS, ['llama', 'brown-llama']];
const qualityOf = (folder) => JSON.parse(fs.readFileSync(path.join(root, 'web/models', folder, 'quality.json'), 'utf8'));

/** The figures the box must print for a model, formatted as a reader sees them. */
function figures(q) {
  const pct = (x) => `${(x * 100).toFixed(1)} %`;
  if (q.measure === 'perplexity per word') return [Math.round(q.value).toLocaleString('en-US'), Math.round(q.baseline.value).toLocaleString('en-US')];
  if (q.model_type === 'bert') return [pct(q.value), pct(q.baseline.value)];
  return [pct(1 - q.value), pct(q.value), pct(q.phoneme_error_rate)];
}

const top = (page, selector) => page.$eval(selector, (e) => e.getBoundingClientRect().top + window.scrollY);

// The parts of the controls and the view's head, in the order a reader meets them on a laptop; and
// the items of the rows that wrap (the model choice, the pickers).
const BLOCKS = ['#orientation', '#model-choice', '#hub-panel > summary', '.sentence-head', '#sentence', '#pair-row',
  '.tokens-head', '#tokens', '.pickers', '.tabs-row', '#view-help', '#label-glossary', '#view-graphic svg'];
const ROWS = ['#model-choice > label', '.pickers > *', '[role=tablist] > *', '.export > *'];

/** Pairs of shown boxes that overlap (by more than a pixel): among BLOCKS, and among each row's items. */
function overlapsOn(page) {
  return page.evaluate(([blocks, rows]) => {
    const shown = (e) => e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
    const box = (e) => ({ e, r: e.getBoundingClientRect() });
    const name = (e) => e.id || e.className || e.tagName;
    const clash = (list) => list.flatMap((a, i) => list.slice(i + 1).filter((b) =>
      Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left) > 1 && Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top) > 1)
      .map((b) => `${name(a.e)} / ${name(b.e)}`));
    const found = clash(blocks.map((s) => document.querySelector(s)).filter(shown).map(box));
    for (const s of rows) found.push(...clash([...document.querySelectorAll(s)].filter(shown).map(box)));
    return found;
  }, [BLOCKS, ROWS]);
}

describe.each(SIZES)('at %ix%i', (width, height) => {
  test.each(BOXES)('%s: the box says what the model is and how good, above the picture, and links the card', async (model, folder) => {
    const q = qualityOf(folder);
    const { page, errors } = await demo(model === 'gpt2' ? '' : `?model=${model}`, { width, height });
    const box = await page.$eval('#orientation', (e) => ({ text: e.textContent, hidden: e.hidden, card: e.querySelector('a[href*="model-card.html"]')?.href ?? null }));
    expect(box.hidden).toBe(false);
    expect(box.text).toContain(folder);
    if (model === 'llama') expect(box.text).toContain('a Llama-style decoder');
    expect(box.text).toContain(`${(q.parameters / 1e6).toFixed(1)} million weights`);
    for (const f of figures(q)) expect(box.text).toContain(f);
    expect(await top(page, '#orientation')).toBeLessThan(await top(page, '#view-graphic svg'));
    // On a laptop's first screen: the header, the box and the controls leave room for the picture
    // (it starts at least 100 px above the fold); on either screen no control covers another.
    if (width === 1280) expect(await top(page, '#view-graphic svg')).toBeLessThan(height - 100);
    expect(await overlapsOn(page)).toEqual([]);
    // The page does not scroll sideways, and the box fits its width.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    expect(await page.$eval('#orientation', (e) => e.scrollWidth <= e.clientWidth)).toBe(true);
    // The label glossary: closed, one line.
    if (model !== 'bart') {
      const glossary = await page.$eval('#label-glossary', (d) => ({ open: d.open, h: d.getBoundingClientRect().height, line: parseFloat(getComputedStyle(d).lineHeight) }));
      expect(glossary.open).toBe(false);
      expect(glossary.h).toBeLessThan(glossary.line * 1.6);
    }
    await shot(page, `orientation-${folder}-${width}`);
    await shot(page, `first-screen-${folder}-${width}`, { fullPage: false });

    // The card page opens with the same summary under its title; the file tables come last.
    await page.goto(box.card);
    await page.waitForSelector('#card[data-ready="1"]');
    const card = await page.evaluate(() => ({
      afterTitle: document.querySelector('#card h1')?.nextElementSibling?.id ?? null,
      summary: document.getElementById('card-summary')?.textContent ?? '',
      headings: [...document.querySelectorAll('#card h2')].map((h) => h.textContent),
      back: document.getElementById('back').href,
    }));
    expect(card.afterTitle).toBe('card-summary');
    for (const f of figures(q)) expect(card.summary).toContain(f);
    expect(card.headings[card.headings.length - 1]).toBe('Files');
    expect(card.back).toContain('index.html');
    if (width === 1280) await shot(page, `card-${folder}`, { fullPage: false });
    expect(errors).toEqual([]);
    await page.close();
  });
});

test('the tutorial preset says it is hand-set numbers with nothing to measure, its picture on the first screen', async () => {
  const { page, errors } = await demo('?preset=seed', { width: 1280, height: 800 });
  expect(await page.$eval('#orientation', (e) => e.textContent)).toMatch(/Nothing was trained/);
  expect(await top(page, '#view-graphic svg')).toBeLessThan(700);
  expect(await overlapsOn(page)).toEqual([]);
  await shot(page, 'first-screen-seed-1280', { fullPage: false });
  expect(errors).toEqual([]);
  await page.close();
});

// A phone: the picture before the tokens, pickers and model choice; the inputs that change it
// (fill in the blank, pronunciations) above it; GPT-2's picture starts on the first screen.
test.each(MODELS)('at 390x844, %s: the picture comes first, the input beside what it changes', async (model) => {
  const { page, errors } = await demo(model === 'gpt2' ? '' : `?model=${model}`, { width: 390, height: 844 });
  const picture = await top(page, '#view-graphic svg');
  expect(picture).toBeLessThan(await top(page, '#tokens'));
  expect(picture).toBeLessThan(await top(page, '#model-choice'));
  expect(await top(page, '#sentence')).toBeLessThan(picture);
  if (model === 'gpt2') expect(picture).toBeLessThan(844 - 100); // (its first 100 px on the first screen)
  if (model === 'bert') expect(await top(page, '#fill-panel')).toBeLessThan(picture);
  if (model === 'bart') expect(await top(page, '#pron-panel')).toBeLessThan(picture);
  // "Other models" leads to the model choice.
  await page.click('#orientation .to-models');
  expect(await page.evaluate(() => location.hash)).toBe('#model-choice');
  expect(errors).toEqual([]);
  await page.close();
});

// Word pieces share an underline; a byte chip says which character it spells.
const SENTENCE = 'Le café était très élégant. The fishermen didn\'t go.';
const GROUPS = [
  ['gpt2', [['␣fisher', 'men'], ['␣didn', '\'t']], ['.', '␣go']],
  ['bert', [['fish', '##erm', '##en'], ['didn', '\'', 't'], ['ca', '##fe']], ['.', 'go']],
];

/** Each word of several pieces marked first (middle) last, the tokens `alone` in no word. */
function expectGrouped(chips, words, alone) {
  const labels = chips.map((c) => c.text);
  for (const word of words) {
    const at = labels.findIndex((_, i) => word.every((w, k) => labels[i + k] === w));
    expect(at).toBeGreaterThanOrEqual(0);
    const pieces = word.map((_, k) => chips[at + k].piece);
    expect(pieces).toEqual(['first', ...Array(word.length - 2).fill('middle'), 'last']);
  }
  for (const a of alone) expect(chips.filter((c) => c.text === a).every((c) => c.piece === '')).toBe(true);
}
const chipsOf = (bs) => bs.map((b) => ({ text: b.textContent, piece: b.dataset.piece ?? '', title: b.title, selected: b.getAttribute('aria-selected') }));

test.each(GROUPS)('%s: the pieces of a word are grouped in the strip, nothing else is', async (model, words, alone) => {
  const { page, errors } = await demo(`?model=${model}&s=${encodeURIComponent(SENTENCE)}`);
  const chips = await page.$$eval('#tokens .token', chipsOf);
  expectGrouped(chips, words, alone);
  const note = await page.$eval('#bytes-note', (e) => (e.hidden ? '' : e.textContent));
  if (model === 'gpt2') {
    // GPT-2's vocabulary has no é or è: their UTF-8 bytes, explained where they appear.
    expect(note).toContain('<0xC3><0xA9>');
    expect(note).toMatch(/UTF-8 bytes of “é”, “è”; the vocabulary has no token for them/);
    const byte = chips.find((c) => c.text === '<0xA9>');
    expect(byte.title).toContain('byte 2 of 2 of “é” in UTF-8');
  } else {
    expect(note).toBe('');
  }
  await shot(page, `tokens-${model}`, { fullPage: false, clip: await page.$eval('.controls', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y + window.scrollY, width: r.width, height: r.height }; }) });
  expect(errors).toEqual([]);
  await page.close();
});

// The widget has both (issue 37), by attribute: about="" the box (with its card link), tokens="" the
// strip with the demo's grouping and byte note, its chips choosing the query (the step view's picker
// follows). Neither without the attribute. At 1280x800 and 390x844; nothing overlaps, nothing is
// wider than the widget. Screenshots: widget-about-tokens-bert-1280.png, widget-about-tokens-390.png.
test('<attention-view about tokens>: the box and the grouped token strip, as the demo shows them', async () => {
  const file = 'about-tokens.html', sentence = SENTENCE.replace(/'/g, '&#39;');
  fs.writeFileSync(path.join(site.dir, file), '<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">\n'
    + '<script type="module" src="attention-view.js"></script>\n<body style="margin: 8px">\n'
    + `<attention-view id="gpt2" about tokens view="steps" sentence="${sentence}"></attention-view>\n`
    + `<attention-view id="bert" model="bert" about tokens view="heatmap" sentence="${sentence}"></attention-view>\n`
    + '<attention-view id="seed" preset="seed" about tokens></attention-view>\n'
    + '<attention-view id="plain" sentence="The fishermen didn&#39;t go."></attention-view>\n');
  const { page, errors } = await demo('', { page: file, width: 1280, height: 800 });
  const ready = () => page.waitForFunction(() => [...document.querySelectorAll('attention-view')].every((v) => v.dataset.ready === '1'), null, { timeout: 90000 });
  await ready();
  const inside = (id, fn, arg) => page.evaluate(([id, fn, arg]) => new Function('root', 'arg', `return (${fn})(root, arg)`)(document.getElementById(id).shadowRoot, arg), [id, fn.toString(), arg]);
  const box = (id) => inside(id, (root) => { const b = root.querySelector('.orientation'); return b.hidden ? null : { text: b.textContent, href: b.querySelector('a')?.href ?? null }; });
  for (const [id, folder] of [['gpt2', 'brown-gpt2'], ['bert', 'brown-bert']]) {
    const about = await box(id);
    expect(about.text).toContain(`${folder}: a`);
    for (const f of figures(qualityOf(folder))) expect(about.text).toContain(f);
    expect(about.href).toContain('model-card.html?card=');
    expect(decodeURIComponent(about.href)).toContain(`/models/${folder}/MODEL_CARD.md`);
  }
  expect((await box('seed')).text).toMatch(/Nothing was trained/);
  expect(await box('plain')).toBe(null);
  // Without the attributes the parts take no room (not hidden but laid out empty).
  expect(await inside('plain', (root) => ['.orientation', '.tokens', '.bytes-note'].map((s) => root.querySelector(s).getClientRects().length))).toEqual([0, 0, 0]);

  const chips = (id) => inside(id, (root, chipsOf) => new Function(`return ${chipsOf}`)()([...root.querySelectorAll('.tokens .token')]), chipsOf.toString());
  for (const [model, words, alone] of GROUPS) expectGrouped(await chips(model), words, alone);
  expect(await inside('gpt2', (root) => root.querySelector('.bytes-note').textContent)).toMatch(/UTF-8 bytes of “é”, “è”; the vocabulary has no token for them/);
  expect(await inside('bert', (root) => root.querySelector('.bytes-note').hidden)).toBe(true);
  expect((await chips('seed')).map((c) => c.text)).toEqual(['write', 'a', 'poem']);

  // A chip chooses the query: the step view's own picker follows, and the arrow keys move on.
  await page.locator('#gpt2 .tokens .token >> nth=3').click();
  await ready();
  expect(await inside('gpt2', (root) => [root.querySelector('select.steps-query').value, root.querySelectorAll('.token[aria-selected="true"]').length])).toEqual(['3', 1]);
  await page.keyboard.press('ArrowRight');
  await ready();
  expect(await inside('gpt2', (root) => [root.querySelector('select.steps-query').value, root.activeElement?.dataset.index])).toEqual(['4', '4']);

  for (const [width, height] of [[1280, 800], [390, 844]]) {
    await page.setViewportSize({ width, height });
    await ready();
    for (const id of ['gpt2', 'bert', 'seed']) {
      const layout = await inside(id, (root) => {
        const r = (e) => e.getBoundingClientRect(), host = r(root.host);
        const parts = ['.orientation', '.tokens', '.bytes-note', '.body'].map((s) => root.querySelector(s)).filter((e) => !e.hidden).map(r);
        return { stacked: parts.every((p, i) => i === 0 || p.top >= parts[i - 1].bottom - 1),
          inside: parts.slice(0, -1).every((p) => p.left >= host.left && p.right <= host.right + 1),
          fits: root.querySelector('.orientation').scrollWidth <= root.querySelector('.orientation').clientWidth };
      });
      expect([id, width, layout]).toEqual([id, width, { stacked: true, inside: true, fits: true }]);
    }
    if (width === 1280) await page.locator('#bert').screenshot({ path: path.join(shots, 'widget-about-tokens-bert-1280.png') });
    else await shot(page, 'widget-about-tokens-390', { fullPage: false });
  }
  expect(errors).toEqual([]);
  await page.close();
});
