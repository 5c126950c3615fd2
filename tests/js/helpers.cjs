// Shared by the Jest suites: the built package, both variants, and a tolerance check.
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '../..');
const api = require(path.join(root, 'dist/index.cjs'));

// Every build the package ships: SIMD on one thread, scalar, and SIMD with 2 pthreads.
const variants = ['simd', 'scalar', 'simd-threads'];
const OPTIONS = { simd: { threads: 1 }, scalar: { simd: false }, 'simd-threads': { threads: 2 } };
const modules = {};
/** One module per variant, loaded once per test file. */
async function load(variant) {
  modules[variant] ??= await api.loadAttention(OPTIONS[variant]);
  expect(modules[variant].variant).toBe(variant);
  return modules[variant];
}

/** Asserts |a - e| <= abs + rel*|e| elementwise; -Infinity must match exactly. */
function expectClose(actual, expected, { abs = 1e-5, rel = 1e-4 } = {}, what = 'value') {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] === '-inf' ? -Infinity : expected[i];
    const a = actual[i];
    if (!Number.isFinite(e)) {
      if (a !== e) throw new Error(`${what}[${i}]: got ${a}, expected ${e}`);
      continue;
    }
    if (!(Math.abs(a - e) <= abs + rel * Math.abs(e)))
      throw new Error(`${what}[${i}]: got ${a}, expected ${e} (tolerance ${abs} + ${rel}*|e|)`);
  }
}

function readFixtures() {
  const dir = path.join(root, 'tests/fixtures/mha');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
}

const random = (seed) => () => {
  // mulberry32: deterministic test data
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
};
function randomArray(n, seed = 1) {
  const next = random(seed);
  return Float32Array.from({ length: n }, next);
}

/** The index of the largest value in each of the first `n` rows of `V` logits. */
function argmaxRows(logits, V, n) {
  return Array.from({ length: n }, (_, t) => {
    const row = logits.subarray(t * V, (t + 1) * V);
    // Math.max over an indexed loop: the same value as Math.max(...row), without spreading V arguments.
    let max = -Infinity;
    for (let j = 0; j < row.length; j++) max = Math.max(max, row[j]);
    return row.indexOf(max);
  });
}

/** max |got - want| over max |want| (at least `floor`: a tensor of small values then counts its
 * differences absolutely). */
function relativeGap(got, want, floor = 0) {
  expect(got.length).toBe(want.length);
  let gap = 0, largest = floor;
  for (let i = 0; i < want.length; i++) {
    gap = Math.max(gap, Math.abs(got[i] - want[i]));
    largest = Math.max(largest, Math.abs(want[i]));
  }
  return gap / largest;
}

module.exports = { api, root, variants, load, expectClose, readFixtures, randomArray, argmaxRows, relativeGap };
