// Peak memory of loading a SmolLM2-135M-shaped GGUF file (random weights, F32: 539 MB) two ways:
// streamed from its path (loadModel('model.gguf'): each tensor goes into the WebAssembly memory as
// it is read, so the peak should be the weights plus one tensor) and from its bytes already in
// memory (loadModel(bytes): the file and the weights). Each way in its own process, so each peak RSS
// is its own; the file is written to a temporary folder (bench/llama/gguf.mjs's weights) and removed.
//
//   node bench/memory/gguf_memory.mjs [--type F32|F16|Q8_0|Q4_0]
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { writeGguf } from '../../tools/gguf/gguf_writer.mjs';
import { llamaGgufTensors, llamaMetadata } from '../llama/gguf.mjs';
import { SMOLLM2_135M } from '../llama/weights.mjs';

const MB = (b) => (b / 2 ** 20).toFixed(0);

/** Child: loads the file one way, sampling RSS and ArrayBuffers every 5 ms and at each progress report. */
async function measure(how, file) {
  const { loadAttention } = await import('../../dist/index.node.js');
  const attn = await loadAttention({ threads: 1 });
  const peak = { rss: 0, arrayBuffers: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
  };
  const before = process.memoryUsage().rss;
  const timer = setInterval(sample, 5);
  const t0 = performance.now();
  const model = how === 'streamed' ? await attn.loadModel(file, { onProgress: sample }) : await attn.loadModel(readFileSync(file));
  const ms = performance.now() - t0;
  sample();
  clearInterval(timer);
  process.send({ how, ms, peakRss: peak.rss, rssBefore: before, peakArrayBuffers: peak.arrayBuffers, wasm: attn.memoryBytes });
  model.dispose();
}

async function main() {
  const typeAt = process.argv.indexOf('--type');
  const type = typeAt > 0 ? process.argv[typeAt + 1] : 'F32';
  const dir = mkdtempSync(join(tmpdir(), 'gguf-memory-'));
  try {
    const file = join(dir, `smollm2-135m-${type}.gguf`);
    writeGguf(file, llamaMetadata(SMOLLM2_135M, type), llamaGgufTensors(SMOLLM2_135M, type));
    const size = statSync(file).size;
    const { parseGgufHeader } = await import('../../dist/index.node.js');
    const { header } = parseGgufHeader(readFileSync(file).subarray(0, 16 << 20), size);
    const largest = Math.max(...[...header.tensors.values()].map((t) => t.byteLength));
    console.log(`SmolLM2-135M-shaped GGUF, ${type}: ${MB(size)} MiB; its largest tensor ${MB(largest)} MiB`);
    console.log('| load | time | peak RSS | RSS growth | peak ArrayBuffers | WebAssembly memory |');
    console.log('|---|---|---|---|---|---|');
    for (const how of ['streamed', 'bytes']) {
      const r = await new Promise((resolve, reject) => {
        const child = fork(fileURLToPath(import.meta.url), ['--child', how, file]);
        child.on('message', resolve);
        child.on('exit', (code) => code && reject(new Error(`the ${how} child exited with ${code}`)));
      });
      console.log(`| ${how === 'streamed' ? 'from its path (streamed)' : 'from its bytes'} | ${(r.ms / 1000).toFixed(1)} s | ${MB(r.peakRss)} MiB | ${MB(r.peakRss - r.rssBefore)} MiB | ${MB(r.peakArrayBuffers)} MiB | ${MB(r.wasm)} MiB |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await measure(process.argv[3], process.argv[4]);
else await main();
