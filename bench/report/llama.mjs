// The Llama decode bench's checks and table (bench/llama/browser.mjs): token agreement between
// llama.cpp and ours, onnxruntime-web and ours, every engine and PyTorch, the counts llama.cpp
// reports, and per type and thread count prefill ms, decode tokens/s, GB/s of weights read against
// the page's bandwidth, memory, and our ratios to llama.cpp and to onnxruntime-web at equal precision.
import { GGML_TYPE, typeBytes } from '../../tools/gguf/ggml_quant.mjs';
import { ggufName, K_MIXES, matrixTypes } from '../llama/gguf.mjs';
import { llamaShapes } from '../llama/weights.mjs';

/** A divergence counts as a near-tie when the top-2 margin is below this share of the logit range. */
export const TIE_SHARE = 1e-4;

/**
 * Bytes of weights one decode step reads: every matrix once (the tied embedding as the head), at
 * its type in the GGUF file (the K mixes: each tensor's), or one byte a weight for onnxruntime-web's
 * int8 graph (a scale per tensor).
 */
export function weightBytesPerToken(config, type, engine) {
  const types = matrixTypes(config, type);
  const bytes = (hf, n) => (engine === 'onnxruntime-web 8-bit' ? n : typeBytes(GGML_TYPE[types[ggufName(hf, config)]], n));
  return llamaShapes(config).filter(([, s]) => s.length === 2).reduce((sum, [hf, s]) => sum + bytes(hf, s[0] * s[1]), 0);
}

/** "Q5_0 x 150, Q6_K x 14, ...": the matrix types a file of `type` mixes (null for a single type). */
export function mixOf(config, type) {
  if (!K_MIXES.includes(type)) return null;
  const count = {};
  for (const t of Object.values(matrixTypes(config, type))) count[t] = (count[t] ?? 0) + 1;
  return Object.entries(count).map(([t, n]) => `${t} x ${n}`).join(', ');
}

/** The onnxruntime-web engine at the same precision as a GGUF type (null: none). */
export const ortPeerOf = (type) => ({ F32: 'onnxruntime-web', Q8_0: 'onnxruntime-web 8-bit' })[type] ?? null;
const ENGINES = ['llama.cpp', 'ours', 'ours (relaxed)', 'ours (safetensors)', 'onnxruntime-web', 'onnxruntime-web 8-bit'];

const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

/** How many tokens lead equal, and where the two lists first differ (null: nowhere). */
export function sameTokens(a, b) {
  const n = Math.max(a.length, b.length);
  let equal = 0;
  while (equal < n && a[equal] === b[equal]) equal++;
  return { n, equal, firstDiff: equal === n ? null : equal };
}

/**
 * Where llama.cpp's and our greedy tokens first differ (null: nowhere), how many lead equal, the
 * margin llama.cpp saw there (its top-2 log-probabilities' difference = the logits' difference),
 * and whether each side gave the same tokens on every repetition.
 */
export function tokenAgreement(llama, ours) {
  const a = llama.runs[0].tokens, b = ours.runs[0].tokens;
  const { n, equal, firstDiff } = sameTokens(a, b);
  return {
    n, equal, firstDiff, llamaTokens: a, ourTokens: b,
    llamaMargin: firstDiff == null ? null : llama.runs[0].margins[firstDiff] ?? null,
    llamaRepeatable: llama.runs.every((r) => same(r.tokens, a)), oursRepeatable: ours.runs.every((r) => same(r.tokens, b)),
    llamaTextMatches: llama.runs.every((r) => r.textIds && same(r.textIds, r.tokens)),
  };
}

/** Whether a divergence is a near-tie: our top-2 margin there below TIE_SHARE of our logit range. */
export const nearTie = (a) => a.firstDiff == null || (a.ours && a.ours.margin < TIE_SHARE * a.ours.range);

/** What must hold for the run to count (an empty list when all does). */
function checks(res) {
  const p = [];
  const N = res.meta.newTokens;
  for (const r of res.runs) {
    const id = `${r.type} ${r.threads}t ${r.engine}`;
    if (r.error) { p.push(`${id}: ${r.error}`); continue; }
    for (const e of r.pageErrors ?? []) p.push(`${id}: page error ${e}`);
    if (r.engine === 'llama.cpp') {
      if (!r.promptN.every((x) => x === res.promptIds.length)) p.push(`${id}: prompt_n ${r.promptN.join('/')} (the prompt is ${res.promptIds.length} tokens)`);
      if (!r.predictedN.every((x) => x === N)) p.push(`${id}: predicted_n ${r.predictedN.join('/')} (asked ${N})`);
      if (!r.cacheN.every((x) => x === 0)) p.push(`${id}: cache_n ${r.cacheN.join('/')}: the prompt cache was used`);
      const pool = /pthreadPoolSize: (\d+)/.exec(r.multithread ?? '')?.[1];
      if (r.threads > 1 && Number(pool) !== r.threads) p.push(`${id}: wllama started ${r.multithread ?? 'no thread pool'}`);
      for (const e of r.errors) p.push(`${id}: ${e}`);
    } else if (r.engine.startsWith('onnxruntime-web')) {
      if (r.numThreads !== r.threads) p.push(`${id}: numThreads ${r.numThreads}`);
    } else {
      const variant = r.engine === 'ours (relaxed)' ? 'relaxed' : r.threads > 1 ? 'simd-threads' : 'simd';
      if (r.variant !== variant || r.libThreads !== r.threads) p.push(`${id}: variant ${r.variant} at ${r.libThreads} threads`);
      if (!r.runs.every((x) => x.tokens.length === N)) p.push(`${id}: generated ${r.runs.map((x) => x.tokens.length).join('/')} tokens (asked ${N})`);
      // The relaxed build's products are the SIMD build's sums (exact integer dots), so its tokens are too.
      const simd = r.engine === 'ours (relaxed)' && res.runs.find((x) => x.engine === 'ours' && x.type === r.type && x.threads === r.threads && !x.error);
      if (simd && sameTokens(r.runs[0].tokens, simd.runs[0].tokens).firstDiff != null) p.push(`${id}: greedy tokens differ from the SIMD build's at step ${sameTokens(r.runs[0].tokens, simd.runs[0].tokens).firstDiff}`);
    }
  }
  for (const a of res.agreement) {
    const id = `${a.type} ${a.threads}t`;
    if (!a.llamaTextMatches) p.push(`${id}: llama.cpp's text does not name the ids it reports`);
    if (!a.llamaRepeatable || !a.oursRepeatable) p.push(`${id}: tokens changed between repetitions (llama.cpp ${a.llamaRepeatable}, ours ${a.oursRepeatable})`);
    if (a.type === 'F32' && !nearTie(a)) p.push(`${id}: greedy tokens differ at step ${a.firstDiff} with our top-2 margin ${a.ours?.margin} (not below ${TIE_SHARE} of the logit range ${a.ours?.range})`);
  }
  return p;
}

const fmt = (v, d = 1) => (v == null || !Number.isFinite(v) ? '-' : v.toFixed(d));
const mib = (b) => (b ? (b / 2 ** 20).toFixed(0) : '-');

/** Where onnxruntime-web's tokens part from ours (the 8-bit graph: with our logits there), and our speed against it. */
function ortAgreementLines(res, find) {
  const lines = [];
  for (const a of res.ortAgreement ?? []) {
    const engine = a.engine ?? 'onnxruntime-web', ort = find(a.type, a.threads, engine), ours = find(a.type, a.threads, 'ours');
    const o = a.ours, ex = o?.exact;
    const logit = (facts, id) => facts.picks.find((p) => p.id === id)?.logit;
    const [theirs, mine] = a.firstDiff == null ? [] : [a.ortTokens[a.firstDiff], a.ourTokens[a.firstDiff]];
    const where = a.firstDiff == null ? `all ${a.n} equal`
      : `first differ at step ${a.firstDiff} (${a.equal} equal before): ORT ${theirs}, ours ${mine}`
        + (o ? `; there our logits ${fmt(logit(o, theirs), 3)} and ${fmt(logit(o, mine), 3)} (top-2 margin ${fmt(o.margin, 3)})` : '')
        + (ex ? `; our Q8_0 weights held as float32 (no 8-bit activations): ${fmt(logit(ex, theirs), 3)} and ${fmt(logit(ex, mine), 3)} (top ${ex.top[0]} by ${fmt(ex.margin, 3)})` : '');
    lines.push(`  ${a.type} ${a.threads}t ${engine} vs ours: ${where}; ours ${a.type === 'Q8_0' ? 'q8' : 'f32'} decodes ${fmt(ours.decodeTokPerS / ort.decodeTokPerS, 2)}x its tokens/s, prefill in ${fmt(ours.prefillMs / ort.prefillMs, 2)}x its time`);
  }
  return lines;
}

const VS = { f64: 'float64 PyTorch', f16: 'PyTorch on the f16-rounded weights', int8: "PyTorch with onnxruntime's int8 quantization simulated" };

/** Each engine's greedy tokens against PyTorch's (llama/reference.py), with PyTorch's margin where they part. */
function pytorchLines(res) {
  if (!res.pytorch) return [];
  if (res.pytorch.skip) return ['', `Greedy tokens vs PyTorch: not checked (${res.pytorch.skip})`];
  const lines = ['', `Greedy tokens vs PyTorch (bench/llama/reference.py; float32 PyTorch = float64 for ${sameTokens(res.pytorch.f32.ids, res.pytorch.f64.ids).equal} of ${res.meta.newTokens}, smallest float64 top-2 margin ${Math.min(...res.pytorch.f64.margin).toExponential(2)}): F32 engines and ours at F16 must equal it or are not timed`];
  for (const a of res.pytorchAgreement ?? []) {
    const ref = res.pytorch[a.vs];
    const where = a.firstDiff == null ? `all ${a.n} equal`
      : `${a.equal}/${a.n}, then PyTorch's ${a.firstDiff < ref.ids.length ? `${ref.ids[a.firstDiff]} (runner-up ${ref.second[a.firstDiff]}, top-2 margin ${fmt(ref.margin[a.firstDiff], 3)})` : '-'}`;
    lines.push(`  ${a.type} ${a.threads}t ${a.engine}: = ${VS[a.vs]} ${where}${a.vs !== 'f64' ? `; = float64 PyTorch for ${a.floatEqual}` : ''}`);
  }
  return lines;
}

/**
 * Issue 23's target, "ahead of onnxruntime-web at equal precision at 1 and 2 threads": ours f32
 * against ORT float32 and ours q8 against ORT 8-bit, decode tokens/s and prefill time, each met or missed.
 */
function targetLines(res, find) {
  const lines = [];
  for (const r of res.runs) {
    const peer = r.engine === 'ours' && !r.error && ortPeerOf(r.type) ? find(r.type, r.threads, ortPeerOf(r.type)) : null;
    if (!peer) continue;
    const decode = r.decodeTokPerS / peer.decodeTokPerS, prefill = r.prefillMs / peer.prefillMs;
    lines.push(`  ours ${r.type === 'F32' ? 'f32' : 'q8'} vs ${peer.engine}, ${r.threads} thread${r.threads > 1 ? 's' : ''}: decode ${fmt(decode, 2)}x its tokens/s (${decode > 1 ? 'met' : 'missed'}), prefill ${fmt(prefill, 2)}x its time (${prefill < 1 ? 'met' : 'missed'})`);
  }
  return lines.length ? ['', 'Issue 23\'s target: ahead of onnxruntime-web at equal precision, 1 and 2 threads:', ...lines] : [];
}

const met = (ok) => (ok ? 'met' : 'missed');

/**
 * Issue 33's targets: Q4_K_M decode >= 4x llama.cpp on the same file at 1 thread and >= 2x its
 * fastest type; Q5_K_M and Q6_K >= 3x on the same file; Q8_0 and Q4_0 from GGUF no slower than
 * from safetensors; a GGUF's load no slower than llama.cpp's and the renderer's peak no higher.
 */
function issue33Lines(res, find) {
  const lines = [];
  const threadCounts = [...new Set(res.runs.map((r) => r.threads))];
  const WANT = { Q4_K_M: 4, Q5_K_M: 3, Q6_K: 3 };
  for (const threads of threadCounts) {
    const llamas = res.runs.filter((r) => r.engine === 'llama.cpp' && r.threads === threads && !r.error);
    const fastest = llamas.reduce((a, r) => (!a || r.decodeTokPerS > a.decodeTokPerS ? r : a), null);
    for (const type of K_MIXES) {
      const ours = find(type, threads, 'ours'), llama = find(type, threads, 'llama.cpp');
      if (!ours || !llama) continue;
      const x = ours.decodeTokPerS / llama.decodeTokPerS;
      const target = type !== 'Q4_K_M' || threads === 1 ? ` (target >= ${WANT[type]}x: ${met(x >= WANT[type])})` : ` (the target, >= ${WANT[type]}x, is stated at 1 thread)`;
      let line = `  ${type} ${threads}t: ours ${fmt(ours.decodeTokPerS)} tok/s, llama.cpp ${fmt(llama.decodeTokPerS)}: ${fmt(x, 2)}x on the same file${target}`;
      if (type === 'Q4_K_M' && fastest) {
        const y = ours.decodeTokPerS / fastest.decodeTokPerS;
        line += `; ${fmt(y, 2)}x llama.cpp's fastest type here (${fastest.type}, ${fmt(fastest.decodeTokPerS)} tok/s)${threads === 1 ? ` (target >= 2x: ${met(y >= 2)})` : ''}`;
      }
      lines.push(line);
    }
    for (const type of ['Q8_0', 'Q4_0']) {
      const g = find(type, threads, 'ours'), st = find(type, threads, 'ours (safetensors)');
      if (!g || !st) continue;
      const x = g.decodeTokPerS / st.decodeTokPerS;
      const tokens = sameTokens(g.runs[0].tokens, st.runs[0].tokens);
      lines.push(`  ${type} ${threads}t: ours from GGUF ${fmt(g.decodeTokPerS)} tok/s, from safetensors ${fmt(st.decodeTokPerS)}: ${fmt(x, 2)}x (no slower: ${met(x >= 1)}); prefill ${fmt(g.prefillMs, 0)} / ${fmt(st.prefillMs, 0)} ms, load ${fmt(g.loadMs, 0)} / ${fmt(st.loadMs, 0)} ms; tokens ${tokens.firstDiff == null ? `all ${tokens.n} equal` : `first differ at step ${tokens.firstDiff}`}${type === 'Q4_0' ? " (loadModel's q4 holds the tied embedding / head at Q8_0, the file at Q4_0: not quite the same network)" : ''}`);
    }
  }
  const loads = [];
  for (const threads of threadCounts) {
    for (const type of [...new Set(res.runs.map((r) => r.type))]) {
      const ours = find(type, threads, 'ours'), llama = find(type, threads, 'llama.cpp');
      if (!ours || !llama) continue;
      loads.push(`  ${type} ${threads}t: load ${fmt(ours.loadMs, 0)} ms against llama.cpp's ${fmt(llama.loadMs, 0)} (${met(ours.loadMs <= llama.loadMs)}); renderer peak ${mib(ours.rendererPeakBytes)} MiB against ${mib(llama.rendererPeakBytes)} (${met(ours.rendererPeakBytes <= llama.rendererPeakBytes)})`);
    }
  }
  if (!lines.length && !loads.length) return [];
  return ['', "Issue 33's targets (ours loads the GGUF file llama.cpp loads; decode tokens/s):", ...lines,
    ...(loads.length ? ['  load of the GGUF (page fetch + parse + heap, ours incl. instantiating the module) and the renderer\'s peak, no slower / no higher than llama.cpp:', ...loads] : [])];
}

/** The page's read stream (GB/s) at a thread count: the 1-thread probe at 1, the 2-worker one above (null: not measured). */
export const readStreamAt = (bw, threads) => (threads === 1 ? bw.readGBs : bw.read2GBs) ?? null;

/** Issue 35's shares of the read stream, per GGUF type and thread count (1, 2). */
export const WALL_TARGETS = { F32: [90, 75], Q8_0: [70, 60], Q4_0: [50, 45] };

/**
 * Issue 35's targets for ours on the GGUF file: decode GB/s of weights as a share of the page's
 * read stream measured in the same run at the same thread count (F32 >= 90 / 75 %, Q8_0 >= 70 / 60,
 * Q4_0 >= 50 / 45 at 1 / 2 threads), Q8_0 and Q4_0 at 2 threads >= 1.6x their 1-thread tokens/s,
 * and every type >= 1.1x llama.cpp's F32 tokens/s at the same thread count.
 */
export function issue35Lines(res, find) {
  const bw = res.bandwidth ?? {};
  const lines = [];
  for (const [type, want] of Object.entries(WALL_TARGETS))
    for (const [i, threads] of [1, 2].entries()) {
      const r = find(type, threads, 'ours');
      const stream = readStreamAt(bw, threads);
      if (!r) continue;
      const gbs = (weightBytesPerToken(res.meta.config, type, 'ours') * r.decodeTokPerS) / 1e9;
      let line = `  ${type} ${threads}t: ${fmt(r.decodeTokPerS)} tok/s, ${fmt(gbs)} GB/s of weights`;
      if (stream) line += ` = ${fmt((100 * gbs) / stream, 0)} % of the ${threads}-thread read stream (${fmt(stream)} GB/s; target >= ${want[i]} %: ${met((100 * gbs) / stream >= want[i])})`;
      const one = find(type, 1, 'ours');
      if (threads === 2 && type !== 'F32' && one) {
        const x = r.decodeTokPerS / one.decodeTokPerS;
        line += `; ${fmt(x, 2)}x its 1-thread tokens/s (target >= 1.6x: ${met(x >= 1.6)})`;
      }
      const llamaF32 = find('F32', threads, 'llama.cpp');
      if (llamaF32) {
        const x = r.decodeTokPerS / llamaF32.decodeTokPerS;
        line += `; ${fmt(x, 2)}x llama.cpp's F32 (target >= 1.1x: ${met(x >= 1.1)})`;
      }
      lines.push(line);
    }
  return lines.length ? ['', "Issue 35's targets (ours on the GGUF file; the read stream of this run's page):", ...lines] : [];
}

/** { lines, problems }: the table, the agreement and the checks. */
export function llamaReport(res) {
  const bw = res.bandwidth ?? {};
  const lines = [
    `Llama decode in headless Chromium (${res.userAgent?.match(/HeadlessChrome\/[\d.]+/)?.[0] ?? 'Chromium'}, crossOriginIsolated ${res.crossOriginIsolated}): ${res.meta.model} random weights, ${res.promptIds.length} prompt + ${res.meta.newTokens} greedy tokens, medians of ${res.meta.reps}; ours vs llama.cpp (wllama ${res.meta.wllama}), both loading the same GGUF file ('ours (safetensors)': ours from a safetensors checkpoint of the same values)`,
    `machine: ${res.meta.cpu}, ${res.meta.cores} cores, load average ${res.meta.loadavg.map((x) => x.toFixed(2)).join(' ')} at start, ${res.meta.loadavgEnd?.map((x) => x.toFixed(2)).join(' ')} at end`,
    `page bandwidth (128 MiB a thread): memory.copy ${fmt(bw.copyGBs)} GB/s (1 thread), v128.load read stream ${fmt(bw.readGBs)} GB/s on 1 thread and ${fmt(bw.read2GBs)} GB/s on 2${bw.skip ? ` (skipped: ${bw.skip})` : ''}; an idle page's renderer: ${mib(res.idleRendererBytes)} MiB`,
    ...[...new Set(res.runs.map((r) => r.type))].filter((t) => mixOf(res.meta.config, t)).map((t) => `${t}: llama-quantize's mix for this shape, matrices ${mixOf(res.meta.config, t)} (a row that is not whole 256-value blocks falls back)`),
    `GB/s = weight bytes a decode step reads (every matrix once at its type in the file, the tied embedding as the head) x decode tok/s; of read = that over the page's read stream at the row's thread count (1 or 2), of copy = over memory.copy (1 thread); heap = our WebAssembly memory; renderer = the page's renderer RSS: its peak (load included: our checkpoint is built in the page, llama.cpp's GGUF fetched as a blob, ORT's graph serialized) / its peak while generating, after a GC`,
    '',
    '| type | threads | engine | prefill ms | decode tok/s | weights GB/s | of read / copy | heap MiB | renderer MiB: peak / generating | decode vs llama.cpp | prefill vs llama.cpp | decode vs ORT | prefill vs ORT |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const find = (type, threads, engine) => res.runs.find((r) => r.type === type && r.threads === threads && r.engine === engine && !r.error);
  const keys = [...new Set(res.runs.map((r) => `${r.threads}|${r.type}`))];
  for (const key of keys) {
    const [t, type] = key.split('|');
    const threads = Number(t);
    const llama = find(type, threads, 'llama.cpp');
    const ort = find(type, threads, ortPeerOf(type));
    // decode: our tokens/s / the other's (above 1: ours faster); prefill: our ms / the other's (below 1: ours faster).
    const ratios = (r, other) => (other ? [`${fmt(r.decodeTokPerS / other.decodeTokPerS, 2)}x`, `${fmt(r.prefillMs / other.prefillMs, 2)}x`] : ['', '']);
    for (const engine of ENGINES) {
      const r = find(type, threads, engine);
      if (!r && !res.runs.some((x) => x.type === type && x.threads === threads && x.engine === engine)) continue;
      if (!r) { lines.push(`| ${type} | ${threads} | ${engine} | failed | | | | | | | | | |`); continue; }
      const gbs = (weightBytesPerToken(res.meta.config, type, engine) * r.decodeTokPerS) / 1e9;
      const vs = engine !== 'llama.cpp' ? ratios(r, llama) : ['', ''];
      const vsOrt = engine.startsWith('ours') ? ratios(r, ort) : ['', ''];
      const stream = readStreamAt(bw, threads);
      lines.push(`| ${type} | ${threads} | ${engine} | ${fmt(r.prefillMs, 0)} | ${fmt(r.decodeTokPerS)} | ${fmt(gbs)} | ${stream ? `${fmt((100 * gbs) / stream, 0)}% / ${fmt((100 * gbs) / bw.copyGBs, 0)}%` : '-'} | ${engine.startsWith('ours') ? mib(r.heapBytes) : '-'} | ${mib(r.rendererPeakBytes)} / ${mib(r.rendererRunPeakBytes)} | ${vs[0]} | ${vs[1]} | ${vsOrt[0]} | ${vsOrt[1]} |`);
    }
  }
  lines.push('', 'Greedy tokens, llama.cpp vs ours (the same GGUF file on both sides):');
  for (const a of res.agreement) {
    const where = a.firstDiff == null ? `all ${a.n} equal`
      : `first differ at step ${a.firstDiff} (${a.equal} equal before): llama.cpp ${a.llamaTokens[a.firstDiff]}, ours ${a.ourTokens[a.firstDiff]}; there our top-2 margin ${a.ours?.margin?.toExponential(2)} of a logit range ${fmt(a.ours?.range, 2)} (${a.ours ? (a.ours.margin / a.ours.range).toExponential(1) : '-'}), llama.cpp's ${a.llamaMargin?.toExponential(2) ?? '-'}${nearTie(a) ? ': a near-tie' : ''}`;
    lines.push(`  ${a.type} ${a.threads}t: ${where}`);
    const ex = a.ours?.exact;
    if (ex) {
      const logit = (facts, id) => facts.picks.find((p) => p.id === id)?.logit;
      const [l, o] = [a.llamaTokens[a.firstDiff], a.ourTokens[a.firstDiff]];
      const k = K_MIXES.includes(a.type);
      lines.push(`    the same ${a.type} weights as float32 (no 8-bit activations): top ${ex.top[0]} by ${fmt(ex.margin, 3)}, llama.cpp's ${l} at ${fmt(logit(ex, l), 3)}, ours ${o} at ${fmt(logit(ex, o), 3)} (ours with 8-bit activations: ${fmt(logit(a.ours, l), 3)}, ${fmt(logit(a.ours, o), 3)}). Both sides quantize activations to 8 bits per block (llama.cpp: ${k ? 'Q8_K, 256 values with a float32 scale, for the K-quant tensors and Q8_0/Q8_1 with f16 scales for the rest' : 'blocks of 32 with f16 scales'}; ours: its own per-block scales): where they part, the choice is within what that moves`);
    }
  }
  lines.push(...ortAgreementLines(res, find), ...pytorchLines(res), ...targetLines(res, find), ...issue33Lines(res, find), ...issue35Lines(res, find));
  const problems = checks(res);
  if (problems.length) lines.push('', 'PROBLEMS:', ...problems.map((p) => `  ${p}`));
  return { lines, problems };
}
