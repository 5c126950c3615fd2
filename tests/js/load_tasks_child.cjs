// Child of load_tasks.test.cjs: the crash in a plain Node process, where an unhandled
// rejection is what Node reports (and by default exits on; Jest would catch it instead): a sharded
// model whose first shard's read fails 50 ms after the second shard's failure has rejected
// loadModel, by path, by URL and from the Hub; and an index whose second shard is named
// "../b.safetensors" while the first shard's read is bound to fail. Prints { errors, unhandled, open, running } as JSON. argv[2]: the package's
// dist/index.cjs to load.
const { modelFiles, writeFolder, tmpRoot, fakeFetch, fakeFiles } = require('./load_sources.cjs');
const fs = require('node:fs');

const unhandled = [];
process.on('unhandledRejection', (e) => unhandled.push(String(e?.message ?? e)));

(async () => {
  const api = require(process.argv[2]);
  const attn = await api.loadAttention({ threads: 1 });
  const root = tmpRoot();
  const bad = modelFiles(2);
  const index = JSON.parse(bad.get('model.safetensors.index.json'));
  for (const [t, f] of Object.entries(index.weight_map)) if (/00002-of/.test(f)) index.weight_map[t] = '../b.safetensors';
  bad.set('model.safetensors.index.json', Buffer.from(JSON.stringify(index)));
  const net = fakeFetch({ 'http://models.test/sharded/': modelFiles(3), 'http://hub.test/owner/sharded/': modelFiles(3), 'http://models.test/bad/': bad });
  const disk = fakeFiles();
  net.install();
  disk.install();
  const fault = (i, what) => (/00001-of/.test(what) ? 'late' : /00002-of/.test(what) ? 'refuse' : undefined);
  net.fault = disk.fault = fault;
  const errors = [];
  for (const [source, options] of [[writeFolder(root, modelFiles(3)), {}], ['http://models.test/sharded/', {}], ['hf:owner/sharded', { hubUrl: 'http://hub.test', cache: false }],
    ['http://models.test/bad/', {}]]) {
    errors.push(await attn.loadModel(source, options).then((m) => { m.dispose(); return null; }, (e) => e.message));
  }
  const open = disk.open, running = net.running;
  await new Promise((resolve) => setTimeout(resolve, 200));  // the late failures have happened
  fs.rmSync(root, { recursive: true, force: true });
  console.log(JSON.stringify({ errors, unhandled, open, running }));
})();
