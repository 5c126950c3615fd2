// Builds the <attention-view> widget INTO THE NPM PACKAGE, so a tutorial can embed it with one
// script tag from a CDN that serves npm packages (jsDelivr, unpkg) and nothing else to host:
//   dist/widget/attention-view.js  the element (ES module; `import 'attention-wasm/widget'`)
//   dist/widget/worker.js          its compute worker (the library bundled in)
//   dist/widget/README.md          every attribute (web/README.md), and embed-example.html
//                                  (web/embed-example.html: a mock tutorial page)
//   dist/models/<name>/            the default models (GPT-2, BERT, the BART spelling-to-sound)
// The worker uses the package's own dist/attention_*.wasm (one folder up) and the element finds the
// worker and the models relative to its own URL, so the files work from any origin. The demo
// site's build (scripts/build_web.mjs) bundles the same sources with the demo page beside them.
//
// Usage: node scripts/build_widget.mjs   (run by scripts/bundle.mjs, after dist/index.js exists)
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const widgetOut = join(dist, 'widget');
const modelsOut = join(dist, 'models');

// The default models, by the name the widget's model attribute uses. Their folders are committed
// under web/models/; a package without them would load a widget that cannot draw anything.
const MODELS = { gpt2: 'brown-gpt2', bert: 'brown-bert', bart: 'g2p-bart' };
// The Llama-style decoder (model="llama") ships once its trained folder is there.
const haveLlama = ['config.json', 'model.safetensors', 'tokenizer.json'].every((f) => existsSync(join(root, 'web/models/brown-llama', f)));
if (haveLlama) MODELS.llama = 'brown-llama';
// What the worker reads (weights, config, tokenizer, the head labels, the measured quality) and the card that says what
// the model is and how it was trained; not the held-out samples the analysis tools use.
const MODEL_FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt', 'vocab.txt', 'tokenizer.json',
  'tokenizer_config.json', 'generation_config.json', 'heads.json', 'quality.json', 'MODEL_CARD.md'];

function fail(message) {
  console.error(`build_widget: ${message}`);
  process.exit(1);
}

if (!existsSync(join(dist, 'index.js'))) fail('dist/index.js is missing: run scripts/bundle.mjs first');
for (const name of Object.values(MODELS))
  for (const f of ['config.json', 'model.safetensors'])
    if (!existsSync(join(root, 'web/models', name, f))) fail(`web/models/${name}/${f} is missing`);

// Which optional files each default model folder holds: the widget asks for no other (no 404s).
const OPTIONAL_FILES = ['quality.json', 'heads.json', 'generation_config.json', 'tokenizer_config.json'];
const modelFiles = Object.fromEntries(Object.entries(MODELS).map(([key, name]) => [key, OPTIONAL_FILES.filter((f) => existsSync(join(root, 'web/models', name, f)))]));

rmSync(widgetOut, { recursive: true, force: true });
rmSync(modelsOut, { recursive: true, force: true });
await build({
  entryPoints: { 'attention-view': join(root, 'web/app/attention_view.js'), worker: join(root, 'web/app/worker.js') },
  outdir: widgetOut,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2020', 'chrome91', 'firefox114', 'safari15'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  define: {
    DEMO_MODEL_PATH: JSON.stringify(`../models/${MODELS.gpt2}/`),
    DEMO_BERT_PATH: JSON.stringify(`../models/${MODELS.bert}/`),
    DEMO_BART_PATH: JSON.stringify(`../models/${MODELS.bart}/`),
    DEMO_LLAMA_PATH: haveLlama ? JSON.stringify(`../models/${MODELS.llama}/`) : 'null',
    WIDGET_WASM_DIR: JSON.stringify('../'),
    WIDGET_MODEL_FILES: JSON.stringify(modelFiles),
    // No demo page ships in the package: the "open in the demo" link shows only for demo="<url>".
    WIDGET_DEMO_PAGE: 'null',
  },
});

// The attribute reference and the embed example ship beside the widget (the example's script tag
// names attention-view.js beside it, so it runs from the package's folder as it is).
copyFileSync(join(root, 'web/README.md'), join(widgetOut, 'README.md'));
copyFileSync(join(root, 'web/embed-example.html'), join(widgetOut, 'embed-example.html'));

let modelBytes = 0;
for (const name of Object.values(MODELS)) {
  mkdirSync(join(modelsOut, name), { recursive: true });
  for (const f of MODEL_FILES) {
    const from = join(root, 'web/models', name, f);
    if (!existsSync(from)) continue;
    copyFileSync(from, join(modelsOut, name, f));
    modelBytes += statSync(from).size;
  }
}
const widgetBytes = readdirSync(widgetOut).reduce((a, f) => a + statSync(join(widgetOut, f)).size, 0);
const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;
console.log(`build_widget: dist/widget/ ${mb(widgetBytes)}, dist/models/ ${mb(modelBytes)} (${Object.values(MODELS).join(', ')})`);
