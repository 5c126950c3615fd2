// The generate workload's files: a random-weight GPT-2 (GPT-2 small's shape) as Hugging Face files
// (this library) and as torch.onnx.export's one-step graph with past key/values (onnxruntime-web,
// as transformers.js generates), the prompt, and PyTorch's own greedy continuation. Made by
// bench/generate/export.py into build/bench-generate/ (about 1.1 GB, ~30 s) when missing or stale;
// bench/generate/quantize8.py writes the two 8-bit graphs from it into build/bench-generate-int8/,
// bench/generate/lowbit_reference.py PyTorch's greedy tokens on the weights as our f16, q8 and q4 hold
// them into build/bench-generate-lowbit/ (lowbit_check.mjs).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { lowbitAgreement, lowbitAgreementText, lowbitReferences } from './lowbit_check.mjs';
import { ensureExport, view } from '../common/pytorch_export.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const GENERATE_DIR = `${ROOT}build/bench-generate`;
export const INT8_DIR = `${ROOT}build/bench-generate-int8`;

/**
 * { data: { dir, prompt, newTokens, int8Onnx + nbits8Onnx | int8Skip }, expected: { ids, second, margin, logits, lowbit } }
 * or { skip }: PyTorch's greedy ids, per step its runner-up id and top-1 minus top-2 logit, the
 * prompt's last-position logits, and lowbit: the same on the weights as f16, q8 and q4 hold them.
 */
export function prepareGenerate(wl) {
  const args = { layers: wl.layers, hidden: wl.dModel, heads: wl.numHeads, vocab: wl.vocab, positions: wl.positions,
    prompt: wl.promptLen, new: wl.newTokens, seed: wl.seed, opset: wl.opset };
  const { skip } = ensureExport('generate', `${ROOT}bench/generate/export.py`, GENERATE_DIR, args);
  if (skip) return { skip };
  const file = (Type, name) => view(Type, readFileSync(`${GENERATE_DIR}/${name}`));
  const prompt = file(Int32Array, 'prompt.i32');
  const ids = file(Int32Array, 'expected.i32');
  if (prompt.length !== wl.promptLen || ids.length !== wl.newTokens) return { skip: `${GENERATE_DIR} has a prompt or continuation of the wrong length` };
  // The 8-bit peer's graph is made from this export; without it only that peer is skipped.
  const sourceKey = JSON.parse(readFileSync(`${GENERATE_DIR}/manifest.json`, 'utf8')).key;
  const int8 = ensureExport('generate int8', `${ROOT}bench/generate/quantize8.py`, INT8_DIR, { source: GENERATE_DIR, 'source-key': sourceKey });
  return {
    data: { dir: GENERATE_DIR, prompt: Array.from(prompt), newTokens: wl.newTokens,
      ...(int8.skip ? { int8Skip: int8.skip } : { int8Onnx: `${INT8_DIR}/model.onnx`, nbits8Onnx: `${INT8_DIR}/model_nbits8.onnx` }) },
    expected: { ids: Array.from(ids), second: Array.from(file(Int32Array, 'second.i32')), margin: Array.from(file(Float32Array, 'margin.f32')), logits: file(Float32Array, 'logits0.f32'),
      lowbit: lowbitReferences(GENERATE_DIR, sourceKey) },
  };
}

/**
 * How many leading ids equal PyTorch's. An exact (float32) engine agrees when at least
 * wl.agreeTokens do. A lossy one (16/8/4-bit weights) may part from them and is still timed, the
 * same work either way, but it must give all wl.newTokens tokens (one that stopped at end-of-text
 * ran a shorter generation). Where it parts: its token, PyTorch's, PyTorch's runner-up and the
 * top-1 minus top-2 logit margin PyTorch had there (a near tie explains a flip). An engine whose
 * dtype has a PyTorch reference on its own weights (f16, q8, q4) is checked against that one instead
 * (lowbit_check.mjs), and fails the bench if it parts unexplained.
 */
export function tokenAgreement(wl, expected, out, { lossy = false, dtype, logits } = {}) {
  const ids = expected.ids;
  let same = 0;
  while (same < ids.length && out?.[same] === ids[same]) same++;
  const complete = out?.length === wl.newTokens;
  const ok = complete && (lossy || same >= wl.agreeTokens);
  const parts = same < ids.length && same < (out?.length ?? 0)
    ? { step: same, got: out[same], expected: ids[same], second: expected.second[same], margin: expected.margin[same] } : null;
  const float = { kind: 'tokens', against: 'pytorch', value: same, tolerance: lossy ? 0 : wl.agreeTokens, lossy, complete, parts, ok, maxAbsDiff: ok ? 0 : Infinity,
    logits: logits ? logitsDiff(expected.logits, logits) : null };
  const ref = expected.lowbit?.[dtype];
  return ref ? lowbitAgreement(wl, ref, out, { float, logits: logits ? logitsDiff(ref.logits, logits) : null }) : float;
}

/** The prefill's logits against PyTorch's: max and root-mean-square |difference|, and PyTorch's spread. */
function logitsDiff(ref, got) {
  if (got.length !== ref.length) return { maxAbs: Infinity, rms: Infinity, refStd: 0 };
  let maxAbs = 0, sq = 0, sum = 0, sum2 = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(got[i] - ref[i]);
    maxAbs = d > maxAbs || Number.isNaN(d) ? (Number.isNaN(d) ? Infinity : d) : maxAbs;
    sq += d * d; sum += ref[i]; sum2 += ref[i] * ref[i];
  }
  const mean = sum / ref.length;
  return { maxAbs, rms: Math.sqrt(sq / ref.length), refStd: Math.sqrt(sum2 / ref.length - mean * mean) };
}

/** One line for an agreement: '64/64 = PyTorch' or where and how it parts. */
export function tokenAgreementText(a, newTokens) {
  if (!a.complete) return 'stopped at end-of-text before the last token';
  if (a.lowbit) return lowbitAgreementText(a, newTokens);
  if (a.value === newTokens) return `${newTokens}/${newTokens} = PyTorch`;
  const p = a.parts;
  return `${a.value}/${newTokens} = PyTorch; step ${p.step}: ${p.got}${p.got === p.second ? " (PyTorch's 2nd)" : ''} vs ${p.expected}, PyTorch top-2 margin ${p.margin.toFixed(3)}`;
}

/** The prefill logits' distance from PyTorch's: 'max 3.1e-5, rms 4.0e-6 (spread 0.55)'. */
export function logitsDiffText(a) {
  const d = a?.logits;
  const vsFloat = a?.lowbit && a.float?.logits ? ` (PyTorch ${a.lowbit}; float32 PyTorch rms ${a.float.logits.rms.toExponential(1)})` : '';
  return d ? `max ${d.maxAbs.toExponential(1)}, rms ${d.rms.toExponential(1)}${vsFloat}` : '-';
}
