// How the package loads: CommonJS and ESM in Node, variant choice, explicit bytes or URL, and
// proof that the SIMD build really runs f32x4 instructions.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { api, root, randomArray } = require('./helpers.cjs');

const dist = path.join(root, 'dist');

test('CommonJS: require() gives the API, SIMD is picked automatically in Node 20', async () => {
  expect(api.simdSupported()).toBe(true);
  const attn = await api.loadAttention();
  expect(attn.variant).toBe('simd');
  expect((await api.loadAttention({ simd: false })).variant).toBe('scalar');
});

test('ESM: import() of the package entry works in Node', () => {
  const script = `
    const { loadAttention, AttentionError } = await import(${JSON.stringify(path.join(dist, 'index.js'))});
    const attn = await loadAttention();
    const mha = attn.createMultiHeadAttention({ dModel: 4, numHeads: 2 });
    const w = new Float32Array(16).fill(0.1), b = new Float32Array(4);
    mha.setWeights({ wQ: w, wK: w, wV: w, wO: w, bQ: b, bK: b, bV: b, bO: b });
    const { output } = mha.forward(new Float32Array(12).fill(1));
    let err; try { mha.forward(new Float32Array(5)); } catch (e) { err = e; }
    mha.dispose();
    console.log(JSON.stringify({ variant: attn.variant, n: output.length, v: output[0], named: err instanceof AttentionError }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  // 1*0.1*4 per projection: V rows = 0.4, output = 4 * 0.4 * 0.1 = 0.16
  expect(out).toEqual({ variant: 'simd', n: 12, v: expect.any(Number), named: true });
  expect(out.v).toBeCloseTo(0.16, 6);
});

test('wasmBinary: the module can be handed its bytes', async () => {
  const bytes = fs.readFileSync(path.join(dist, 'attention_scalar.wasm'));
  const attn = await api.loadAttention({ simd: false, wasmBinary: bytes });
  expect(attn.variant).toBe('scalar');
});

test('a wrong wasmUrl or corrupt bytes give an AttentionError that says what to do', async () => {
  await expect(api.loadAttention({ wasmUrl: 'file:///nonexistent/attention.wasm' }))
    .rejects.toThrow(/could not load attention_simd\.wasm: .*ENOENT.*Pass \{ wasmUrl \} or \{ wasmBinary \}/);
  await expect(api.loadAttention({ wasmBinary: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]) }))
    .rejects.toThrow(/failed to instantiate/);
});

test('both builds give the same answer', async () => {
  const [simd, scalar] = await Promise.all([api.loadAttention({ simd: true }), api.loadAttention({ simd: false })]);
  const cfg = { dModel: 64, numHeads: 4 };
  const w = { wQ: randomArray(4096, 1), wK: randomArray(4096, 2), wV: randomArray(4096, 3), wO: randomArray(4096, 4),
    bQ: randomArray(64, 5), bK: randomArray(64, 6), bV: randomArray(64, 7), bO: randomArray(64, 8) };
  const x = randomArray(3 * 37 * 64, 9);
  const run = (m) => { const l = m.createMultiHeadAttention(cfg); l.setWeights(w); const r = l.forward(x, { batch: 3, causal: true }); l.dispose(); return r.output; };
  const a = run(simd), b = run(scalar);
  for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(1e-5 + 1e-4 * Math.abs(b[i]));
});

test('the SIMD .wasm contains f32x4 arithmetic and the scalar one none', () => {
  const count = (file) => {
    const text = execFileSync('wasm-objdump', ['-d', path.join(dist, file)], { encoding: 'utf8', maxBuffer: 1 << 28 });
    return { mul: (text.match(/f32x4\.mul/g) || []).length, add: (text.match(/f32x4\.add/g) || []).length, v128: (text.match(/v128\./g) || []).length };
  };
  const simd = count('attention_simd.wasm');
  expect(simd.mul).toBeGreaterThan(10);
  expect(simd.add).toBeGreaterThan(10);
  expect(count('attention_scalar.wasm')).toEqual({ mul: 0, add: 0, v128: 0 });
});
