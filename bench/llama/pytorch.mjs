// PyTorch's greedy tokens for the generate-llama workload (issue 23: "greedy tokens checked equal to
// PyTorch's"): writes the random Llama of weights.mjs once as an F32 safetensors file into
// build/bench-llama/pytorch-<model>/ and runs bench/llama/reference.py on it (a Llama forward
// written from the architecture in torch, float64, float32, on f16-rounded weights and with
// onnxruntime's dynamic int8 quantization simulated). Cached by common/pytorch_export.mjs: the folder is
// reused while the script, the config, the prompt, the token count and weights.mjs are the
// same. Node only.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { ensureExport, view } from '../common/pytorch_export.mjs';
import { llamaShapes, llamaTensor, safetensorsF32 } from './weights.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The first 16 hex of a file's sha256: the weights are whatever this version of the module makes. */
const fileKey = (file) => createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16);

/** dir/weights.safetensors for `config`, written unless a file for this weights version is there. */
function writeWeights(dir, config, weightsKey) {
  const file = `${dir}/weights.safetensors`, stamp = `${file}.version`;
  const want = JSON.stringify({ weightsKey, config });
  if (existsSync(file) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return;
  const tensors = {};
  for (const [name, shape] of llamaShapes(config)) tensors[name] = [shape, llamaTensor(config, name, shape)];
  writeFileSync(`${file}.part`, safetensorsF32(tensors));
  renameSync(`${file}.part`, file);
  writeFileSync(stamp, want);
}

/**
 * { skip } or { f64, f32, f16, int8 }: per variant { ids, second, margin } (PyTorch's greedy ids,
 * runner-ups and top-1 minus top-2 logits) and logits0 (the prompt's last-position logits).
 */
export function pytorchTokens(model, config, promptIds, newTokens, log = () => {}) {
  const dir = `${ROOT}build/bench-llama/pytorch-${model}`;
  mkdirSync(dir, { recursive: true });
  const weightsKey = fileKey(`${ROOT}bench/llama/weights.mjs`);
  const args = { config: JSON.stringify(config), prompt: promptIds.join(','), new: newTokens, weights: weightsKey };
  const t = Date.now();
  // The weights are only needed when the script runs; writing them is cheap next to it (seconds).
  writeWeights(dir, config, weightsKey);
  const { skip } = ensureExport(`generate-llama (${model})`, `${ROOT}bench/llama/reference.py`, dir, args);
  if (skip) return { skip };
  log(`PyTorch reference tokens: ${dir.slice(ROOT.length)} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  const ref = JSON.parse(readFileSync(`${dir}/reference.json`, 'utf8'));
  if (ref.prompt.join(',') !== args.prompt) return { skip: `${dir}/reference.json is for another prompt` };
  const out = {};
  for (const v of ['f64', 'f32', 'f16', 'int8']) out[v] = { ...ref[v], logits0: view(Float32Array, readFileSync(`${dir}/logits0.${v}.f32`)) };
  return out;
}
