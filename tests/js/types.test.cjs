// The package's types under `tsc --strict`, in one tsc run against dist/ (dist/index.d.ts and the
// other entries' declarations, resolved through package.json's "exports" as an app resolves them):
// - every ts/js block of README.md and docs/*.md but CommonJS (a fragment, which needs context such
//   as `attn` or `model`, inside a function, with that context declared: documentation.cjs);
// - types/narrowing.ts: results narrowed by their options (run(x, { attention: true }).attention
//   without `?.`), on the page and through attention-wasm/worker, and what stays optional.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { documentationFiles, codeBlocks, isProgram, slug, fragmentModule } = require('./documentation.cjs');

const root = path.resolve(__dirname, '../..');
let dir;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-types-'));
  // The package as an app sees it: node_modules/attention-wasm is this repository (its dist/).
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(root, path.join(dir, 'node_modules/attention-wasm'), 'dir');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the documentation\'s blocks and the narrowing checks type-check under tsc --strict', () => {
  const blocks = documentationFiles().flatMap((d) => codeBlocks(d.file, d.text)).filter((b) => b.lang !== 'cjs');
  expect(blocks.some((b) => b.file === 'README.md' && /loadAttentionWorker/.test(b.code))).toBe(true);
  const files = [];
  for (const b of blocks) {
    const name = `${slug(b)}.ts`;
    fs.writeFileSync(path.join(dir, name), isProgram(b.code) ? `${b.code}\nexport {};\n` : fragmentModule(b.code));
    files.push(name);
  }
  fs.copyFileSync(path.join(__dirname, 'types/narrowing.ts'), path.join(dir, 'narrowing.ts'));
  files.push('narrowing.ts');
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom'], types: [] },
    files,
  }));
  try {
    execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, encoding: 'utf8' });
  } catch (e) {
    throw new Error(`tsc --strict (readme-N.ts = README.md line N, docs-<page>-N.ts = docs/<page>.md line N, narrowing.ts = tests/js/types/narrowing.ts):\n${e.stdout}`);
  }
}, 120000);
