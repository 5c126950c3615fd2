// Writes one module per shipped model (dist/models/<name>/index.js, index.cjs, index.d.ts), the
// targets of the package's "./models/*" export. The ES module names each file with a literal
// `new URL('./file', import.meta.url)`, the one form bundlers follow (they emit the file and
// rewrite the URL); the CommonJS one gives Node's file: URLs. Usage: node scripts/model_modules.mjs
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = join(root, 'dist/models');
// What loadModel reads from a folder (bindings/ts/loading/model_files.ts); not the card or head labels.
const LOADED = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt', 'vocab.txt', 'tokenizer.json',
  'tokenizer_config.json', 'generation_config.json'];

for (const name of readdirSync(modelsDir)) {
  const dir = join(modelsDir, name);
  const files = LOADED.filter((f) => existsSync(join(dir, f)));
  const type = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).model_type;
  const header = `// The shipped model ${name}: pass it to loadModel(). Written by scripts/model_modules.mjs.\n`;
  writeFileSync(join(dir, 'index.js'), `${header}export default {\n  name: '${name}',\n  type: '${type}',\n  files: {\n${
    files.map((f) => `    '${f}': new URL('./${f}', import.meta.url),\n`).join('')}  },\n};\n`);
  writeFileSync(join(dir, 'index.cjs'), `${header}'use strict';\nconst { pathToFileURL } = require('node:url');\n`
    + `const file = (f) => pathToFileURL(require('node:path').join(__dirname, f));\n`
    + `module.exports = {\n  name: '${name}',\n  type: '${type}',\n  files: {\n${files.map((f) => `    '${f}': file('${f}'),\n`).join('')}  },\n};\n`);
  writeFileSync(join(dir, 'index.d.ts'), `${header}import type { ShippedModel } from '../../index.js';\n`
    + `declare const model: ShippedModel<'${type}'>;\nexport default model;\n`);
}
console.log(`model_modules: ${readdirSync(modelsDir).join(', ')}`);
