// Progress, cancel and a cache for every source loadModel reads (not only hf: ids): a folder by
// path and by URL, a shipped model, a GGUF file by path and URL, a split GGUF. Each reports every
// file's bytes (done once, at the file's size; total known where the size is), stops before its
// first request when the signal is already aborted and mid-way when it aborts, and with `cache`
// keeps its http(s) files: a second load makes no request, a damaged entry is read anew, a bad
// answer is never stored. URLs are answered by a fetch stand-in (load_sources.cjs).
const fs = require('node:fs');
const path = require('node:path');
const { api, root: packageRoot } = require('./helpers.cjs');
const { modelFiles, writeFolder, writeGguf, tmpRoot, fakeFetch, fakeFiles } = require('./load_sources.cjs');

const TOKENS = [0, 3, 7, 7, 12, 2];
let attn, root, net, disk, sources, files;

beforeAll(async () => {
  attn = await api.loadAttention({ threads: 1 });
  root = tmpRoot();
  files = modelFiles();
  const ggufPath = writeGguf(attn, root)[0], split = writeGguf(attn, root, 2);
  const shippedUrls = Object.fromEntries([...files.keys()].map((f) => [f, `http://models.test/shipped/${f}`]));
  net = fakeFetch({ 'http://models.test/one/': files, 'http://models.test/shipped/': files, 'http://models.test/gguf/': new Map([['tiny.gguf', fs.readFileSync(ggufPath)]]) });
  disk = fakeFiles();
  net.install();
  disk.install();
  sources = {
    'folder path': writeFolder(root, files), 'folder URL': 'http://models.test/one/',
    'shipped model (URLs)': { name: 'tiny', type: 'llama', files: shippedUrls },
    'shipped model (package)': require(path.join(packageRoot, 'dist/models/brown-llama/index.cjs')),
    'GGUF path': ggufPath, 'split GGUF path': split[0], 'GGUF URL': 'http://models.test/gguf/tiny.gguf',
  };
});

afterAll(() => {
  net?.uninstall();
  disk?.uninstall();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const requests = () => net.calls.length + disk.calls.length;
const reset = () => { net.calls = []; disk.calls = []; };
const logits = (model) => Array.from(model.run(TOKENS.slice(0, 4)).logits.slice(0, 40));

describe.each(['folder path', 'folder URL', 'shipped model (URLs)', 'shipped model (package)', 'GGUF path', 'split GGUF path', 'GGUF URL'])('%s', (name) => {
  test('onProgress: every file read reports its bytes, done once at its size', async () => {
    const events = [];
    reset();
    const model = await attn.loadModel(sources[name], { onProgress: (e) => events.push(e) });
    model.dispose();
    const done = events.filter((e) => e.done);
    expect(done.length).toBeGreaterThan(0);
    for (const e of done) {
      expect(e).toEqual({ file: expect.any(String), loaded: expect.any(Number), total: e.loaded, done: true });
      expect(done.filter((d) => d.file === e.file)).toHaveLength(1);
    }
    // Every byte-carrying event is of a file that ends done, with loaded growing to its size.
    for (const e of events.filter((x) => !x.done)) {
      const end = done.find((d) => d.file === e.file);
      expect(e.loaded).toBeLessThanOrEqual(end.loaded);
      if (e.total !== undefined) expect(e.total).toBe(end.loaded);
    }
    const weights = done.find((e) => /safetensors|gguf/.test(e.file));
    expect(weights.loaded).toBeGreaterThan(1000);
  });

  test('signal: already aborted -> code aborted before any request; aborted at the first progress -> code aborted, nothing left open', async () => {
    const before = new AbortController();
    before.abort();
    reset();
    await expect(attn.loadModel(sources[name], { signal: before.signal, onProgress: () => {} })).rejects.toMatchObject({ name: 'AttentionError', code: 'aborted' });
    expect(requests()).toBe(0);
    const during = new AbortController();
    const error = await attn.loadModel(sources[name], { signal: during.signal, onProgress: () => during.abort() }).then((m) => m.dispose(), (e) => e);
    expect(error).toMatchObject({ name: 'AttentionError', code: 'aborted', message: expect.stringMatching(/^loadModel: .*(aborted)/) });
    expect({ running: net.running, open: disk.open }).toEqual({ running: 0, open: 0 });
    const timedOut = await attn.loadModel(sources[name], { signal: AbortSignal.timeout(0) }).then((m) => m.dispose(), (e) => e);
    expect(timedOut).toMatchObject({ code: 'timeout', message: expect.stringContaining('AbortSignal.timeout') });
  });
});

test('in-memory sources refuse an aborted signal too (a GGUF file\'s bytes, the files given)', async () => {
  const before = new AbortController();
  before.abort();
  await expect(attn.loadModel(fs.readFileSync(sources['GGUF path']), { signal: before.signal })).rejects.toMatchObject({ code: 'aborted' });
  await expect(attn.loadModel({ config: {}, weights: new Uint8Array(8), tokenizer: {} }, { signal: before.signal })).rejects.toMatchObject({ code: 'aborted' });
});

describe.each(['folder URL', 'shipped model (URLs)', 'GGUF URL'])('cache: %s', (name) => {
  test('cache: true keeps the http(s) files: the second load asks for nothing and computes the same', async () => {
    const cacheDir = fs.mkdtempSync(path.join(root, 'cache-'));
    reset();
    const first = await attn.loadModel(sources[name], { cache: true, cacheDir });
    const want = logits(first);
    first.dispose();
    const asked = net.calls.filter((u) => !/generation_config|chat_template/.test(u));
    expect(asked.length).toBeGreaterThan(0);
    reset();
    const events = [];
    const second = await attn.loadModel(sources[name], { cache: true, cacheDir, onProgress: (e) => events.push(e) });
    expect(logits(second)).toEqual(want);
    second.dispose();
    // Only the files that are absent (not cached) are asked again.
    expect(net.calls.filter((u) => !/generation_config|chat_template/.test(u))).toEqual([]);
    // Each file once, done, from the cache (a GGUF file then streams from it into the model).
    expect(events.filter((e) => e.cached)).toEqual([...new Set(events.map((e) => e.file))].map((file) => expect.objectContaining({ file, done: true, cached: true })));
    // Another name is another cache.
    reset();
    (await attn.loadModel(sources[name], { cache: 'mine', cacheDir })).dispose();
    expect(net.calls.length).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(cacheDir, 'caches', 'mine'))).toBe(true);
  });
});

/** Every file under a folder, by path. */
function listFiles(dir) {
  const out = [];
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).forEach((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : out.push(path.join(d, e.name))));
  walk(dir);
  return out;
}

test('cache integrity: a damaged entry is read anew, a bad answer is never stored, files on disk are not copied', async () => {
  const cacheDir = fs.mkdtempSync(path.join(root, 'cache-'));
  const url = sources['folder URL'];
  (await attn.loadModel(url, { cache: true, cacheDir })).dispose();
  // Cut the cached weights short: the recorded size no longer matches, so it is fetched again.
  fs.truncateSync(listFiles(cacheDir).find((f) => f.endsWith('model.safetensors')), 100);
  reset();
  (await attn.loadModel(url, { cache: true, cacheDir })).dispose();
  expect(net.calls.sort()).toEqual([`${url}chat_template.jinja`, `${url}generation_config.json`, `${url}model.safetensors`]);
  // A config.json that is an HTML page fails the load and is not kept.
  const stored = listFiles(cacheDir);
  const html = fakeFetch({ 'http://models.test/html/': new Map([...files, ['config.json', Buffer.from('<!doctype html><html></html>')]]) });
  html.install();
  try {
    await expect(attn.loadModel('http://models.test/html/', { cache: true, cacheDir })).rejects.toThrow(/config\.json.*HTML/);
  } finally {
    net.install();
  }
  expect(listFiles(cacheDir)).toEqual(stored);
  // A folder on disk is read where it is.
  (await attn.loadModel(sources['folder path'], { cache: true, cacheDir })).dispose();
  expect(listFiles(cacheDir)).toEqual(stored);
});

test('a Hub model in a named cache: its own folder, and the second load asks for nothing', async () => {
  const cacheDir = fs.mkdtempSync(path.join(root, 'cache-'));
  const hub = fakeFetch({ 'http://hub.test/owner/one/': files });
  hub.install();
  try {
    (await attn.loadModel('hf:owner/one', { hubUrl: 'http://hub.test', cacheDir, cache: 'mine' })).dispose();
    expect(listFiles(path.join(cacheDir, 'caches', 'mine')).some((f) => f.endsWith(path.join('owner', 'one', 'main', 'model.safetensors')))).toBe(true);
    hub.calls = [];
    (await attn.loadModel('hf:owner/one', { hubUrl: 'http://hub.test', cacheDir, cache: 'mine' })).dispose();
    expect(hub.calls).toEqual([]);
  } finally {
    net.install();
  }
});

test('cache names are checked', async () => {
  for (const bad of ['', '../x', 'a/b', 'x'.repeat(101), 3])
    await expect(attn.loadModel(sources['folder URL'], { cache: bad })).rejects.toThrow(/^loadModel: cache must be true, false or a cache's name/);
});
