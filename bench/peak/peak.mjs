// Measures this machine's WebAssembly SIMD peak (bench/peak/peak.cpp): N independent f32x4
// mul+add chains, best over several N and repetitions. Built with Debian's em++ into
// build/bench-peak/peak.wasm when missing or older than its source.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = `${ROOT}bench/peak/peak.cpp`;
const OUT = `${ROOT}build/bench-peak/peak.wasm`;

/**
 * Builds a standalone .wasm from one of bench/peak/'s sources with Debian's em++ when it is missing
 * or older than its source. null when built (or current), else why not.
 */
export function buildProbe(src, out, flags = []) {
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs) return null;
  if (spawnSync('sh', ['-c', 'command -v em++'], { encoding: 'utf8' }).status !== 0) return 'em++ not found';
  mkdirSync(path.dirname(out), { recursive: true });
  try {
    // Debian's em++ needs its JS deps (acorn) on NODE_PATH at -O2 and above.
    execFileSync('em++', ['-O3', '-msimd128', ...flags, '--no-entry', '-sSTANDALONE_WASM', '-o', out, src], {
      env: { ...process.env, NODE_PATH: ['/usr/share/nodejs', process.env.NODE_PATH].filter(Boolean).join(':') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    return `em++ failed: ${String(e.stderr ?? e.message).trim().split('\n').slice(-2).join(' | ')}`;
  }
  return null;
}

/** { gflops (best f32x4 variant), scalarGflops, variants: {name: GFLOP/s} } or { skip }. */
export async function measurePeak({ quick = false } = {}) {
  const skip = buildProbe(SRC, OUT);
  if (skip) return { skip };
  const { instance } = await WebAssembly.instantiate(readFileSync(OUT), {});
  const kernels = [
    ['simd_chains_4', 4, 4], ['simd_chains_8', 8, 4], ['simd_chains_12', 12, 4],
    ['simd_chains_14', 14, 4], ['simd_chains_16', 16, 4], ['scalar_chains_12', 12, 1],
  ];
  const iters = quick ? 5e6 : 2e7;
  const reps = quick ? 3 : 7;
  const variants = {};
  for (const [name, chains, lanes] of kernels) {
    const f = instance.exports[name];
    f(1e5, 0.999, 0.001);  // tier up before timing
    let best = 0;
    for (let r = 0; r < reps; r++) {
      const t = performance.now();
      // m < 1 and a small c keep every lane near 1: no overflow, no denormals.
      f(iters, 0.999999, 1e-6);
      const ms = performance.now() - t;
      best = Math.max(best, (iters * chains * lanes * 2) / ms / 1e6);
    }
    variants[name] = best;
  }
  const simd = Object.entries(variants).filter(([n]) => n.startsWith('simd'));
  return { gflops: Math.max(...simd.map(([, g]) => g)), scalarGflops: variants.scalar_chains_12, variants };
}

/**
 * Best of two measurements (the bench takes one before and one after the engines): a peak is a
 * maximum, and on a shared 2-core machine either one alone may have been preempted.
 */
export function mergePeaks(a, b) {
  if (a.skip || b.skip) return a.skip ? b : a;
  const variants = {};
  for (const k of Object.keys(a.variants)) variants[k] = Math.max(a.variants[k], b.variants[k] ?? 0);
  return { gflops: Math.max(a.gflops, b.gflops), scalarGflops: variants.scalar_chains_12, variants, runs: [a.gflops, b.gflops] };
}
