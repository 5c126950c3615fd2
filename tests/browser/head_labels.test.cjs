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
