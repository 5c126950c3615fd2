// The generate workload's own table and targets (issues 9 and 22): per engine its weight type,
// prefill, time to first token, decode tokens/s, heap, and the GB/s of weights its decode steps
// read against the machine's bandwidth measured in the same run; ratios against the
// onnxruntime-web peers at the same thread count (float32 and 8-bit).
import { logitsDiffText, tokenAgreementText } from '../generate/workload.mjs';
import { fmt, table } from './table.mjs';

const mib = (n) => (n == null ? '-' : (n / 2 ** 20).toFixed(0));

// Bytes a weight takes as each engine holds it: Q8_0 / Q4_0 blocks are 32 weights and an f16
// scale (34 and 18 bytes); onnxruntime's int8 MatMulInteger graph has one byte a weight and one
// scale per tensor, its MatMulNBits graph one byte a weight and a float32 scale per 32 (36 bytes).
export const BYTES_PER_WEIGHT = { f32: 4, f16: 2, q8: 34 / 32, q4: 18 / 32, int8: 1, nbits8: 36 / 32 };

// The 8-bit onnxruntime-web peers: transformers.js's MatMulInteger graph and MatMulNBits bits=8.
const EIGHT_BIT = ['int8', 'nbits8'];

/**
 * Bytes of weights one decode step reads: every layer's four matrices (QKV D x 3D, output D x D,
 * MLP D x 4D and 4D x D: 12 D² weights) and the tied LM head (vocabulary x D), at the engine's
 * bytes per weight. Biases, LayerNorms and one position row are < 0.1 % and left out; so are the
 * KV cache's reads (at most 2 x 12 x 128 x 768 floats, 9 MB, at the last step).
 */
export function weightBytesPerStep(wl, dtype) {
  const per = BYTES_PER_WEIGHT[dtype];
  if (per == null) return null;
  return (wl.layers * 12 * wl.dModel * wl.dModel + wl.vocab * wl.dModel) * per;
}

const usable = (r) => r && r.medianMs != null && !r.error && r.agrees !== false;

/** Rows of the generate workload with the derived figures (decode GB/s and its share of bandwidth). */
export function generateRows(res, wl) {
  const byId = Object.fromEntries(res.engines.map((e) => [e.id, e]));
  const bw = res.bandwidth && !res.bandwidth.skip ? res.bandwidth : null;
  return res.rows.filter((r) => r.workload === wl.name).map((r) => {
    const e = byId[r.engine];
    const bytes = weightBytesPerStep(wl, e.dtype);
    const gbs = usable(r) && bytes ? (bytes * (wl.newTokens - 1)) / r.decodeMs / 1e6 : null;
    return { row: r, engine: e, bytes, gbs, pctCopy: gbs && bw ? gbs / bw.copyGBs : null, pctRead: gbs && bw ? gbs / bw.readGBs : null };
  });
}

/**
 * The onnxruntime-web peer at a thread count among the given weight types ('f32' -> ort-kv;
 * EIGHT_BIT -> ort-q8 and ort-nbits8): the one with the fastest decode, so a target holds against both.
 */
function peerRow(rows, dtypes, threads) {
  return rows.filter((x) => x.engine.role === 'peer' && dtypes.includes(x.engine.dtype) && x.engine.threads === threads && usable(x.row))
    .reduce((best, x) => (!best || x.row.decodeTokensPerSec > best.row.decodeTokensPerSec ? x : best), null);
}

export function generateSection(res, wl) {
  const rows = generateRows(res, wl);
  const ratio = (x, peer, f) => (usable(x.row) && peer ? f(x.row, peer.row).toFixed(2) : '');
  const body = rows.map((x) => {
    const r = x.row, e = x.engine;
    const fp32 = peerRow(rows, ['f32'], e.threads), int8 = peerRow(rows, EIGHT_BIT, e.threads);
    const ours = e.role === 'ours';
    const agree = r.agreement ? `${tokenAgreementText(r.agreement, wl.newTokens)}${r.agrees ? '' : ' (NOT TIMED)'}` : '-';
    if (r.error && r.medianMs == null) return [r.engine, e.dtype, e.threads, ...Array(11).fill('-'), agree, logitsDiffText(r.agreement), `ERROR: ${r.error.split('\n')[0].slice(0, 70)}`, '', ''];
    return [r.engine, e.dtype, e.threads, fmt(r.prefillMs, 0), fmt(r.ttftMs, 0), fmt(r.decodeTokensPerSec, 1), fmt(r.medianMs, 0), r.reps ?? '-',
      r.cpuPerWall != null ? r.cpuPerWall.toFixed(2) : '-',
      mib(r.heapBytes), mib(r.rssBytes), x.bytes ? (x.bytes / 1e6).toFixed(0) : '-', fmt(x.gbs, 1), x.pctCopy != null ? `${(100 * x.pctCopy).toFixed(0)}%` : '-', agree, logitsDiffText(r.agreement),
      ours ? ratio(x, fp32, (a, b) => a.medianMs / b.medianMs) : '', ours ? ratio(x, fp32, (a, b) => a.decodeTokensPerSec / b.decodeTokensPerSec) : '',
      ours && int8 ? `${ratio(x, int8, (a, b) => a.decodeTokensPerSec / b.decodeTokensPerSec)} (${int8.row.engine})` : ''];
  });
  const bw = res.bandwidth && !res.bandwidth.skip ? res.bandwidth : null;
  const refStd = rows.find((x) => x.row.agreement?.logits)?.row.agreement.logits.refStd;
  return [
    `== Generate: GPT-2 small shape (${wl.layers} layers, ${wl.dModel} dims, ${wl.numHeads} heads, vocabulary ${wl.vocab}, random weights); ${wl.promptLen}-token prompt, ${wl.newTokens} new tokens, greedy ==`,
    table(['engine', 'dtype', 'thr', 'prefill ms', 'first token ms', 'decode tok/s', 'ms/run', 'reps', 'cpu/wall', 'heap MiB', 'RSS MiB', 'MB/step', 'GB/s', '%copy', 'tokens vs PyTorch',
      'prefill logits - PyTorch', 'run / fp32', 'decode x fp32', 'decode x 8-bit'], body, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 18]),
    `ms/run: median of whole generations (prefill + ${wl.newTokens - 1} one-token steps); decode tok/s = ${wl.newTokens - 1} / median(run - first token); first token: the call to the first new token (prefill + argmax);`
      + ' prefill ms: the prompt alone through the model and the LM head on its last position (median, as many as the runs, after them).',
    `MB/step: weights one decode step reads (12 layers' 4 matrices + the tied LM head, ${((wl.layers * 12 * wl.dModel ** 2 + wl.vocab * wl.dModel) / 1e6).toFixed(1)}M weights) at the engine's bytes per weight`
      + ` (f32 4, f16 2, q8/q4 Q8_0/Q4_0 blocks 34/32 and 18/32, ORT int8 1, ORT MatMulNBits 36/32); GB/s = MB/step x ${wl.newTokens - 1} / decode time; %copy: of the memory.copy bandwidth measured in this run`
      + `${bw ? ` (${fmt(bw.copyGBs, 1)} GB/s; v128.load read stream ${fmt(bw.readGBs, 1)} GB/s on one thread, ${fmt(bw.read2GBs, 1)} on two)` : ' (not measured)'}.`,
    'cpu/wall: CPU time over wall time of the timed runs (below the thread count: the engine waited for a core, its figures are inflated by other load).',
    'heap: our WebAssembly memory after the runs (weights, KV cache, scratch; it never shrinks); RSS: the engine process\'s resident set after the runs (onnxruntime-web\'s heap is not visible from outside).',
    `tokens vs PyTorch: leading new ids equal to PyTorch's greedy ones; float32 engines must match all ${wl.agreeTokens}. f16, q8 and q4 are checked against PyTorch on the same weights (f16-rounded; Q8_0 / Q4_0 with activations quantized per block of 32 as ours, in float64):`
      + ` all ${wl.agreeTokens}, or where they first part our token was in that reference within twice the dtype's logit error of the top (its rank and gap shown), and the prompt logits within that error (f16 2e-4, q8 and q4 0.15); else not timed and the bench fails.`
      + ` onnxruntime's 8-bit is timed either way and shows where it parts from float32 PyTorch, with PyTorch's top-1 minus top-2 logit margin at that step.`
      + ` prefill logits - PyTorch: max and rms |difference| of the prompt's last-position logits from PyTorch's (f16, q8, q4: on their weights); PyTorch's logits have std ${fmt(refStd, 3)}; a flip is expected where the margin is below the rms.`,
    'run / fp32: whole run over onnxruntime-web float32 at the same thread count (< 1: ours faster); decode x fp32 / x 8-bit: our decode tokens/s over onnxruntime-web float32 / its faster 8-bit graph at the same thread count (> 1: ours faster).',
    'Peers: onnxruntime-web running torch.onnx.export of the same model with past key/values (ort-kv), that graph with int8 MatMul weights as transformers.js\'s q8 files (ort-q8: DynamicQuantizeLinear + MatMulInteger, int8 per tensor), and with MatMulNBits bits=8 in blocks of 32 (ort-nbits8); both from bench/generate/quantize8.py.',
  ];
}

/** Issue 9's and issue 22's targets for the generate workload. met: null (n/a) when a side is missing. */
export function generateTargets(res, wl) {
  const rows = generateRows(res, wl);
  const get = (id) => rows.find((x) => x.row.engine === id && usable(x.row));
  const out = [];
  const target = (text, pairs, pass, show) => {
    const ok = pairs.filter(([a, b]) => a && b);
    const met = ok.length < pairs.length ? (ok.some(([a, b]) => !pass(a, b)) ? false : null) : ok.every(([a, b]) => pass(a, b));
    out.push({ target: text, met, detail: pairs.map(([a, b], i) => (a && b ? show(a, b) : `pair ${i + 1} not measured`)).join('; ') });
  };
  const runRatio = (a, b) => `${a.row.engine} ${fmt(a.row.medianMs, 0)} ms vs ${b.row.engine} ${fmt(b.row.medianMs, 0)} ms (${(a.row.medianMs / b.row.medianMs).toFixed(2)})`;
  const decodeX = (a, b) => `${a.row.engine} ${fmt(a.row.decodeTokensPerSec, 1)} vs ${b.row.engine} ${fmt(b.row.decodeTokensPerSec, 1)} tok/s (${(a.row.decodeTokensPerSec / b.row.decodeTokensPerSec).toFixed(2)}x)`;
  const f32 = [['ours-simd', 'ort-kv-1t'], ['ours-simd-2t', 'ort-kv-2t']].map(([a, b]) => [get(a), get(b)]);
  target('generate: faster than onnxruntime-web float32 at 1 and at 2 threads (issue 9)', f32, (a, b) => a.row.medianMs < b.row.medianMs, runRatio);
  target('generate f32: whole run <= 0.87x onnxruntime-web float32 at 1 and at 2 threads (issue 22)', f32, (a, b) => a.row.medianMs <= 0.87 * b.row.medianMs, runRatio);
  target('generate f16: decode >= 1.6x onnxruntime-web float32 at 1 thread (issue 22)', [[get('ours-f16'), get('ort-kv-1t')]],
    (a, b) => a.row.decodeTokensPerSec >= 1.6 * b.row.decodeTokensPerSec, decodeX);
  target('generate q8: decode >= 1.5x onnxruntime-web 8-bit (its faster graph) at 1 and at 2 threads (issue 22)', [['ours-q8', 1], ['ours-q8-2t', 2]].map(([a, t]) => [get(a), peerRow(rows, EIGHT_BIT, t)]),
    (a, b) => a.row.decodeTokensPerSec >= 1.5 * b.row.decodeTokensPerSec, decodeX);
  const bw = res.bandwidth && !res.bandwidth.skip ? res.bandwidth : null;
  for (const id of ['ours-simd', 'ours-f16', 'ours-q8', 'ours-q4']) {
    const x = get(id);
    if (!x) continue;
    out.push({ target: `generate ${x.engine.dtype}: 1-thread decode reads weights at >= 80% of the measured copy bandwidth (issue 22)`, met: bw ? x.pctCopy >= 0.8 : null,
      detail: bw ? `${fmt(x.gbs, 1)} GB/s = ${(100 * x.pctCopy).toFixed(0)}% of memory.copy ${fmt(bw.copyGBs, 1)} GB/s (${(100 * x.pctRead).toFixed(0)}% of the read stream's ${fmt(bw.readGBs, 1)})` : 'bandwidth not measured' });
  }
  for (const [one, two] of [['ours-simd', 'ours-simd-2t'], ['ours-f16', 'ours-f16-2t'], ['ours-q8', 'ours-q8-2t'], ['ours-q4', 'ours-q4-2t']]) {
    const a = get(one), b = get(two);
    if (!a || !b) continue;
    const s = b.row.decodeTokensPerSec / a.row.decodeTokensPerSec;
    const room = bw?.read2GBs ? ` (the read stream's own 2-thread / 1-thread: ${(bw.read2GBs / bw.readGBs).toFixed(2)}x)` : '';
    out.push({ target: `generate ${a.engine.dtype}: 2-thread / 1-thread decode speed-up >= 1.6 (issue 22)`, met: s >= 1.6, detail: `${fmt(b.row.decodeTokensPerSec, 1)} / ${fmt(a.row.decodeTokensPerSec, 1)} tok/s = ${s.toFixed(2)}x${room}` });
  }
  const heap = (id) => get(id)?.row.heapBytes;
  for (const [id, limit] of [['ours-f16', 0.55], ['ours-q8', 0.3]]) {
    const h = heap(id), base = heap('ours-simd');
    if (h == null || base == null) continue;
    out.push({ target: `generate ${id.slice(5)}: heap <= ${limit}x the f32 heap (issue 22)`, met: h <= limit * base, detail: `${mib(h)} MiB vs ${mib(base)} MiB (${(h / base).toFixed(2)}x; heap after the runs: weights + KV cache + scratch)` });
  }
  return out;
}
