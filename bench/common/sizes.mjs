// .wasm download sizes, raw and gzipped (node:zlib, level 9), of this library's builds and of
// the peers' files that the bench actually runs.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function candidates() {
  const list = [];
  const dist = `${ROOT}dist`;
  if (existsSync(dist)) {
    for (const f of readdirSync(dist).filter((n) => n.endsWith('.wasm')).sort()) list.push({ owner: 'attention-wasm', file: `dist/${f}` });
  }
  // ORT's Node and browser wasm EP load ort-wasm-simd-threaded.wasm (also used at 1 thread).
  list.push({ owner: 'onnxruntime-web', file: 'node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm' });
  for (const f of ['tfjs-backend-wasm-simd.wasm', 'tfjs-backend-wasm-threaded-simd.wasm', 'tfjs-backend-wasm.wasm']) {
    list.push({ owner: 'tfjs-backend-wasm', file: `node_modules/@tensorflow/tfjs-backend-wasm/dist/${f}` });
  }
  return list;
}

export function wasmSizes() {
  return candidates().filter((c) => existsSync(ROOT + c.file)).map((c) => {
    const bytes = readFileSync(ROOT + c.file);
    return { ...c, rawBytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
  });
}
