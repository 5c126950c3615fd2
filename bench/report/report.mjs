// Turns the raw measurements into ratios, target checks and the printed tables.
import { generateSection, generateTargets } from './generate.mjs';
import { fmt, table } from './table.mjs';

const fmtBytes = (n) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(2)} MiB` : `${(n / 1024).toFixed(1)} KiB`);

const usable = (r) => r.medianMs != null && !r.error && r.agrees !== false;

/**
 * For every workload: the fastest usable peer at 1 thread and at any thread count, and each of
 * our engines' median divided by the matching one (ours at 1 thread vs 1-thread peers; ours at 2
 * threads vs every peer; the scalar build vs scalar peers). < 1 means this library is faster.
 * sameThreads (the browser section): every engine of ours against peers at its own thread count.
 */
export function computeRatios(rows, engines, { sameThreads = false } = {}) {
  const byId = Object.fromEntries(engines.map((e) => [e.id, e]));
  const out = [];
  for (const wl of [...new Set(rows.map((r) => r.workload))]) {
    const fastest = (list) => list.reduce((a, b) => (!a || b.medianMs < a.medianMs ? b : a), null);
    for (const r of rows.filter((x) => x.workload === wl && byId[x.engine]?.role === 'ours' && usable(x))) {
      // A scalar build is matched with scalar peers, a SIMD build with SIMD peers.
      const scalar = !!byId[r.engine].scalar;
      const peers = rows.filter((p) => p.workload === wl && byId[p.engine]?.role === 'peer' && !!byId[p.engine].scalar === scalar && usable(p));
      const threads = byId[r.engine].threads;
      const peer = threads === 1 || sameThreads ? fastest(peers.filter((p) => byId[p.engine].threads === threads)) : fastest(peers);
      if (!peer) continue;
      out.push({ workload: wl, engine: r.engine, peer: peer.engine, ratio: r.medianMs / peer.medianMs, oursMs: r.medianMs, peerMs: peer.medianMs });
    }
  }
  return out;
}

/** The issue's targets, checked on this run's numbers. */
export function checkTargets(rows, ratios, peak) {
  const t = [];
  // The targets are for the SIMD builds; the scalar build is the fallback, shown but not held to them.
  for (const r of ratios.filter((x) => x.engine !== 'ours-scalar' && x.workload !== 'generate')) {
    t.push({ target: `${r.workload}: ${r.engine} faster than the fastest ${r.engine.endsWith('2t') ? '' : '1-thread '}peer`, met: r.ratio < 1, detail: `${fmt(r.oursMs)} ms vs ${r.peer} ${fmt(r.peerMs)} ms (ratio ${r.ratio.toFixed(2)})` });
  }
  if (peak?.gflops) {
    for (const wl of ['bert', 'gpt2']) {
      const r = rows.find((x) => x.workload === wl && x.engine === 'ours-simd' && usable(x));
      if (r) t.push({ target: `${wl}: ours-simd >= 75% of the WASM SIMD peak`, met: r.gflops >= 0.75 * peak.gflops, detail: `${fmt(r.gflops)} GFLOP/s = ${(100 * r.gflops / peak.gflops).toFixed(0)}% of ${fmt(peak.gflops)}` });
    }
  }
  const ours = rows.find((x) => x.workload === 'tiny' && x.engine === 'ours-simd' && usable(x));
  const ort = rows.filter((x) => x.workload === 'tiny' && /^ort-.*-1t$/.test(x.engine) && usable(x)).sort((a, b) => a.medianMs - b.medianMs)[0];
  if (ours && ort) t.push({ target: 'tiny: ours-simd >= 3x faster than onnxruntime-web (1 thread)', met: ort.medianMs / ours.medianMs >= 3, detail: `${fmt(ours.medianMs, 3)} ms vs ${ort.engine} ${fmt(ort.medianMs, 3)} ms (${(ort.medianMs / ours.medianMs).toFixed(1)}x)` });
  return [...t, ...issue10Targets(rows, ratios, peak)];
}

/**
 * Issue 10: 2 threads at least 15 % faster than the fastest 2-thread peer on every workload
 * (ratio <= 0.87); 2t/1t speed-up >= 1.6 on bert, gpt2 and long; one thread >= 80 % of the
 * measured WASM SIMD peak on bert and gpt2; the scalar build within 2x of tfjs-backend-wasm's
 * non-SIMD build on bert.
 */
export function issue10Targets(rows, ratios, peak) {
  const t = [];
  const get = (wl, id) => rows.find((x) => x.workload === wl && x.engine === id && usable(x));
  // Float32 peers only: the 8-bit generate peers (ort-q8, ort-nbits8) are matched with our 8-bit
  // engines by issue 22's targets (report/generate.mjs), not with this float32 build.
  const fastest2t = (wl) => rows.filter((x) => x.workload === wl && /^(ort|tfjs)-.*-2t$/.test(x.engine) && !/^ort-(q8|nbits8)-/.test(x.engine) && usable(x))
    .sort((a, b) => a.medianMs - b.medianMs)[0];
  for (const wl of [...new Set(rows.map((r) => r.workload))]) {
    const ours = get(wl, 'ours-simd-2t'), peer = fastest2t(wl);
    if (ours && peer) t.push({ target: `${wl}: ours-simd-2t >= 15% faster than the fastest 2-thread peer (issue 10)`, met: ours.medianMs / peer.medianMs <= 1 / 1.15, detail: `${fmt(ours.medianMs)} ms vs ${peer.engine} ${fmt(peer.medianMs)} ms (ratio ${(ours.medianMs / peer.medianMs).toFixed(2)})` });
  }
  for (const wl of ['bert', 'gpt2', 'long']) {
    const one = get(wl, 'ours-simd'), two = get(wl, 'ours-simd-2t');
    if (one && two) t.push({ target: `${wl}: ours 2t/1t speed-up >= 1.6 (issue 10)`, met: one.medianMs / two.medianMs >= 1.6, detail: `${fmt(one.medianMs)} / ${fmt(two.medianMs)} ms = ${(one.medianMs / two.medianMs).toFixed(2)}x` });
  }
  if (peak?.gflops) {
    for (const wl of ['bert', 'gpt2']) {
      const r = get(wl, 'ours-simd');
      if (r) t.push({ target: `${wl}: ours-simd >= 80% of the WASM SIMD peak (issue 10)`, met: r.gflops >= 0.8 * peak.gflops, detail: `${fmt(r.gflops)} GFLOP/s = ${(100 * r.gflops / peak.gflops).toFixed(0)}% of ${fmt(peak.gflops)}` });
    }
  }
  const scalar = get('bert', 'ours-scalar'), tfjsScalar = get('bert', 'tfjs-wasm-scalar');
  if (scalar && tfjsScalar) t.push({ target: 'bert: ours-scalar within 2x of tfjs-backend-wasm without SIMD (issue 10)', met: scalar.medianMs <= 2 * tfjsScalar.medianMs, detail: `${fmt(scalar.medianMs)} ms vs ${fmt(tfjsScalar.medianMs)} ms (ratio ${(scalar.medianMs / tfjsScalar.medianMs).toFixed(2)})` });
  return t;
}

/**
 * Multi-thread over 1-thread speed-up per engine family and workload: each N-thread engine
 * (N > 1; 2 in the Node bench, up to 4 in the browser) with its 1-thread twin (ours-simd-2t with
 * ours-simd, ort-X-2t with ort-X-1t). Speed-up = 1t median / Nt median; twoMs is the Nt median.
 */
export function threadSpeedups(rows, engines) {
  const byId = Object.fromEntries(engines.map((e) => [e.id, e]));
  const out = [];
  for (const r of rows.filter((x) => byId[x.engine]?.threads > 1 && usable(x))) {
    const suffix = r.engine.match(/-\d+t$/)?.[0];
    const twinId = suffix ? (byId[r.engine.slice(0, -suffix.length) + '-1t'] ? r.engine.slice(0, -suffix.length) + '-1t' : r.engine.slice(0, -suffix.length)) : null;
    const one = rows.find((x) => x.workload === r.workload && x.engine === twinId && usable(x));
    if (one) out.push({ workload: r.workload, family: twinId.replace(/-1t$/, ''), threads: byId[r.engine].threads, oneMs: one.medianMs, twoMs: r.medianMs, speedup: one.medianMs / r.medianMs, cpuPerWall: r.cpuPerWall });
  }
  return out;
}

/** The speed-up table: one row per workload, one column per engine family. */
function speedupTable(speedups, wlOrder) {
  const families = [...new Set(speedups.map((x) => x.family))];
  const wls = wlOrder.filter((w) => speedups.some((x) => x.workload === w));
  return table(['workload', ...families], wls.map((w) => [w, ...families.map((f) => {
    const x = speedups.find((y) => y.workload === w && y.family === f);
    const ms = (v) => fmt(v, v < 1 ? 3 : 2);
    return x ? `${x.speedup.toFixed(2)} (${ms(x.oneMs)} -> ${ms(x.twoMs)} ms)` : '-';
  })]), families.map((_, i) => i + 1));
}

const agreeText = (a) => (a.kind === 'tokens' ? `${a.value} tokens = torch` : a.kind === 'abs' ? `abs ${a.value.toExponential(1)}${a.against === 'pytorch' ? ' vs torch' : ''}` : a.rel.toExponential(1));

/** The encoder workload in its own units: sentences per second and ms per batch. */
function encoderSection(res, wl, byId) {
  const rows = res.rows.filter((r) => r.workload === wl.name).map((r) => {
    const e = byId[r.engine];
    const ratio = res.ratios.find((x) => x.workload === wl.name && x.engine === r.engine);
    const agree = r.agreement ? `${r.agreement.maxAbsDiff.toExponential(1)} vs ${r.agreement.against === 'pytorch' ? 'PyTorch' : r.agreement.against}` : '-';
    const status = r.error ? `ERROR: ${r.error.split('\n')[0].slice(0, 60)}` : ratio ? `${ratio.ratio.toFixed(2)} vs ${ratio.peer}` : '';
    return [r.engine, e.threads, fmt(r.sentencesPerSec, 1), fmt(r.medianMs, 1), fmt(r.minMs, 1), r.reps ?? '-', fmt(r.gflops), r.cpuPerWall != null ? r.cpuPerWall.toFixed(2) : '-', agree, status];
  });
  return [
    `== Encoder: ${wl.layers} layers, ${wl.dModel} dims, ${wl.numHeads} heads, FFN ${wl.ffn} (MiniLM-L6 shape, random weights); ${wl.batch} sentences x ${wl.seqLen} tokens, mean pooling + L2 norm ==`,
    table(['engine', 'threads', 'sentences/s', 'ms/batch', 'min ms', 'reps', 'GFLOP/s', 'cpu/wall', 'max|diff|', 'ratio'], rows, [1, 2, 3, 4, 5, 6, 7]),
    `ms/batch: median of one call embedding all ${wl.batch} sentences; sentences/s = ${wl.batch} / ms/batch. max|diff|: of the ${wl.batch} x ${wl.dModel} embeddings, tolerance ${wl.absTolerance}, checked before timing.`,
    'Peer: onnxruntime-web running torch.onnx.export of the same PyTorch module and weights (bench/encoder/export.py). Ours: loadModel + embed.',
  ];
}

export function formatReport(res) {
  const out = [];
  const byId = Object.fromEntries(res.engines.map((e) => [e.id, e]));
  const peakG = res.peak?.gflops;

  const m = res.meta;
  out.push('', `Machine: ${m.cpu}, ${m.cores} cores, load average ${m.loadavg.map((x) => x.toFixed(2)).join(' ')} at start; Node ${m.node}.`);
  out.push('', `== Results (${res.meta.quick ? 'quick' : 'full'} run; medians of ${res.meta.quick ? 'few' : 'many'} reps; ratio = ours / fastest peer, < 1 is faster) ==`);
  // Grouped by workload (in the workloads' order), engines in the registry's order.
  const wlOrder = res.meta.workloads.map((w) => w.name);
  const engOrder = res.engines.map((e) => e.id);
  const sorted = [...res.rows].sort((a, b) => wlOrder.indexOf(a.workload) - wlOrder.indexOf(b.workload) || engOrder.indexOf(a.engine) - engOrder.indexOf(b.engine));
  const rows = sorted.map((r) => {
    const e = byId[r.engine];
    const ratio = res.ratios.find((x) => x.workload === r.workload && x.engine === r.engine);
    const pctPeak = peakG && r.gflops && !e.native ? `${((100 * r.gflops) / (peakG * e.threads)).toFixed(0)}%` : '-';
    const agree = r.agreement ? `${agreeText(r.agreement)}${r.agrees ? '' : ' DISAGREES'}` : (r.isReference ? 'reference' : '-');
    const status = r.error ? `ERROR: ${r.error.split('\n')[0].slice(0, 60)}` : ratio ? `${ratio.ratio.toFixed(2)} vs ${ratio.peer}` : '';
    return [r.workload, r.engine, agree, fmt(r.firstCallMs, 3), fmt(r.medianMs, 3), fmt(r.minMs, 3), r.reps ?? '-', fmt(r.gflops), pctPeak, r.cpuPerWall != null ? r.cpuPerWall.toFixed(2) : '-', status];
  });
  out.push(table(['workload', 'engine', 'agree(rel)', 'first ms', 'median ms', 'min ms', 'reps', 'GFLOP/s', '%peak', 'cpu/wall', 'ratio'], rows, [3, 4, 5, 6, 7, 8, 9]));
  out.push(`%peak: GFLOP/s / (measured WASM SIMD peak x threads); not given for native. agree(rel): max|out - ours-simd| / max|ours-simd|, tolerance ${res.meta.tolerance}.`);
  const absWl = res.meta.workloads.filter((w) => w.absTolerance != null);
  if (absWl.length) out.push(`${absWl.map((w) => w.name).join(', ')}: agree is 'abs' max|out - ours-simd| (ours-simd: vs PyTorch's output), tolerance ${absWl.map((w) => w.absTolerance).join(', ')}.`);
  if (res.meta.workloads.some((w) => w.kind === 'generate')) out.push("generate: agree is how many of the new token ids equal PyTorch's greedy ones (every engine checked against PyTorch); median ms is a whole generation.");
  out.push('cpu/wall: CPU time over wall time while timed; below 1 (1 thread) or 2 (2 threads) the engine was waiting for a core, so its numbers are inflated by other load.');

  const speedups = threadSpeedups(res.rows, res.engines);
  if (speedups.length) {
    out.push('', '== 2 threads vs 1 thread (speed-up = 1-thread median / 2-thread median) ==');
    out.push(speedupTable(speedups, wlOrder));
  }

  for (const wl of res.meta.workloads.filter((w) => w.kind === 'encoder')) out.push('', ...encoderSection(res, wl, byId));
  for (const wl of res.meta.workloads.filter((w) => w.kind === 'generate')) out.push('', ...generateSection(res, wl));

  if (res.skippedWorkloads?.length) {
    out.push('', '== Workloads not run ==');
    for (const w of res.skippedWorkloads) out.push(`${w.workload}: ${w.reason}`);
  }
  if (res.failures?.length) {
    out.push('', '== FAILED: outputs differ (not timed) ==');
    for (const f of res.failures) out.push(f);
  }

  const skipped = res.engines.filter((e) => e.status !== 'ok');
  if (skipped.length) {
    out.push('', '== Engines not run ==');
    for (const e of skipped) out.push(`${e.id}: ${e.status}${e.reason ? ` (${e.reason})` : ''}`);
  }

  out.push('', `== Targets (issue 5${res.targets.some((t) => t.target.startsWith('generate')) ? '; generate: issues 9 and 22' : ''}; marked: issue 10) ==`);
  for (const t of res.targets) out.push(`${t.met == null ? 'n/a   ' : t.met ? 'met   ' : 'MISSED'}  ${t.target}: ${t.detail}`);

  if (res.peak) {
    out.push('', '== WASM peak on this machine (one thread) ==');
    if (res.peak.skip) out.push(`skipped: ${res.peak.skip}`);
    else out.push(`f32x4 mul+add: ${fmt(res.peak.gflops)} GFLOP/s (best of ${Object.entries(res.peak.variants).filter(([n]) => n.startsWith('simd')).map(([n, g]) => `${n.replace('simd_chains_', '')} chains ${fmt(g)}`).join(', ')}); scalar f32: ${fmt(res.peak.scalarGflops)} GFLOP/s${res.peak.runs ? `; best of two runs (before/after the engines: ${res.peak.runs.map((g) => fmt(g)).join(' / ')})` : ''}`);
  }
  if (res.bandwidth) out.push(bandwidthLine(res.bandwidth));

  out.push('', '== .wasm sizes ==');
  out.push(table(['package', 'file', 'raw', 'gzip'], res.sizes.map((s) => [s.owner, s.file.split('/').pop(), fmtBytes(s.rawBytes), fmtBytes(s.gzipBytes)]), [2, 3]));

  out.push('', '== Load (fresh process) and first call ==');
  const loadRows = res.engines.filter((e) => e.status === 'ok').map((e) => {
    const firsts = res.rows.filter((r) => r.engine === e.id && r.firstCallMs != null && r.medianMs != null)
      .map((r) => `${r.workload} ${fmt(r.firstCallMs)}/${fmt(r.medianMs)}`);
    const inst = e.info?.instantiateMs != null ? fmt(e.info.instantiateMs) : '-';
    return [e.id, e.loadMs != null ? fmt(e.loadMs) : '-', inst, firsts.join(', ')];
  });
  out.push(table(['engine', 'load ms', 'instantiate ms', 'first call / warm median ms per workload'], loadRows, [1, 2]));
  out.push('load = import + instantiate (ORT: first wasm session; tfjs: setBackend); native: build only. The first workload\'s first call is the coldest.');

  if (res.browser) out.push('', ...browserSection(res.browser));

  return out.join('\n');
}

/** The bandwidth probe's line (bench/peak/bandwidth.mjs): memory.copy and the v128.load read stream (1 and 2 threads). */
function bandwidthLine(b) {
  if (b.skip) return `memory bandwidth: skipped (${b.skip})`;
  const runs = b.runs ? `; best of two runs (before/after the engines: copy ${b.runs.map((r) => fmt(r.copyGBs, 1)).join(' / ')}, read ${b.runs.map((r) => fmt(r.readGBs, 1)).join(' / ')}, 2-thread read ${b.runs.map((r) => fmt(r.read2GBs, 1)).join(' / ')})` : '';
  return `memory bandwidth over ${b.bufferBytes >> 20} MiB buffers: memory.copy ${fmt(b.copyGBs, 1)} GB/s (bytes copied), v128.load read stream ${fmt(b.readGBs, 1)} GB/s on one thread, ${fmt(b.read2GBs, 1)} GB/s on two${runs}`;
}

const shape = (w) => `B${w.batch} S${w.seqLen} D${w.dModel} H${w.numHeads}${w.causal ? ' causal' : ''}`;

/**
 * bench/layers/browser.mjs's result (also `npm run bench -- --browser`): one table per layer workload,
 * ours / the fastest onnxruntime-web graph at the same thread count, and the N-thread / 1-thread
 * speed-up per engine family.
 */
export function browserSection(b) {
  const out = ['== Browser: headless Chromium, layer workloads, 1 and N threads (each thread count in a fresh page) =='];
  if (b.error) return [...out, `failed: ${b.error}`];
  const m = b.meta ?? {};
  out.push(`${(b.userAgent ?? '').match(/HeadlessChrome\/[\d.]+/)?.[0] ?? 'Chromium'}; crossOriginIsolated ${b.crossOriginIsolated}; hardwareConcurrency ${b.hardwareConcurrency} -> threads ${b.threadCounts.join(' and ')}`
    + `${m.loadavg ? `; load average ${m.loadavg.map((x) => x.toFixed(2)).join(' ')} at start, ${m.loadavgEnd?.map((x) => x.toFixed(2)).join(' ') ?? '-'} at end` : ''}${m.quick ? ' (quick run)' : ''}.`);
  out.push(`Only the layer workloads run here (${b.workloads.map((w) => w.name).join(', ')}); encoder and generate run in Node only (npm run bench).`);
  out.push(table(['engine', 'threads', 'build', 'load ms'], b.engines.map((e) => [e.id, e.threads,
    e.role === 'ours' ? `${e.variant}, ${e.libThreads} thread${e.libThreads > 1 ? 's' : ''}` : `onnxruntime-web ${e.version ?? ''} numThreads ${e.numThreads}`, fmt(e.loadMs)]), [1, 3]));
  out.push('load: loadAttention (ours) or import + wasm start (onnxruntime-web), once per page.');
  const ratios = computeRatios(b.rows, b.engines, { sameThreads: true });
  for (const wl of b.workloads) {
    const rows = b.rows.filter((r) => r.workload === wl.name);
    if (!rows.length) continue;
    out.push('', `-- ${wl.name} (${shape(wl)}) --`);
    out.push(table(['engine', 'threads', 'first ms', 'median ms', 'min ms', 'reps', 'GFLOP/s', 'agree(rel)', 'ratio'], rows.map((r) => {
      const ratio = ratios.find((x) => x.workload === r.workload && x.engine === r.engine);
      const agree = r.agreement ? `${agreeText(r.agreement)}${r.agrees ? '' : ' DISAGREES'}` : (r.isReference ? 'reference' : '-');
      if (r.error) return [r.engine, r.threads, '-', '-', '-', '-', '-', agree, `ERROR: ${r.error.split('\n')[0].slice(0, 70)}`];
      return [r.engine, r.threads, fmt(r.firstCallMs, 3), fmt(r.medianMs, 3), fmt(r.minMs, 3), r.reps, fmt(r.gflops), agree, ratio ? `${ratio.ratio.toFixed(2)} vs ${ratio.peer}` : ''];
    }), [1, 2, 3, 4, 5, 6]));
  }
  out.push('', `ratio: ours / the fastest onnxruntime-web graph at the same thread count (< 1: ours faster). agree(rel): max|out - ours-simd| / max|ours-simd|, tolerance ${b.meta?.tolerance ?? '-'}; the N-thread page runs ours-simd untimed for it.`);
  out.push('No cpu/wall in a page: N-thread figures mean something only with N cores free (see the load average).');
  const speedups = threadSpeedups(b.rows, b.engines);
  if (speedups.length) {
    const n = [...new Set(speedups.map((x) => x.threads))].join('/');
    out.push('', `== Browser: ${n} threads vs 1 thread (speed-up = 1-thread median / ${n}-thread median) ==`);
    out.push(speedupTable(speedups, b.workloads.map((w) => w.name)));
  }
  if (b.problems?.length) {
    out.push('', '== Browser: PROBLEMS ==');
    for (const p of b.problems) out.push(p);
  }
  return out;
}
