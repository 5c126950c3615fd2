// The fuzz harness every entry point's hostile-input test shares: values a careless (or hostile)
// caller passes, and the one rule they must meet: a normal result or an AttentionError, never a
// TypeError, RangeError, embind error or crash, and the model unchanged afterwards.
const { api } = require('./helpers.cjs');

/** Wrong types, non-finite and huge numbers, empty and huge strings, things that are not data. */
const HOSTILE = [
  undefined, null, NaN, Infinity, -Infinity, -1, 0, 1.5, -0.5, 1e9, 2 ** 53, Number.MAX_VALUE,
  '', 'x', 'x'.repeat(100000), true, false, 12n, Symbol('s'), {}, [], [NaN], [1e9], ['a'], [[]],
  () => 1, new Float32Array(3), new Uint8Array(2), new ArrayBuffer(8), new Date(0), /x/, new Map(),
  Object.create(null), { length: 1e9 }, new Proxy({}, { get: () => { throw new Error('trap'); } }),
];

/** A short label for a value in test names and failure messages (never throws). */
function label(v) {
  try {
    if (typeof v === 'string') return v.length > 12 ? `string(${v.length})` : JSON.stringify(v);
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'symbol' || typeof v === 'function') return typeof v;
    if (Array.isArray(v)) return `[${v.map(label).join(',')}]`;
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return `${v.constructor.name}(${v.byteLength})`;
    if (v && typeof v === 'object') return v.constructor ? `${v.constructor.name}{}` : 'Object(null){}';
    return String(v);
  } catch {
    return 'object';
  }
}

/** Runs fn (sync or async): 'ok' when it returns, 'named' for an AttentionError; anything else
 * is returned as the error itself, for the test to report. */
async function outcome(fn) {
  try {
    await fn();
    return 'ok';
  } catch (e) {
    return e instanceof api.AttentionError ? 'named' : e;
  }
}

/** Each option key set to each hostile value, plus misspelt and unknown keys and non-objects. */
function hostileOptions(knownKeys) {
  const cases = [null, 5, 'options', [], [{}], new Float32Array(1)].map((o) => o);
  for (const key of knownKeys) for (const v of HOSTILE) if (v !== undefined) cases.push({ [key]: v });
  cases.push({ notAnOption: 1 }, { __proto__: { inherited: 1 } }, { ['x'.repeat(1000)]: 1 });
  return cases;
}

/**
 * Calls `call(value)` for every value and collects what was neither a result nor an
 * AttentionError, as "label: error" lines (empty = passed), then checks `same()` (a good call
 * still gives the first answer) after each.
 */
async function fuzz(values, call, same) {
  const bad = [];
  for (const v of values) {
    const r = await outcome(() => call(v));
    if (r !== 'ok' && r !== 'named') bad.push(`${label(v)}: ${r && r.name}: ${r && r.message}`);
    if (same) {
      const s = await outcome(same);
      if (s !== 'ok') bad.push(`${label(v)}: the model changed or broke afterwards: ${s === 'named' ? 'AttentionError' : s}`);
    }
  }
  return bad;
}

/** Asserts fn throws an AttentionError whose message matches `pattern`. */
async function expectNamed(fn, pattern) {
  let error;
  try { await fn(); } catch (e) { error = e; }
  expect(error).toBeInstanceOf(api.AttentionError);
  if (pattern) expect(error.message).toMatch(pattern);
  return error;
}

module.exports = { HOSTILE, hostileOptions, fuzz, outcome, expectNamed, label };
