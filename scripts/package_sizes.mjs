// The package's size figures in README.md, measured from `npm pack --dry-run` (what npm would
// publish from dist/ as it is now), so they are never typed by hand. The figures live between
// <!-- package-sizes --> and <!-- /package-sizes --> in README.md.
// Usage: node scripts/package_sizes.mjs          print the block
//        node scripts/package_sizes.mjs --write  put it in README.md
//        node scripts/package_sizes.mjs --check  exit 1 if README.md's block differs
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const readmePath = join(root, 'README.md');
const START = '<!-- package-sizes -->', END = '<!-- /package-sizes -->';
const MODELS = [['GPT-2 decoder (default, `gpt2`)', 'brown-gpt2'], ['BERT encoder (`bert`)', 'brown-bert'],
  ['BART spelling to sound (`bart`)', 'g2p-bart'], ['Llama-style decoder (`llama`)', 'brown-llama']];

const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const under = (prefix) => pack.files.filter((f) => f.path.startsWith(prefix)).reduce((a, f) => a + f.size, 0);
const sizeOf = (path) => pack.files.find((f) => f.path === path)?.size ?? 0;
// The widget's scripts (dist/widget/ also holds its attribute reference and embed example).
const widgetScripts = pack.files.filter((f) => f.path.startsWith('dist/widget/') && f.path.endsWith('.js')).reduce((a, f) => a + f.size, 0);

const block = [
  START,
  '| Model (`model=` attribute) | Import / folder | Size |',
  '|---|---|---|',
  ...MODELS.map(([what, name]) => `| ${what} | \`attention-wasm/models/${name}\` (\`dist/models/${name}/\`) | ${mb(under(`dist/models/${name}/`))} |`),
  '',
  `The package is ${mb(pack.size)} packed (${mb(pack.unpackedSize)} unpacked, ${pack.entryCount} files, ${
    mb(under('dist/models/'))} of them these models). A visitor downloads only the model a widget on the page uses (plus the ${
    mb(sizeOf('dist/attention_simd.wasm'))} \`.wasm\` and ${mb(widgetScripts)} of widget scripts).`,
  `(Measured by \`node scripts/package_sizes.mjs\` from \`npm pack --dry-run\`; the README test checks them.)`,
  END,
].join('\n');

const readme = readFileSync(readmePath, 'utf8');
const at = readme.indexOf(START), end = readme.indexOf(END);
if (process.argv.includes('--write') || process.argv.includes('--check')) {
  if (at < 0 || end < at) throw new Error(`README.md has no ${START} ... ${END} block`);
  const next = readme.slice(0, at) + block + readme.slice(end + END.length);
  if (process.argv.includes('--check')) {
    if (next !== readme) {
      console.error(`README.md's package sizes are out of date; run node scripts/package_sizes.mjs --write. Measured:\n${block}`);
      process.exit(1);
    }
  } else writeFileSync(readmePath, next);
}
console.log(block);
