// The GPT-2 forward against a float64 PyTorch reference (tests/fixtures/gpt2, written by
// tests/fixtures/generate_gpt2_fixtures.py): logits, every layer's attention and one layer's trace,
// from F32 and F16 checkpoints with and without the "transformer." prefix. Then hostile checkpoints.
const fs = require('node:fs');
const path = require('node:path');
const { api, root, variants, load, expectClose } = require('./helpers.cjs');

const dir = path.join(root, 'tests/fixtures/gpt2');
const cases = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, 'expected.json'))).sort();

/** A stand-in tokenizer (the fixtures are random models without one): one printable char per id. */
function tokenizerFor(vocabSize) {
  const vocab = {};
  for (let i = 0; i < vocabSize; i++) vocab[String.fromCharCode(0x21 + i)] = i;
  return { vocab, merges: '' };
}

function files(name, { config, weights } = {}) {
  const c = config ?? JSON.parse(fs.readFileSync(path.join(dir, name, 'config.json'), 'utf8'));
  return {
    config: c,
    weights: weights ?? fs.readFileSync(path.join(dir, name, 'model.safetensors')),
    tokenizer: tokenizerFor(c.vocab_size),
  };
}

test('fixtures exist for F32, F16 + prefix and a wider model', () => {
  expect(cases).toEqual(['f16_prefixed', 'f32_tiny', 'f32_wider']);
});

describe.each(variants)('%s build', (variant) => {
  test.each(cases)('%s matches the PyTorch reference', async (name) => {
    const attn = await load(variant);
    const want = JSON.parse(fs.readFileSync(path.join(dir, name, 'expected.json'), 'utf8'));
    const model = await attn.loadModel(files(name));
    try {
      const r = model.run(want.tokens, { attention: true, traceLayer: want.trace_layer });
      const tol = want.tolerance;
      expectClose(r.logits, want.logits, tol, 'logits');
      expectClose(r.attention, want.attention, tol, 'attention');
      const t = want.trace;
      expectClose(r.trace.q, t.q, tol, 'trace.q');
      expectClose(r.trace.k, t.k, tol, 'trace.k');
      expectClose(r.trace.v, t.v, tol, 'trace.v');
      expectClose(r.trace.rawScores, t.raw_scores, tol, 'trace.rawScores');
      expectClose(r.trace.weights, t.weights, tol, 'trace.weights');
      expectClose(r.trace.z, t.z, tol, 'trace.z');
      expectClose(r.trace.concat, t.concat, tol, 'trace.concat');
      expectClose(r.trace.output, t.output, tol, 'trace.output');
      expect(r.tokenTexts).toHaveLength(want.tokens.length);
      const next = model.predictNext(r, 3);
      expect(next).toHaveLength(3);
      expect(next[0].probability).toBeGreaterThanOrEqual(next[1].probability);
    } finally {
      model.dispose();
    }
  });
});

/** Rewrites a safetensors file's header (same data section). */
function withHeader(bytes, edit) {
  const n = Number(Buffer.from(bytes).readBigUInt64LE(0));
  const header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'));
  edit(header);
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8) json += ' ';
  const out = Buffer.alloc(8 + json.length + (bytes.length - 8 - n));
  out.writeBigUInt64LE(BigInt(json.length), 0);
  out.write(json, 8);
  Buffer.from(bytes.subarray(8 + n)).copy(out, 8 + json.length);
  return new Uint8Array(out);
}

describe('checkpoints that do not fit', () => {
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'f32_tiny/model.safetensors')));
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'f32_tiny/config.json'), 'utf8'));
  const rejects = async (f, message) => {
    const attn = await load('simd');
    await expect(attn.loadModel(f)).rejects.toThrow(message);
    // and the module still works
    const m = await attn.loadModel(files('f32_tiny'));
    expect(m.run([1, 2, 3]).logits).toHaveLength(3 * config.vocab_size);
    m.dispose();
  };
  test('missing tensor', () => rejects(files('f32_tiny', { weights: withHeader(bytes, (h) => { delete h['h.1.mlp.c_fc.bias']; }) }),
    /missing tensor "h\.1\.mlp\.c_fc\.bias"/));
  test('shape mismatch with the config', () => rejects(files('f32_tiny', { config: { ...config, n_positions: 20 } }),
    /tensor "wpe\.weight" has shape \[16, 16\] but config\.json implies \[20, 16\]/));
  test('a layer count the file does not have', () => rejects(files('f32_tiny', { config: { ...config, n_layer: 3 } }),
    /missing tensor "h\.2\.ln_1\.weight"/));
  test('n_embd not divisible by n_head', () => rejects(files('f32_tiny', { config: { ...config, n_head: 3 } }),
    /n_embd \(16\) is not divisible by n_head \(3\)/));
  test('NaN inside a weight', async () => {
    const header = Number(Buffer.from(bytes).readBigUInt64LE(0));
    const h = JSON.parse(Buffer.from(bytes.subarray(8, 8 + header)).toString());
    const poisoned = bytes.slice();
    new DataView(poisoned.buffer).setFloat32(8 + header + h['ln_f.bias'].data_offsets[0] + 8, NaN, true);
    await rejects(files('f32_tiny', { weights: poisoned }), /ln_f\.bias contains NaN at index 2/);
  });
  test('unsupported activation', () => rejects(files('f32_tiny', { config: { ...config, activation_function: 'relu' } }), /activation_function "relu" is not supported/));
  test('truncated file', () => rejects(files('f32_tiny', { weights: bytes.subarray(0, bytes.length - 100) }), /safetensors: .* out of range/));
  test('tokens outside the vocabulary or the context', async () => {
    const attn = await load('simd');
    const m = await attn.loadModel(files('f32_tiny'));
    expect(() => m.run([1, 37])).toThrow(/token 37 at position 1 is outside the vocabulary of 37/);
    expect(() => m.run(Array(17).fill(1))).toThrow(/17 tokens exceed the model's context of 16/);
    expect(() => m.run([])).toThrow(/the input has no tokens/);
    expect(() => m.run([1], { traceLayer: 2 })).toThrow(/traceLayer must be an integer in \[0, 1\]/);
    m.dispose();
    expect(() => m.run([1])).toThrow(/disposed/);
  });
});
