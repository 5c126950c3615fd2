// Load and dispose a shipped model N times and print, after 0, 1, 2, 3, 10 and N loads, the
// WebAssembly memory's size (attn.memoryBytes: its high-water mark, never shrinking) and the bytes
// malloc has handed out and not taken back (attn.heapBytesInUse). A leak shows as heapBytesInUse
// growing load after load; a high-water mark as memoryBytes rising once and staying.
//
//   node bench/memory/load_dispose.mjs [--model brown-llama] [--threads 1|2|4] [--loads 100]
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadAttention } from '../../dist/index.node.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const model = arg('model', 'brown-llama'), threads = Number(arg('threads', 1)), loads = Number(arg('loads', 100));
const folder = join(fileURLToPath(new URL('../../web/models/', import.meta.url)), model);

const attn = await loadAttention({ threads });
const rows = [[0, attn.memoryBytes, attn.heapBytesInUse]];
for (let i = 1; i <= loads; i++) {
  const m = await attn.loadModel(folder);
  if (m.type !== 'bart') m.run('The jury said it');
  m.dispose();
  if ([1, 2, 3, 10, loads].includes(i)) rows.push([i, attn.memoryBytes, attn.heapBytesInUse]);
}
console.log(`${model}, ${attn.variant} (${attn.threads} thread${attn.threads > 1 ? 's' : ''}):`);
for (const [i, memory, inUse] of rows) console.log(`  after ${String(i).padStart(4)} loads: memory ${(memory / 2 ** 20).toFixed(2)} MiB, in use ${inUse} bytes`);
