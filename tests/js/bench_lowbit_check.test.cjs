// The generate bench's check of our f16, q8 and q4 engines against PyTorch on the same low-bit weights
// (bench/generate/lowbit_check.mjs through bench/generate/workload.mjs's tokenAgreement), on hand-made
// references: when it passes, when it fails and what it prints. The real references come from
// bench/generate/lowbit_reference.py (PyTorch, ~3-5 min), run by the bench itself, not here.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const BENCH = path.join(__dirname, '..', '..', 'bench');

/** Runs an ES-module snippet with the bench's modules imported; returns what it prints as JSON. */
function inBench(code) {
  const prelude = `
    import * as gen from ${JSON.stringify(path.join(BENCH, 'generate', 'workload.mjs'))};
    import { LOWBIT_LOGIT_ERROR } from ${JSON.stringify(path.join(BENCH, 'generate', 'lowbit_check.mjs'))};
    import { WORKLOADS } from ${JSON.stringify(path.join(BENCH, 'common', 'workloads.mjs'))};
    const wl = WORKLOADS.find((w) => w.name === 'generate');
    const out = (x) => console.log(JSON.stringify(x));
    // The low-bit references: greedy ids 0..63; per step the top 8 logits 1, 0.99, 0.9, 0.5, 0.4, ...
    // of ids step, 100 + step, 200 + step, ...; prompt logits 0..7.
    const ref = (dtype) => ({ dtype, ids: Array.from({ length: 64 }, (_, i) => i), second: Array.from({ length: 64 }, (_, i) => 100 + i),
      margin: Array(64).fill(0.01), top_ids: Array.from({ length: 64 }, (_, i) => Array.from({ length: 8 }, (_, k) => 100 * k + i)),
      top_logits: Array(64).fill([1, 0.99, 0.9, 0.5, 0.4, 0.3, 0.2, 0.1]), logits: Array.from({ length: 8 }, (_, i) => i) });
    // Float32 PyTorch's continuation is 1000.. (the low-bit engines part from it at once).
    const e = { ids: Array.from({ length: 64 }, (_, i) => 1000 + i), second: Array(64).fill(7), margin: Array(64).fill(0.1),
      logits: Float32Array.from({ length: 8 }, (_, i) => i + 1), lowbit: { f16: ref('f16'), q8: ref('q8') } };
    const tokens = (step, id) => Array.from({ length: 64 }, (_, i) => (i === step ? id : i));
    const logits = (off) => Float32Array.from({ length: 8 }, (_, i) => i + (i === 2 ? off : 0));
    const check = (dtype, out, off = 0) => gen.tokenAgreement(wl, e, out, { lossy: true, dtype, logits: logits(off) });
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', prelude + code], { encoding: 'utf8' }));
}

describe('bench generate: f16 and q8 against PyTorch on their own weights', () => {
  test('the bounds: f16 2e-4, q8 and q4 0.15 of a logit', () => {
    expect(inBench('out(LOWBIT_LOGIT_ERROR);')).toEqual({ f16: 2e-4, q8: 0.15, q4: 0.15 });
  });

  test('all 64 tokens equal and the prompt logits within the bound: agrees, and says how float32 PyTorch compares', () => {
    const r = inBench(`const a = check('q8', tokens(-1, 0), 0.1); out({ a, text: gen.tokenAgreementText(a, 64), logits: gen.logitsDiffText(a) });`);
    expect(r.a).toMatchObject({ ok: true, value: 64, lowbit: 'q8', against: 'pytorch-q8', parts: null, why: null });
    expect(r.a.float).toMatchObject({ value: 0 });
    expect(r.text).toBe('64/64 = PyTorch q8 (float32 PyTorch: 0/64)');
    // 0.1 at one of 8 logits: rms 0.1 / sqrt(8); float32 PyTorch's are 1 higher but that one 0.9: sqrt(7.81 / 8).
    expect(r.logits).toBe('max 1.0e-1, rms 3.5e-2 (PyTorch q8; float32 PyTorch rms 9.9e-1)');
  });

  test('a first divergence onto a token within twice the bound of the top agrees, and is printed', () => {
    // q8: step 5 onto the reference's third, 0.1 below its top (bound 0.3).
    const r = inBench(`const a = check('q8', tokens(5, 205)); out({ a, text: gen.tokenAgreementText(a, 64) });`);
    expect(r.a).toMatchObject({ ok: true, value: 5, parts: { step: 5, got: 205, expected: 5, second: 105, rank: 3 } });
    expect(r.a.parts.gap).toBeCloseTo(0.1, 12);
    expect(r.text).toBe('5/64 = PyTorch q8; step 5: 205 (its #3, 0.100 below; bound 0.3) vs 5, top-2 margin 0.010 (float32 PyTorch: 0/64)');
  });

  test('where the reference run in float32 parts too, the line says so and how long ours follows that run', () => {
    // The float32 run parts at step 5 onto 205 as ours does, then at step 9 from ours.
    const r = inBench(`
      e.lowbit.q8.float32 = { ids: tokens(5, 205).map((x, i) => (i === 9 ? 999 : x)) };
      out(gen.tokenAgreementText(check('q8', tokens(5, 205)), 64));`);
    expect(r).toBe('5/64 = PyTorch q8; step 5: 205 (its #3, 0.100 below; bound 0.3) vs 5, top-2 margin 0.010; PyTorch q8 in float32: 5/64, ours = its first 9 (float32 PyTorch: 0/64)');
  });

  test('a divergence the bound does not explain fails with the reason', () => {
    const r = inBench(`out({
      far: check('q8', tokens(5, 305)),          // #4, 0.5 below: more than 0.3
      outside: check('q8', tokens(5, 77777)),    // not among the top 8
      f16: check('f16', tokens(9, 109), 1e-4),   // #2, 0.01 below: more than f16's 4e-4
      logits: check('q8', tokens(-1, 0), 0.16),  // tokens equal, prompt logits 0.16 away
      short: check('f16', tokens(-1, 0).slice(0, 40)),
    });`);
    expect(r.far).toMatchObject({ ok: false, parts: { rank: 4 } });
    expect(r.far.why).toBe("tokens part from PyTorch's on the same q8 weights at step 5 onto a token 5.00e-1 below its top (bound 0.3)");
    expect(r.outside).toMatchObject({ ok: false, parts: { rank: null, gap: null } });
    expect(r.outside.why).toMatch(/not among its top 8/);
    expect(r.f16).toMatchObject({ ok: false, parts: { rank: 2 } });
    expect(r.f16.why).toMatch(/same f16 weights at step 9 .* \(bound 0.0004\)/);
    expect(r.logits).toMatchObject({ ok: false, value: 64 });
    expect(r.logits.why).toBe("prompt logits 1.60e-1 from PyTorch's on the same q8 weights (bound 0.15)");
    expect(r.short).toMatchObject({ ok: false, complete: false });
  });

  test('a dtype without a reference (ORT\'s int8), or a bench without the references, keeps the float32 comparison', () => {
    const r = inBench(`out({
      int8: check('int8', tokens(5, 205)),
      skipped: gen.tokenAgreement(wl, { ...e, lowbit: { skip: 'no torch' } }, tokens(5, 205), { lossy: true, dtype: 'q8' }),
    });`);
    expect(r.int8).toMatchObject({ against: 'pytorch', ok: true, value: 0, parts: { step: 0, got: 0, expected: 1000 } });
    expect(r.skipped).toMatchObject({ against: 'pytorch', ok: true, value: 0 });
  });
});
