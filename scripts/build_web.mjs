// Builds the demo site into build/web/: the page, the embeddable widget and the worker bundled by
// esbuild (the library from dist/ included), the .wasm files and the two models (the decoder,
// GPT-2, and the encoder, BERT). Self-contained: no CDN, no server logic; any static file server
// can host it.
//
// Usage: node scripts/build_web.mjs            (after scripts/build.sh has produced dist/)
// Env:   DEMO_MODEL=<folder>  serve another GPT-2 folder instead of web/models/brown-gpt2
//                             (e.g. a random one from scripts/make_dev_model.mjs, for development)
//        DEMO_BERT=<folder>   serve another BERT folder instead of web/models/brown-bert (e.g. a
//                             random one from scripts/make_dev_bert.mjs); without one the site is
//                             built with the decoder only (the page then offers no encoder)
//        DEMO_BART=<folder>   serve another encoder-decoder (BART) folder instead of web/models/g2p-bart;
//                             without one the page offers no encoder-decoder
//        DEMO_LLAMA=<folder>  serve another Llama-family folder instead of web/models/brown-llama;
//                             without one the page offers no Llama-style decoder
//        OUT=<dir>            output folder (default build/web)
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'web');
const out = resolve(root, process.env.OUT ?? 'build/web');
const modelDir = resolve(root, process.env.DEMO_MODEL ?? 'web/models/brown-gpt2');
const modelName = basename(modelDir);
const bertDir = resolve(root, process.env.DEMO_BERT ?? 'web/models/brown-bert');
const bertName = basename(bertDir);
const bartDir = resolve(root, process.env.DEMO_BART ?? 'web/models/g2p-bart');
const bartName = basename(bartDir);
const llamaDir = resolve(root, process.env.DEMO_LLAMA ?? 'web/models/brown-llama');
const llamaName = basename(llamaDir);

function fail(message) {
  console.error(`build_web: ${message}`);
  process.exit(1);
}

for (const f of ['index.js', 'attention_simd.wasm', 'attention_scalar.wasm'])
  if (!existsSync(join(root, 'dist', f))) fail(`dist/${f} is missing: run "SKIP_BOOTSTRAP=1 bash scripts/build.sh" first`);
const MODEL_FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];
const missing = MODEL_FILES.filter((f) => !existsSync(join(modelDir, f)));
if (missing.length)
  fail(`the model folder ${relative(root, modelDir) || modelDir} lacks ${missing.join(', ')}.`
    + (process.env.DEMO_MODEL ? '' : ' The trained model is produced by tools/train/run_all.sh; to develop without it,'
      + ' run "node scripts/make_dev_model.mjs /tmp/devmodel" and build with DEMO_MODEL=/tmp/devmodel.'));
// The encoder: vocab.txt (BERT's own) or tokenizer.json.
const BERT_FILES = ['config.json', 'model.safetensors', existsSync(join(bertDir, 'vocab.txt')) ? 'vocab.txt' : 'tokenizer.json'];
const bertMissing = BERT_FILES.filter((f) => !existsSync(join(bertDir, f))).map((f) => (f === 'tokenizer.json' ? 'vocab.txt (or tokenizer.json)' : f));
const haveBert = bertMissing.length === 0;
if (!haveBert) {
  if (process.env.DEMO_BERT) fail(`the BERT folder ${bertDir} lacks ${bertMissing.join(', ')}.`);
  console.warn(`build_web: no encoder (${relative(root, bertDir)} lacks ${bertMissing.join(', ')}): building with GPT-2 only.`
    + ' To develop without the trained one: node scripts/make_dev_bert.mjs /tmp/devbert, and build with DEMO_BERT=/tmp/devbert.');
}
if (haveBert && bertName === modelName) fail(`the GPT-2 and BERT folders are both named ${modelName}`);
// The encoder-decoder (spelling to sound): vocab.json holds its symbols.
const BART_FILES = ['config.json', 'model.safetensors', 'vocab.json'];
const bartMissing = BART_FILES.filter((f) => !existsSync(join(bartDir, f)));
const haveBart = bartMissing.length === 0;
if (!haveBart) {
  if (process.env.DEMO_BART) fail(`the BART folder ${bartDir} lacks ${bartMissing.join(', ')}.`);
  console.warn(`build_web: no encoder-decoder (${relative(root, bartDir)} lacks ${bartMissing.join(', ')}): the page will not offer one.`
    + ' tools/train/g2p/run_all.sh trains it.');
}

// The Llama-style decoder: config.json (model_type llama, qwen2 or mistral), weights, tokenizer.json.
const LLAMA_FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];
const llamaMissing = LLAMA_FILES.filter((f) => !existsSync(join(llamaDir, f)));
const haveLlama = llamaMissing.length === 0;
if (!haveLlama) {
  if (process.env.DEMO_LLAMA) fail(`the Llama folder ${llamaDir} lacks ${llamaMissing.join(', ')}.`);
  console.warn(`build_web: no Llama-style decoder (${relative(root, llamaDir)} lacks ${llamaMissing.join(', ')}): the page will not offer one.`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  entryPoints: { main: join(web, 'app/main.js'), 'attention-view': join(web, 'app/attention_view.js'), worker: join(web, 'app/worker.js'), card: join(web, 'app/card.js') },
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2020', 'chrome91', 'firefox114', 'safari15'],
  minify: true,
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
  // The scripts find the model relative to themselves.
  define: {
    DEMO_MODEL_PATH: JSON.stringify(`./models/${modelName}/`), DEMO_BERT_PATH: haveBert ? JSON.stringify(`./models/${bertName}/`) : 'null',
    DEMO_BART_PATH: haveBart ? JSON.stringify(`./models/${bartName}/`) : 'null',
    DEMO_LLAMA_PATH: haveLlama ? JSON.stringify(`./models/${llamaName}/`) : 'null',
  },
});

for (const f of ['embed-example.html', 'model-card.html', 'page.css']) copyFileSync(join(web, f), join(out, f));
for (const f of ['attention_simd.wasm', 'attention_scalar.wasm']) copyFileSync(join(root, 'dist', f), join(out, f));
const modelOut = join(out, 'models', modelName);
mkdirSync(modelOut, { recursive: true });
// heads.json (the head analysis) and MODEL_CARD.md are optional extras the page links or reads.
for (const f of [...MODEL_FILES, 'heads.json', 'quality.json', 'MODEL_CARD.md'])
  if (existsSync(join(modelDir, f))) copyFileSync(join(modelDir, f), join(modelOut, f));
if (haveBert) {
  const bertOut = join(out, 'models', bertName);
  mkdirSync(bertOut, { recursive: true });
  for (const f of [...BERT_FILES, 'tokenizer_config.json', 'heads.json', 'quality.json', 'MODEL_CARD.md'])
    if (existsSync(join(bertDir, f))) copyFileSync(join(bertDir, f), join(bertOut, f));
}
if (haveBart) {
  const bartOut = join(out, 'models', bartName);
  mkdirSync(bartOut, { recursive: true });
  for (const f of [...BART_FILES, 'heads.json', 'quality.json', 'MODEL_CARD.md'])
    if (existsSync(join(bartDir, f))) copyFileSync(join(bartDir, f), join(bartOut, f));
}

if (haveLlama) {
  const llamaOut = join(out, 'models', llamaName);
  mkdirSync(llamaOut, { recursive: true });
  for (const f of [...LLAMA_FILES, 'tokenizer_config.json', 'generation_config.json', 'heads.json', 'quality.json', 'MODEL_CARD.md'])
    if (existsSync(join(llamaDir, f))) copyFileSync(join(llamaDir, f), join(llamaOut, f));
}

// index.html's head starts the download of the address's model weights itself: it gets this
// build's folders.
const models = { gpt2: [`models/${modelName}/`, 'model.safetensors'] };
if (haveBert) models.bert = [`models/${bertName}/`, 'model.safetensors'];
if (haveBart) models.bart = [`models/${bartName}/`, 'model.safetensors'];
if (haveLlama) models.llama = [`models/${llamaName}/`, 'model.safetensors'];
const page = readFileSync(join(web, 'index.html'), 'utf8');
const MODELS_LINE = /var models = \{[^\n]*\};/;
if (!MODELS_LINE.test(page)) fail('web/index.html has no "var models = {...};" line');
writeFileSync(join(out, 'index.html'), page.replace(MODELS_LINE, () => `var models = ${JSON.stringify(models)};`));

// What a first visit downloads, raw and gzipped (the page itself, JS, WASM, model).
const firstVisit = ['index.html', 'page.css', 'main.js', 'worker.js', 'attention_simd.wasm',
  ...MODEL_FILES.map((f) => `models/${modelName}/${f}`), ...(existsSync(join(modelOut, 'heads.json')) ? [`models/${modelName}/heads.json`] : [])];
const sizes = firstVisit.map((f) => {
  const bytes = readFileSync(join(out, f));
  return { file: f, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
});
const total = sizes.reduce((a, s) => ({ bytes: a.bytes + s.bytes, gzip: a.gzip + s.gzip }), { bytes: 0, gzip: 0 });
const group = (test) => sizes.filter((s) => test(s.file)).reduce((a, s) => a + s.bytes, 0);
const info = {
  model: modelName, encoder: haveBert ? bertName : null, encoderDecoder: haveBart ? bartName : null, llama: haveLlama ? llamaName : null, files: sizes, total,
  js: group((f) => f.endsWith('.js')), wasm: group((f) => f.endsWith('.wasm')), modelBytes: group((f) => f.startsWith('models/')),
  widget: statSync(join(out, 'attention-view.js')).size,
  // Downloaded only when a visitor picks the encoder.
  encoderBytes: haveBert ? readdirSync(join(out, 'models', bertName)).reduce((a, f) => a + statSync(join(out, 'models', bertName, f)).size, 0) : 0,
};
writeFileSync(join(out, 'build-info.json'), JSON.stringify(info, null, 1));

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`build_web: ${relative(root, out)}/ (models: ${modelName}${haveBert ? `, ${bertName}` : ''})`);
for (const s of sizes) console.log(`  ${s.file.padEnd(36)} ${kb(s.bytes).padStart(11)}  gzip ${kb(s.gzip).padStart(11)}`);
console.log(`  ${'first visit total'.padEnd(36)} ${kb(total.bytes).padStart(11)}  gzip ${kb(total.gzip).padStart(11)}`);
console.log(`  (JS ${kb(info.js)}, WASM ${kb(info.wasm)}, model ${kb(info.modelBytes)}; widget script ${kb(info.widget)}${haveBert ? `; encoder, on demand, ${kb(info.encoderBytes)}` : ''})`);
if (readdirSync(out).length === 0) fail('nothing was written');
