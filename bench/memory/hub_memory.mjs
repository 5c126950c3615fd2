// Peak memory of loading a GPT-2-small-shaped checkpoint (124M parameters, float16: 249 MB) with
// loadModel('hf:...') from the local Hub stand-in (tests/js/hub_server.cjs, run in a child process
// so its copy of the file does not count). The download is streamed into one buffer of its
// Content-Length and each tensor is converted to float32 on its own, so the peak should be about
// one float16 file + one float32 model (in WebAssembly memory), not two float32 copies.
//
//   node bench/memory/hub_memory.mjs          (downloads; then again from the cache)
//   node bench/memory/hub_memory.mjs --dtype q8 (held as loadModel's dtype: auto, f32, f16, q8, q4)
// One dtype per process: the peak RSS is the process's own. The first pass is checked against
// issue 22's target: peak RSS growth while loading <= the WebAssembly memory's growth (the final
// heap) + 1.2 x the largest tensor (as the checkpoint stores it) + the download buffer (the file).
// The random checkpoint is written to a temporary folder and removed afterwards.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAttention } from '../../dist/index.node.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MB = (b) => (b / 1e6).toFixed(0);
const mode = process.argv[2];
const dtypeAt = process.argv.indexOf('--dtype');
const dtype = dtypeAt > 0 ? process.argv[dtypeAt + 1] : undefined;

// GPT-2 small: vocab 50257, context 1024, 768 wide, 12 layers, 12 heads.
const V = 50257, P = 1024, C = 768, L = 12;
function shapes() {
  const t = { 'wte.weight': [V, C], 'wpe.weight': [P, C] };
  for (let i = 0; i < L; i++) {
    Object.assign(t, {
      [`h.${i}.ln_1.weight`]: [C], [`h.${i}.ln_1.bias`]: [C], [`h.${i}.attn.c_attn.weight`]: [C, 3 * C], [`h.${i}.attn.c_attn.bias`]: [3 * C],
      [`h.${i}.attn.c_proj.weight`]: [C, C], [`h.${i}.attn.c_proj.bias`]: [C], [`h.${i}.ln_2.weight`]: [C], [`h.${i}.ln_2.bias`]: [C],
      [`h.${i}.mlp.c_fc.weight`]: [C, 4 * C], [`h.${i}.mlp.c_fc.bias`]: [4 * C], [`h.${i}.mlp.c_proj.weight`]: [4 * C, C], [`h.${i}.mlp.c_proj.bias`]: [C],
    });
  }
  return Object.assign(t, { 'ln_f.weight': [C], 'ln_f.bias': [C] });
}

/** A random float16 safetensors file (values of magnitude 2^-6..2^-1, random signs). */
function writeCheckpoint(folder) {
  const header = {};
  let offset = 0, params = 0;
  for (const [name, shape] of Object.entries(shapes())) {
    const n = shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F16', shape, data_offsets: [offset, offset + 2 * n] };
    offset += 2 * n;
    params += n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const file = Buffer.alloc(8 + json.length + offset);
  file.writeBigUInt64LE(BigInt(json.length));
  file.write(json, 8, 'latin1');
  const halves = new Uint16Array(file.buffer, file.byteOffset + 8 + json.length, offset / 2);
  let seed = 1;
  for (let i = 0; i < halves.length; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) | 0;
    // sign | exponent 9..14 (2^-6..2^-1) | mantissa
    halves[i] = (seed & 0x83ff) | ((9 + ((seed >>> 16) % 6)) << 10);
  }
  writeFileSync(join(folder, 'model.safetensors'), file);
  writeFileSync(join(folder, 'config.json'), JSON.stringify({ model_type: 'gpt2', vocab_size: V, n_positions: P, n_ctx: P, n_embd: C, n_layer: L, n_head: 12 }));
  // Any byte-level BPE with at most V tokens will do: the shipped model's.
  for (const f of ['vocab.json', 'merges.txt']) copyFileSync(join(root, 'web/models/brown-gpt2', f), join(folder, f));
  const largest = Math.max(...Object.values(header).map((h) => h.data_offsets[1] - h.data_offsets[0]));
  return { params, bytes: file.length, largest };
}

if (mode === '--server') {
  // The child: serve the folder as the Hub would, print the address.
  // The child writes the checkpoint and serves it, so neither counts in the measured process.
  const folder = process.argv[3];
  const made = writeCheckpoint(folder);
  const { startHubServer, readFolder } = await import(join(root, 'tests/js/hub_server.cjs'));
  const server = await startHubServer({ 'bench/gpt2-small-f16': { files: readFolder(folder) } });
  process.send({ url: server.url, ...made });
} else {
  const work = mkdtempSync(join(tmpdir(), 'attn-hub-mem-'));
  const folder = join(work, 'model');
  (await import('node:fs')).mkdirSync(folder);
  const child = fork(fileURLToPath(import.meta.url), ['--server', folder], { stdio: 'inherit' });
  const { url: hubUrl, params, bytes, largest } = await new Promise((ok) => child.once('message', ok));
  try {
    const attn = await loadAttention({ threads: 1 });
    global.gc?.();
    const base = process.memoryUsage();
    const heap0 = attn.memoryBytes;
    console.log(`checkpoint: ${(params / 1e6).toFixed(1)}M parameters, float16, ${MB(bytes)} MB (largest tensor ${MB(largest)} MB); float32 copy would be ${MB(params * 4)} MB; dtype ${dtype ?? 'not given (auto)'}`);
    console.log(`before loading: rss ${MB(base.rss)} MB, heap ${MB(base.heapUsed)} MB, arrayBuffers ${MB(base.arrayBuffers)} MB, WebAssembly memory ${MB(heap0)} MB`);
    for (const pass of ['download', 'from cache']) {
      let peakAb = 0, peakHeap = 0;
      const timer = setInterval(() => { const m = process.memoryUsage(); peakAb = Math.max(peakAb, m.arrayBuffers); peakHeap = Math.max(peakHeap, m.heapUsed); }, 10);
      const t0 = performance.now();
      const model = await attn.loadModel('hf:bench/gpt2-small-f16', { hubUrl, cacheDir: join(work, 'cache'), ...(dtype ? { dtype } : {}) });
      const ms = performance.now() - t0;
      clearInterval(timer);
      const after = process.memoryUsage();
      const maxRss = process.resourceUsage().maxRSS * 1024;
      console.log(`${pass}: ${(ms / 1000).toFixed(1)} s; peak RSS so far ${MB(maxRss)} MB (+${MB(maxRss - base.rss)} MB over before); ` +
        `sampled peaks while loading: arrayBuffers ${MB(peakAb)} MB, heap ${MB(peakHeap)} MB; WebAssembly memory ${MB(attn.memoryBytes)} MB; ` +
        `after: rss ${MB(after.rss)} MB, arrayBuffers ${MB(after.arrayBuffers)} MB`);
      if (pass === 'download') {
        const growth = maxRss - base.rss, heap = attn.memoryBytes - heap0, budget = heap + 1.2 * largest + bytes;
        console.log(`${growth <= budget ? 'met   ' : 'MISSED'}  peak RSS growth while loading <= final heap + 1.2 x largest tensor + download (issue 22): `
          + `${MB(growth)} MB vs ${MB(heap)} + 1.2 x ${MB(largest)} + ${MB(bytes)} = ${MB(budget)} MB`);
      }
      const { logits } = model.run('Hello world');
      if (!(logits.length > 0 && logits.length % V === 0 && logits.every(Number.isFinite))) throw new Error('unexpected logits');
      model.dispose();
      global.gc?.();
    }
  } finally {
    child.kill();
    rmSync(work, { recursive: true, force: true });
  }
}
