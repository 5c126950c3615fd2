// `npm run check:perf` (not `npm test`): drawing the step view at 128 tokens, from the click on its
// tab to the frame after it is drawn, 5 cold page loads each on desktop (1280x800) and phone
// (390x844): the median under 300 ms. "Show every row" (a 128 x 128 matrix) is printed only.
const { demoSite } = require('./demo_site.cjs');
const { sentenceOfTokens, msToDrawnFrame } = require('./demo_phases.cjs');
const { expectUnder, median } = require('./perf_bounds.cjs');

const site = demoSite('web-perf-steps');
const BOUND_MS = 300;
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

test(`the step view at 128 tokens draws in under ${BOUND_MS} ms (median of 5, desktop and phone)`, async () => {
  const sentence = await sentenceOfTokens(site.demo, 128);
  const open = (size) => site.demo(`?view=heatmap&s=${encodeURIComponent(sentence)}`, size);
  const medians = {};
  for (const [name, size] of Object.entries(SIZES)) {
    const times = [];
    for (let k = 0; k < 5; k++) {
      const { page } = await open(size);
      times.push(await msToDrawnFrame(page, '#tab-steps'));
      if (name === 'desktop' && k === 4) {
        await site.settled(page);
        console.log(`"show every row" at 128 tokens, click to drawn frame: ${(await msToDrawnFrame(page, '#steps-all-rows')).toFixed(0)} ms (not bounded)`);
      }
      await page.close();
    }
    medians[name] = median(times);
    console.log(`step view at 128 tokens, ${name} ${size.width}x${size.height}, click to drawn frame (ms): ${times.map((t) => t.toFixed(0)).join(', ')}; median ${medians[name].toFixed(0)} (bound ${BOUND_MS})`);
  }
  for (const name of Object.keys(SIZES)) expectUnder(`step view at 128 tokens, ${name} (median of 5)`, medians[name], BOUND_MS);
}, 300000);
