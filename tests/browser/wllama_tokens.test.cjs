// llama.cpp as a second implementation of each architecture both it and this package load from
// GGUF: llama, qwen3 (q/k norms, head_dim 32 != hidden / heads), gemma3 (1 + w norms stored as such,
// sandwich norms, sqrt(hidden) embeddings, GeGLU, five windowed layers of 16 positions with rope
// base 1e4 and a global one), smollm3 (every 4th layer unrotated, Q/K rows permuted) and phi3 (fused
// attn_qkv and ffn_up, 12 of 16 dims rotated, longrope's short factors and attn_factor 1.155: the
// 256-position context is within the original 512, where both sides take the short ones). Each tiny
// random model (bench/llama/weights.mjs TINY_FAMILIES) is written as GGUF F32 by our writer, then in
// one headless Chromium page (bench/llama/agreement.mjs) llama.cpp's WebAssembly build (wllama, its
// KV cache at f32) and ours generate 64 greedy tokens after the same 64 prompt ids. The tokens must
// be equal, or first differ where the choice is closer than the two sides' logits are apart:
// llama.cpp's top-2 log-probability margins, on the steps both chose alike, sit up to ~2e-3 of the
// logit range from ours (ours are within 2e-6 of a float64 forward there, llama.cpp's are not), so a
// step whose margin is below that gap may go either way. Timings are not asserted.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const ARCHS = ['llama', 'qwen3', 'gemma3', 'smollm3', 'phi3'];
// The largest distance allowed between llama.cpp's and our top-2 margins (share of the logit range)
// where both chose alike: about twice what this wllama build shows (1e-3 to 2.4e-3).
const MAX_GAP = 5e-3;
let res;

beforeAll(() => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wllama-tokens-')), 'result.json');
  execFileSync(process.execPath, [path.join(ROOT, 'bench', 'llama', 'agreement.mjs'), '--archs', ARCHS.join(','), '--out', out],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  res = JSON.parse(fs.readFileSync(out, 'utf8'));
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
}, 300000);

test('one isolated page ran every architecture without a page error', () => {
  expect(res.crossOriginIsolated).toBe(true);
  expect(res.pageErrors).toEqual([]);
  expect(res.results.map((r) => r.arch)).toEqual(ARCHS);
});

describe.each(ARCHS)('%s', (arch) => {
  let r;
  beforeAll(() => { r = res.results.find((x) => x.arch === arch); });

  test('both sides ran the same work: 64 prompt tokens, 64 new, no prompt cache, an f32 KV cache', () => {
    expect(r.llama.error).toBeUndefined();
    expect(r.ours.error).toBeUndefined();
    expect(r.llama).toMatchObject({ promptN: [64], predictedN: [64], cacheN: [0], errors: [] });
    expect(r.llama.kvCacheLines.filter((l) => /K \(/.test(l)).every((l) => /K \(f32\).*V \(f32\)/.test(l))).toBe(true);
    expect(r.ours.runs[0].tokens).toHaveLength(64);
  });

  test('F32: llama.cpp\'s greedy tokens equal ours, or first differ at a choice closer than the two sides are apart', () => {
    const a = r.agreement;
    // The text llama.cpp answered names the same ids it reports, and the tokens vary (a model that
    // repeats one token would agree on almost anything).
    expect(a.llamaTextMatches).toBe(true);
    expect(new Set(a.ourTokens).size).toBeGreaterThan(20);
    expect(a.marginGap).toBeLessThan(MAX_GAP);
    if (a.firstDiff != null) {
      expect(a.firstDiff).toBeGreaterThan(8);
      expect(a.ours.margin).toBeLessThan(Math.max(a.marginGap, 1e-4) * a.ours.range);
    } else {
      expect(a.llamaTokens).toEqual(a.ourTokens);
    }
  });
});
