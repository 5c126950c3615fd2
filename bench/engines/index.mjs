// Every engine the bench knows. role: 'ours' (this library), 'peer' (what we must beat) or
// 'reference' (native: shows the ceiling, never a peer). threads matches ours to peers fairly.
// kinds: the workload kinds it runs (bench/common/workloads.mjs); default ['layer']. scalar: built
// without WASM SIMD; scalar builds are compared with scalar peers only, SIMD ones with SIMD peers.
// dtype (generate): how the engine holds its weight matrices; lossy engines (below 32 bits) may part
// from PyTorch's greedy tokens, which is reported with PyTorch's top-2 margin there, not a failure.
const LOW_BIT = ['f16', 'q8', 'q4'];

export const ENGINES = [
  { id: 'ours-simd', label: 'attention-wasm SIMD', role: 'ours', threads: 1, module: 'ours.mjs', options: { simd: true }, kinds: ['layer', 'encoder', 'generate'], dtype: 'f32' },
  { id: 'ours-simd-2t', label: 'attention-wasm SIMD 2 threads', role: 'ours', threads: 2, module: 'ours.mjs', options: { simd: true, threads: 2 }, kinds: ['layer', 'encoder', 'generate'], dtype: 'f32' },
  // Issue 22: the same generation with the weights held at 16, 8 and 4 bits (loadModel's dtype).
  ...LOW_BIT.flatMap((dtype) => [1, 2].map((threads) => ({
    id: `ours-${dtype}${threads > 1 ? `-${threads}t` : ''}`, label: `attention-wasm SIMD, ${dtype} weights${threads > 1 ? `, ${threads} threads` : ''}`,
    role: 'ours', threads, module: 'ours.mjs', options: { simd: true, threads, dtype }, kinds: ['generate'], dtype, lossy: true,
  }))),
  { id: 'ours-scalar', label: 'attention-wasm scalar', role: 'ours', threads: 1, scalar: true, module: 'ours.mjs', options: { simd: false } },
  { id: 'ort-fused-1t', label: 'onnxruntime-web Attention op', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'fused', threads: 1 } },
  { id: 'ort-fused-2t', label: 'onnxruntime-web Attention op 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'fused', threads: 2 } },
  { id: 'ort-plain-1t', label: 'onnxruntime-web MatMul/Softmax graph', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'plain', threads: 1 } },
  { id: 'ort-plain-2t', label: 'onnxruntime-web MatMul/Softmax graph 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'plain', threads: 2 } },
  { id: 'ort-export-1t', label: 'onnxruntime-web, torch.onnx.export graph', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'export', threads: 1 }, kinds: ['encoder'] },
  { id: 'ort-export-2t', label: 'onnxruntime-web, torch.onnx.export graph, 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'export', threads: 2 }, kinds: ['encoder'] },
  // The generate workload's export with past key/values, driven by a greedy loop as transformers.js does.
  { id: 'ort-kv-1t', label: 'onnxruntime-web, torch.onnx.export with past key/values', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'kv', threads: 1 }, kinds: ['generate'], dtype: 'f32' },
  { id: 'ort-kv-2t', label: 'onnxruntime-web, torch.onnx.export with past key/values, 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'kv', threads: 2 }, kinds: ['generate'], dtype: 'f32' },
  // The same export with its MatMul weights quantized to int8 as transformers.js's q8 files are
  // (bench/generate/quantize8.py): DynamicQuantizeLinear + MatMulInteger, fused by ORT at load.
  { id: 'ort-q8-1t', label: 'onnxruntime-web 8-bit (MatMulInteger), past key/values', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'kv8', threads: 1 }, kinds: ['generate'], dtype: 'int8', lossy: true },
  { id: 'ort-q8-2t', label: 'onnxruntime-web 8-bit (MatMulInteger), past key/values, 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'kv8', threads: 2 }, kinds: ['generate'], dtype: 'int8', lossy: true },
  // The same weights as com.microsoft MatMulNBits, bits=8, blocks of 32 (the layout of our Q8_0).
  // optIn: only with --engines. onnxruntime-web 1.30's wasm runs it correctly but decodes ~10x
  // slower than the MatMulInteger graph (35 s a run here), which would take the bench past 10 min.
  { id: 'ort-nbits8-1t', label: 'onnxruntime-web 8-bit (MatMulNBits), past key/values', role: 'peer', threads: 1, module: 'ort.mjs', options: { graph: 'kvnbits8', threads: 1 }, kinds: ['generate'], dtype: 'nbits8', lossy: true, optIn: true },
  { id: 'ort-nbits8-2t', label: 'onnxruntime-web 8-bit (MatMulNBits), past key/values, 2 threads', role: 'peer', threads: 2, module: 'ort.mjs', options: { graph: 'kvnbits8', threads: 2 }, kinds: ['generate'], dtype: 'nbits8', lossy: true, optIn: true },
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

/** The engines named (in that order), or every engine but the opt-in ones. */
export function selectEngines(ids) {
  if (!ids) return ENGINES.filter((e) => !e.optIn);
  return ids.map((id) => {
    const e = ENGINES.find((x) => x.id === id);
    if (!e) throw new Error(`unknown engine "${id}" (known: ${ENGINES.map((x) => x.id).join(', ')})`);
    return e;
  });
}
