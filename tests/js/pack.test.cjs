// `npm pack` produces a tarball that installs into an empty project and works there: CommonJS,
// ESM and TypeScript (the shipped .d.ts type-checks a typical program).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { root } = require('./helpers.cjs');
const { packedTarball } = require('../packed_tarball.cjs');

let dir;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-wasm-pack-'));
  const { tarball } = packedTarball();
  const app = path.join(dir, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: app, stdio: 'ignore' });
  dir = app;
}, 120000);
afterAll(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

test('the tarball holds only what users need', () => {
  const files = fs.readdirSync(path.join(dir, 'node_modules/attention-wasm/dist')).sort();
  expect(files).toEqual(['analysis.js', 'attention_relaxed.cjs', 'attention_relaxed.wasm', 'attention_scalar.wasm', 'attention_simd.wasm', 'attention_threads.cjs', 'attention_threads.wasm',
    'attention_threads.worker.cjs', 'index.cjs', 'index.d.ts', 'index.js', 'index.node.js', 'models', 'types', 'widget', 'worker-entry.js', 'worker.js']);
  // package.json says MIT: the licence text ships with the package.
  expect(fs.readFileSync(path.join(dir, 'node_modules/attention-wasm/LICENSE'), 'utf8')).toMatch(/^MIT License/);
  // The README and the pages it links to (docs/*.md) ship, so its links work in node_modules; the
  // generated API reference (docs/api-reference/, npm run docs) does not.
  expect(fs.existsSync(path.join(dir, 'node_modules/attention-wasm/README.md'))).toBe(true);
  expect(fs.readdirSync(path.join(dir, 'node_modules/attention-wasm/docs')).sort())
    .toEqual(fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort());
});

test('the registry page can resolve README links, and the browser entry holds no Node code', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'node_modules/attention-wasm/package.json'), 'utf8'));
  // npm turns README's relative links into links to the repository named here.
  expect(pkg.repository.url).toMatch(/^git\+https:\/\/github\.com\/[\w-]+\/[\w-]+\.git$/);
  expect(pkg.homepage).toMatch(/^https:\/\//);
  expect(pkg.bugs.url).toMatch(/^https:\/\/.*\/issues$/);
  // Bundlers building for browsers take dist/index.js ("browser" / "import"): no Node module may
  // be named in it (webpack would warn or fail, Vite would warn and ship dead code).
  const browserEntry = fs.readFileSync(path.join(dir, 'node_modules/attention-wasm', pkg.exports['.'].browser.import), 'utf8');
  expect(browserEntry).not.toMatch(/["'](node:)?(fs|fs\/promises|path|os|url|module|worker_threads|crypto)["']/);
  expect(browserEntry).not.toMatch(/\brequire\(|createRequire/);
  // Each shipped file is named by a literal new URL('./file', import.meta.url), never a computed one.
  expect(browserEntry).not.toMatch(/new URL\(`/);
  // The widget and its default models ship too, with its attribute reference and embed example
  // (beside it, and where the README's links point: web/).
  for (const f of ['dist/widget/README.md', 'dist/widget/embed-example.html', 'web/README.md', 'web/embed-example.html'])
    expect(fs.readFileSync(path.join(dir, 'node_modules/attention-wasm', f), 'utf8')).toBe(fs.readFileSync(path.join(root, f.replace('dist/widget/', 'web/')), 'utf8'));
  for (const f of ['dist/widget/attention-view.js', 'dist/widget/worker.js', 'dist/models/brown-gpt2/model.safetensors', 'dist/models/brown-bert/model.safetensors', 'dist/models/g2p-bart/model.safetensors'])
    expect(fs.existsSync(path.join(dir, 'node_modules/attention-wasm', f))).toBe(true);
  expect(pkg.exports['./widget']).toBe('./dist/widget/attention-view.js');
  // The worker entry: its types, and the worker script it starts beside it, which imports the
  // library from index.js (one copy of the library in the package).
  expect(pkg.exports['./worker']).toEqual({ types: './dist/types/worker.d.ts', default: './dist/worker.js' });
  const workerEntry = fs.readFileSync(path.join(dir, 'node_modules/attention-wasm/dist/worker.js'), 'utf8');
  expect(workerEntry).toMatch(/new Worker\(new URL\(["']\.\/worker-entry\.js["'], import\.meta\.url\), \{ type: ["']module["'] \}\)/);
  expect(fs.readFileSync(path.join(dir, 'node_modules/attention-wasm/dist/worker-entry.js'), 'utf8')).toMatch(/from "\.\/index\.js"/);
  expect(fs.existsSync(path.join(dir, 'node_modules/attention-wasm/dist/types/worker.d.ts'))).toBe(true);
});

test('export conditions: Node gets the Node entry, bundlers for browsers the browser entry', async () => {
  const resolved = (args) => path.relative(path.join(dir, 'node_modules/attention-wasm'),
    execFileSync(process.execPath, args, { cwd: dir, encoding: 'utf8' }).trim().replace(/^file:\/\//, ''));
  const req = (...conditions) => resolved([...conditions.map((c) => `--conditions=${c}`), '-p', "require.resolve('attention-wasm')"]);
  const imp = (...conditions) => resolved([...conditions.map((c) => `--conditions=${c}`), '--input-type=module', '-e', "console.log(import.meta.resolve('attention-wasm'))"]);
  expect([req(), imp()]).toEqual(['dist/index.cjs', 'dist/index.node.js']);
  // A bundler's import (Vite, webpack, esbuild: "browser" + "import") and webpack's require ("module").
  expect([imp('browser'), req('browser', 'module')]).toEqual(['dist/index.js', 'dist/index.js']);
  // Jest's jsdom environment ("browser" + "require", no "module") runs in Node: the CommonJS build.
  expect(req('browser')).toBe('dist/index.cjs');
  // esbuild for browsers, require() included.
  const esbuild = require('esbuild');
  const r = await esbuild.build({ stdin: { contents: "require('attention-wasm')", resolveDir: dir }, absWorkingDir: dir, bundle: true, platform: 'browser', write: false, metafile: true, logLevel: 'silent' });
  expect(Object.keys(r.metafile.inputs).filter((f) => f.includes('attention-wasm/dist/'))).toEqual(['node_modules/attention-wasm/dist/index.js']);
});

const program = `
  const attn = await loadAttention();
  const mha = attn.createMultiHeadAttention({ dModel: 512, numHeads: 8, dK: 64, dV: 64, bias: true });
  const r = (n) => Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 0.05);
  mha.setWeights({ wQ: r(512 * 512), wK: r(512 * 512), wV: r(512 * 512), wO: r(512 * 512), bQ: r(512), bK: r(512), bV: r(512), bO: r(512) });
  const { output, attention } = mha.forward(r(2 * 10 * 512), { batch: 2, seqLen: 10, causal: true, returnAttention: true });
  mha.dispose();
  console.log(JSON.stringify({ variant: attn.variant, threads: attn.threads, output: output.length, attention: attention.length, row: attention.slice(10, 20).reduce((a, b) => a + b, 0) }));
`;
const cores = require('node:os').availableParallelism();
const expected = { variant: cores > 1 ? 'simd-threads' : 'simd', threads: Math.min(4, cores), output: 2 * 10 * 512, attention: 2 * 8 * 10 * 10, row: expect.any(Number) };

test('require("attention-wasm") runs the issue\'s example', () => {
  fs.writeFileSync(path.join(dir, 'main.cjs'), `const { loadAttention } = require('attention-wasm');\n(async () => {${program}})();`);
  const out = JSON.parse(execFileSync(process.execPath, ['main.cjs'], { cwd: dir, encoding: 'utf8' }));
  expect(out).toEqual(expected);
  expect(out.row).toBeCloseTo(1, 5);
});

test('import "attention-wasm" runs the issue\'s example', () => {
  fs.writeFileSync(path.join(dir, 'main.mjs'), `import { loadAttention } from 'attention-wasm';\n${program}`);
  const out = JSON.parse(execFileSync(process.execPath, ['main.mjs'], { cwd: dir, encoding: 'utf8' }));
  expect(out).toEqual(expected);
});

// The code blocks of README.md and docs/*.md, the Quick start among them, run against the tarball in readme.test.cjs.

test('the shipped types check a TypeScript program, and catch a misuse', () => {
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const good = `import { loadAttention, AttentionError, weightsFromPyTorch, type ForwardResult } from 'attention-wasm';
    async function main(): Promise<number> {
      const attn = await loadAttention({ simd: 'auto' });
      const mha = attn.createMultiHeadAttention({ dModel: 4, numHeads: 2 });
      mha.setWeights(weightsFromPyTorch({ in_proj_weight: new Float32Array(48), in_proj_bias: new Float32Array(12), 'out_proj.weight': new Float32Array(16), 'out_proj.bias': new Float32Array(4) }, { dModel: 4, numHeads: 2 }));
      const r: ForwardResult = mha.forward(new Float32Array(8), { causal: true, trace: true });
      const w: Float32Array | undefined = r.trace?.weights;
      // What the options asked for is in the result's type: no ?. needed.
      const asked = mha.forward(new Float32Array(8), { returnAttention: true, trace: true });
      const sure: number = asked.attention.length + asked.trace.weights.length;
      const sd = attn.scaledDotProductAttention(new Float32Array(4), new Float32Array(4), new Float32Array(4), { dK: 2, returnAttention: true });
      const sdSure: number = sd.attention.length + sure;
      mha.dispose();
      return (w?.length ?? 0) + (new AttentionError('x').name.length) + sdSure;
    }
    main();\n`;
  fs.writeFileSync(path.join(dir, 'good.ts'), good);
  fs.writeFileSync(path.join(dir, 'bad.ts'), `import { loadAttention } from 'attention-wasm';\nloadAttention().then((a) => a.createMultiHeadAttention({ dModel: '4', numHeads: 2 }));\n`);
  // Not asked for, not promised: reading attention without returnAttention is a type error.
  fs.writeFileSync(path.join(dir, 'unasked.ts'), `import { loadAttention } from 'attention-wasm';\nloadAttention().then((a) => { const n: number = a.createMultiHeadAttention({ dModel: 4, numHeads: 2 }).forward(new Float32Array(8)).attention.length; return n; });\n`);
  const flags = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom'];
  // One tsc run over the three files (each a module of its own; tsc starts in seconds, so one run
  // instead of three): each error is reported as file(line,col), so each file is judged on its own.
  let message = '';
  try { execFileSync(process.execPath, [tsc, ...flags, 'good.ts', 'bad.ts', 'unasked.ts'], { cwd: dir, encoding: 'utf8' }); } catch (e) { message = e.stdout; }
  const errorLines = message.split('\n').filter((l) => /error TS\d+/.test(l));
  const of = (file) => errorLines.filter((l) => l.startsWith(`${file}(`)).join('\n');
  // good.ts, and the shipped .d.ts it reads, have none: every error is bad.ts's or unasked.ts's.
  expect(errorLines.filter((l) => !/^(bad|unasked)\.ts\(/.test(l))).toEqual([]);
  expect(of('bad.ts')).toMatch(/Type 'string' is not assignable to type 'number'/);
  expect(of('unasked.ts')).toMatch(/error TS(18048|2532): .*possibly 'undefined'/);
});
