// Arrows one way (issue 32): the include/import graph of the C++ core, the TypeScript wrapper and
// the JavaScript around them has no cycle and no edge pointing up this order (each list bottom to
// top; a file may use its own layer and those below):
//
//   src/ (C++ #include "..."):  tensors < kernels < attention < layers < models < bindings/embind.cpp
//   bindings/ts (TS imports):   errors.ts, validate.ts < runtime < tokenizers < loading < attention
//                               < models < hub < analysis < the top level (attention_module.ts,
//                               exports.ts, index*.ts, platform_*.ts)
//   web/app, tools/, bench/ (JS imports): each may import dist/, bindings/, scripts/ (the build's
//                               helpers, e.g. the static server), node_modules/ and its own files,
//                               never one another, except tools/gguf/ (the GGUF writer and ggml's
//                               reference quantizers, fixtures' makers): bench/ and the tests may
//                               import it; nothing else imports web/ or tools/.
//
// A folder's files may import one another (no cycle still); a file is in the layer of its first
// folder under its root (bindings/ts/models/x.ts: models). ALLOWED lists the known exceptions,
// each with its reason; keep it short.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');

/** Layers bottom to top: [label, test(path relative to the repository)]. */
const LAYERS = {
  cpp: [
    ['src/tensors', (f) => f.startsWith('src/tensors/')],
    ['src/kernels', (f) => f.startsWith('src/kernels/')],
    ['src/attention', (f) => f.startsWith('src/attention/')],
    ['src/layers', (f) => f.startsWith('src/layers/')],
    ['src/models', (f) => f.startsWith('src/models/')],
    ['bindings/embind.cpp', (f) => f === 'bindings/embind.cpp'],
  ],
  ts: [
    ['bindings/ts base (errors.ts, validate.ts)', (f) => f === 'bindings/ts/errors.ts' || f === 'bindings/ts/validate.ts'],
    ['bindings/ts/runtime', (f) => f.startsWith('bindings/ts/runtime/')],
    ['bindings/ts/tokenizers', (f) => f.startsWith('bindings/ts/tokenizers/')],
    ['bindings/ts/loading', (f) => f.startsWith('bindings/ts/loading/')],
    ['bindings/ts/attention', (f) => f.startsWith('bindings/ts/attention/')],
    ['bindings/ts/models', (f) => f.startsWith('bindings/ts/models/')],
    ['bindings/ts/hub', (f) => f.startsWith('bindings/ts/hub/')],
    ['bindings/ts/analysis', (f) => f.startsWith('bindings/ts/analysis/')],
    ['bindings/ts top level', (f) => /^bindings\/ts\/[^/]+$/.test(f)],
  ],
};

/** The JavaScript areas around the library: what each may import besides its own files. */
const JS_AREAS = ['web/app', 'tools', 'bench'];
const SHARED = ['dist/', 'bindings/', 'scripts/', 'node_modules/'];

/** Shared by some areas only: tools/gguf/ (GGUF files and ggml's blocks, made the reference's way)
 * is what bench/ and the tests build llama.cpp's inputs and fixtures with. */
const SHARED_WITH = { bench: ['tools/gguf/'] };

/** Known exceptions: 'from -> to' (repository paths), each with why it stays for now. */
const ALLOWED = new Map();

function walk(dir, keep, out = []) {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, keep, out);
    else if (keep(e.name)) out.push(p);
  }
  return out;
}

const rel = (p) => path.relative(root, p).split(path.sep).join('/');

/** C++: #include "x" resolved next to the file, else from the include root src/. */
function cppEdges() {
  const files = [...walk(path.join(root, 'src'), (n) => /\.(h|cpp)$/.test(n)), path.join(root, 'bindings/embind.cpp')];
  const edges = [];
  for (const f of files) {
    for (const m of fs.readFileSync(f, 'utf8').matchAll(/^\s*#\s*include\s+"([^"]+)"/gm)) {
      const beside = path.join(path.dirname(f), m[1]);
      const target = fs.existsSync(beside) ? beside : path.join(root, 'src', m[1]);
      if (fs.existsSync(target)) edges.push([rel(f), rel(target)]);
    }
  }
  return { files: files.map(rel), edges };
}

/** Relative module specifiers of a JS/TS file: static imports and re-exports, import('...'), require('...'). */
function specifiers(text) {
  const out = [];
  const patterns = [/\b(?:import|export)\s[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g, /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]);
  return out.filter((s) => s.startsWith('.'));
}

/** A specifier resolved to a file of the repository (TS's './x.js' is x.ts). */
function resolveModule(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  const candidates = [base, base.replace(/\.js$/, '.ts'), base + '.ts', base + '.js', path.join(base, 'index.ts'), path.join(base, 'index.js')];
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile()) ?? base;
}

function jsEdges(dirs, keep) {
  const files = dirs.flatMap((d) => walk(path.join(root, d), keep));
  const edges = [];
  for (const f of files) for (const s of specifiers(fs.readFileSync(f, 'utf8'))) edges.push([rel(f), rel(resolveModule(f, s))]);
  return { files: files.map(rel), edges };
}

const layerOf = (order, f) => order.findIndex(([, test]) => test(f));

/** Every cycle's files, by Tarjan's strongly connected components (self-imports included). */
function cycles(files, edges) {
  const next = new Map(files.map((f) => [f, []]));
  for (const [a, b] of edges) if (next.has(a) && next.has(b)) next.get(a).push(b);
  let index = 0;
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), found = [];
  const visit = (v) => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); on.add(v);
    for (const w of next.get(v)) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do { w = stack.pop(); on.delete(w); component.push(w); } while (w !== v);
      if (component.length > 1 || next.get(v).includes(v)) found.push(component.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return found;
}

const allowed = ([a, b]) => ALLOWED.has(`${a} -> ${b}`);

function upward(order, { files, edges }) {
  const bad = [];
  for (const [a, b] of edges) {
    const la = layerOf(order, a), lb = layerOf(order, b);
    if (la < 0) bad.push(`${a}: in no layer`);
    else if (lb < 0) bad.push(`${a} -> ${b}: imports a file in no layer`);
    else if (lb > la && !allowed([a, b])) bad.push(`${a} (${order[la][0]}) -> ${b} (${order[lb][0]})`);
  }
  for (const f of files) if (layerOf(order, f) < 0) bad.push(`${f}: in no layer`);
  return [...new Set(bad)];
}

describe('the import graph: no cycle, no upward edge', () => {
  const cpp = cppEdges();
  const ts = jsEdges(['bindings/ts'], (n) => /\.ts$/.test(n) && !/\.d\.ts$/.test(n));
  const js = jsEdges(JS_AREAS, (n) => /\.(mjs|cjs|js|ts)$/.test(n) && !/\.d\.ts$/.test(n));

  test('the graphs were found', () => {
    expect(cpp.edges.length).toBeGreaterThan(50);
    expect(ts.edges.length).toBeGreaterThan(100);
    expect(js.edges.length).toBeGreaterThan(20);
  });

  test('src/ and bindings/embind.cpp: layers', () => expect(upward(LAYERS.cpp, cpp)).toEqual([]));
  test('src/ and bindings/embind.cpp: no include cycle', () => expect(cycles(cpp.files, cpp.edges)).toEqual([]));
  test('bindings/ts: layers', () => expect(upward(LAYERS.ts, ts)).toEqual([]));
  test('bindings/ts: no import cycle', () => expect(cycles(ts.files, ts.edges.filter((e) => !allowed(e)))).toEqual([]));

  test('web/app, tools, bench: dist/, bindings/ and their own files only; nothing imports web/ or tools/', () => {
    const bad = [];
    const areaOf = (f) => JS_AREAS.find((a) => f.startsWith(a + '/'));
    for (const [a, b] of js.edges) {
      if (allowed([a, b])) continue;
      const own = areaOf(a);
      if (b.startsWith(own + '/') || [...SHARED, ...(SHARED_WITH[own] ?? [])].some((s) => b.startsWith(s))) continue;
      bad.push(`${a} -> ${b}`);
    }
    // The library and the tests' subjects never reach into the demo or the tools.
    for (const [a, b] of [...ts.edges, ...cpp.edges]) if (/^(web|tools)\//.test(b)) bad.push(`${a} -> ${b}`);
    expect(bad).toEqual([]);
  });
  test('web/app, tools, bench: no import cycle', () => expect(cycles(js.files, js.edges.filter((e) => !allowed(e)))).toEqual([]));
});
