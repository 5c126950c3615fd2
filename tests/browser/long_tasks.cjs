// "The page stays responsive", judged against the machine the page runs on at that moment. A
// long task's wall-clock length stretches with whatever else shares the CPU (a CI box, other test
// files, a `yes > /dev/null` beside the suite), so a fixed bound in ms fails on a busy machine
// without any change to the page. Instead the page runs a calibration task (a fixed amount of
// JavaScript work, ~40 ms on this 2-core VM) several times before and after the measured phase,
// and the longest task may be at most CALIBRATION_FACTOR times the slower of the two medians: the
// regression this guards against (redrawing everything per keystroke or per streamed token)
// costs far more than that, on any machine. The absolute numbers are bounded in
// `npm run check:perf` (scripts/check_perf.mjs), not in `npm test`.

/** How many calibration tasks the longest main-thread task may be. */
const CALIBRATION_FACTOR = 8;

/** Starts collecting the page's long tasks (PerformanceObserver 'longtask': over 50 ms each). */
function watchLongTasks(page) {
  return page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); }).observe({ type: 'longtask' });
  });
}

/** The longest task seen since watchLongTasks (0 when none passed 50 ms). */
const longestTask = (page) => page.evaluate(() => Math.max(0, ...window.__longTasks));

/**
 * The median wall-clock ms of the fixed calibration work, each run its own task (a macrotask
 * apart, so the page's own work may interleave as it would with a real task).
 */
function calibrationMs(page, runs = 7) {
  return page.evaluate((runs) => new Promise((resolve) => {
    const times = [];
    const work = () => {
      // Fixed work: a seeded pseudo-random array sorted, then summed (JIT-able, allocation, no DOM).
      let seed = 12345;
      const a = new Float64Array(300000);
      for (let i = 0; i < a.length; i++) { seed = (seed * 1103515245 + 12345) >>> 0; a[i] = seed / 4294967296; }
      a.sort();
      let s = 0;
      for (let i = 0; i < a.length; i++) s += Math.sqrt(a[i]) * (i & 7);
      window.__calibrationSink = s; // kept, so the work is not optimized away
    };
    const next = () => {
      const t0 = performance.now();
      work();
      times.push(performance.now() - t0);
      if (times.length < runs) setTimeout(next, 0);
      else resolve(times.sort((x, y) => x - y)[runs >> 1]);
    };
    setTimeout(next, 0);
  }), runs);
}

/**
 * Measures `phase` (an async function driving the page) for long tasks and returns
 * { longest, calibration, bound } in ms; expect(longest <= bound) is the caller's.
 * The calibration tasks themselves are not counted (the watch starts after the first
 * calibration and the longest is read before the second).
 */
async function responsiveness(page, phase) {
  const before = await calibrationMs(page);
  await watchLongTasks(page);
  await phase();
  const longest = await longestTask(page);
  const after = await calibrationMs(page);
  const calibration = Math.max(before, after);
  return { longest, calibration, bound: CALIBRATION_FACTOR * calibration };
}

/** One line for the log: the numbers a reader compares across runs. */
const describeResponsiveness = (what, r) =>
  `longest main-thread task ${what}: ${r.longest.toFixed(0)} ms (calibration task ${r.calibration.toFixed(1)} ms, bound ${CALIBRATION_FACTOR} x = ${r.bound.toFixed(0)} ms)`;

module.exports = { CALIBRATION_FACTOR, watchLongTasks, longestTask, calibrationMs, responsiveness, describeResponsiveness };
