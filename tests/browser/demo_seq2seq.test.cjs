// The demo's encoder-decoder (spelling to sound) and GPT-2's "Continue the text" in headless
// Chromium: pronunciations in ARPAbet and IPA, the trained cross-attention (rows: the phonemes
// written, columns: the letters) with rows summing to 1, the decoder's masked and the encoder's
// bidirectional self-attention, the cross-attention step view, the <attention-view model="bart">
// widget, and text generation streaming tokens into the page (the widget's view="generate": generate_view.test.cjs)
// while the page stays responsive (the longest main-thread task, against a calibration task, is printed). Runs on
// web/models/g2p-bart/ (DEMO_BART=<folder> swaps it). Screenshots: tests/browser/screenshots/seq2seq-*.png.
const fs = require('node:fs');
const path = require('node:path');
const { demoSite, rowsOf, sum, referenceGpt2, root, shots } = require('./demo_site.cjs');
const { responsiveness, describeResponsiveness } = require('./long_tasks.cjs');
const { continueText } = require('./demo_phases.cjs');

const bartDir = path.resolve(root, process.env.DEMO_BART ?? 'web/models/g2p-bart');
const haveBart = fs.existsSync(path.join(bartDir, 'config.json'));
if (!haveBart) console.warn(`SKIPPED: the encoder-decoder demo tests need ${path.relative(root, bartDir)}/ (tools/train/g2p/run_all.sh trains it).`);

const site = demoSite('web-test-seq2seq');
const { demo, settled, shot } = site;
const tokensOf = (page) => page.$$eval('#tokens .token', (b) => b.map((e) => e.dataset.token));

(haveBart ? describe : describe.skip)('the encoder-decoder (spelling to sound) in the demo', () => {
  test('each word is pronounced, and the cross-attention maps phonemes to letters', async () => {
    const { page, errors } = await demo('?model=bart');
    const prons = await page.$$eval('#pron .pron', (bs) => bs.map((b) => ({
      word: b.querySelector('.pron-word').textContent, arpabet: b.querySelector('.pron-arpabet').textContent,
      ipa: b.querySelector('.pron-ipa')?.textContent ?? '',
    })));
    expect(prons.map((p) => p.word)).toEqual(['phone', 'knight', 'photograph']);
    for (const p of prons) {
      expect(p.arpabet).toMatch(/^[A-Z]{1,2}( [A-Z]{1,2})*$/);
      expect(p.ipa).toMatch(/^\/.+\/$/);
    }
    // Cross-attention: one row per phoneme written (and the end), one column per letter (+ <s>, </s>).
    const outputs = await tokensOf(page);
    expect(outputs.length).toBe(prons[0].arpabet.split(' ').length + 1);
    await page.selectOption('#head', 'all');
    await settled(page);
    const nHeads = await page.$$eval('#head option', (o) => o.filter((x) => x.value !== 'all').length);
    let rows = await rowsOf(page);
    expect(rows.length).toBe(nHeads * outputs.length);
    rows.forEach((r) => {
      expect(r.length).toBe('phone'.length + 2);
      expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5);
    });
    expect(await page.$eval('#causal', (c) => c.checked)).toBe(false);
    await shot(page, 'seq2seq-cross-heads');

    await page.click('#tab-heatmap');
    await settled(page);
    rows = await rowsOf(page);
    rows.forEach((r) => expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5));
    await shot(page, 'seq2seq-cross-heatmap');

    // The step view walks one cross-attention head: Q from the decoder, K and V from the encoder.
    await page.click('#tab-steps');
    await settled(page);
    expect(await page.$eval('#cross-note', (e) => !e.hidden && e.textContent.includes('Trained cross-attention'))).toBe(true);
    expect(await page.$$eval('#steps-body .step', (s) => s.length)).toBeGreaterThan(4);
    await shot(page, 'seq2seq-cross-steps');

    // Decoder self-attention is masked (no weight above the diagonal); the encoder's is not.
    await page.click('#tab-heads');
    await page.selectOption('#attend', 'decoder');
    await settled(page);
    expect(await page.$eval('#causal', (c) => c.checked)).toBe(true);
    rows = await rowsOf(page);
    expect(rows[0].length).toBeGreaterThan(1);
    rows.forEach((r, k) => expect(sum(r.slice((k % r.length) + 1))).toBe(0));
    await page.selectOption('#attend', 'encoder');
    await settled(page);
    expect(await tokensOf(page)).toEqual(['<s>', 'p', 'h', 'o', 'n', 'e', '</s>']);
    rows = await rowsOf(page);
    expect(rows.reduce((a, r, k) => a + sum(r.slice((k % r.length) + 1)), 0)).toBeGreaterThan(0.05);

    // Another word: its attention.
    await page.click('#pron .pron[data-index="1"]');
    await settled(page);
    expect(await tokensOf(page)).toEqual(['<s>', 'k', 'n', 'i', 'g', 'h', 't', '</s>']);
    expect(new URL(await page.evaluate(() => location.href)).searchParams.get('word')).toBe('2');
    expect(errors).toEqual([]);
    await page.close();
  });

  test('the <attention-view> widget takes model="bart"', async () => {
    const { page, errors } = await demo('', { page: 'embed-example.html', width: 900 });
    await page.evaluate(() => {
      const box = document.createElement('section');
      box.id = 'bart-widgets';
      document.body.append(box);
      for (const [id, attrs] of [['s-heat', { model: 'bart', sentence: 'phone', view: 'heatmap', head: '2' }],
        ['s-pron', { model: 'bart', sentence: 'cat dog', view: 'pronounce' }]]) {
        const v = document.createElement('attention-view');
        v.id = id;
        for (const [k, val] of Object.entries(attrs)) v.setAttribute(k, val);
        box.append(v);
      }
    });
    await page.waitForFunction(() => ['s-heat', 's-pron'].every((id) => document.getElementById(id).dataset.ready === '1'), null, { timeout: 90000 });
    const rows = await page.$eval('#s-heat', (v) => [...v.shadowRoot.querySelectorAll('.attn-row')].map((r) => r.dataset.weights.split(',').map(Number)));
    rows.forEach((r) => {
      expect(r.length).toBe(7);
      expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5);
    });
    expect(await page.$eval('#s-pron', (v) => v.shadowRoot.querySelectorAll('.pron').length)).toBe(2);
    await page.locator('#bart-widgets').screenshot({ path: path.join(shots, 'seq2seq-widgets.png') });
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('GPT-2 continues the text in the demo', () => {
  test('tokens stream into the sentence one by one, and the page stays responsive', async () => {
    // A sentence the model goes on with (after a whole sentence it may end the text at once). What
    // it writes: the same seeded generation in Node (the demo's settings: 30 tokens, temperature
    // 0.8, top-k 40, the page's first seed 1, <|endoftext|> first).
    const prompt = 'The jury said that the city';
    const lm = await referenceGpt2();
    let expected;
    try {
      expected = await lm.generate([lm.bosTokenId, ...lm.tokenizer.encode(prompt)], { maxNewTokens: 30, temperature: 0.8, topK: 40, seed: 1 });
    } finally {
      lm.dispose();
    }
    expect(expected.tokens.length).toBeGreaterThan(3);
    const { page, errors } = await demo(`?s=${encodeURIComponent(prompt)}`);
    await page.evaluate(() => {
      window.__lengths = [];
      new MutationObserver(() => window.__lengths.push(document.querySelectorAll('#tokens .token').length))
        .observe(document.getElementById('tokens'), { childList: true });
    });
    const before = await page.$eval('#sentence', (e) => e.value);
    const streaming = await responsiveness(page, () => continueText(page));
    const after = await page.$eval('#sentence', (e) => e.value);
    expect(before).toBe(prompt);
    expect(after).toBe(prompt + expected.text);
    // Drawn as it grew: several intermediate lengths, each the newest token as the query.
    const lengths = await page.evaluate(() => [...new Set(window.__lengths)]);
    expect(lengths.length).toBeGreaterThan(3);
    const tokens = await tokensOf(page);
    expect(await page.$eval('#query', (q) => Number(q.value))).toBe(tokens.length - 1);
    // Responsiveness: the bound, relative to a calibration task in the same page (long_tasks.cjs),
    // catches a regression to redrawing everything per token (hundreds of ms) on a busy machine
    // too; the bound in ms is checked by `npm run check:perf` (responsiveness.perf.cjs).
    console.log(describeResponsiveness(`while ${lengths.length} token states streamed`, streaming));
    expect(streaming.longest).toBeLessThanOrEqual(streaming.bound);
    await shot(page, 'seq2seq-gpt2-continued');
    expect(errors).toEqual([]);
    await page.close();
  });
});
