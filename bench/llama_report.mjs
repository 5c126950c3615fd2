// The Llama decode bench's checks and table (bench/llama_browser.mjs): token agreement between
// llama.cpp and ours, the counts llama.cpp reports, and per type and thread count prefill ms,
// decode tokens/s, GB/s of weights read against the page's bandwidth, and memory.
import { GGML_TYPE, typeBytes } from './ggml_quant.mjs';
import { llamaShapes } from './llama_weights.mjs';

/** A divergence counts as a near-tie when the top-2 margin is below this share of the logit range. */
export const TIE_SHARE = 1e-4;

/** Bytes of weights one decode step reads: every matrix once (the tied embedding as the head). */
export function weightBytesPerToken(config, type) {
  return llamaShapes(config).filter(([, s]) => s.length === 2).reduce((sum, [, s]) => sum + typeBytes(GGML_TYPE[type], s[0] * s[1]), 0);
}

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
    } else if (r.engine === 'onnxruntime-web') {
      if (r.numThreads !== r.threads) p.push(`${id}: numThreads ${r.numThreads}`);
    } else {
      if (r.variant !== (r.threads > 1 ? 'simd-threads' : 'simd') || r.libThreads !== r.threads) p.push(`${id}: variant ${r.variant} at ${r.libThreads} threads`);
      if (!r.runs.every((x) => x.tokens.length === N)) p.push(`${id}: generated ${r.runs.map((x) => x.tokens.length).join('/')} tokens (asked ${N})`);
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

/** { lines, problems }: the table, the agreement and the checks. */
export function llamaReport(res) {
  const bw = res.bandwidth ?? {};
  const lines = [
    `Llama decode in headless Chromium (${res.userAgent?.match(/HeadlessChrome\/[\d.]+/)?.[0] ?? 'Chromium'}, crossOriginIsolated ${res.crossOriginIsolated}): ${res.meta.model} random weights, ${res.promptIds.length} prompt + ${res.meta.newTokens} greedy tokens, medians of ${res.meta.reps}; ours vs llama.cpp (wllama ${res.meta.wllama})`,
    `machine: ${res.meta.cpu}, ${res.meta.cores} cores, load average ${res.meta.loadavg.map((x) => x.toFixed(2)).join(' ')} at start, ${res.meta.loadavgEnd?.map((x) => x.toFixed(2)).join(' ')} at end`,
    `page bandwidth (1 thread, 128 MiB): memory.copy ${fmt(bw.copyGBs)} GB/s, v128.load read ${fmt(bw.readGBs)} GB/s${bw.skip ? ` (skipped: ${bw.skip})` : ''}; an idle page's renderer: ${mib(res.idleRendererBytes)} MiB`,
    `GB/s = weight bytes a decode step reads (every matrix once, the tied embedding as the head) x decode tok/s; heap = our WebAssembly memory; renderer = the page's renderer RSS: its peak (load included: our checkpoint is built in the page, llama.cpp's GGUF fetched as a blob, ORT's graph serialized) / its peak while generating, after a GC`,
    '',
    '| type | threads | engine | prefill ms | decode tok/s | weights GB/s | of read / copy | heap MiB | renderer MiB: peak / generating | decode vs llama.cpp | prefill vs llama.cpp |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const find = (type, threads, engine) => res.runs.find((r) => r.type === type && r.threads === threads && r.engine === engine && !r.error);
  const keys = [...new Set(res.runs.map((r) => `${r.threads}|${r.type}`))];
  for (const key of keys) {
    const [t, type] = key.split('|');
    const threads = Number(t);
    const llama = find(type, threads, 'llama.cpp');
    for (const engine of ['llama.cpp', 'ours', 'onnxruntime-web']) {
      const r = find(type, threads, engine);
      if (!r && !res.runs.some((x) => x.type === type && x.threads === threads && x.engine === engine)) continue;
      if (!r) { lines.push(`| ${type} | ${threads} | ${engine} | failed | | | | | | | |`); continue; }
      const gbs = (weightBytesPerToken(res.meta.config, type) * r.decodeTokPerS) / 1e9;
      const vs = engine !== 'llama.cpp' && llama ? [`${fmt(r.decodeTokPerS / llama.decodeTokPerS, 2)}x`, `${fmt(r.prefillMs / llama.prefillMs, 2)}x`] : ['', ''];
      lines.push(`| ${type} | ${threads} | ${engine} | ${fmt(r.prefillMs, 0)} | ${fmt(r.decodeTokPerS)} | ${fmt(gbs)} | ${bw.readGBs ? `${fmt((100 * gbs) / bw.readGBs, 0)}% / ${fmt((100 * gbs) / bw.copyGBs, 0)}%` : '-'} | ${engine === 'ours' ? mib(r.heapBytes) : '-'} | ${mib(r.rendererPeakBytes)} / ${mib(r.rendererRunPeakBytes)} | ${vs[0]} | ${vs[1]} |`);
    }
  }
  lines.push('', 'Greedy tokens, llama.cpp vs ours (the same weights: F32/F16 as stored, Q8_0/Q4_0 the very same blocks):');
  for (const a of res.agreement) {
    const where = a.firstDiff == null ? `all ${a.n} equal`
      : `first differ at step ${a.firstDiff} (${a.equal} equal before): llama.cpp ${a.llamaTokens[a.firstDiff]}, ours ${a.ourTokens[a.firstDiff]}; there our top-2 margin ${a.ours?.margin?.toExponential(2)} of a logit range ${fmt(a.ours?.range, 2)} (${a.ours ? (a.ours.margin / a.ours.range).toExponential(1) : '-'}), llama.cpp's ${a.llamaMargin?.toExponential(2) ?? '-'}${nearTie(a) ? ': a near-tie' : ''}`;
    lines.push(`  ${a.type} ${a.threads}t: ${where}`);
    const ex = a.ours?.exact;
    if (ex) {
      const logit = (facts, id) => facts.picks.find((p) => p.id === id)?.logit;
      const [l, o] = [a.llamaTokens[a.firstDiff], a.ourTokens[a.firstDiff]];
      lines.push(`    the same ${a.type} weights as float32 (no 8-bit activations): top ${ex.top[0]} by ${fmt(ex.margin, 3)}, llama.cpp's ${l} at ${fmt(logit(ex, l), 3)}, ours ${o} at ${fmt(logit(ex, o), 3)} (ours with 8-bit activations: ${fmt(logit(a.ours, l), 3)}, ${fmt(logit(a.ours, o), 3)}). Both sides quantize activations to 8 bits per block of 32 (llama.cpp with f16 scales, ours with f32): where they part, the choice is within what that moves`);
    }
  }
  for (const a of res.ortAgreement ?? []) {
    const ort = find(a.type, a.threads, 'onnxruntime-web'), ours = find(a.type, a.threads, 'ours');
    lines.push(`  ${a.type} ${a.threads}t onnxruntime-web vs ours: ${a.firstDiff == null ? `all ${a.n} equal` : `first differ at step ${a.firstDiff}`}; ours decode ${fmt(ours.decodeTokPerS / ort.decodeTokPerS, 2)}x, prefill ${fmt(ours.prefillMs / ort.prefillMs, 2)}x its time`);
  }
  const problems = checks(res);
  if (problems.length) lines.push('', 'PROBLEMS:', ...problems.map((p) => `  ${p}`));
  return { lines, problems };
}
