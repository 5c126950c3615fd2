// Every loader owns the promises it starts (loading/load_tasks.ts): each source (a folder by path
// and by URL, the same sharded, a Hub id, a GGUF file by path, URL and Hub, a split GGUF) is killed
// at each of its steps (the n-th request or file open refused, or its body cut after the first
// chunk); the load rejects with a named error or, for an optional file (or a Hub download its
// client resumes), loads all the same, and in
// both cases no request is still running and no file still open when loadModel settles, and no
// rejection is ever unhandled: Jest fails the test that is running when one happens (the waits
// below let late failures happen inside the test), and load_tasks_child.cjs checks the issue's
// crash in a plain Node process, where process.on('unhandledRejection') sees what Node would exit on.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { api, root: packageRoot } = require('./helpers.cjs');
const { modelFiles, writeFolder, writeGguf, tmpRoot, tick, fakeFetch, fakeFiles } = require('./load_sources.cjs');

const OPTIONAL = /tokenizer_config\.json|generation_config\.json|chat_template\.jinja|model\.safetensors$/;
let attn, root, net, disk;
const sources = {};

beforeAll(async () => {
  attn = await api.loadAttention({ threads: 1 });
  root = tmpRoot();
  const ggufPath = writeGguf(attn, root)[0], split = writeGguf(attn, root, 2);
  const gguf = fs.readFileSync(ggufPath);
  net = fakeFetch({
    'http://models.test/one/': modelFiles(), 'http://models.test/sharded/': modelFiles(3), 'http://models.test/gguf/': new Map([['tiny.gguf', gguf]]),
    'http://hub.test/owner/one/': modelFiles(), 'http://hub.test/owner/sharded/': modelFiles(3), 'http://hub.test/owner/gguf/': new Map([['tiny.gguf', gguf]]),
  });
  disk = fakeFiles();
  net.install();
  disk.install();
  const hub = { hubUrl: 'http://hub.test', cache: false };
  Object.assign(sources, {
    'folder path': [writeFolder(root, modelFiles())], 'sharded folder path': [writeFolder(root, modelFiles(3))],
    'folder URL': ['http://models.test/one/'], 'sharded folder URL': ['http://models.test/sharded/'],
    'Hub id': ['hf:owner/one', hub], 'sharded Hub id': ['hf:owner/sharded', hub],
    'GGUF path': [ggufPath], 'split GGUF path': [split[0]], 'GGUF URL': ['http://models.test/gguf/tiny.gguf'], 'Hub GGUF': ['hf:owner/gguf/tiny.gguf', hub],
  });
});

afterAll(() => {
  net?.uninstall();
  disk?.uninstall();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

/** Loads with `fault(n, what)` deciding each step; returns the error, or null when it loaded. */
async function loadWith(source, options, fault) {
  net.calls = [];
  disk.calls = [];
  net.fault = fault;
  disk.fault = fault;
  try {
    const model = await attn.loadModel(source, options);
    model.dispose();
    return null;
  } catch (e) {
    return e;
  } finally {
    net.fault = disk.fault = () => undefined;
  }
}

test.each(['folder path', 'sharded folder path', 'folder URL', 'sharded folder URL', 'Hub id', 'sharded Hub id', 'GGUF path', 'split GGUF path', 'GGUF URL', 'Hub GGUF'])(
  '%s: killed at each step, nothing runs on and nothing is unhandled', async (name) => {
    const [source, options] = sources[name];
    expect(await loadWith(source, options, () => undefined)).toBeNull();
    const steps = [...net.calls, ...disk.calls];
    expect(steps.length).toBeGreaterThan(0);
    for (const kind of ['refuse', 'cut']) {
      for (let n = 1; n <= steps.length; n++) {
        let hit;
        const error = await loadWith(source, options, (i, what) => (i === n ? (hit = what, kind) : undefined));
        // Settled: nothing of it runs on.
        expect({ name, kind, n, running: net.running, open: disk.open }).toEqual({ name, kind, n, running: 0, open: 0 });
        // Loaded all the same: the step was an optional file's (or, from the Hub, a cut download
        // its client resumed).
        if (error) expect(error).toBeInstanceOf(api.AttentionError);
        else if (!(/Hub/.test(name) && kind === 'cut')) expect({ name, kind, hit }).toEqual({ name, kind, hit: expect.stringMatching(OPTIONAL) });
      }
    }
    await tick();
  }, 30000);

test('a shard named "../b.safetensors" is refused before any shard is read (the issue\'s crash)', async () => {
  const files = modelFiles(2);
  const index = JSON.parse(files.get('model.safetensors.index.json'));
  const [first, second] = [...new Set(Object.values(index.weight_map))];
  for (const [t, f] of Object.entries(index.weight_map)) if (f === second) index.weight_map[t] = '../b.safetensors';
  files.set('model.safetensors.index.json', Buffer.from(JSON.stringify(index)));
  files.delete('model.safetensors');
  const dir = writeFolder(root, files);
  const error = await loadWith(dir, {}, () => undefined);
  expect(error).toBeInstanceOf(api.AttentionError);
  expect(error.message).toMatch(/model\.safetensors\.index\.json: weight_map: "\.\.\/b\.safetensors" is not a file name inside a model repository/);
  expect(disk.calls.some((f) => f.endsWith(first))).toBe(false);
});

test('in a plain Node process: the shard failures and the "../b.safetensors" index leave nothing unhandled or running', () => {
  const out = JSON.parse(execFileSync(process.execPath, [path.join(__dirname, 'load_tasks_child.cjs'), path.join(packageRoot, 'dist/index.cjs')], { encoding: 'utf8', timeout: 20000 }));
  expect(out).toEqual({
    errors: [expect.stringMatching(/model-00002-of-00003\.safetensors: EIO/), expect.stringMatching(/could not fetch .*model-00002-of-00003/),
      expect.stringMatching(/could not reach .*model-00002-of-00003/), expect.stringMatching(/weight_map: "\.\.\/b\.safetensors" is not a file name/)],
    unhandled: [], open: 0, running: 0,
  });
});

test('one shard fails while another is still being read: that read is cancelled or awaited, never left behind', async () => {
  // Over HTTP the first shard hangs until cancelled; on disk its read fails 50 ms after the other's.
  const byUrl = await loadWith('http://models.test/sharded/', {}, (i, url) => (/00001-of/.test(url) ? 'hang' : /00002-of/.test(url) ? 'refuse' : undefined));
  expect(byUrl.message).toMatch(/could not fetch http:\/\/models\.test\/sharded\/model-00002-of-00003\.safetensors/);
  expect(net.running).toBe(0);
  const hub = await loadWith('hf:owner/sharded', sources['Hub id'][1], (i, url) => (/00001-of/.test(url) ? 'hang' : /00002-of/.test(url) ? 'refuse' : undefined));
  expect(hub).toMatchObject({ name: 'HubError', code: 'network', message: expect.stringMatching(/00002-of-00003/) });
  expect(net.running).toBe(0);
  const dir = sources['sharded folder path'][0];
  const onDisk = await loadWith(dir, {}, (i, file) => (/00001-of/.test(file) ? 'late' : /00002-of/.test(file) ? 'refuse' : undefined));
  expect(onDisk.message).toMatch(/could not read .*model-00002-of-00003\.safetensors: EIO/);
  expect(disk.open).toBe(0);
  await tick();
  await tick();
  await tick();
});

test('the caller\'s abort in the middle stops every read; the error is code aborted', async () => {
  const controller = new AbortController();
  const error = await loadWith('http://models.test/sharded/', { signal: controller.signal }, (i, url) => {
    if (/00003-of/.test(url)) setTimeout(() => controller.abort(), 5);
    return /00001-of/.test(url) ? 'hang' : undefined;
  });
  expect(error).toMatchObject({ name: 'AttentionError', code: 'aborted' });
  expect(net.running).toBe(0);
  await tick();
});
