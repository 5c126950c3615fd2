// model.dtype: the precision a model holds, read back (it was undefined): the type most of its
// tensors are held in, its F32 norms and biases aside, in weightTypes' names; weightTypes says
// each tensor's (a matrix too narrow for whole 32-value blocks stays F16 under q8 and q4).
const path = require('node:path');
const { api, root } = require('./helpers.cjs');
const { CONFIG } = require('./load_sources.cjs');
const { checkpoint, safetensors, tokenizerFiles } = require('./llama_checkpoint.cjs');

let attn;
beforeAll(async () => { attn = await api.loadAttention({ threads: 1 }); });

test.each([['auto', 'F16'], ['f32', 'F32'], ['f16', 'F16'], ['q8', 'Q8_0'], ['q4', 'Q4_0']])('brown-llama at dtype %s holds %s', async (dtype, held) => {
  const model = await attn.loadModel(path.join(root, 'web/models/brown-llama'), { dtype });
  try {
    expect(model.dtype).toBe(held);
    const counts = {};
    for (const t of Object.values(model.weightTypes)) counts[t] = (counts[t] ?? 0) + 1;
    // The most common type besides F32 is the one named (F32 only when nothing else is held).
    const others = Object.entries(counts).filter(([t]) => t !== 'F32').sort((a, b) => b[1] - a[1]);
    expect(others.length ? others[0][0] : 'F32').toBe(held);
  } finally {
    model.dispose();
  }
});

test('a BF16 checkpoint loaded as stored holds BF16; each family has dtype', async () => {
  const tok = tokenizerFiles();
  const bf16 = await attn.loadModel({ config: CONFIG, weights: safetensors(checkpoint(CONFIG, 3, true), 'BF16'), tokenizer: { tokenizer: tok.tokenizer, config: tok.config } });
  expect(bf16.dtype).toBe('BF16');
  bf16.dispose();
  for (const name of ['brown-gpt2', 'brown-bert', 'g2p-bart']) {
    const model = await attn.loadModel(path.join(root, 'web/models', name), { dtype: 'f32' });
    expect({ name, dtype: model.dtype }).toEqual({ name, dtype: 'F32' });
    model.dispose();
  }
});
