// The tiny random Llama's weights as the tests build them, and their digest: the PyTorch fixture
// (tests/fixtures/llama_onnx/) holds the digest of the weights it was computed from.
import { createHash } from 'node:crypto';

import { llamaShapes, llamaTensor, TINY_LLAMA } from '../../bench/llama/weights.mjs';

/** { name: [shape, Float32Array] } of TINY_LLAMA. */
export const tinyTensors = () => Object.fromEntries(llamaShapes(TINY_LLAMA).map(([name, shape]) => [name, [shape, llamaTensor(TINY_LLAMA, name, shape)]]));

/** sha256 (hex) over every tensor's name, shape and float32 bytes, in llamaShapes' order. */
export function tinyWeightsDigest() {
  const h = createHash('sha256');
  for (const [name, [shape, x]] of Object.entries(tinyTensors())) h.update(`${name}:${shape.join('x')}\n`).update(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
  return h.digest('hex');
}
