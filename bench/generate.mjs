// The generate workload's files: a random-weight GPT-2 (GPT-2 small's shape) as Hugging Face files
// (this library) and as torch.onnx.export's one-step graph with past key/values (onnxruntime-web,
// as transformers.js generates), the prompt, and PyTorch's own greedy continuation. Made by
// bench/generate/export.py into build/bench-generate/ (about 1.1 GB, ~30 s) when missing or stale.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { ensureExport, view } from './pytorch_export.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const GENERATE_DIR = `${ROOT}build/bench-generate`;

/** { data: { dir, prompt, newTokens }, expected: PyTorch's greedy ids (Float32Array) } or { skip }. */
export function prepareGenerate(wl) {
  const args = { layers: wl.layers, hidden: wl.dModel, heads: wl.numHeads, vocab: wl.vocab, positions: wl.positions,
    prompt: wl.promptLen, new: wl.newTokens, seed: wl.seed, opset: wl.opset };
  const { skip } = ensureExport('generate', `${ROOT}bench/generate/export.py`, GENERATE_DIR, args);
  if (skip) return { skip };
  const prompt = view(Int32Array, readFileSync(`${GENERATE_DIR}/prompt.i32`));
  const expected = view(Int32Array, readFileSync(`${GENERATE_DIR}/expected.i32`));
  if (prompt.length !== wl.promptLen || expected.length !== wl.newTokens) return { skip: `${GENERATE_DIR} has a prompt or continuation of the wrong length` };
  return { data: { dir: GENERATE_DIR, prompt: Array.from(prompt), newTokens: wl.newTokens }, expected: Float32Array.from(expected) };
}

/** How many leading ids equal PyTorch's; the engine agrees when at least wl.agreeTokens do. */
export function tokenAgreement(wl, expected, out) {
  let same = 0;
  while (same < expected.length && out?.[same] === expected[same]) same++;
  const ok = same >= wl.agreeTokens;
  return { kind: 'tokens', against: 'pytorch', value: same, tolerance: wl.agreeTokens, ok, maxAbsDiff: ok ? 0 : Infinity };
}
