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

  // One call whose staging block (kept by the attention object for its next call) takes 2.2 GiB:
  // 24300^2 attention weights returned.
  const n = 24300, q = new Float32Array(n).fill(0.01);
  const out = attn.scaledDotProductAttention(q, q, q, { dK: 1, returnAttention: true });
  expect(out.attention.length).toBe(n * n);
  expect(attn.memoryBytes).toBeGreaterThan(2 ** 31 + 2 ** 28);

  // Everything allocated now lies above it.
  expect(attn.encodeWeights(values, { type: 'Q4_K', cols: 256 })).toEqual(encoded);
  const high = await attn.loadModel(BROWN, { dtype: 'f32' });
  try {
    expect(high.run(ids).logits).toEqual(before);
  } finally {
    high.dispose();
  }
}, 120_000);
