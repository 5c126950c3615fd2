// Compares onnxruntime-web running quantize8.py's 8-bit graph with int8_reference.py's simulation
// of the same quantization in PyTorch: the prompt's logits (and, for scale, their distance from
// float PyTorch's) and the 64 greedy ids. Run int8_reference.py first.
//   node bench/generate/int8_check.mjs [kv8 | kvnbits8]
import { readFileSync } from 'node:fs';

import { load } from '../engines/ort.mjs';
import { INT8_DIR, prepareGenerate } from './workload.mjs';
import { WORKLOADS } from '../common/workloads.mjs';

const wl = WORKLOADS.find((w) => w.name === 'generate');
const { data, expected, skip } = prepareGenerate(wl);
if (skip) throw new Error(skip);
const ref = JSON.parse(readFileSync(`${INT8_DIR}/reference.json`, 'utf8'));
const engine = await load({ graph: process.argv[2] ?? 'kv8', threads: 1 });
const inst = await engine.prepare(wl, data);

const distance = (a, b) => {
  let max = 0, sq = 0;
  for (let i = 0; i < a.length; i++) { const d = Math.abs(a[i] - b[i]); max = Math.max(max, d); sq += d * d; }
  return `max ${max.toExponential(2)}, rms ${Math.sqrt(sq / a.length).toExponential(2)}`;
};
const logits = await inst.prefill();
console.log(`prompt logits: vs the int8 simulation ${distance(logits, ref.logits)}; vs float PyTorch ${distance(logits, expected.logits)}`);
const tokens = await inst.run();
let same = 0;
while (same < tokens.length && tokens[same] === ref.ids[same]) same++;
console.log(`greedy ids equal the int8 simulation's for ${same} of ${tokens.length}${same < tokens.length
  ? ` (step ${same}: ${tokens[same]} vs ${ref.ids[same]}; the simulation's own top-2 margin there ${ref.margin[same].toFixed(4)})` : ''}`);
await inst.dispose();
