// Measures this machine's WebAssembly memory bandwidth on one thread (bench/peak/bandwidth.cpp):
// memory.copy and a v128.load read stream over 128 MiB buffers (4x the 32 MiB L3 here), best of
// several repetitions. Decoding reads every weight once a token, so its GB/s of weights are quoted
// as a fraction of these. Copy GB/s counts the bytes copied (each is read once and written once).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { buildProbe } from './peak.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = `${ROOT}bench/peak/bandwidth.cpp`;
const OUT = `${ROOT}build/bench-peak/bandwidth.wasm`;
const BYTES = 128 << 20;

/** Best GB/s of `reps` timed calls of f(), each moving `bytes`. */
function best(f, bytes, reps) {
  f();  // tier up and touch the pages before timing
  let top = 0;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    f();
    top = Math.max(top, bytes / (performance.now() - t) / 1e6);
  }
  return top;
}

/** { copyGBs, readGBs, bufferBytes } or { skip }. */
export async function measureBandwidth({ quick = false } = {}) {
  const skip = buildProbe(SRC, OUT, ['-mbulk-memory', '-sALLOW_MEMORY_GROWTH=1', '-sMAXIMUM_MEMORY=1GB']);
  if (skip) return { skip };
  const { instance } = await WebAssembly.instantiate(readFileSync(OUT), {});
  const { bw_alloc: alloc, bw_copy: copy, bw_read: read } = instance.exports;
  const src = alloc(BYTES), dst = alloc(BYTES);
  if (!src || !dst) return { skip: `could not grow WebAssembly memory by 2 x ${BYTES >> 20} MiB` };
  const reps = quick ? 3 : 7;
  return {
    copyGBs: best(() => copy(dst, src, BYTES, 1), BYTES, reps),
    readGBs: best(() => read(src, BYTES, 1), BYTES, reps),
    bufferBytes: BYTES,
  };
}

/** Best of two measurements (before and after the engines), as mergePeaks does for the FLOP peak. */
export function mergeBandwidths(a, b) {
  if (a.skip || b.skip) return a.skip ? b : a;
  return {
    copyGBs: Math.max(a.copyGBs, b.copyGBs), readGBs: Math.max(a.readGBs, b.readGBs), bufferBytes: a.bufferBytes,
    runs: [a, b].map((x) => ({ copyGBs: x.copyGBs, readGBs: x.readGBs })),
  };
}
