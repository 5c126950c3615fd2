// The cache shared by the workloads whose files come from a PyTorch export script (encoder,
// generate): the script writes OUT_DIR/manifest.json last, holding the key it was run with, so
// a folder is reused only when complete and made by this version of the script for these
// arguments. Node only.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';

const INSTALL = 'install them with `WITH_TORCH=1 bash scripts/bootstrap.sh` (Debian: apt-get install python3-torch python3-onnx)';

// Debian's torch lives under /usr/bin/python3; a pyenv/venv python3 earlier on PATH may not see it.
const PYTHON = process.env.PYTHON || (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/** The key a folder is valid for: the script's arguments and the first 16 hex of its sha256. */
function cacheKey(script, args) {
  return JSON.stringify({ ...args, script: createHash('sha256').update(readFileSync(script)).digest('hex').slice(0, 16) });
}

function cached(dir, key) {
  try {
    const m = JSON.parse(readFileSync(`${dir}/manifest.json`, 'utf8'));
    return m.key === key && m.files.every((f) => existsSync(`${dir}/${f}`));
  } catch {
    return false;
  }
}

/** Runs `script dir --arg value ... --key key`; null on success, else why it could not. */
function runScript(name, script, dir, args, key) {
  const probe = spawnSync(PYTHON, ['-c', 'import torch, onnx'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    const why = probe.error ? `${PYTHON} not found` : (probe.stderr.trim().split('\n').pop() || `exit ${probe.status}`);
    return `needs PyTorch and onnx for ${PYTHON} (${why}); ${INSTALL}`;
  }
  console.log(`${name}: exporting the model with ${PYTHON} ${script.split('/').slice(-3).join('/')} -> ${dir} (once) ...`);
  const flags = Object.entries(args).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const r = spawnSync(PYTHON, [script, dir, ...flags, '--key', key], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) return `${script.split('/').pop()} failed: ${(r.stderr || r.stdout || r.error?.message || '').trim().split('\n').slice(-4).join(' | ')}`;
  console.log(`${name}: ${r.stdout.trim().split('\n').pop()}`);
  return null;
}

/** Makes `dir` with `script` unless a complete folder for these args is there: { skip } or {}. */
export function ensureExport(name, script, dir, args) {
  const key = cacheKey(script, args);
  if (cached(dir, key)) return {};
  const skip = runScript(name, script, dir, args, key);
  if (skip) return { skip };
  return cached(dir, key) ? {} : { skip: `${script.split('/').pop()} did not write a complete ${dir}` };
}

/** A typed view of a little-endian file's bytes (copied: Buffers can share a larger pool). */
export const view = (Type, buf) => new Type(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
