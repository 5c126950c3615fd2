// Builds a tutorial page the way two publishing platforms do, from the source an author writes, for
// widget_package.test.cjs (an ES module run as `node tutorial_platforms.mjs <dir>`, since the
// parser, the MDX compiler and React are ES modules that jest's CommonJS runtime cannot import).
// <dir>/input.json holds { kind: 'observable', cells: [source, ...] } or
// { kind: 'mdx', mdx, scripts: [{ src, type }] }; the page is written to <dir>/index.html with
// what it loads beside it.
//
// - Observable: each cell goes through Observable's own parser (@observablehq/parser) and becomes
//   a variable of a module in the shape observablehq.com exports a notebook in
//   (`export default function define(runtime, observer)`), run by the real runtime with the
//   standard library and the inspector, as Observable's embedding guide does.
// - MDX, as Docusaurus builds a page: @mdx-js/mdx compiles it to a React component, React renders
//   it to HTML at build time (renderToString), and the page hydrates it in the browser (hydrateRoot,
//   production React); the site config's `scripts` are tags in the page's head.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { parseCell } from '@observablehq/parser';
import { compile } from '@mdx-js/mdx';

const repoModules = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules');

/** Bundles `entry` (a file of `dir`) with the repository's node_modules, as a site's build would. */
async function bundle(dir, entry, outfile, options) {
  await esbuild.build({ entryPoints: [path.join(dir, entry)], outfile: path.join(dir, outfile), bundle: true, nodePaths: [repoModules],
    define: { 'process.env.NODE_ENV': '"production"' }, logLevel: 'error', ...options });
}

/** One cell as the exported notebook's `define` call: its name, the names it reads, its function. */
function cellDefinition(source) {
  const cell = parseCell(source);
  if (cell.id && cell.id.type !== 'Identifier') throw new Error(`cell ${JSON.stringify(source)}: viewof and mutable cells are not built here`);
  const name = cell.id ? cell.id.name : null;
  const inputs = [...new Set(cell.references.map((r) => r.name))];
  const body = source.slice(cell.body.start, cell.body.end);
  const fn = `${cell.async ? 'async ' : ''}function${cell.generator ? '*' : ''}(${inputs.join(',')}){${cell.body.type === 'BlockStatement' ? body.slice(1, -1) : `return(\n${body}\n)`}}`;
  const observer = name ? `observer(${JSON.stringify(name)})` : 'observer()';
  return `  main.variable(${observer}).define(${name ? `${JSON.stringify(name)}, ` : ''}${JSON.stringify(inputs)}, ${fn});`;
}

async function observable(dir, { cells }) {
  fs.writeFileSync(path.join(dir, 'notebook.js'),
    `export default function define(runtime, observer) {\n  const main = runtime.module();\n${cells.map(cellDefinition).join('\n')}\n  return main;\n}\n`);
  fs.writeFileSync(path.join(dir, 'runtime-entry.js'),
    "export { Runtime } from '@observablehq/runtime';\nexport { Library } from '@observablehq/stdlib';\nexport { Inspector } from '@observablehq/inspector';\n");
  await bundle(dir, 'runtime-entry.js', 'runtime.js', { format: 'esm', platform: 'browser' });
  fs.writeFileSync(path.join(dir, 'index.html'), `<!doctype html><meta charset="utf-8"><title>A notebook</title><link rel="icon" href="data:,">
<div id="notebook"></div>
<script type="module">
import { Runtime, Library, Inspector } from './runtime.js';
import define from './notebook.js';
new Runtime(new Library()).module(define, Inspector.into('#notebook'));
</script>
`);
}

async function mdx(dir, { mdx: source, scripts }) {
  fs.writeFileSync(path.join(dir, 'page.mdx.js'), String(await compile(source, { outputFormat: 'program', development: false })));
  fs.writeFileSync(path.join(dir, 'server-entry.js'),
    "import { createElement } from 'react';\nimport { renderToString } from 'react-dom/server';\nimport Page from './page.mdx.js';\nexport default () => renderToString(createElement(Page));\n");
  fs.writeFileSync(path.join(dir, 'client-entry.js'),
    "import { createElement } from 'react';\nimport { hydrateRoot } from 'react-dom/client';\nimport Page from './page.mdx.js';\nhydrateRoot(document.getElementById('__docusaurus'), createElement(Page));\n");
  await bundle(dir, 'server-entry.js', 'server.cjs', { format: 'cjs', platform: 'node' });
  await bundle(dir, 'client-entry.js', 'main.js', { format: 'iife', platform: 'browser' });
  const render = createRequire(import.meta.url)(path.join(dir, 'server.cjs')).default;
  const attr = (s) => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const head = scripts.map((s) => `<script src="${attr(s.src)}"${s.type ? ` type="${attr(s.type)}"` : ''}></script>`).join('\n');
  fs.writeFileSync(path.join(dir, 'index.html'), `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A tutorial | My docs</title><link rel="icon" href="data:,">
${head}
<script src="/main.js" defer></script>
</head><body><div id="__docusaurus">${render()}</div></body></html>
`);
}

const dir = process.argv[2];
const input = JSON.parse(fs.readFileSync(path.join(dir, 'input.json'), 'utf8'));
await ({ observable, mdx })[input.kind](dir, input);
