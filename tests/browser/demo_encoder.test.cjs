// The demo's encoder (BERT) in headless Chromium: the "Encoder (BERT)" model choice, fill in the
// blank, sentence pairs, the padding mask in the step view, "Compare sentences", and the
// <attention-view model="bert"> widget. Runs on web/models/brown-bert/ (DEMO_BERT=<folder> swaps it,
// as for the demo) and is skipped, saying so, while that folder does not exist yet. The checks hold
// for any BERT: they test the demo's plumbing and the math, not what a trained model guesses.
// Screenshots: tests/browser/screenshots/encoder-*.png.
const fs = require('node:fs');
const path = require('node:path');
const { demoSite, rowsOf, stepRow, sum, expectClose, root, shots } = require('./demo_site.cjs');

const bertDir = path.resolve(root, process.env.DEMO_BERT ?? 'web/models/brown-bert');
const haveBert = fs.existsSync(path.join(bertDir, 'config.json'));
if (!haveBert) {
  console.warn(`SKIPPED: the encoder demo tests need a BERT in ${path.relative(root, bertDir)}/ (config.json, model.safetensors, vocab.txt), `
    + 'which does not exist yet. Train it (tools/train/bert) or develop with a random one: '
    + 'node scripts/make_dev_bert.mjs /tmp/devbert && DEMO_BERT=/tmp/devbert npx jest --selectProjects browser');
}

(haveBert ? describe : describe.skip)('the encoder (BERT) in the demo', () => {
  const site = demoSite('web-test-encoder');
  const { demo, settled, shot } = site;
  const tokensOf = (page) => page.$$eval('#tokens .token', (b) => b.map((e) => e.dataset.token));
  /** Some weight above the diagonal: a query attends to a later token (impossible under a causal mask). */
  const aboveDiagonal = (rows, n) => rows.reduce((a, r, k) => a + sum(r.slice((k % n) + 1)), 0);

  test('the encoder preset renders: [CLS] … [SEP], rows sum to 1, attention in both directions', async () => {
    // The model choice beside GPT-2.
    const { page, errors } = await demo('');
    expect(await page.$eval('#tab-compare', (t) => t.hidden)).toBe(true);
    await page.check('input[name=preset][value=bert]');
    await settled(page);
    expect(new URL(await page.evaluate(() => location.href)).searchParams.get('model')).toBe('bert');
    expect(await page.$eval('#tab-compare', (t) => t.hidden)).toBe(false);
    expect(await page.$eval('#next-panel', (p) => p.hidden)).toBe(true);
    expect(await page.$eval('#fill-panel', (p) => p.hidden)).toBe(false);
    const tokens = await tokensOf(page);
    expect(tokens[0]).toBe('[CLS]');
    expect(tokens[tokens.length - 1]).toBe('[SEP]');
    // No causal mask for an encoder: the box is off (and not editable).
    expect(await page.$eval('#causal', (c) => [c.checked, c.disabled])).toEqual([false, true]);
    await shot(page, 'encoder-head-view');

    const n = tokens.length;
    const nHeads = await page.$$eval('#head option', (o) => o.filter((x) => x.value !== 'all').length);
    const nLayers = await page.$$eval('#layer option', (o) => o.length);
    await page.selectOption('#head', 'all');
    await settled(page);
    let rows = await rowsOf(page);
    expect(rows.length).toBe(nHeads * n);
    rows.forEach((r) => {
      expect(r.length).toBe(n);
      expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5);
    });
    expect(aboveDiagonal(rows, n)).toBeGreaterThan(0.05 * nHeads);

    // Every layer: its heads together put weight above the diagonal (a single trained head may
    // look only backwards, as a previous-token head does); every heatmap row sums to 1, and no
    // cell is greyed out as masked.
    for (let layer = 0; layer < nLayers; layer++) {
      await page.click('#tab-heads');
      await page.selectOption('#layer', { value: String(layer) });
      await page.selectOption('#head', 'all');
      await settled(page);
      expect(aboveDiagonal(await rowsOf(page), n)).toBeGreaterThan(0.05);
      await page.click('#tab-heatmap');
      await page.selectOption('#head', { value: String(nHeads - 1) });
      await settled(page);
      rows = await rowsOf(page);
      expect(rows.length).toBe(n);
      rows.forEach((r) => expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5));
      expect(await page.$$eval('.heatmap-view .cells rect[fill="#d9d9d9"]', (r) => r.length)).toBe(0);
    }
    await shot(page, 'encoder-heatmap');
    await page.click('#tab-model');
    await settled(page);
    expect(await page.$$eval('.thumb', (t) => t.length)).toBe(nLayers * nHeads);
    await shot(page, 'encoder-model-view');
    // Back to GPT-2: its tokens, its causal mask, its panel.
    await page.check('input[name=preset][value=gpt2]');
    await settled(page);
    expect((await tokensOf(page))[0]).toBe('<|endoftext|>');
    expect(await page.$eval('#causal', (c) => c.checked)).toBe(true);
    expect(await page.$eval('#next-panel', (p) => p.hidden)).toBe(false);
    expect(await page.$eval('#fill-panel', (p) => p.hidden)).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('fill in the blank: click a word to mask it, see the guesses; click the [MASK] to put it back', async () => {
    const sentence = 'The cat sat on the mat.';
    const { page, errors } = await demo(`?model=bert&s=${encodeURIComponent(sentence)}`);
    expect(await page.$$eval('#fill .fill-blank', (b) => b.length)).toBe(0);
    const words = await page.$$eval('#fill .fill-word', (b) => b.map((e) => e.textContent));
    expect(words).toEqual(['The', 'cat', 'sat', 'on', 'the', 'mat', '.']);
    await page.click('#fill .fill-word[data-index="1"]');
    await settled(page);
    expect(await page.$eval('#sentence', (t) => t.value)).toBe('The [MASK] sat on the mat.');
    expect(await tokensOf(page)).toContain('[MASK]');
    const blanks = await page.$$eval('#fill .fill-blank', (bs) => bs.map((b) => ({
      position: Number(b.dataset.position),
      guesses: [...b.querySelectorAll('.prediction')].map((p) => ({ id: Number(p.dataset.tokenId), p: Number(p.dataset.probability) })),
    })));
    expect(blanks.length).toBe(1);
    expect(blanks[0].position).toBe(2); // [CLS] the [MASK]
    const ps = blanks[0].guesses.map((g) => g.p);
    expect(ps.length).toBeGreaterThan(0);
    ps.forEach((p, k) => {
      expect(p).toBeGreaterThan(0);
      expect(p).toBeLessThanOrEqual(1);
      if (k) expect(p).toBeLessThanOrEqual(ps[k - 1]);
    });
    expect(sum(ps)).toBeLessThanOrEqual(1 + 1e-6);
    await shot(page, 'encoder-fill-mask');
    // The [MASK] gives its word back.
    await page.click('#fill .fill-word.fill-mask');
    await settled(page);
    expect(await page.$eval('#sentence', (t) => t.value)).toBe(sentence);
    // Or type [MASK]s: one list of guesses per blank.
    await page.fill('#sentence', 'The [MASK] sat on the [MASK].');
    await settled(page);
    expect(await page.$$eval('#fill .fill-blank', (b) => b.length)).toBe(2);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a sentence pair: token types 0 then 1, shown on the tokens; markup stays text', async () => {
    const { page, errors, dialogs } = await demo('?model=bert&s=The+cat+sat.');
    const second = 'It was <img src=x onerror=alert(1)> tired.';
    await page.fill('#pair', second);
    await settled(page);
    const chips = await page.$$eval('#tokens .token', (b) => b.map((e) => [e.dataset.token, e.dataset.type]));
    const firstSep = chips.findIndex(([t]) => t === '[SEP]');
    expect(firstSep).toBeGreaterThan(0);
    expect(chips[chips.length - 1][0]).toBe('[SEP]');
    chips.forEach(([, type], i) => expect(type).toBe(i <= firstSep ? '0' : '1'));
    expect(await page.$eval('#types-legend', (l) => l.hidden)).toBe(false);
    expect(new URL(await page.evaluate(() => location.href)).searchParams.get('pair')).toBe(second);
    expect(await page.$$eval('img', (i) => i.length)).toBe(0);
    (await rowsOf(page)).forEach((r) => expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5));
    await shot(page, 'encoder-pair');
    await page.waitForTimeout(200);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('the step view: no mask alone; in a batch, [PAD] keys get −∞ and weight 0', async () => {
    // Every row (rows=all), so that every query's mask and softmax can be checked.
    const { page, errors } = await demo('?model=bert&view=steps&head=2&s=The+cat+sat.&rows=all');
    const n = (await tokensOf(page)).length;
    for (let i = 0; i < n; i++) {
      expect((await stepRow(page, 'maskedScores', i)).every(Number.isFinite)).toBe(true);
      expect(Math.abs(sum(await stepRow(page, 'weights', i)) - 1)).toBeLessThan(1e-5);
    }
    expect(await page.$eval('[data-step-id="maskedScores"] h3', (h) => h.textContent)).toContain('none');
    // X (the trace's) times the layer's W^Q from model.safetensors gives the trace's Q.
    const xCheck = Number(await page.$eval('[data-step-id="input"]', (s) => s.dataset.check));
    expect(xCheck).toBeLessThan(1e-3);
    const query = n - 2; // the last word before [SEP]: where a padded row opens
    const alone = await stepRow(page, 'weights', query);

    // In a batch with a longer sentence: padded with [PAD], whose columns the mask sets to −∞.
    await page.check('#batch');
    await settled(page);
    const tokens = await tokensOf(page);
    const N = tokens.length;
    expect(N).toBeGreaterThan(n);
    expect(tokens.slice(n)).toEqual(new Array(N - n).fill('[PAD]'));
    expect(await page.$eval('#batch-note', (p) => p.textContent)).toContain(`${N - n} [PAD]`);
    expect(await page.$eval('[data-step-id="maskedScores"] h3', (h) => h.textContent)).toContain('padding');
    for (let i = 0; i < N; i++) {
      const masked = await stepRow(page, 'maskedScores', i);
      masked.forEach((v, j) => expect(v === -Infinity).toBe(j >= n));
      const w = await stepRow(page, 'weights', i);
      expect(Math.abs(sum(w) - 1)).toBeLessThan(1e-5);
      expect(w.slice(n).every((x) => x === 0)).toBe(true);
    }
    // The query starts on the last real word (not [SEP]), and its weights are those it has alone.
    expect(await page.$eval('#query', (s) => s.value)).toBe(String(query));
    expectClose((await stepRow(page, 'weights', query)).slice(0, n), alone, 1e-5, 'padded row = alone');
    await page.locator('[data-step-id="maskedScores"]').screenshot({ path: path.join(shots, 'encoder-steps-padding-mask.png') });
    // The heatmap greys the [PAD] columns out.
    await page.click('#tab-heatmap');
    await settled(page);
    expect(await page.$$eval('.heatmap-view .cells rect[fill="#d9d9d9"]', (r) => r.length)).toBe(N * (N - n));
    expect(errors).toEqual([]);
    await page.close();
  });

  test('compare sentences: the similarity matrix is symmetric with ones on the diagonal', async () => {
    const { page, errors } = await demo('?model=bert&view=compare');
    await page.waitForSelector('.similarity-view');
    const matrix = () => page.$$eval('.similarity-view .sim-row', (rows) => rows.map((r) => r.dataset.values.split(',').map(Number)));
    const check = async (k) => {
      const m = await matrix();
      expect(m.length).toBe(k);
      m.forEach((row, i) => {
        expect(row.length).toBe(k);
        expect(Math.abs(row[i] - 1)).toBeLessThan(1e-5);
        row.forEach((v, j) => {
          expect(Math.abs(v - m[j][i])).toBeLessThan(1e-6);
          expect(Math.abs(v)).toBeLessThanOrEqual(1 + 1e-5);
        });
      });
      return m;
    };
    const sentences = (await page.$eval('#sentences', (t) => t.value)).split('\n').filter(Boolean);
    expect(sentences.length).toBeGreaterThanOrEqual(4);
    const mean = await check(sentences.length);
    await shot(page, 'encoder-compare');
    // Another sentence, another row and column; [CLS] pooling, other numbers.
    await page.fill('#sentences', [...sentences, 'A <b>new</b> sentence.'].join('\n'));
    await settled(page);
    await page.waitForFunction((k) => document.querySelectorAll('.similarity-view .sim-row').length === k, sentences.length + 1);
    await check(sentences.length + 1);
    expect(await page.$eval('.similarity-view', (s) => s.textContent)).toContain('<b>new</b>');
    await page.selectOption('#pooling', 'cls');
    await settled(page);
    await page.fill('#sentences', sentences.join('\n'));
    await settled(page);
    await page.waitForFunction((k) => document.querySelectorAll('.similarity-view .sim-row').length === k, sentences.length);
    const cls = await check(sentences.length);
    expect(cls).not.toEqual(mean);
    // Exported as JSON with the matrix.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    const json = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    expect(json.similarity.shape).toEqual([sentences.length, sentences.length]);
    expect(json.pooling).toBe('cls');
    expect(errors).toEqual([]);
    await page.close();
    // A phone: nothing wider than the screen.
    const narrow = await demo('?model=bert&view=compare', { width: 390, height: 844 });
    await narrow.page.waitForSelector('.similarity-view');
    expect(await narrow.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(1);
    await shot(narrow.page, 'encoder-narrow-compare');
    expect(narrow.errors).toEqual([]);
    await narrow.page.close();
  });

  test('the <attention-view> widget takes model="bert"', async () => {
    const { page, errors } = await demo('', { page: 'embed-example.html', width: 900 });
    await page.evaluate(() => {
      const box = document.createElement('section');
      box.id = 'bert-widgets';
      document.body.append(box);
      const add = (id, attrs) => {
        const v = document.createElement('attention-view');
        v.id = id;
        for (const [k, val] of Object.entries(attrs)) v.setAttribute(k, val);
        box.append(v);
      };
      add('b-heads', { model: 'bert', sentence: 'The jury said the election was fair.', view: 'heads', head: 'all' });
      add('b-fill', { model: 'bert', sentence: 'The jury said the [MASK] was fair.', view: 'fill' });
      add('b-compare', { model: 'bert', view: 'compare', sentences: 'The dog ran.|A dog was running.|Stocks fell.' });
    });
    await page.waitForFunction(() => ['b-heads', 'b-fill', 'b-compare'].every((id) => document.getElementById(id).dataset.ready === '1'), null, { timeout: 90000 });
    const tokens = JSON.parse(await page.$eval('#b-heads', (v) => v.dataset.tokens));
    expect(tokens[0]).toBe('[CLS]');
    const n = tokens.length;
    const rows = await page.$eval('#b-heads', (v) => [...v.shadowRoot.querySelectorAll('.attn-row')].map((r) => r.dataset.weights.split(',').map(Number)));
    expect(rows.length % n).toBe(0);
    rows.forEach((r) => expect(Math.abs(sum(r) - 1)).toBeLessThan(1e-5));
    expect(aboveDiagonal(rows, n)).toBeGreaterThan(0.05);
    expect(await page.$eval('#b-fill', (v) => v.shadowRoot.querySelectorAll('.fill-blank .prediction').length)).toBeGreaterThan(0);
    const m = await page.$eval('#b-compare', (v) => [...v.shadowRoot.querySelectorAll('.sim-row')].map((r) => r.dataset.values.split(',').map(Number)));
    expect(m.length).toBe(3);
    m.forEach((row, i) => row.forEach((v, j) => expect(Math.abs(v - m[j][i])).toBeLessThan(1e-6)));
    // The GPT-2 widgets on the page still work, all through one worker.
    expect(await page.$eval('#w-heads', (v) => v.dataset.ready)).toBe('1');
    expect(page.workers().length).toBe(1);
    await page.locator('#bert-widgets').screenshot({ path: path.join(shots, 'encoder-widgets.png') });
    expect(errors).toEqual([]);
    await page.close();
  });
});
