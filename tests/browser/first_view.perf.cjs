// `npm run check:perf` (not `npm test`): the demo's first view in ms, 3 cold loads each way (a
// fresh profile each, so nothing cached): in Chromium with no automation attached, opened in a
// running browser (what a visitor waits for) and as the first page of a starting browser
// (plain_chromium.cjs), and driven by Playwright (first_view.cjs). Printed, then bounded: the
// target is 1 s on the project's 2-core VM (web/README.md: ~0.5 s quiet); the bounds leave room
// for a loaded CI box, and fail on a busy machine, which is why they are not in `npm test`.
const { demoSite } = require('./demo_site.cjs');
const { plainFirstViews } = require('./plain_chromium.cjs');
const { coldFirstView, describeTransfer } = require('./first_view.cjs');
const { expectUnder, median } = require('./perf_bounds.cjs');

const site = demoSite('web-perf-first-view');
const BOUNDS = { plain: 1500, starting: 2000, playwright: 2500 }; // on the median of 3, ms

test('first view interactive time (median of 3 cold loads)', async () => {
  const loads = [];
  for (let k = 0; k < 3; k++) loads.push(await coldFirstView(site));
  const times = {
    plain: await plainFirstViews(site.base, site.dir, 3),
    starting: await plainFirstViews(site.base, site.dir, 3, { settleMs: 0 }),
    playwright: loads.map((l) => l.ms),
  };
  const line = (name) => `${times[name].join(', ')}; median ${median(times[name])} (bound ${BOUNDS[name]})`;
  console.log(`first view interactive (ms after navigation start, 3 cold loads each, fresh profiles): ${line('plain')};`
    + ` as the first page of a starting browser: ${line('starting')}; driven by Playwright: ${line('playwright')}\n`
    + describeTransfer(loads[2].transfer, site.dir));
  for (const name of Object.keys(BOUNDS)) expectUnder(`first view, ${name} (median of 3)`, median(times[name]), BOUNDS[name]);
}, 300000); // 9 cold loads, 6 of them after 3 s of settling
