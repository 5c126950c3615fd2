// The WebAssembly memory grows past 2 GiB (to the wasm32 limit of 4 GiB): pointers above 2^31
// come back from the module as negative i32s unless read unsigned, so a call whose buffers lie
// past 2 GiB is checked against the same call made while the heap was small.
const fs = require('node:fs');
const path = require('node:path');
const { api } = require('./helpers.cjs');

const BROWN = path.resolve(__dirname, '../../web/models/brown-llama');

test('buffers past 2 GiB: weights encoded, a model loaded and run there equal the small heap\'s', async () => {
  const attn = await api.loadAttention({ threads: 1 });
  const values = Float32Array.from({ length: 4096 }, (_, i) => Math.sin(i) * 0.1);
  const encoded = attn.encodeWeights(values, { type: 'Q4_K', cols: 256 });
  const small = await attn.loadModel(BROWN, { dtype: 'f32' });
  const ids = small.tokenizer.encode('The jury said the city');
  const before = small.run(ids).logits;
  small.dispose();

  // A layer of dModel 9000: its four weight matrices (1.3 GB) staged in one block the layer keeps,
  // then held by the core (1.3 GB more): the heap passes 2 GiB.
  const d = 9000, w = new Float32Array(d * d).fill(1e-3);
  const layer = attn.createMultiHeadAttention({ dModel: d, numHeads: 8, bias: false });
  layer.setWeights({ wQ: w, wK: w, wV: w, wO: w });
  expect(attn.memoryBytes).toBeGreaterThan(2 ** 31 + 2 ** 28);
  // A single block past 2 GiB is refused by name.
  const big = new Float32Array(24300).fill(0.01);
  expect(() => attn.scaledDotProductAttention(big, big, big, { dK: 1, returnAttention: true }))
    .toThrow('out of memory: this call needs 2252.9 MiB of WebAssembly heap, more than one block of the heap may hold (under 2 GiB)');

  // Everything allocated now lies above it.
  expect(attn.encodeWeights(values, { type: 'Q4_K', cols: 256 })).toEqual(encoded);
  const high = await attn.loadModel(BROWN, { dtype: 'f32' });
  try {
    expect(high.run(ids).logits).toEqual(before);
  } finally {
    high.dispose();
  }
}, 120_000);
