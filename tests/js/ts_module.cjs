// A module of bindings/ts compiled on the fly (esbuild, bundled with what it imports), for tests
// of internals the package does not export. Its AttentionError is its own copy: tests check the
// error's name, not its class.
const path = require('node:path');
const { buildSync } = require('esbuild');
const { root } = require('./helpers.cjs');

const cache = new Map();
function tsModule(file) {
  if (!cache.has(file)) {
    const out = buildSync({ entryPoints: [path.join(root, file)], bundle: true, format: 'cjs', platform: 'node', write: false, logLevel: 'silent' });
    const m = { exports: {} };
    new Function('module', 'exports', 'require', out.outputFiles[0].text)(m, m.exports, require);
    cache.set(file, m.exports);
  }
  return cache.get(file);
}

module.exports = { tsModule };
