// The encoder workload's files: a random-weight BERT as Hugging Face files (this library) and as
// torch.onnx.export's graph (onnxruntime-web), its token ids, and PyTorch's own output. Made by
// bench/encoder/export.py (Debian's python3-torch + python3-onnx) into build/bench-encoder/ when
// missing or made for other dimensions or by another version of the script. Node only.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { ensureExport, view } from '../common/pytorch_export.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ENCODER_DIR = `${ROOT}build/bench-encoder`;
export const PAD_ID = 0;  // [PAD]; export.py never draws it for a real token

/**
 * { data, expected } or { skip }. data goes to the engines: the folder, token ids (batch x seq,
 * int32) and the mask (1 = real token; padding is trailing [PAD]). expected: PyTorch's output.
 */
export function prepareEncoder(wl) {
  const args = { layers: wl.layers, hidden: wl.dModel, heads: wl.numHeads, ffn: wl.ffn, vocab: wl.vocab, positions: wl.positions, batch: wl.batch, seq: wl.seqLen, seed: wl.seed, opset: wl.opset };
  const { skip } = ensureExport('encoder', `${ROOT}bench/encoder/export.py`, ENCODER_DIR, args);
  if (skip) return { skip };
  const ids = view(Int32Array, readFileSync(`${ENCODER_DIR}/input_ids.i32`));
  const expected = view(Float32Array, readFileSync(`${ENCODER_DIR}/expected.f32`));
  if (ids.length !== wl.batch * wl.seqLen || expected.length !== wl.batch * wl.dModel) return { skip: `${ENCODER_DIR} has inputs/outputs of the wrong size` };
  const mask = Uint8Array.from(ids, (t) => (t === PAD_ID ? 0 : 1));
  return { data: { dir: ENCODER_DIR, ids, mask }, expected };
}
