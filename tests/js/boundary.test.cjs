// The WebAssembly boundary (issue 32): configs and multi-part calls cross as embind value_objects
// (plain objects, a config's fields named as in config.json), codes as embind enums the wrapper
// reads by name from the module. embind 3.1.6 itself does not check an enum argument (it passes
// `.value` on: a plain number becomes 0), so the names must go through the wrapper, which refuses
// unknown ones with a named AttentionError.
const { api, load } = require('./helpers.cjs');

/** An enum's names as the module exposes them (embind adds a `values` table beside them). */
const names = (e) => Object.keys(e).filter((k) => typeof e[k]?.value === 'number');

describe('the boundary', () => {
  let attn, mod;
  beforeAll(async () => {
    attn = await load('simd');
    mod = attn.mod;  // internal: the instantiated glue
  });

  test('codes are enums with one definition, read by name', () => {
    expect(names(mod.WeightStorage)).toEqual([...api.WEIGHT_DTYPES]);
    // A checkpoint's dtypes are the weight types, by safetensors' and GGUF's names (weight_types.h's order).
    expect(names(mod.Dtype)).toEqual(['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K', 'Q5_0', 'Q4_1', 'Q5_1', 'Q5_K', 'Q3_K', 'Q2_K']);
    expect(names(mod.MaskKind)).toEqual(['None', 'Bool', 'Float']);
    expect(names(mod.Activation)).toEqual(['gelu', 'gelu_new', 'tanh', 'silu']);
    expect(names(mod.Pooling)).toEqual(['mean', 'cls']);
    expect(names(mod.TraceSlot)).toEqual(['Q', 'K', 'V', 'RawScores', 'ScaledScores', 'MaskedScores', 'Weights', 'Z', 'Concat',
      'Output', 'Input', 'QBeforeRotary', 'QBeforeNorm', 'KBeforeNorm', 'KBeforeRotary',
      'BlockInput', 'BlockAttention', 'BlockAfterAttention', 'BlockCross', 'BlockAfterCross', 'BlockMlpInput',
      'BlockUp', 'BlockGate', 'BlockHidden', 'BlockMlp', 'BlockAfterMlp', 'BlockOutput',
      'Norm1Gain', 'Norm1Bias', 'Norm1Eps', 'Norm2Gain', 'Norm2Bias', 'Norm2Eps', 'Norm3Gain', 'Norm3Bias', 'Norm3Eps']);
  });

  test('a config crosses as one object; a missing field is named by embind', () => {
    const h = new mod.Gpt2Handle();
    try {
      const config = { vocab_size: 10, n_positions: 8, n_embd: 8, n_layer: 1, n_head: 2, layer_norm_epsilon: 1e-5 };
      expect(h.configure(config)).toBe('');
      expect(h.configure({ ...config, n_head: 3 })).toMatch(/n_head|divisible/);
      expect(() => h.configure({ vocab_size: 10 })).toThrow(/Missing field:\s+"n_positions"/);
      expect(h.setWeightStorage(mod.WeightStorage.f16)).toBeUndefined();  // (every storage is taken: widths that are not whole blocks fall back)
    } finally {
      h.delete();
    }
  });

  test('an unknown dtype name is a named AttentionError before it reaches the boundary', async () => {
    for (const dtype of [7, 'int8', 'values', 'constructor'])
      await expect(attn.loadModel('hf:none/none', { dtype })).rejects.toThrow(api.AttentionError);
  });
});
