// Every engine the bench knows. role: 'ours' (this library), 'peer' (what we must beat) or
// 'reference' (native: shows the ceiling, never a peer). threads matches ours to peers fairly.
export const ENGINES = [
  { id: 'ours-simd', label: 'attention-wasm SIMD', role: 'ours', threads: 1, module: 'ours.mjs', options: { simd: true } },
  { id: 'ours-simd-2t', label: 'attention-wasm SIMD 2 threads', role: 'ours', threads: 2, module: 'ours.mjs', options: { simd: true, threads: 2 } },
  { id: 'ours-scalar', label: 'attention-wasm scalar', role: 'ours', threads: 1, module: 'ours.mjs', options: { simd: false } },
  { id: 'ort-fused-1t', label: 'onnxruntime-web Attention op', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'fused', threads: 1 } },
  { id: 'ort-fused-2t', label: 'onnxruntime-web Attention op 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'fused', threads: 2 } },
  { id: 'ort-plain-1t', label: 'onnxruntime-web MatMul/Softmax graph', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'plain', threads: 1 } },
  { id: 'ort-plain-2t', label: 'onnxruntime-web MatMul/Softmax graph 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'plain', threads: 2 } },
  { id: 'tfjs-wasm', label: 'tfjs-backend-wasm', role: 'peer', threads: 1, module: 'tfjs.mjs', options: {} },
  { id: 'plain-js', label: 'plain JavaScript', role: 'peer', threads: 1, module: 'plainjs.mjs', options: {} },
  { id: 'native', label: 'same C++ native -O3 -march=native', role: 'reference', threads: 1, native: true },
];

/** The engine whose output every other engine is checked against. */
export const REFERENCE_ID = 'ours-simd';

export function selectEngines(ids) {
  if (!ids) return ENGINES;
  return ids.map((id) => {
    const e = ENGINES.find((x) => x.id === id);
    if (!e) throw new Error(`unknown engine "${id}" (known: ${ENGINES.map((x) => x.id).join(', ')})`);
    return e;
  });
}
