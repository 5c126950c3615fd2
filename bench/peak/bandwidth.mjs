// Measures this machine's WebAssembly memory bandwidth (bench/peak/bandwidth.cpp): memory.copy and
// a v128.load read stream over 128 MiB buffers (4x the 32 MiB L3 here) on one thread, and the read
// stream on two threads at once (worker_threads), best of several repetitions. Decoding reads every weight once a token, so its GB/s of weights are quoted
// as a fraction of these. Copy GB/s counts the bytes copied (each is read once and written once).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { buildProbe } from './peak.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
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

// One worker of the 2-thread read stream: its own instance and 128 MiB, each repetition started
// together with the other worker's (a barrier on shared memory), its times posted back.
const READ_WORKER = `
  const { parentPort, workerData: { module, bytes, reps, sab, n } } = require('node:worker_threads');
  const { bw_alloc: alloc, bw_read: read } = new WebAssembly.Instance(module, {}).exports;
  const src = alloc(bytes), sync = new Int32Array(sab), times = [];
  if (src) read(src, bytes, 1);
  for (let r = 0; src && r < reps; r++) {
    if (Atomics.add(sync, 0, 1) + 1 === n * (r + 1)) { Atomics.store(sync, 1, r + 1); Atomics.notify(sync, 1); }
    else while (Atomics.load(sync, 1) < r + 1) Atomics.wait(sync, 1, r);
    const t = performance.now();
    read(src, bytes, 1);
    times.push(performance.now() - t);
  }
  parentPort.postMessage(times);
`;

/**
 * GB/s of n threads reading at once, each its own 128 MiB: per repetition n x the bytes over the
 * slowest worker's time, best repetition. What a decode step's weights could stream on n cores.
 */
async function parallelRead(module, n, reps) {
  const sab = new SharedArrayBuffer(8);
  const times = await Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
    const w = new Worker(READ_WORKER, { eval: true, workerData: { module, bytes: BYTES, reps, sab, n } });
    w.once('message', (t) => { resolve(t); w.terminate(); });
    w.once('error', reject);
  })));
  if (times.some((t) => t.length < reps)) return null;  // a worker could not grow its memory
  let top = 0;
  for (let r = 0; r < reps; r++) top = Math.max(top, (n * BYTES) / Math.max(...times.map((t) => t[r])) / 1e6);
  return top;
}

/** { copyGBs, readGBs, read2GBs, bufferBytes } or { skip }: one thread, and the read stream on two. */
export async function measureBandwidth({ quick = false } = {}) {
  const skip = buildProbe(SRC, OUT, ['-mbulk-memory', '-sALLOW_MEMORY_GROWTH=1', '-sMAXIMUM_MEMORY=1GB']);
  if (skip) return { skip };
  const module = await WebAssembly.compile(readFileSync(OUT));
  const { bw_alloc: alloc, bw_copy: copy, bw_read: read } = (await WebAssembly.instantiate(module, {})).exports;
  const src = alloc(BYTES), dst = alloc(BYTES);
  if (!src || !dst) return { skip: `could not grow WebAssembly memory by 2 x ${BYTES >> 20} MiB` };
  const reps = quick ? 3 : 7;
  return {
    copyGBs: best(() => copy(dst, src, BYTES, 1), BYTES, reps),
    readGBs: best(() => read(src, BYTES, 1), BYTES, reps),
    read2GBs: await parallelRead(module, 2, reps),
    bufferBytes: BYTES,
  };
}

/** Best of two measurements (before and after the engines), as mergePeaks does for the FLOP peak. */
export function mergeBandwidths(a, b) {
  if (a.skip || b.skip) return a.skip ? b : a;
  return {
    copyGBs: Math.max(a.copyGBs, b.copyGBs), readGBs: Math.max(a.readGBs, b.readGBs), read2GBs: Math.max(a.read2GBs ?? 0, b.read2GBs ?? 0) || null,
    bufferBytes: a.bufferBytes, runs: [a, b].map((x) => ({ copyGBs: x.copyGBs, readGBs: x.readGBs, read2GBs: x.read2GBs })),
  };
}
