// The size of what model.save() writes for a SmolLM2-135M-shaped model (random weights, the F32
// GGUF file bench/llama/gguf.mjs writes: 539 MB) loaded at each dtype, and what the saved file
// costs to read back: the "the next visit downloads 76 MB, not 538 MB". Each saved file
// goes through saveStream() into a file (no copy of the whole model in JavaScript), is loaded
// again and must give the same logits, bit for bit, on a short prompt. Peak RSS is the process's.
//
//   node bench/memory/save_sizes.mjs [--dtypes f32,f16,q8,q4]
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { writeGguf } from '../../tools/gguf/gguf_writer.mjs';
import { llamaGgufTensors, llamaMetadata } from '../llama/gguf.mjs';
import { SMOLLM2_135M } from '../llama/weights.mjs';

const MB = (b) => (b / 1e6).toFixed(1);
const at = process.argv.indexOf('--dtypes');
const dtypes = at > 0 ? process.argv[at + 1].split(',') : ['f32', 'f16', 'q8', 'q4'];

const { loadAttention } = await import('../../dist/index.node.js');
const attn = await loadAttention({ threads: 1 });
const dir = mkdtempSync(join(tmpdir(), 'save-sizes-'));
try {
  const source = join(dir, 'smollm2-135m-F32.gguf');
  writeGguf(source, llamaMetadata(SMOLLM2_135M, 'F32'), llamaGgufTensors(SMOLLM2_135M, 'F32'));
  console.log(`SmolLM2-135M-shaped GGUF (random weights), F32: ${MB(statSync(source).size)} MB`);
  console.log('| loaded with | model.dtype | saved file | save (saveStream to a file) | reload | same logits |');
  console.log('|---|---|---|---|---|---|');
  const ids = [1, 400, 9000, 17, 30000, 5];
  for (const dtype of dtypes) {
    const model = await attn.loadModel(source, { dtype });
    const file = join(dir, `saved-${dtype}.gguf`);
    let t0 = performance.now();
    await pipeline(Readable.fromWeb(model.saveStream()), createWriteStream(file));
    const saveMs = performance.now() - t0;
    const expected = model.run(ids).logits;
    model.dispose();
    t0 = performance.now();
    const back = await attn.loadModel(file);
    const loadMs = performance.now() - t0;
    const got = back.run(ids).logits;
    const same = got.length === expected.length && got.every((v, i) => v === expected[i]);
    console.log(`| dtype '${dtype}' | ${back.dtype} | ${MB(statSync(file).size)} MB | ${(saveMs / 1000).toFixed(1)} s | ${(loadMs / 1000).toFixed(1)} s | ${same} |`);
    back.dispose();
    rmSync(file);
  }
  console.log(`peak RSS ${MB(process.resourceUsage().maxRSS * 1024)} MB`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
