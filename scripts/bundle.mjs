// Packages the TypeScript wrapper and the Emscripten glue into dist/: the browser/bundler ES module
// (index.js, from bindings/ts/index.ts: no Node module in it), the analysis entry (analysis.js), the worker
// entry (worker.js, which starts worker-entry.js), the Node ES module (index.node.js)
// and CommonJS file (index.cjs), both from bindings/ts/index_node.ts, the .wasm files beside them
// and the type declarations.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const wasmDir = join(root, 'build/wasm');
const dist = join(root, 'dist');

// The relaxed build links the SIMD build's core: one linked before that core was last built runs
// stale code wherever a browser picks it (one thread), so it must be relinked with it.
const built = (file) => statSync(join(wasmDir, file), { throwIfNoEntry: false })?.mtimeMs;
if (!(built('attention_relaxed.wasm') >= built('libattention_core_simd.a')))
  throw new Error(`build/wasm/attention_relaxed.wasm is ${built('attention_relaxed.wasm') ? 'older than the SIMD core it links' : 'missing'}: cmake --build build/wasm --target attention_relaxed (or npm run build)`);

// `import create from 'attention-glue:simd'` -> build/wasm/attention_simd.js
const gluePlugin = {
  name: 'attention-glue',
  setup(b) {
    b.onResolve({ filter: /^attention-glue:/ }, (args) => ({
      path: join(wasmDir, `attention_${args.path.slice('attention-glue:'.length)}.js`),
    }));
  },
};

const common = {
  bundle: true,
  platform: 'neutral',
  target: 'es2021',
  plugins: [gluePlugin],
  logLevel: 'warning',
  legalComments: 'none',
};

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
await build({ ...common, entryPoints: [join(root, 'bindings/ts/index.ts')], format: 'esm', outfile: join(dist, 'index.js') });
// The analysis entry: the head rules and name helpers alone, for a page's main thread (the demo, the
// widget), with no WebAssembly glue in it.
await build({ ...common, entryPoints: [join(root, 'bindings/ts/analysis/index.ts')], format: 'esm', outfile: join(dist, 'analysis.js') });
// The worker entry (attention-wasm/worker): worker.js starts worker-entry.js, which imports the
// library from index.js beside it (kept external: one copy of the library in the package).
await build({ ...common, entryPoints: [join(root, 'bindings/ts/worker.ts')], format: 'esm', outfile: join(dist, 'worker.js') });
const libraryBeside = {
  name: 'library-beside',
  setup(b) {
    b.onResolve({ filter: /^\.\/index\.js$/ }, (args) => (args.importer.endsWith('worker_entry.ts') ? { path: './index.js', external: true } : undefined));
  },
};
await build({ ...common, plugins: [...common.plugins, libraryBeside], entryPoints: [join(root, 'bindings/ts/worker_entry.ts')], format: 'esm', outfile: join(dist, 'worker-entry.js') });
const node = { ...common, entryPoints: [join(root, 'bindings/ts/index_node.ts')], platform: 'node', target: 'node18' };
await build({ ...node, format: 'esm', outfile: join(dist, 'index.node.js') });
await build({
  ...node,
  format: 'cjs',
  outfile: join(dist, 'index.cjs'),
  // CommonJS has no import.meta: derive the module's own URL from __filename.
  define: { 'import.meta.url': '__attnModuleUrl' },
  banner: {
    js: "const __attnModuleUrl = 'file://' + (__filename.startsWith('/') ? '' : '/') + encodeURI(__filename.replace(/\\\\/g, '/')).replace(/#/g, '%23').replace(/\\?/g, '%3F');",
  },
});
for (const variant of ['simd', 'scalar', 'threads', 'relaxed'])
  copyFileSync(join(wasmDir, `attention_${variant}.wasm`), join(dist, `attention_${variant}.wasm`));
// The relaxed-SIMD build's glue too: loaded only where that build runs (platform relaxedGlue).
copyFileSync(join(wasmDir, 'attention_relaxed.js'), join(dist, 'attention_relaxed.cjs'));
// The pthreads build's glue and worker stay files of their own: workers load them by path.
// .cjs: the package is "type": "module", and these are CommonJS scripts.
copyFileSync(join(wasmDir, 'attention_threads.js'), join(dist, 'attention_threads.cjs'));
copyFileSync(join(wasmDir, 'attention_threads.worker.js'), join(dist, 'attention_threads.worker.cjs'));

// Declarations: tsc writes one .d.ts per source file; ship them under dist/types.
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'bindings/ts/tsconfig.json'), '--outDir', join(dist, 'types')], { stdio: 'inherit' });
writeFileSync(join(dist, 'index.d.ts'), "export * from './types/index.js';\n");
// The <attention-view> widget and its default models go into the package too (dist/widget/,
// dist/models/, each model with the module "./models/<name>" exports): rebuilt whenever dist/ is,
// since the lines above start from an empty dist/.
execFileSync(process.execPath, [join(root, 'scripts/build_widget.mjs')], { stdio: 'inherit' });
execFileSync(process.execPath, [join(root, 'scripts/model_modules.mjs')], { stdio: 'inherit' });
console.log('dist:', readdirSync(dist).join(' '));
