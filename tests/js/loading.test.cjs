// How the package loads: CommonJS and ESM in Node, variant choice, explicit bytes or URL, and
// proof that the SIMD build really runs f32x4 instructions.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const { api, root, randomArray } = require('./helpers.cjs');

const dist = path.join(root, 'dist');

test('CommonJS: require() gives the API; in Node, SIMD with threads is picked automatically', async () => {
  expect(api.simdSupported()).toBe(true);
  const cores = require('node:os').availableParallelism();
  const attn = await api.loadAttention();
  expect(attn.threads).toBe(Math.min(api.MAX_THREADS, cores));
  expect(attn.variant).toBe(attn.threads > 1 ? 'simd-threads' : 'simd');
  expect((await api.loadAttention({ threads: 1 })).variant).toBe('simd');
  expect((await api.loadAttention({ simd: false })).variant).toBe('scalar');
  await expect(api.loadAttention({ threads: 9 })).rejects.toThrow(/threads must be 'auto' or an integer from 1 to 4, got 9/);
  await expect(api.loadAttention({ threads: 2, simd: false })).rejects.toThrow(/threads > 1 comes with the SIMD build only/);
});

test("relaxed SIMD: 'auto' never picks it in Node; forcing it without engine support, or with threads, is a named error", async () => {
  // (Node 20 validates relaxed SIMD only behind --experimental-wasm-relaxed-simd; tests/browser/relaxed_simd.test.cjs runs the build)
  expect((await api.loadAttention({ threads: 1, simd: 'auto' })).variant).toBe('simd');
  if (api.relaxedSimdSupported()) expect((await api.loadAttention({ simd: 'relaxed' })).variant).toBe('relaxed');
  else await expect(api.loadAttention({ simd: 'relaxed' })).rejects.toThrow(/simd: 'relaxed' was requested but this engine has no WebAssembly relaxed SIMD/);
  await expect(api.loadAttention({ simd: 'relaxed', threads: 2 })).rejects.toThrow(/threads > 1 comes with the SIMD build only: drop simd: 'relaxed'/);
  await expect(api.loadAttention({ simd: 'fast' })).rejects.toThrow('loadAttention: simd must be one of true, false, "auto", "relaxed", got "fast"');
  expect(fs.statSync(path.join(dist, 'attention_relaxed.wasm')).size).toBeGreaterThan(100000);
});

test('a Node program using the threaded build exits by itself', () => {
  const script = `const { loadAttention } = require(${JSON.stringify(path.join(dist, 'index.cjs'))});
    loadAttention({ threads: 2 }).then((a) => console.log(a.variant));`;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20000 });
  expect(out.trim()).toBe('simd-threads');
});

test('ESM: import() of the Node entry (what the "node" export condition picks) works in Node', () => {
  const script = `
    const { loadAttention, AttentionError } = await import(${JSON.stringify(path.join(dist, 'index.node.js'))});
    const attn = await loadAttention();
    const mha = attn.createMultiHeadAttention({ dModel: 4, numHeads: 2 });
    const w = new Float32Array(16).fill(0.1), b = new Float32Array(4);
    mha.setWeights({ wQ: w, wK: w, wV: w, wO: w, bQ: b, bK: b, bV: b, bO: b });
    const { output } = mha.forward(new Float32Array(12).fill(1));
    let err; try { mha.forward(new Float32Array(5)); } catch (e) { err = e; }
    mha.dispose();
    console.log(JSON.stringify({ variant: attn.variant.slice(0, 4), n: output.length, v: output[0], named: err instanceof AttentionError }));
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
    .rejects.toThrow(/could not load attention_simd\.wasm: file not found: \/nonexistent\/attention\.wasm\. Pass \{ wasmUrl \} or \{ wasmBinary \}/);
  await expect(api.loadAttention({ wasmBinary: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]) }))
    .rejects.toThrow(/failed to instantiate/);
});

test('loadModel on a folder or file that is not there names what is missing', async () => {
  const attn = await api.loadAttention({ simd: true, threads: 1 });
  const missing = path.join(os.tmpdir(), 'attention-wasm-no-such-model');
  await expect(attn.loadModel(missing)).rejects.toThrow(new RegExp(`^file not found: ${missing}/config\\.json$`));
  await expect(attn.loadModel(missing)).rejects.toBeInstanceOf(api.AttentionError);
  // A folder with config.json but no weights names the weights file.
  const half = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-wasm-half-'));
  fs.copyFileSync(path.join(root, 'web/models/brown-gpt2/config.json'), path.join(half, 'config.json'));
  await expect(attn.loadModel(half)).rejects.toThrow(/file not found: .*model\.safetensors/);
  fs.rmSync(half, { recursive: true });
  await expect(attn.loadModel('http://127.0.0.1:9/model')).rejects.toThrow(/could not fetch http:\/\/127\.0\.0\.1:9\/model\/config\.json: .*network error/);
});

test('a tokenizer file over 32 MiB is refused by its size, naming its path, before it is parsed', async () => {
  const attn = await api.loadAttention({ simd: true, threads: 1 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-wasm-bigvocab-'));
  try {
    for (const f of ['config.json', 'model.safetensors', 'merges.txt']) fs.copyFileSync(path.join(root, 'web/models/brown-gpt2', f), path.join(dir, f));
    // 40 MB of a valid-looking JSON object: parsing it is what the size check saves.
    fs.writeFileSync(path.join(dir, 'vocab.json'), `{${Array.from({ length: 2e6 }, (_, i) => `"t${i}x":${i}`).join(',')}}`);
    expect(fs.statSync(path.join(dir, 'vocab.json')).size).toBeGreaterThan(api.MAX_TOKENIZER_FILE_BYTES);
    await expect(attn.loadModel(dir)).rejects.toThrow(new RegExp(`^${dir}/vocab\\.json: \\d+ bytes are more than a tokenizer file may have \\(32 MiB\\)`));
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});

describe("the threaded build leaves the user's process alone", () => {
  // Each script loads the default (threaded) build in Node, then misbehaves as an app might.
  const run = (body) => spawnSync(process.execPath, ['-e', `
    const { loadAttention } = require(${JSON.stringify(path.join(dist, 'index.cjs'))});
    loadAttention().then((attn) => { if (attn.threads < 2) throw new Error('expected the threaded build'); ${body} });`], { encoding: 'utf8', timeout: 30000 });

  test("a user's uncaught error exits with code 1 and prints the user's error, not the glue", () => {
    const r = run("setTimeout(() => { throw new Error('user boom'); }, 0);");
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/Error: user boom/);
    expect(r.stderr.length).toBeLessThan(4000);
  });

  test("a user's unhandledRejection handler decides", () => {
    const r = run("process.on('unhandledRejection', (e) => { console.log('handled', e.message); process.exitCode = 0; }); Promise.reject(new Error('user rejection'));");
    expect(r.stdout).toMatch(/handled user rejection/);
    expect(r.status).toBe(0);
  });
});

test('all builds give the same answer', async () => {
  const [simd, scalar, threaded] = await Promise.all([api.loadAttention({ threads: 1 }), api.loadAttention({ simd: false }), api.loadAttention({ threads: 2 })]);
  const cfg = { dModel: 64, numHeads: 4 };
  const w = { wQ: randomArray(4096, 1), wK: randomArray(4096, 2), wV: randomArray(4096, 3), wO: randomArray(4096, 4),
    bQ: randomArray(64, 5), bK: randomArray(64, 6), bV: randomArray(64, 7), bO: randomArray(64, 8) };
  const x = randomArray(3 * 37 * 64, 9);
  const run = (m) => { const l = m.createMultiHeadAttention(cfg); l.setWeights(w); const r = l.forward(x, { batch: 3, causal: true }); l.dispose(); return r.output; };
  const a = run(simd), b = run(scalar), c = run(threaded);
  for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(1e-5 + 1e-4 * Math.abs(b[i]));
  for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - c[i])).toBeLessThan(1e-5 + 1e-4 * Math.abs(a[i]));
});

test('the SIMD .wasm files contain f32x4 arithmetic and the scalar one none', () => {
  const count = (file) => {
    const text = execFileSync('wasm-objdump', ['-d', path.join(dist, file)], { encoding: 'utf8', maxBuffer: 1 << 28 });
    return { mul: (text.match(/f32x4\.mul/g) || []).length, add: (text.match(/f32x4\.add/g) || []).length, v128: (text.match(/v128\./g) || []).length };
  };
  for (const file of ['attention_simd.wasm', 'attention_threads.wasm']) {
    const simd = count(file);
    expect(simd.mul).toBeGreaterThan(10);
    expect(simd.add).toBeGreaterThan(10);
  }
  expect(count('attention_scalar.wasm')).toEqual({ mul: 0, add: 0, v128: 0 });
});
