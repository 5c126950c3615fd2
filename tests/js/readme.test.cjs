// The documentation's code (README.md and every docs/*.md page), as a newcomer copies it, against
// the packed tarball installed in an empty app:
// - every program block (```js, ```ts or ```cjs whose first line names its file, `// name.mjs`)
//   runs as written (TypeScript with its types stripped), and each number it prints is one its
//   `console.log(...) // comment` states;
// - (every block but CommonJS type-checks under `tsc --strict`: types.test.cjs, one fast tsc run);
// - the package size figures are what `npm pack` says (scripts/package_sizes.mjs --check);
// - every relative link of README.md and docs/*.md names a file of the repository (and a heading
//   of it, for a #fragment), and every docs page ships in the package (package.json "files").
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('esbuild');
const { installPackedApp } = require('../browser/packed_app.cjs');
const { root } = require('./helpers.cjs');
const { documentationFiles, anchors, codeBlocks, isProgram, slug } = require('./documentation.cjs');

const DOCS = documentationFiles();
/** The numbers in a text (signs and decimals kept). */
const numbers = (text) => (text.match(/-?\d+(\.\d+)?(e-?\d+)?/g) ?? []).map((s) => ({ value: Number(s), decimals: (s.split('.')[1] ?? '').length }));

/** The comments of a program's console.log lines, in order. */
const statedOutputs = (code) => code.split('\n').filter((l) => /^\s*console\.log\(/.test(l)).map((l) => l.split('//').slice(1).join('//'));

const blocks = DOCS.flatMap((d) => codeBlocks(d.file, d.text));
const programs = blocks.filter((b) => isProgram(b.code));
let app;
beforeAll(() => {
  app = installPackedApp('readme');
}, 180000);
afterAll(() => app?.remove());

test('the README and the docs pages have program blocks (the Quick start among them) and fragments', () => {
  expect(DOCS.length).toBeGreaterThan(1);
  expect(programs.length).toBeGreaterThanOrEqual(3);
  expect(programs.some((b) => b.file === 'README.md')).toBe(true);
  expect(programs.some((b) => b.lang === 'cjs')).toBe(true);
  expect(blocks.length).toBeGreaterThan(programs.length);
});

describe.each(programs.map((b) => [`${b.file} line ${b.line} (${b.lang})`, b]))('%s', (_name, block) => {
  test('runs as written and prints the numbers its comments state', () => {
    const file = path.join(app.dir, `${slug(block)}.${block.lang === 'cjs' ? 'cjs' : 'mjs'}`);
    const code = block.lang === 'ts' ? transformSync(block.code, { loader: 'ts', format: 'esm' }).code : block.code;
    fs.writeFileSync(file, code);
    const printed = execFileSync(process.execPath, [file], { cwd: app.dir, encoding: 'utf8', timeout: 120000 }).trimEnd().split('\n');
    const stated = statedOutputs(block.code);
    expect(printed.length).toBe(stated.length);
    printed.forEach((line, i) => {
      const want = numbers(stated[i]);
      for (const got of numbers(line)) {
        const match = want.some((w) => Math.abs(got.value - w.value) <= 0.5 * 10 ** -w.decimals + 1e-12);
        if (!match) throw new Error(`${block.file} line ${block.line}: printed "${line}", but its comment says "${stated[i].trim()}"`);
      }
    });
  }, 150000);
});

test('the package size figures are the ones npm pack gives', () => {
  execFileSync(process.execPath, [path.join(root, 'scripts/package_sizes.mjs'), '--check'], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
});

test('every relative link names a file of the repository, and a #fragment one of its headings', () => {
  const broken = [];
  for (const { file, text } of DOCS) {
    const prose = text.replace(/^```[\s\S]*?^```/gm, '');
    for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const [rel, fragment] = target.split('#');
      const to = rel ? path.join(path.dirname(path.join(root, file)), rel) : path.join(root, file);
      if (!fs.existsSync(to)) broken.push(`${file}: ${target} (no such file)`);
      else if (fragment && to.endsWith('.md') && !anchors(fs.readFileSync(to, 'utf8')).has(fragment)) broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
});

test('the docs pages ship in the package, so README links to them work in node_modules too', () => {
  const files = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).files;
  expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/*.md']));
  for (const { file } of DOCS) expect(fs.existsSync(path.join(app.pkg, file))).toBe(true);
});
