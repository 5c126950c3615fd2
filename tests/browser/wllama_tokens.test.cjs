// llama.cpp as a second implementation of the Llama family: the tiny random Llama of
// bench/llama/weights.mjs, written as GGUF F32 by our writer (Q/K rows permuted to llama.cpp's rope
// pairs), loaded by llama.cpp's WebAssembly build (wllama) in headless Chromium, generates 64 greedy
// tokens after the same 64 prompt ids as our f32 model in the same page; the tokens must be equal,
// or first differ where our top-2 logits are a near-tie (margin < 1e-4 of the logit range). Runs
// bench/llama/browser.mjs --model tiny (a bench's harness, timings not asserted).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
let res;

beforeAll(() => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wllama-tokens-')), 'result.json');
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'bench', 'llama', 'browser.mjs'), '--model', 'tiny', '--types', 'F32', '--threads', '1', '--quick', '--json', '--out', out],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch { /* a problem exits 1; the result file still says what happened */ }
  res = JSON.parse(fs.readFileSync(out, 'utf8'));
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
}, 300000);

test('both sides ran the same work: 64 prompt tokens, 64 new, no prompt cache, in an isolated page', () => {
  expect(res.crossOriginIsolated).toBe(true);
  const llama = res.runs.find((r) => r.engine === 'llama.cpp');
  const ours = res.runs.find((r) => r.engine === 'ours');
  expect(llama.error).toBeUndefined();
  expect(ours.error).toBeUndefined();
  expect(llama).toMatchObject({ promptN: [64], predictedN: [64], cacheN: [0], errors: [] });
  expect(ours.runs[0].tokens).toHaveLength(64);
  expect(res.problems).toEqual([]);
});

test('F32: llama.cpp\'s greedy tokens equal ours (or first differ at a near-tie)', () => {
  const a = res.agreement.find((x) => x.type === 'F32');
  // The text llama.cpp answered names the same ids it reports, and the tokens vary (a model that
  // repeats one token would agree on almost anything).
  expect(a.llamaTextMatches).toBe(true);
  expect(new Set(a.ourTokens).size).toBeGreaterThan(20);
  if (a.firstDiff != null) {
    expect(a.ours.margin).toBeLessThan(1e-4 * a.ours.range);
  } else {
    expect(a.llamaTokens).toEqual(a.ourTokens);
  }
});
