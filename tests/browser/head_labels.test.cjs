// Head labels in the demo (issue 24): the picker and the head view show each label with its
// held-out score ("previous-token · 0.53"), every model opens on its clearest labelled head (the
// choice computed here from the model's heads.json), at 1280x800 and 390x844.
// Screenshots: tests/browser/screenshots/labels-<model>-<width>.png.
const fs = require('node:fs');
const path = require('node:path');
const { demoSite, root } = require('./demo_site.cjs');

const site = demoSite('web-test-head-labels');
const { demo, shot } = site;
const SIZES = [[1280, 800], [390, 844]];
const MODELS = [['gpt2', 'brown-gpt2'], ['bert', 'brown-bert'], ['bart', 'g2p-bart']];
// The labels whose lines a learner reads at a glance, in the order the page prefers them.
const CLEAREST = ['previous-token', 'next-token', 'induction', 'alignment', 'local', 'current-token'];

const headsOf = (folder) => JSON.parse(fs.readFileSync(path.join(root, 'web/models', folder, 'heads.json'), 'utf8')).heads;
/** The head a learner should see first: the best-scoring head of the first clear label present. */
function clearest(heads) {
  for (const want of CLEAREST) {
    const best = heads.filter((h) => h.label === want).sort((a, b) => b.score - a.score)[0];
    if (best) return best;
  }
  return null;
}

describe.each(SIZES)('at %ix%i', (width, height) => {
  test.each(MODELS)('%s opens on its clearest labelled head, with the label\'s score in the picker and the view', async (model, folder) => {
    const heads = headsOf(folder);
    const want = clearest(heads);
    expect(want).not.toBeNull();
    const { page, errors } = await demo(model === 'gpt2' ? '' : `?model=${model}`, { width, height });
    const shown = await page.evaluate(() => ({
      layer: document.getElementById('layer').value, head: document.getElementById('head').value,
      options: [...document.querySelectorAll('#head option')].map((o) => o.textContent),
      legend: document.querySelector('.head-view')?.textContent ?? '',
    }));
    expect([shown.layer, shown.head]).toEqual([String(want.layer), String(want.head)]);
    const text = `${want.label} · ${want.score.toFixed(2)}`;
    expect(shown.options[want.head]).toBe(`${want.head + 1} · ${text}`);
    expect(shown.legend).toContain(text);
    // Every head of the opened layer: its label, with the score unless it is broad.
    for (const h of heads.filter((x) => x.layer === want.layer))
      expect(shown.options[h.head]).toBe(`${h.head + 1} · ${h.label}${h.score === null ? '' : ` · ${h.score.toFixed(2)}`}`);
    await shot(page, `labels-${folder}-${width}`);
    expect(errors).toEqual([]);
    await page.close();
  });
});

// Nothing clipped (issue 24: "keys: lette", "monoton…"): every text of the drawn views lies inside
// its drawing, for each model's opening head, at both sizes.
describe.each(SIZES)('at %ix%i, every text box is inside its drawing', (width, height) => {
  test.each(MODELS)('%s: heads, model and heatmap views', async (model) => {
    const { page, errors } = await demo(model === 'gpt2' ? '' : `?model=${model}`, { width, height });
    for (const view of ['heads', 'model', 'heatmap']) {
      await page.click(`#tab-${view}`);
      await site.settled(page);
      const outside = await page.$$eval('#view-graphic svg text', (texts) => texts.flatMap((t) => {
        if (!t.textContent.trim() || t.closest('[visibility="hidden"]')) return [];
        const svgBox = t.ownerSVGElement.getBoundingClientRect(), r = t.getBoundingClientRect();
        const inside = r.left >= svgBox.left - 1 && r.right <= svgBox.right + 1 && r.top >= svgBox.top - 1 && r.bottom <= svgBox.bottom + 1;
        return inside ? [] : [`"${t.textContent}" ${Math.round(r.left - svgBox.left)}..${Math.round(r.right - svgBox.left)} of ${Math.round(svgBox.width)}`];
      }));
      expect({ view, outside }).toEqual({ view, outside: [] });
    }
    expect(errors).toEqual([]);
    await page.close();
  });
});

test('on a phone the model view keeps every label\'s score under its thumbnail', async () => {
  const { page, errors } = await demo('', { width: 390, height: 844 });
  await page.click('#tab-model');
  await site.settled(page);
  const shown = await page.$$eval('.model-view .thumb', (g) => g.map((t) => t.querySelector('text')?.textContent ?? null));
  const want = headsOf('brown-gpt2').map((h) => (h.score === null ? null : h.score.toFixed(2)));
  shown.forEach((text, i) => { if (want[i]) expect(text).toContain(want[i]); });
  await shot(page, 'labels-model-view-390');
  expect(errors).toEqual([]);
  await page.close();
});
