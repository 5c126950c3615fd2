// The timing bounds of `npm run check:perf` (tests/browser/*.perf.cjs, scripts/check_perf.mjs):
// each checked value named in the failure, with its bound, so one run reports what was slow.

/** Throws, naming `what`, unless `ms` is under `bound` ms. */
function expectUnder(what, ms, bound) {
  if (!(ms < bound)) throw new Error(`${what}: ${Number(ms).toFixed(0)} ms, not under its bound of ${bound} ms`);
}

/** The middle value of an odd-length list of numbers. */
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

module.exports = { expectUnder, median };
