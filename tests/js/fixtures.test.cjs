// Every PyTorch reference fixture (tests/fixtures/mha, float64 references) through the public API,
// on both the SIMD and the scalar build. Tolerance: the fixture's own (1e-5 abs + 1e-4 rel).
const { api, variants, load, expectClose, readFixtures } = require('./helpers.cjs');

const fixtures = readFixtures();

function maskOption(mask) {
  if (!mask) return undefined;
  if (mask.kind === 'bool') return Uint8Array.from(mask.data);
  return Float32Array.from(mask.data, (x) => (x === '-inf' ? -Infinity : x));
}

function forwardOptions(inp, c) {
  const self = c.kdim === c.embed_dim && c.vdim === c.embed_dim && inp.seq_q === inp.seq_k &&
    inp.key.every((x, i) => x === inp.query[i]) && inp.value.every((x, i) => x === inp.query[i]);
  const options = {
    batch: inp.batch,
    causal: inp.causal,
    keyPaddingMask: inp.key_padding_mask ? Uint8Array.from(inp.key_padding_mask) : undefined,
    attnMask: maskOption(inp.attn_mask),
    returnAttention: true,
  };
  if (!self) Object.assign(options, { key: Float32Array.from(inp.key), value: Float32Array.from(inp.value) });
  return options;
}

const mha = fixtures.filter((f) => f.kind === 'mha');
const sdpa = fixtures.filter((f) => f.kind === 'sdpa');

test('the fixture set covers the issue\'s cases', () => {
  const names = fixtures.map((f) => f.name);
  for (const want of ['causal_self', 'cross_kdim_vdim', 'key_padding', 'bool_attn_mask_2d', 'float_attn_mask_2d',
    'attn_mask_4d_combined', 'dk_ne_dv', 'large_magnitude', 'fully_masked_row', 'sdpa_scale_override'])
    expect(names).toContain(want);
});

describe.each(variants)('%s build', (variant) => {
  test.each(mha.map((f) => [f.name, f]))('multi-head fixture %s', async (_, f) => {
    const attn = await load(variant);
    const c = f.config;
    const layer = attn.createMultiHeadAttention({
      dModel: c.embed_dim, numHeads: c.num_heads, dK: c.d_k, dV: c.d_v, kdim: c.kdim, vdim: c.vdim, bias: c.bias,
    });
    try {
      const w = f.weights;
      const weights = c.bias
        ? { wQ: w.wQ, wK: w.wK, wV: w.wV, wO: w.wO, bQ: w.bQ, bK: w.bK, bV: w.bV, bO: w.bO }
        : { wQ: w.wQ, wK: w.wK, wV: w.wV, wO: w.wO };
      layer.setWeights(weights);
      const result = layer.forward(Float32Array.from(f.inputs.query), forwardOptions(f.inputs, c));
      expectClose(result.output, f.expected.output, f.tolerance, 'output');
      expectClose(result.attention, f.expected.attention, f.tolerance, 'attention');

      if (f.pytorch_state) {
        // The same numbers through the PyTorch converter: proves the layout conversion.
        const converted = api.weightsFromPyTorch(f.pytorch_state, {
          dModel: c.embed_dim, numHeads: c.num_heads, kdim: c.kdim, vdim: c.vdim, bias: c.bias,
        });
        for (const [name, value] of Object.entries(converted)) expectClose(value, w[name], { abs: 0, rel: 0 }, name);
        layer.setWeights(converted);
        const again = layer.forward(Float32Array.from(f.inputs.query), forwardOptions(f.inputs, c));
        expectClose(again.output, f.expected.output, f.tolerance, 'output via weightsFromPyTorch');
      }
    } finally {
      layer.dispose();
    }
  });

  test.each(sdpa.map((f) => [f.name, f]))('scaled dot-product fixture %s', async (_, f) => {
    const attn = await load(variant);
    const c = f.config;
    const r = attn.scaledDotProductAttention(Float32Array.from(f.inputs.q), Float32Array.from(f.inputs.k),
      Float32Array.from(f.inputs.v), {
        dK: c.d_k, batch: c.batch, heads: c.heads, scale: c.scale, causal: f.inputs.causal,
        attnMask: maskOption(f.inputs.attn_mask), returnAttention: true,
      });
    expectClose(r.output, f.expected.output, f.tolerance, 'output');
    expectClose(r.attention, f.expected.attention, f.tolerance, 'attention');
  });
});
