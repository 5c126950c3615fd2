// A hostile run over the built package's public API (issue 38), with counts: every case the issue
// lists, then seeded random mutations of config.json, tokenizer files and safetensors headers of a
// tiny Llama and of brown-gpt2. Each call ends as resolved, a named AttentionError (its message
// starts with the function or file it is about), an unnamed error, an unhandled rejection or a
// hang; after each error a good model must still give its first answer. Exits 1 on any unnamed
// error, unhandled rejection, hang or broken module.
//   node tools/hostile/run.mjs [--quick] [--seed N]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const api = require(path.join(root, 'dist/index.cjs'));
// The test suite's builders of tiny checkpoints (plain CommonJS, no Jest globals).
const { checkpoint, safetensors, tokenizerFiles } = require(path.join(root, 'tests/js/llama_checkpoint.cjs'));
const { modelFiles: llamaFolderFiles, writeFolder } = require(path.join(root, 'tests/js/load_sources.cjs'));

const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const SEED = Number(args[args.indexOf('--seed') + 1]) || 38;
const MUTATIONS = QUICK ? 300 : 3000;
const TIMEOUT_MS = 10000;

/** mulberry32 in [0, 1): the same run for the same seed. */
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(SEED);
const pick = (list) => list[Math.floor(rand() * list.length)];

// ---- the outcome of one call -------------------------------------------------------------------
const CATEGORIES = ['resolved', 'named', 'unnamed', 'unhandled', 'hang', 'broken after'];
const FAILING = new Set(['unnamed', 'unhandled', 'hang', 'broken after']);
const table = new Map();  // case -> { category -> count, sample messages, memory growth }
let current = 'start';
const failures = [];

function row(name) {
  if (!table.has(name)) table.set(name, { ...Object.fromEntries(CATEGORIES.map((c) => [c, 0])), grew: 0, sample: '' });
  return table.get(name);
}
function count(name, category, detail = '') {
  row(name)[category]++;
  if (FAILING.has(category) && failures.length < 50) failures.push(`${name}: ${category}: ${detail}`);
}
process.on('unhandledRejection', (e) => count(current, 'unhandled', `${e?.name}: ${e?.message}`));

// A call that blocks the thread cannot be timed out from it: a watchdog thread reads the start of
// the current call from shared memory and ends the process, naming the case, past 6 timeouts.
const watch = new Int32Array(new SharedArrayBuffer(8));
const label = new Uint8Array(new SharedArrayBuffer(256));
const watchdog = new Worker(`
  const { workerData: { watch, label, limit } } = require('node:worker_threads');
  setInterval(() => {
    const started = Atomics.load(watch, 0);
    if (started && (Date.now() / 1000 | 0) - started > limit) {
      require('node:fs').writeSync(2, 'hang (blocked thread): ' + Buffer.from(label).toString().replace(/\\0+$/, '') + '\\n');  // (fd 2 directly: the main thread, which relays a worker's stderr, is blocked)
      process.kill(process.pid, 'SIGKILL');
    }
  }, 1000);`, { eval: true, workerData: { watch, label, limit: Number(process.env.HOSTILE_BLOCKED_S) || (6 * TIMEOUT_MS) / 1000 } });
watchdog.unref();

/** A named error: an AttentionError whose message begins with the function or file it is about. */
const NAMED = /^[A-Za-z_][\w.\-/[\]"]*(\(\))?: /;

let attn, good, goodLogits;
/** Runs `fn` as case `name` and counts its outcome, the memory it grew and whether `good` still works. */
async function call(name, fn) {
  current = name; if (process.env.HOSTILE_TRACE) process.stderr.write(`> ${name}\n`);
  label.fill(0);
  label.set(Buffer.from(name.slice(0, 255)));
  const before = attn.memoryBytes, started = Date.now();
  Atomics.store(watch, 0, (started / 1000) | 0);
  let timer, category, detail = '';
  try {
    await Promise.race([Promise.resolve().then(fn), new Promise((_, reject) => { timer = setTimeout(() => reject(HANG), TIMEOUT_MS); })]);
    category = Date.now() - started > TIMEOUT_MS ? 'hang' : 'resolved';
  } catch (e) {
    if (e === HANG || Date.now() - started > TIMEOUT_MS) category = 'hang';
    else if (e instanceof api.AttentionError && NAMED.test(e.message)) category = 'named';
    else category = 'unnamed';
    detail = e === HANG ? `no answer in ${TIMEOUT_MS} ms` : `${e?.name}: ${String(e?.message).slice(0, 300)}`;
  } finally {
    clearTimeout(timer);
    Atomics.store(watch, 0, 0);
  }
  count(name, category, detail);
  if (Date.now() - started > 1000) process.stderr.write(`slow: ${name}: ${Date.now() - started} ms (${category})\n`);
  const r = row(name);
  r.grew = Math.max(r.grew, attn.memoryBytes - before);
  if (!r.sample && detail) r.sample = detail.slice(0, 160);
  if (category !== 'resolved' && !goodStillRuns()) count(name, 'broken after', `after ${detail}`);
}
const HANG = Symbol('hang');

function goodStillRuns() {
  try {
    const logits = good.run([0, 3, 4]).logits;
    return logits.length === goodLogits.length && logits.every((v, i) => v === goodLogits[i]);
  } catch {
    return false;
  }
}

// ---- the tiny Llama and brown-gpt2 the cases start from ----------------------------------------
const LLAMA = {
  model_type: 'llama', vocab_size: 23, max_position_embeddings: 16, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, tie_word_embeddings: true,
};
const TENSORS = checkpoint(LLAMA, 5);
const WEIGHTS = safetensors(TENSORS);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-'));
const GPT2 = path.join(root, 'web/models/brown-gpt2');
const BROWN_LLAMA = path.join(root, 'web/models/brown-llama');
const read = (dir, file) => fs.readFileSync(path.join(dir, file));
const json = (v) => JSON.parse(JSON.stringify(v));  // as a file would hold it

/** Loads the tiny Llama from these parts (objects as their files would hold them), runs it, disposes. */
async function llama({ config = LLAMA, weights = WEIGHTS, tokenizer = tokenizerFiles() } = {}) {
  const model = await attn.loadModel({ config: json(config), weights, tokenizer: json(tokenizer) });
  try { model.run('abc'); } finally { model.dispose(); }
}

/** A brown-gpt2 folder with some files replaced (name -> bytes or text), loaded, run and disposed. */
const gpt2Dir = fs.mkdtempSync(path.join(tmp, 'gpt2-'));
async function gpt2(replaced = {}) {
  for (const file of ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']) {
    const target = path.join(gpt2Dir, file);
    fs.rmSync(target, { force: true });
    if (file in replaced) fs.writeFileSync(target, replaced[file]);
    else fs.symlinkSync(path.join(GPT2, file), target);
  }
  const model = await attn.loadModel(gpt2Dir);
  try { model.run('The jury said it'); } finally { model.dispose(); }
}

/** safetensors bytes with the header replaced by `header` (an object), the data kept. */
function withHeader(bytes, header) {
  const n = Number(Buffer.from(bytes.buffer, bytes.byteOffset).readBigUInt64LE(0));
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const out = Buffer.alloc(8 + Buffer.byteLength(text) + (bytes.length - 8 - n));
  out.writeBigUInt64LE(BigInt(Buffer.byteLength(text)), 0);
  out.write(text, 8);
  Buffer.from(bytes.buffer, bytes.byteOffset + 8 + n, bytes.length - 8 - n).copy(out, 8 + Buffer.byteLength(text));
  return out;
}
const headerOf = (bytes) => {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return JSON.parse(b.subarray(8, 8 + Number(b.readBigUInt64LE(0))).toString());
};

/** A tokenizer.json for the tiny Llama's vocabulary with this pre-tokenizer. */
function withPreTokenizer(pre) {
  const tok = tokenizerFiles();
  tok.tokenizer.pre_tokenizer = pre;
  return tok;
}

/** A folder of the tiny Llama in two shards, its index edited by `edit(weight_map)`. */
function sharded(edit) {
  const files = llamaFolderFiles(2);
  const index = JSON.parse(files.get('model.safetensors.index.json'));
  edit(index.weight_map);
  files.set('model.safetensors.index.json', Buffer.from(JSON.stringify(index)));
  return writeFolder(tmp, files);
}

/** A safetensors file whose header lists `count` one-float tensors. */
function manyTensors(count) {
  const parts = [];
  for (let i = 0; i < count; i++) parts.push(`"t${i}":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}`);
  const header = Buffer.from(`{${parts.join(',')}}`);
  const file = Buffer.alloc(8 + header.length + 4);
  file.writeBigUInt64LE(BigInt(header.length), 0);
  header.copy(file, 8);
  return file;
}

// ---- (1) every case the issue lists --------------------------------------------------------------
async function issueCases() {
  const ENCODE = 'The jury said it';
  const secondShard = 'model-00002-of-00002.safetensors';
  await call('shards: index names "../b.safetensors"', () => attn.loadModel(sharded((map) => {
    for (const t of Object.keys(map)) if (map[t] === secondShard) map[t] = '../b.safetensors';
  })));
  await new Promise((resolve) => setTimeout(resolve, 300));  // (a late rejection is still this case's)
  await call('shards: index names the wrong shard', () => attn.loadModel(sharded((map) => {
    const moved = Object.keys(map).find((t) => map[t] === secondShard);
    map[moved] = 'model-00001-of-00002.safetensors';
  })));
  const split = new api.HfTokenizer({ tokenizer: withPreTokenizer({ type: 'Split', pattern: { Regex: '(a+)+$' }, behavior: 'Isolated' }).tokenizer });
  for (const n of [30, 1000, 100000]) await call(`Split "(a+)+$": encode ${n} a + "b"`, () => split.encode('a'.repeat(n) + 'b'));
  await call('Sequence of 20 ByteLevel', () => {
    const bl = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
    new api.HfTokenizer({ tokenizer: withPreTokenizer({ type: 'Sequence', pretokenizers: Array(20).fill(bl) }).tokenizer }).encode(ENCODE);
  });
  for (const vocab of ['"x"', 'null']) await call(`GPT-2 vocab.json ${vocab}`, () => gpt2({ 'vocab.json': vocab }));
  const config = (patch) => () => llama({ config: { ...LLAMA, ...patch } });
  await call('config hidden_size 1e12', config({ hidden_size: 1e12 }));
  await call('config rope_scaling linear without factor', config({ rope_scaling: { type: 'linear' } }));
  await call('config llama3 rope_scaling with only factor', config({ rope_scaling: { rope_type: 'llama3', factor: 8 } }));
  await call('config rope_theta 1e308', config({ rope_theta: 1e308 }));
  for (const bos of [1e9, -1, 'x']) await call(`config bos_token_id ${JSON.stringify(bos)}`, config({ bos_token_id: bos }));
  await call('safetensors overlapping data_offsets', () => {
    const header = headerOf(WEIGHTS);
    header['model.layers.0.input_layernorm.weight'].data_offsets = header['model.norm.weight'].data_offsets;
    return llama({ weights: withHeader(WEIGHTS, header) });
  });
  await call('vocabulary with duplicate ids (vocab.json)', () => new api.BpeTokenizer({ vocab: { a: 0, b: 1, c: 1 }, merges: '' }));
  await call('vocabulary with duplicate ids (tokenizer.json)', () => {
    const tok = tokenizerFiles();
    tok.tokenizer.model.vocab.extra = 5;
    return new api.HfTokenizer({ tokenizer: tok.tokenizer });
  });
  await call('tied lm_head of the wrong shape', () => llama({ weights: safetensors({ ...TENSORS, 'lm_head.weight': { shape: [22, 16], data: Array(22 * 16).fill(0.5) } }) }));
  await call('bf16 weights of 1e38', () => {
    const big = checkpoint(LLAMA, 5, true);
    big['model.layers.0.mlp.up_proj.weight'].data.fill(new Float32Array(Uint32Array.of(0x7e96_0000).buffer)[0]);  // bf16 ~1e38
    return llama({ weights: safetensors(big, 'BF16') });
  });
  await call(`safetensors header of ${QUICK ? 10 : 100} MB`, () => api.parseSafetensors(manyTensors(QUICK ? 160000 : 1600000)));
  for (const dtype of ['q8', 'q4']) {
    await call(`brown-llama at ${dtype}`, async () => {
      const model = await attn.loadModel(BROWN_LLAMA, { dtype });
      try { model.run(ENCODE); } finally { model.dispose(); }
    });
  }
  const heap = () => { try { return attn.heapBytesInUse; } catch { return 'n/a'; } };  // (newer builds only)
  const memory = attn.memoryBytes, inUse = heap();
  for (let i = 0; i < 100; i++) await call('100 load/dispose of the tiny Llama', () => llama());
  row('100 load/dispose of the tiny Llama').sample = `memory ${memory} -> ${attn.memoryBytes} bytes, heap in use ${inUse} -> ${heap()}`;
}

// ---- (2) random mutations ----------------------------------------------------------------------
const HOSTILE = [1e12, -1, 0, 1.5, -1e308, 1e308, 'NaN', 'Infinity', '-Infinity', null, true, '', 'x', 'x'.repeat(1 << 20),
  { a: { b: { c: { d: 1 } } } }, [], [1e12], [null], ['x'], [[[]]], 2 ** 31, 2 ** 32 + 16, -(2 ** 31) - 1, 4294967295];

/** A random path into `value` (keys of objects and arrays), at least one deep. */
function randomPath(value) {
  const out = [];
  let at = value;
  while (at && typeof at === 'object') {
    const keys = Object.keys(at);
    if (!keys.length || (out.length && rand() < 0.4)) break;
    const key = pick(keys);
    out.push(key);
    at = at[key];
  }
  return out;
}
/** A deep copy of `value` with one random field set to a hostile value, deleted, or renamed. */
function mutate(value) {
  const copy = structuredClone(value), where = randomPath(copy);
  if (!where.length) return pick(HOSTILE);
  let parent = copy;
  for (const key of where.slice(0, -1)) parent = parent[key];
  const key = where[where.length - 1], roll = rand();
  if (roll < 0.1 && !Array.isArray(parent)) delete parent[key];
  else if (roll < 0.15 && !Array.isArray(parent)) { parent[`${key}_`] = parent[key]; delete parent[key]; }
  else parent[key] = pick(HOSTILE);
  return copy;
}

async function mutations() {
  const gpt2Config = JSON.parse(read(GPT2, 'config.json'));
  const gpt2Vocab = JSON.parse(read(GPT2, 'vocab.json'));
  const gpt2Merges = read(GPT2, 'merges.txt').toString();
  const gpt2Weights = read(GPT2, 'model.safetensors');
  const gpt2Header = headerOf(gpt2Weights), llamaHeader = headerOf(WEIGHTS);
  const llamaTokenizer = withPreTokenizer({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true });
  const kinds = {
    'mutated Llama config.json': () => llama({ config: mutate(LLAMA) }),
    'mutated GPT-2 config.json': () => gpt2({ 'config.json': JSON.stringify(mutate(gpt2Config)) }),
    'mutated Llama tokenizer.json': () => {
      const tok = new api.HfTokenizer({ tokenizer: json(mutate(llamaTokenizer.tokenizer)), config: llamaTokenizer.config });
      tok.decode(tok.encode('abcdef'));  // (letters of its vocabulary)
    },
    'mutated Llama tokenizer_config.json': () => llama({ tokenizer: { ...llamaTokenizer, config: mutate({ ...llamaTokenizer.config, add_bos_token: true }) } }),
    'mutated GPT-2 vocab.json': () => {
      const vocab = rand() < 0.9 ? { ...gpt2Vocab, [pick(Object.keys(gpt2Vocab))]: pick(HOSTILE) } : pick(HOSTILE);
      const tok = new api.BpeTokenizer({ vocab: json(vocab), merges: gpt2Merges });
      tok.decode(tok.encode('The jury said it'));
    },
    'mutated Llama safetensors header': () => llama({ weights: withHeader(WEIGHTS, mutate(llamaHeader)) }),
    'mutated GPT-2 safetensors header': () => api.parseSafetensors(withHeader(gpt2Weights, mutate(gpt2Header))),
  };
  const names = Object.keys(kinds);
  for (let i = 0; i < MUTATIONS; i++) {
    const name = pick(names);
    await call(name, kinds[name]);
  }
}

// ---- the run -------------------------------------------------------------------------------------
attn = await api.loadAttention({ threads: 1 });
good = await attn.loadModel({ config: LLAMA, weights: WEIGHTS, tokenizer: tokenizerFiles() });
goodLogits = Float32Array.from(good.run([0, 3, 4]).logits);
const memoryAtStart = attn.memoryBytes, startedAt = Date.now();
try {
  await issueCases();
  await mutations();
  await new Promise((resolve) => setTimeout(resolve, 500));  // late rejections
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}

const pad = (s, n) => String(s).padEnd(n);
const width = Math.max(...[...table.keys()].map((k) => k.length));
console.log(`hostile run: seed ${SEED}, ${QUICK ? 'quick' : 'full'}, ${((Date.now() - startedAt) / 1000).toFixed(0)} s, WebAssembly memory ${memoryAtStart} -> ${attn.memoryBytes} bytes\n`);
console.log(`${pad('case', width)}  ${CATEGORIES.map((c) => pad(c, 9)).join(' ')} ${pad('grew', 9)} first message`);
const totals = Object.fromEntries(CATEGORIES.map((c) => [c, 0]));
for (const [name, r] of table) {
  for (const c of CATEGORIES) totals[c] += r[c];
  console.log(`${pad(name, width)}  ${CATEGORIES.map((c) => pad(r[c], 9)).join(' ')} ${pad(r.grew, 9)} ${r.sample}`);
}
console.log(`${pad('total', width)}  ${CATEGORIES.map((c) => pad(totals[c], 9)).join(' ')}`);
if (failures.length) console.log(`\nfailures:\n${failures.join('\n')}`);
good.dispose();
process.exit([...FAILING].some((c) => totals[c] > 0) ? 1 : 0);
