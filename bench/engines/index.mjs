// Every engine the bench knows. role: 'ours' (this library), 'peer' (what we must beat) or
// 'reference' (native: shows the ceiling, never a peer). threads matches ours to peers fairly.
// kinds: the workload kinds it runs (bench/workloads.mjs); default ['layer']. scalar: built
// without WASM SIMD; scalar builds are compared with scalar peers only, SIMD ones with SIMD peers.
export const ENGINES = [
  { id: 'ours-simd', label: 'attention-wasm SIMD', role: 'ours', threads: 1, module: 'ours.mjs', options: { simd: true }, kinds: ['layer', 'encoder', 'generate'] },
  { id: 'ours-simd-2t', label: 'attention-wasm SIMD 2 threads', role: 'ours', threads: 2, module: 'ours.mjs', options: { simd: true, threads: 2 }, kinds: ['layer', 'encoder', 'generate'] },
  { id: 'ours-scalar', label: 'attention-wasm scalar', role: 'ours', threads: 1, scalar: true, module: 'ours.mjs', options: { simd: false } },
  { id: 'ort-fused-1t', label: 'onnxruntime-web Attention op', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'fused', threads: 1 } },
  { id: 'ort-fused-2t', label: 'onnxruntime-web Attention op 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'fused', threads: 2 } },
  { id: 'ort-plain-1t', label: 'onnxruntime-web MatMul/Softmax graph', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'plain', threads: 1 } },
  { id: 'ort-plain-2t', label: 'onnxruntime-web MatMul/Softmax graph 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'plain', threads: 2 } },
  { id: 'ort-export-1t', label: 'onnxruntime-web, torch.onnx.export graph', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'export', threads: 1 }, kinds: ['encoder'] },
  { id: 'ort-export-2t', label: 'onnxruntime-web, torch.onnx.export graph, 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'export', threads: 2 }, kinds: ['encoder'] },
  // The generate workload's export with past key/values, driven by a greedy loop as transformers.js does.
  { id: 'ort-kv-1t', label: 'onnxruntime-web, torch.onnx.export with past key/values', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'kv', threads: 1 }, kinds: ['generate'] },
  { id: 'ort-kv-2t', label: 'onnxruntime-web, torch.onnx.export with past key/values, 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'kv', threads: 2 }, kinds: ['generate'] },
  { id: 'tfjs-wasm', label: 'tfjs-backend-wasm', role: 'peer', threads: 1, module: 'tfjs.mjs', options: {} },
  // tfjs-backend-wasm's non-SIMD .wasm (XNNPACK's scalar kernels): the peer of our scalar build.
  { id: 'tfjs-wasm-scalar', label: 'tfjs-backend-wasm without SIMD', role: 'peer', threads: 1, scalar: true, module: 'tfjs.mjs', options: { simd: false } },
  { id: 'plain-js', label: 'plain JavaScript', role: 'peer', threads: 1, module: 'plainjs.mjs', options: {} },
  { id: 'native', label: 'same C++ native -O3 -march=native', role: 'reference', threads: 1, native: true },
];

/** Whether engine e runs workload w. */
export const runsWorkload = (e, w) => (e.kinds ?? ['layer']).includes(w.kind ?? 'layer');

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
