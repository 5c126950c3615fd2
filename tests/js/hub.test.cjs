// Models from the Hugging Face Hub (loadModel('hf:...')), against a local stand-in of the Hub
// (hub_server.cjs): never the internet. Each model type loads from it exactly as from its folder,
// sharded checkpoints and revisions work, progress is reported per file, the second load is served
// from the cache with no request, and every failure is a HubError with its code.
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { api, root, load } = require('./helpers.cjs');
const { startHubServer, readFolder, shardSafetensors } = require('./hub_server.cjs');
const { hostileOptions, fuzz, expectNamed } = require('./fuzz.cjs');

const models = path.join(root, 'web/models');
const skipCards = (f) => f === 'MODEL_CARD.md' || f === 'heldout-sample.json';
const gpt2Files = readFolder(path.join(models, 'brown-gpt2'), skipCards);

/** brown-gpt2 as a sharded checkpoint (3 shards) with tokenizer.json instead of vocab.json + merges.txt. */
function shardedGpt2() {
  const files = new Map([['config.json', gpt2Files.get('config.json')], ...shardSafetensors(gpt2Files.get('model.safetensors'), 3)]);
  const vocab = JSON.parse(gpt2Files.get('vocab.json'));
  const merges = gpt2Files.get('merges.txt').toString('utf8').split('\n').filter((l) => l && !l.startsWith('#version'));
  files.set('tokenizer.json', Buffer.from(JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab, merges } })));
  return files;
}

let server, attn, cacheRoot;
const freshCache = () => fs.mkdtempSync(path.join(cacheRoot, 'c-'));

beforeAll(async () => {
  cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-hub-test-'));
  attn = await load('simd');
  server = await startHubServer({
    'attention-wasm/brown-gpt2': { files: gpt2Files, revisions: ['main', '0123456789abcdef0123456789abcdef01234567'] },
    'attention-wasm/brown-bert': { files: readFolder(path.join(models, 'brown-bert'), skipCards) },
    'attention-wasm/g2p-bart': { files: readFolder(path.join(models, 'g2p-bart'), skipCards) },
    'test/sharded-gpt2': { files: shardedGpt2() },
    'test/gated-gpt2': { files: gpt2Files, token: 'hf_secret' },
    'test/no-weights': { files: new Map([...gpt2Files].filter(([f]) => f !== 'model.safetensors')) },
    'test/t5': { files: new Map([['config.json', Buffer.from('{"model_type": "t5", "d_model": 8}')], ['model.safetensors', gpt2Files.get('model.safetensors')]]) },
    'test/cut-once': { files: gpt2Files, cut: { file: 'model.safetensors', after: 1_000_000, times: 1 } },
    'test/cut-no-ranges': { files: gpt2Files, cut: { file: 'model.safetensors', after: 500_000, times: 1 }, noRanges: true },
    'test/cut-always': { files: gpt2Files, cut: { file: 'model.safetensors', after: 700_000, times: Infinity } },
  });
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(cacheRoot, { recursive: true, force: true });
});

const hub = (extra = {}) => ({ hubUrl: server.url, cacheDir: freshCache(), ...extra });
const SENTENCE = 'The jury said the election was conducted well.';

/** Loads twice (Hub and folder), runs `use` on each, and expects the same numbers. */
async function expectSameAsFolder(id, folder, use) {
  const fromHub = await attn.loadModel(`hf:${id}`, hub());
  const fromFolder = await attn.loadModel(folder);
  try {
    expect(fromHub.type).toBe(fromFolder.type);
    const [a, b] = [use(fromHub), use(fromFolder)];
    expect(a).toEqual(b);
    return a;
  } finally {
    fromHub.dispose();
    fromFolder.dispose();
  }
}

describe('each model type loads from the Hub as from its folder', () => {
  test('GPT-2 (weights through the 302 redirect to the file host)', async () => {
    const out = await expectSameAsFolder('attention-wasm/brown-gpt2', path.join(models, 'brown-gpt2'), (m) => {
      const r = m.run(SENTENCE, { prependBos: true, attention: true });
      return { tokens: r.tokens, logits: Array.from(r.logits), attention: Array.from(r.attention) };
    });
    expect(out.logits.length).toBeGreaterThan(1000);
    const weights = server.requests.filter((r) => r.path.includes('/brown-gpt2/') && r.path.endsWith('/model.safetensors'));
    expect(weights.some((r) => r.path.includes('/resolve/'))).toBe(true);
    expect(weights.some((r) => r.path.startsWith('/cdn/'))).toBe(true);
  });

  test('BERT', async () => {
    await expectSameAsFolder('attention-wasm/brown-bert', path.join(models, 'brown-bert'), (m) => {
      const r = m.run(SENTENCE, { attention: true });
      return { tokens: r.tokens, attention: Array.from(r.attention), embedding: Array.from(m.embed([SENTENCE]).row(0)) };
    });
  });

  test('BART (encoder-decoder)', async () => {
    await expectSameAsFolder('attention-wasm/g2p-bart', path.join(models, 'g2p-bart'), (m) => ['phone', 'knight'].map((w) => m.generate(w).tokenTexts));
  });

  test('a sharded checkpoint (model.safetensors.index.json -> 3 shards) with tokenizer.json', async () => {
    const sharded = await attn.loadModel('hf:test/sharded-gpt2', hub());
    const folder = await attn.loadModel(path.join(models, 'brown-gpt2'));
    try {
      const [a, b] = [sharded, folder].map((m) => m.run(SENTENCE, { prependBos: true }));
      expect(a.tokens).toEqual(b.tokens);
      expect(Array.from(a.logits)).toEqual(Array.from(b.logits));
      for (let s = 1; s <= 3; s++) expect(server.count(`model-0000${s}-of-00003.safetensors`)).toBe(1);
    } finally {
      sharded.dispose();
      folder.dispose();
    }
  });

  test('a sharded checkpoint in a folder loads the same way (model.safetensors.index.json beside its shards)', async () => {
    const dir = fs.mkdtempSync(path.join(cacheRoot, 'sharded-folder-'));
    for (const [file, bytes] of shardedGpt2()) fs.writeFileSync(path.join(dir, file), bytes);
    const sharded = await attn.loadModel(dir);
    const folder = await attn.loadModel(path.join(models, 'brown-gpt2'));
    try {
      expect(Array.from(sharded.run(SENTENCE).logits)).toEqual(Array.from(folder.run(SENTENCE).logits));
    } finally {
      sharded.dispose();
      folder.dispose();
    }
    // An index naming a file outside the model's folder is refused.
    fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { 'wte.weight': '../secret.safetensors' } }));
    await expect(attn.loadModel(dir)).rejects.toThrow('"../secret.safetensors" is not a file name inside a model repository');
  });

  test('a revision: hf:id@rev and { revision } ask for /resolve/{rev}/; an unknown one is not-found', async () => {
    const rev = '0123456789abcdef0123456789abcdef01234567';
    for (const [source, options] of [[`hf:attention-wasm/brown-gpt2@${rev}`, {}], ['hf:attention-wasm/brown-gpt2', { revision: rev }]]) {
      const before = server.requests.length;
      const m = await attn.loadModel(source, hub(options));
      m.dispose();
      const paths = server.requests.slice(before).map((r) => r.path).filter((p) => p.includes('/resolve/'));
      expect(paths.length).toBeGreaterThan(0);
      expect(paths.every((p) => p.includes(`/resolve/${rev}/`))).toBe(true);
    }
    await expect(attn.loadModel('hf:attention-wasm/brown-gpt2@no-such-branch', hub())).rejects.toMatchObject({
      name: 'HubError', code: 'not-found', message: expect.stringContaining('revision "no-such-branch"'),
    });
    await expect(attn.loadModel('hf:attention-wasm/brown-gpt2@v1', hub({ revision: 'v2' }))).rejects.toMatchObject({ code: 'bad-id' });
  });
});

describe('progress and cache', () => {
  test('progress per file is monotone and ends at the file\'s size; a second load downloads nothing', async () => {
    const cacheDir = freshCache();
    const events = [];
    const m = await attn.loadModel('hf:attention-wasm/brown-gpt2', { hubUrl: server.url, cacheDir, onProgress: (e) => events.push(e) });
    m.dispose();
    const files = [...new Set(events.map((e) => e.file))].sort();
    expect(files).toEqual(['config.json', 'merges.txt', 'model.safetensors', 'vocab.json']);
    for (const file of files) {
      const mine = events.filter((e) => e.file === file);
      const size = gpt2Files.get(file).length;
      for (let i = 1; i < mine.length; i++) expect(mine[i].loaded).toBeGreaterThanOrEqual(mine[i - 1].loaded);
      expect(mine.every((e) => e.total === size)).toBe(true);
      expect(mine.filter((e) => e.done)).toHaveLength(1);
      expect(mine.at(-1)).toEqual({ file, loaded: size, total: size, done: true });
    }
    // The weights (2.8 MB) arrive in many steps.
    expect(events.filter((e) => e.file === 'model.safetensors').length).toBeGreaterThan(5);
    // Stored as the Hub names them, under the Hub's address and the revision.
    const stored = path.join(cacheDir, new URL(server.url).host.replace(':', '_'), 'attention-wasm', 'brown-gpt2', 'main', 'model.safetensors');
    expect(fs.readFileSync(stored).equals(gpt2Files.get('model.safetensors'))).toBe(true);

    const before = server.requests.length;
    const again = [];
    const m2 = await attn.loadModel('hf:attention-wasm/brown-gpt2', { hubUrl: server.url, cacheDir, onProgress: (e) => again.push(e) });
    expect(server.requests.length).toBe(before);
    expect(again.every((e) => e.cached && e.done && e.loaded === e.total)).toBe(true);
    expect(m2.run('The jury', { prependBos: true }).tokens.length).toBeGreaterThan(1);
    m2.dispose();

    // cache: false downloads again.
    const m3 = await attn.loadModel('hf:attention-wasm/brown-gpt2', { hubUrl: server.url, cacheDir, cache: false });
    m3.dispose();
    expect(server.requests.slice(before).filter((r) => r.path === '/attention-wasm/brown-gpt2/resolve/main/model.safetensors')).toHaveLength(1);
  });

  test('a BERT\'s absent optional files are remembered: the second load makes no request at all', async () => {
    const cacheDir = freshCache();
    const before = server.requests.length;
    (await attn.loadModel('hf:attention-wasm/brown-bert', { hubUrl: server.url, cacheDir })).dispose();
    const first = server.requests.slice(before);
    // modules.json & co. are optional: their 404 is no error.
    expect(first.some((r) => r.path.endsWith('/modules.json'))).toBe(true);
    const after = server.requests.length;
    (await attn.loadModel('hf:attention-wasm/brown-bert', { hubUrl: server.url, cacheDir })).dispose();
    expect(server.requests.length).toBe(after);
  });

  test('HF_ENDPOINT is the default hub address in Node', async () => {
    const saved = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = server.url;
    try {
      const m = await attn.loadModel('hf:attention-wasm/g2p-bart', { cacheDir: freshCache() });
      expect(m.type).toBe('bart');
      m.dispose();
    } finally {
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
    }
  });

  test('attn.hubFile: one file through the same cache', async () => {
    const cacheDir = freshCache();
    const bytes = await attn.hubFile('hf:attention-wasm/brown-gpt2', 'heads.json', { hubUrl: server.url, cacheDir });
    expect(Buffer.from(bytes).equals(gpt2Files.get('heads.json'))).toBe(true);
    const before = server.requests.length;
    await attn.hubFile('hf:attention-wasm/brown-gpt2', 'heads.json', { hubUrl: server.url, cacheDir });
    expect(server.requests.length).toBe(before);
  });
});

describe('named errors', () => {
  const fails = (source, options, match) => expect(attn.loadModel(source, hub(options))).rejects.toMatchObject({ name: 'HubError', ...match });

  test('HubError is an AttentionError', async () => {
    const e = await attn.loadModel('hf:nobody/nothing', hub()).catch((x) => x);
    expect(e).toBeInstanceOf(api.AttentionError);
    expect(e).toBeInstanceOf(api.HubError);
  });

  test('a model that does not exist (the Hub answers 401 RepoNotFound): not-found, naming the URL', async () => {
    await fails('hf:nobody/nothing', {}, { code: 'not-found', status: 401, message: expect.stringContaining(`${server.url}/nobody/nothing/resolve/main/config.json`) });
  });

  test('a required file missing (no model.safetensors, no index): not-found naming model.safetensors', async () => {
    await fails('hf:test/no-weights', {}, { code: 'not-found', status: 404, message: expect.stringMatching(/model\.safetensors not found in hf:test\/no-weights@main \(http:.*\/test\/no-weights\/resolve\/main\/model\.safetensors\)/) });
  });

  test('a gated model: 401 without a token, 403 with a wrong one, loads with the right one (sent as Bearer)', async () => {
    await fails('hf:test/gated-gpt2', {}, { code: 'unauthorized', status: 401, message: expect.stringContaining('accept its license') });
    await fails('hf:test/gated-gpt2', { accessToken: 'hf_wrong' }, { code: 'unauthorized', status: 403, message: expect.stringContaining('token was refused') });
    const m = await attn.loadModel('hf:test/gated-gpt2', hub({ accessToken: 'hf_secret' }));
    expect(m.type).toBe('gpt2');
    m.dispose();
    expect(server.requests.filter((r) => r.path.startsWith('/test/gated-gpt2/')).at(-1).headers.authorization).toBe('Bearer hf_secret');
  });

  test('network failure: network, naming the URL', async () => {
    const closed = await startHubServer({});
    const url = closed.url;
    await closed.close();
    await expect(attn.loadModel('hf:attention-wasm/brown-gpt2', hub({ hubUrl: url }))).rejects.toMatchObject({
      code: 'network', message: expect.stringContaining(`${url}/attention-wasm/brown-gpt2/resolve/main/config.json`),
    });
  });

  test('a connection cut mid-file is resumed with a Range request', async () => {
    const m = await attn.loadModel('hf:test/cut-once', hub());
    m.dispose();
    const ranged = server.requests.filter((r) => r.path.endsWith('cut-once/main/model.safetensors') && r.headers.range);
    expect(ranged).toHaveLength(1);
    expect(ranged[0].headers.range).toBe('bytes=1000000-');
    expect(ranged[0].headers['if-range']).toMatch(/^"[0-9a-f]{64}"$/);
  });

  test('a cut file from a server that ignores Range is downloaded again whole', async () => {
    const events = [];
    const m = await attn.loadModel('hf:test/cut-no-ranges', hub({ onProgress: (e) => e.file === 'model.safetensors' && events.push(e) }));
    const reference = await attn.loadModel(path.join(models, 'brown-gpt2'));
    try {
      expect(Array.from(m.run(SENTENCE).logits)).toEqual(Array.from(reference.run(SENTENCE).logits));
    } finally {
      m.dispose();
      reference.dispose();
    }
    expect(server.count('cut-no-ranges/resolve/main/model.safetensors')).toBe(2);
    // Progress starts over from 0 with the second answer, then ends at the file's size.
    expect(events.filter((e) => e.loaded === 0)).toHaveLength(2);
    expect(events.at(-1)).toEqual({ file: 'model.safetensors', loaded: gpt2Files.get('model.safetensors').length, total: gpt2Files.get('model.safetensors').length, done: true });
  });

  test('a file cut off every time: truncated, and nothing partial is cached', async () => {
    const cacheDir = freshCache();
    await expect(attn.loadModel('hf:test/cut-always', { hubUrl: server.url, cacheDir })).rejects.toMatchObject({
      code: 'truncated', message: expect.stringMatching(/model\.safetensors was cut off: 700000 of \d+ bytes arrived/),
    });
    const list = (dir) => fs.readdirSync(dir, { recursive: true }).map(String);
    const stored = list(cacheDir);
    expect(stored.some((f) => f.endsWith('config.json'))).toBe(true);
    expect(stored.filter((f) => f.includes('model.safetensors'))).toEqual([]);
  });

  test('over maxBytes: too-large, before the body is read', async () => {
    await fails('hf:attention-wasm/brown-gpt2', { maxBytes: 2_000_000 }, { code: 'too-large', message: expect.stringContaining('maxBytes (2000000 bytes)') });
  });

  test('a model type the library does not run: unsupported-model, before the weights are asked for', async () => {
    await fails('hf:test/t5', {}, { code: 'unsupported-model', message: expect.stringContaining('"t5" model (config.json\'s model_type); this library runs gpt2, bert, bart, llama, qwen2, qwen3, mistral, phi3, smollm3') });
    expect(server.count('t5/resolve/main/model.safetensors')).toBe(0);
    expect(server.requests.filter((r) => r.path.startsWith('/test/t5/'))).toHaveLength(1);
  });

  test('a malformed id or hubUrl: bad-id', async () => {
    await fails('hf:../etc/passwd', {}, { code: 'bad-id' });
    await fails('hf:a/b/c', {}, { code: 'bad-id' });
    await fails('hf:a/b', { hubUrl: 'ftp://example.com' }, { code: 'bad-id' });
  });
});

describe('options (loadModel, hubFile): every key checked, misspelt ones refused', () => {
  const KEYS = ['revision', 'hubUrl', 'accessToken', 'onProgress', 'cache', 'cacheDir', 'maxBytes', 'signal', 'idleTimeout'];
  const folder = path.join(models, 'g2p-bart');

  test('a misspelt key names the nearest known one, for a folder as for a Hub id', async () => {
    for (const source of [folder, 'hf:attention-wasm/g2p-bart']) {
      await expectNamed(() => attn.loadModel(source, { onprogress: () => {} }), /^loadModel: unknown option 'onprogress' \(did you mean 'onProgress'\?\)$/);
      await expectNamed(() => attn.loadModel(source, { hub_url: server.url }), /^loadModel: unknown option 'hub_url' \(did you mean 'hubUrl'\?\)$/);
    }
    await expectNamed(() => attn.hubFile('hf:attention-wasm/brown-gpt2', 'heads.json', { revison: 'main' }), /^hubFile: unknown option 'revison' \(did you mean 'revision'\?\)$/);
    await expectNamed(() => attn.hubFile('hf:attention-wasm/brown-gpt2', 42), /^hubFile: file must be a string, got 42$/);
  });

  test('maxBytes: an integer from 1 to 4 GiB (the largest typed array), else named before any request', async () => {
    const before = server.requests.length;
    for (const bad of [20e9, 2 ** 32 + 1, 0, -1, 1.5, NaN, Infinity, '1000', 10n]) {
      await expectNamed(() => attn.loadModel('hf:attention-wasm/brown-gpt2', hub({ maxBytes: bad })), /^loadModel: maxBytes must be an integer from 1 to 4294967296 \(4 GiB, the largest typed array\), got /);
    }
    expect(server.requests.length).toBe(before);
    await expectNamed(() => attn.loadModel('hf:attention-wasm/brown-gpt2', hub({ maxBytes: 20e9 })), /got 20000000000$/);
  });

  test('hostile values for every key: a result or an AttentionError, never another error', async () => {
    const bad = await fuzz(hostileOptions(KEYS), (options) => attn.loadModel(folder, options).then((m) => m.dispose()));
    expect(bad).toEqual([]);
    // Through the Hub (cacheDir left to a fresh folder: a hostile relative path would write here).
    const hubCases = hostileOptions(KEYS.filter((k) => k !== 'cacheDir'));
    const viaHub = await fuzz(hubCases, (options) => attn.hubFile('hf:attention-wasm/brown-gpt2', 'heads.json',
      options && typeof options === 'object' && !Array.isArray(options) && !ArrayBuffer.isView(options) ? { hubUrl: server.url, cacheDir: freshCache(), ...options } : options));
    expect(viaHub).toEqual([]);
  });

  test('hostile Hub ids, revisions, file names and folder URLs: named errors', async () => {
    const base = { hubUrl: server.url, cacheDir: freshCache() };
    const ids = ['hf:', 'hf:/', 'hf:a//b', 'hf:a/b/c', 'hf:../x', 'hf:a/..', 'hf:a/b@', 'hf:a/b@x y', 'hf:a/b@../../x', `hf:${'x'.repeat(100000)}`,
      `hf:a/b@${'x'.repeat(10000)}`, 'hf:a/b?x=1', 'hf:a/b#x', 'hf:%2e%2e/x', 'hf:a/\u0000'];
    const folders = ['data:,hello', 'blob:nothing', 'http://', 'http://[::1', 'javascript:1', '', ' '];
    expect(await fuzz([...ids, ...folders], (source) => attn.loadModel(source, base).then((m) => m.dispose()))).toEqual([]);
    const files = [...require('./fuzz.cjs').HOSTILE, '', '../secret', 'a/../../b', '/etc/passwd', 'x'.repeat(100000), 'a\\b', 'heads.json?x'];
    expect(await fuzz(files, (file) => attn.hubFile('hf:attention-wasm/brown-gpt2', file, base))).toEqual([]);
  });

  test('no false positive: every documented key accepted together', async () => {
    const events = [];
    const m = await attn.loadModel('hf:attention-wasm/g2p-bart', {
      revision: 'main', hubUrl: server.url, accessToken: 'hf_any', onProgress: (e) => events.push(e), cache: true,
      cacheDir: freshCache(), maxBytes: 2 ** 32, signal: new AbortController().signal, idleTimeout: 60_000,
    });
    expect(m.type).toBe('bart');
    m.dispose();
    expect(events.some((e) => e.done)).toBe(true);
  });
});

describe('load errors name the file, its URL or path, and what came back', () => {
  /** A server answering every path with `status` and `body` (a bundler's fallback page by default). */
  async function answering(status = 200, body = '<!doctype html><html><body><div id="app"></div></body></html>', type = 'text/html') {
    const srv = http.createServer((req, res) => res.writeHead(status, { 'content-type': type }).end(body));
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${srv.address().port}/node_modules/attention-wasm/dist/models/brown-gpt2/`, close: () => new Promise((r) => srv.close(r)) };
  }
  /** brown-gpt2's files in a fresh folder, minus `without`, with `change` applied per file. */
  function folderWith({ without = [], change = {} } = {}) {
    const dir = fs.mkdtempSync(path.join(cacheRoot, 'folder-'));
    for (const [file, bytes] of gpt2Files) if (!without.includes(file)) fs.writeFileSync(path.join(dir, file), change[file] ? change[file](bytes) : bytes);
    return dir;
  }

  test('a server answering its index.html for every file (vite preview): the URL, "an HTML page (text/html), not JSON"', async () => {
    const srv = await answering();
    try {
      await expectNamed(() => attn.loadModel(srv.url), new RegExp(`^${srv.url}config\\.json answered an HTML page \\(text/html\\), not JSON: is the folder URL right\\? A bundler may serve index\\.html for missing files$`));
    } finally {
      await srv.close();
    }
  });

  test('an HTTP error: the URL and the status', async () => {
    const srv = await answering(500, 'oops', 'text/plain');
    try {
      await expectNamed(() => attn.loadModel(srv.url), new RegExp(`${srv.url}config\\.json: HTTP 500`));
    } finally {
      await srv.close();
    }
  });

  test('a GPT-2 folder with vocab.json but no merges.txt names merges.txt', async () => {
    const dir = folderWith({ without: ['merges.txt'] });
    await expectNamed(() => attn.loadModel(dir), new RegExp(`^file not found: ${dir}/merges\\.txt \\(GPT-2's byte-level BPE needs merges\\.txt beside vocab\\.json, or a tokenizer\\.json\\)$`));
    const none = folderWith({ without: ['merges.txt', 'vocab.json'] });
    await expectNamed(() => attn.loadModel(none), /tokenizer\.json.*\(a GPT-2 needs vocab\.json \+ merges\.txt or tokenizer\.json; none was found\)$/);
  });

  test('a file cut short or corrupt: its path and what is wrong; the good folder then loads', async () => {
    const cutConfig = folderWith({ change: { 'config.json': (b) => b.subarray(0, 50) } });
    await expectNamed(() => attn.loadModel(cutConfig), new RegExp(`^${cutConfig}/config\\.json is not valid JSON \\(.*\\): cut short\\? \\(50 bytes\\)$`));
    const cutWeights = folderWith({ change: { 'model.safetensors': (b) => b.subarray(0, b.length - 10) } });
    await expectNamed(() => attn.loadModel(cutWeights), new RegExp(`^${cutWeights}/model\\.safetensors: safetensors: .*out of range`));
    const badMerges = folderWith({ change: { 'merges.txt': (b) => Buffer.concat([b, Buffer.from('a b c\n')]) } });
    await expectNamed(() => attn.loadModel(badMerges), /merges\.txt: line \d+ is not "left right"/);
    const m = await attn.loadModel(folderWith());
    expect(m.type).toBe('gpt2');
    m.dispose();
  });
});

describe('the cache never keeps a bad file: checked before it is stored, named, and asked for again once fixed', () => {
  /** A repository of brown-gpt2's files with `faults` and changed files, under a fresh id. */
  let serial = 0;
  function faultyRepo({ faults = [], change = {} } = {}) {
    const id = `faulty/gpt2-${serial++}`;
    const files = new Map(gpt2Files);
    for (const [file, f] of Object.entries(change)) files.set(file, f(gpt2Files.get(file)));
    server.repos[id] = { files, faults: new Map(faults) };
    return { id, fix: () => { server.repos[id].faults.clear(); server.repos[id].files = new Map(gpt2Files); } };
  }
  /** Fails with invalid-file naming the file's URL, caches none of it; once fixed, loads with a new request. */
  async function failsThenLoads(file, options, message) {
    const { id, fix } = options.repo;
    const cacheDir = freshCache();
    const url = `${server.url}/${id}/resolve/main/${file}`;
    const e = await attn.loadModel(`hf:${id}`, { hubUrl: server.url, cacheDir }).catch((x) => x);
    expect(e).toMatchObject({ name: 'HubError', code: 'invalid-file', url });
    expect(e.message).toMatch(message);
    const stored = fs.readdirSync(cacheDir, { recursive: true }).map(String);
    expect(stored.filter((f) => f.endsWith(file) || f.endsWith(`${file}.meta.json`))).toEqual([]);
    fix();
    const before = server.count(`${id}/resolve/main/${file}`);
    const m = await attn.loadModel(`hf:${id}`, { hubUrl: server.url, cacheDir });
    expect(m.run(SENTENCE, { prependBos: true }).tokens.length).toBeGreaterThan(5);
    m.dispose();
    expect(server.count(`${id}/resolve/main/${file}`)).toBe(before + 1);
  }

  test('an HTML page answered for config.json', async () => {
    await failsThenLoads('config.json', { repo: faultyRepo({ faults: [['config.json', { kind: 'html' }]] }) },
      /config\.json answered an HTML page \(text\/html\), not JSON/);
  });

  test('config.json cut short', async () => {
    await failsThenLoads('config.json', { repo: faultyRepo({ change: { 'config.json': (b) => b.subarray(0, 60) } }) }, /config\.json is not valid JSON .*cut short\?/);
  });

  test('vocab.json cut short, merges.txt as an HTML page', async () => {
    await failsThenLoads('vocab.json', { repo: faultyRepo({ change: { 'vocab.json': (b) => b.subarray(0, 1000) } }) }, /vocab\.json is not valid JSON/);
    await failsThenLoads('merges.txt', { repo: faultyRepo({ faults: [['merges.txt', { kind: 'html' }]] }) }, /merges\.txt answered an HTML page/);
  });

  test('a corrupt model.safetensors of the right length (its header broken), and one whose data ends early', async () => {
    const broken = (b) => { const c = Buffer.from(b); c.fill(0x7b, 8, 40); return c; };
    await failsThenLoads('model.safetensors', { repo: faultyRepo({ change: { 'model.safetensors': broken } }) }, /model\.safetensors: safetensors: header is not valid UTF-8 JSON/);
    // A shorter file served consistently (its Content-Length says the same): the header's data end is past it.
    await failsThenLoads('model.safetensors', { repo: faultyRepo({ change: { 'model.safetensors': (b) => b.subarray(0, b.length - 4) } }) }, /model\.safetensors: safetensors: .*out of range/);
  });

  test('a bad file an earlier version cached is not used: it is downloaded again', async () => {
    const cacheDir = freshCache();
    (await attn.loadModel('hf:attention-wasm/g2p-bart', { hubUrl: server.url, cacheDir })).dispose();
    const dir = path.join(cacheDir, new URL(server.url).host.replace(':', '_'), 'attention-wasm', 'g2p-bart', 'main');
    const page = Buffer.from('<!doctype html><html></html>');
    fs.writeFileSync(path.join(dir, 'config.json'), page);
    fs.writeFileSync(path.join(dir, 'config.json.meta.json'), JSON.stringify({ size: page.length }));
    const before = server.count('g2p-bart/resolve/main/config.json');
    const m = await attn.loadModel('hf:attention-wasm/g2p-bart', { hubUrl: server.url, cacheDir });
    expect(m.type).toBe('bart');
    m.dispose();
    expect(server.count('g2p-bart/resolve/main/config.json')).toBe(before + 1);
  });
});

describe('the Hub client under a hostile or failing server', () => {
  let serial = 0;
  /** brown-gpt2's files under a fresh id, with `faults`; fix() clears them. */
  function repoWith(faults) {
    const id = `client/gpt2-${serial++}`;
    server.repos[id] = { files: new Map(gpt2Files), faults: new Map(faults) };
    return { id, source: `hf:${id}`, fix: () => server.repos[id].faults.clear() };
  }
  async function loadsOnceFixed(repo, cacheDir) {
    repo.fix();
    const m = await attn.loadModel(repo.source, { hubUrl: server.url, cacheDir });
    expect(m.run(SENTENCE, { prependBos: true }).tokens.length).toBeGreaterThan(5);
    m.dispose();
  }

  test('a gzip bomb (config.json unpacking to 1 GiB): too-large at 64 MiB, memory bounded; loads once fixed', async () => {
    const repo = repoWith([['config.json', { kind: 'bomb', mib: 1024 }]]);
    const cacheDir = freshCache();
    const rss = process.memoryUsage().rss;
    let peak = 0;
    const e = await attn.loadModel(repo.source, { hubUrl: server.url, cacheDir, onProgress: () => { peak = Math.max(peak, process.memoryUsage().rss - rss); } }).catch((x) => x);
    expect(e).toMatchObject({ name: 'HubError', code: 'too-large', message: expect.stringContaining(`config.json of hf:${repo.id}@main (${server.url}/${repo.id}/resolve/main/config.json) unpacks to over 67108864 bytes`) });
    // 64 MiB kept, grown by doubling (a 32 MiB buffer copied into a 64 MiB one): far below the 1 GiB sent.
    expect(peak).toBeLessThan(400 * 1024 ** 2);
    expect(fs.readdirSync(cacheDir, { recursive: true }).map(String).filter((f) => f.endsWith('config.json'))).toEqual([]);
    await loadsOnceFixed(repo, cacheDir);
  });

  test('a gzip bomb within a small maxBytes: too-large naming maxBytes', async () => {
    const repo = repoWith([['heads.json', { kind: 'bomb', mib: 256 }]]);
    await expect(attn.hubFile(repo.source, 'heads.json', { hubUrl: server.url, cacheDir: freshCache(), maxBytes: 20 * 1024 ** 2 })).rejects.toMatchObject({
      name: 'HubError', code: 'too-large', message: expect.stringContaining('over maxBytes (20971520 bytes)'),
    });
  });

  test('a stalled download (bytes then nothing): timeout after idleTimeout without a byte; loads once fixed', async () => {
    const repo = repoWith([['model.safetensors', { kind: 'stall', after: 100_000 }]]);
    const cacheDir = freshCache();
    const e = await attn.loadModel(repo.source, { hubUrl: server.url, cacheDir, idleTimeout: 300 }).catch((x) => x);
    expect(e).toMatchObject({ name: 'HubError', code: 'timeout' });
    expect(e.message).toMatch(/^download of http:.*\/model\.safetensors stalled: no byte for 300 ms after 100000 of \d+ bytes \(idleTimeout\)$/);
    expect(fs.readdirSync(cacheDir, { recursive: true }).map(String).filter((f) => f.includes('model.safetensors'))).toEqual([]);
    await loadsOnceFixed(repo, cacheDir);
  });

  test('a server that never answers: timeout too (the idle timer covers the wait for headers)', async () => {
    const repo = repoWith([['config.json', { kind: 'hang' }]]);
    await expect(attn.loadModel(repo.source, { hubUrl: server.url, cacheDir: freshCache(), idleTimeout: 200 })).rejects.toMatchObject({
      name: 'HubError', code: 'timeout', message: expect.stringContaining('config.json stalled: no byte for 200 ms (idleTimeout)'),
    });
  });

  test('a 1.9 GB Content-Length and a stall: nothing allocated from the announcement; 10 GB is too-large before reading', async () => {
    const repo = repoWith([['model.safetensors', { kind: 'stall', after: 1000, announce: 1.9e9 }]]);
    let grew = 0;
    const base = process.memoryUsage().arrayBuffers;
    const onProgress = (p) => { if (p.file === 'model.safetensors') grew = Math.max(grew, process.memoryUsage().arrayBuffers - base); };
    await expect(attn.loadModel(repo.source, { hubUrl: server.url, cacheDir: freshCache(), idleTimeout: 300, onProgress })).rejects.toMatchObject({ code: 'timeout' });
    expect(grew).toBeLessThan(64 * 1024 ** 2);
    server.repos[repo.id].faults.set('model.safetensors', { kind: 'stall', after: 1000, announce: 1e10 });
    await expect(attn.loadModel(repo.source, { hubUrl: server.url, cacheDir: freshCache() })).rejects.toMatchObject({
      code: 'too-large', message: expect.stringContaining('is 10000000000 bytes'),
    });
  });

  test('a connection closed before the answer is tried once more; twice in a row is a network error', async () => {
    const once = repoWith([['model.safetensors', { kind: 'drop', times: 1 }]]);
    const m = await attn.loadModel(once.source, { hubUrl: server.url, cacheDir: freshCache() });
    m.dispose();
    expect(server.requests.filter((r) => r.path === `/cdn/${once.id}/main/model.safetensors`)).toHaveLength(2);
    const twice = repoWith([['config.json', { kind: 'drop', times: 2 }]]);
    await expect(attn.loadModel(twice.source, { hubUrl: server.url, cacheDir: freshCache() })).rejects.toMatchObject({
      name: 'HubError', code: 'network', message: expect.stringMatching(/config\.json \(UND_ERR_SOCKET, also when tried again\)/),
    });
    expect(server.count(`${twice.id}/resolve/main/config.json`)).toBe(2);
    await loadsOnceFixed(twice, freshCache());
  });

  test('abort() gives HubError aborted; AbortSignal.timeout() gives timeout (not a DOMException, not CORS)', async () => {
    const repo = repoWith([['model.safetensors', { kind: 'stall', after: 1000 }]]);
    const controller = new AbortController();
    const onProgress = (p) => { if (p.file === 'model.safetensors' && p.loaded > 0) controller.abort(); };
    const aborted = await attn.loadModel(repo.source, { hubUrl: server.url, cacheDir: freshCache(), signal: controller.signal, onProgress }).catch((x) => x);
    expect(aborted).toBeInstanceOf(api.HubError);
    expect(aborted).toMatchObject({ code: 'aborted', message: expect.stringMatching(/^download of .*model\.safetensors aborted after 1000 of \d+ bytes/) });
    const timedOut = await attn.loadModel(repo.source, { hubUrl: server.url, cacheDir: freshCache(), signal: AbortSignal.timeout(300) }).catch((x) => x);
    expect(timedOut).toBeInstanceOf(api.HubError);
    expect(timedOut).toMatchObject({ code: 'timeout', message: expect.stringContaining('AbortSignal.timeout') });
    expect(timedOut.message).not.toMatch(/CORS/);
    const before = new AbortController();
    before.abort();
    await expect(attn.loadModel(repo.source, { hubUrl: server.url, cacheDir: freshCache(), signal: before.signal })).rejects.toMatchObject({ name: 'HubError', code: 'aborted' });
    // Also when every file is in the cache (no request would be made).
    const cacheDir = freshCache();
    (await attn.loadModel('hf:attention-wasm/g2p-bart', { hubUrl: server.url, cacheDir })).dispose();
    const requests = server.requests.length;
    await expect(attn.loadModel('hf:attention-wasm/g2p-bart', { hubUrl: server.url, cacheDir, signal: before.signal })).rejects.toMatchObject({ name: 'HubError', code: 'aborted' });
    expect(server.requests.length).toBe(requests);
  });
});
