// The encoder workload's files: a random-weight BERT as Hugging Face files (this library) and as
// torch.onnx.export's graph (onnxruntime-web), its token ids, and PyTorch's own output. Made by
// bench/encoder/export.py (Debian's python3-torch + python3-onnx) into build/bench-encoder/ when
// missing or made for other dimensions or by another version of the script. Node only.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SCRIPT = `${ROOT}bench/encoder/export.py`;
export const ENCODER_DIR = `${ROOT}build/bench-encoder`;
const INSTALL = 'install them with `WITH_TORCH=1 bash scripts/bootstrap.sh` (Debian: apt-get install python3-torch python3-onnx)';
export const PAD_ID = 0;  // [PAD]; export.py never draws it for a real token

// Debian's torch lives under /usr/bin/python3; a pyenv/venv python3 earlier on PATH may not see it.
const PYTHON = process.env.PYTHON || (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/** The workload fields export.py takes, and the script's hash: the cache is valid for exactly these. */
function cacheKey(wl) {
  const args = { layers: wl.layers, hidden: wl.dModel, heads: wl.numHeads, ffn: wl.ffn, vocab: wl.vocab, positions: wl.positions, batch: wl.batch, seq: wl.seqLen, seed: wl.seed, opset: wl.opset };
  return { args, key: JSON.stringify({ ...args, script: createHash('sha256').update(readFileSync(SCRIPT)).digest('hex').slice(0, 16) }) };
}

function cached(key) {
  try {
    const m = JSON.parse(readFileSync(`${ENCODER_DIR}/manifest.json`, 'utf8'));
    return m.key === key && m.files.every((f) => existsSync(`${ENCODER_DIR}/${f}`));
  } catch {
    return false;
  }
}

function generate(args, key) {
  const probe = spawnSync(PYTHON, ['-c', 'import torch, onnx'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    const why = probe.error ? `${PYTHON} not found` : (probe.stderr.trim().split('\n').pop() || `exit ${probe.status}`);
    return `needs PyTorch and onnx for ${PYTHON} (${why}); ${INSTALL}`;
  }
  console.log(`encoder: exporting the model with ${PYTHON} bench/encoder/export.py -> ${ENCODER_DIR} (once) ...`);
  const flags = Object.entries(args).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const r = spawnSync(PYTHON, [SCRIPT, ENCODER_DIR, ...flags, '--key', key], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) return `export.py failed: ${(r.stderr || r.stdout || r.error?.message || '').trim().split('\n').slice(-4).join(' | ')}`;
  console.log(`encoder: ${r.stdout.trim().split('\n').pop()}`);
  return null;
}

const view = (Type, buf) => new Type(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));

/**
 * { data, expected } or { skip }. data goes to the engines: the folder, token ids (batch x seq,
 * int32) and the mask (1 = real token; padding is trailing [PAD]). expected: PyTorch's output.
 */
export function prepareEncoder(wl) {
  const { args, key } = cacheKey(wl);
  if (!cached(key)) {
    const skip = generate(args, key);
    if (skip) return { skip };
    if (!cached(key)) return { skip: `export.py did not write a complete ${ENCODER_DIR}` };
  }
  const ids = view(Int32Array, readFileSync(`${ENCODER_DIR}/input_ids.i32`));
  const expected = view(Float32Array, readFileSync(`${ENCODER_DIR}/expected.f32`));
  if (ids.length !== wl.batch * wl.seqLen || expected.length !== wl.batch * wl.dModel) return { skip: `${ENCODER_DIR} has inputs/outputs of the wrong size` };
  const mask = Uint8Array.from(ids, (t) => (t === PAD_ID ? 0 : 1));
  return { data: { dir: ENCODER_DIR, ids, mask }, expected };
}
