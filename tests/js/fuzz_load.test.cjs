// loadAttention and loadModel under hostile input: every wrong source or option is an
// AttentionError (never a TypeError, a Proxy's own error or a crash), and a good load still works.
const path = require('node:path');
const { api, root } = require('./helpers.cjs');
const { HOSTILE, hostileOptions, fuzz, expectNamed } = require('./fuzz.cjs');

const FOLDER = path.join(root, 'web/models/brown-gpt2');
const trap = () => new Proxy({}, { get: () => { throw new Error('trap'); }, has: () => { throw new Error('trap'); } });
let attn;
beforeAll(async () => { attn = await api.loadAttention({ threads: 1 }); });

test('loadAttention: hostile options are named errors', async () => {
  const bad = await fuzz(hostileOptions(['simd', 'threads', 'wasmUrl', 'wasmBinary']), (o) => api.loadAttention(o));
  expect(bad).toEqual([]);
});

test('loadModel: hostile sources (values, a throwing Proxy, hand-made files) are named errors; a good load works after', async () => {
  const sources = [...HOSTILE.filter((v) => typeof v !== 'string'), trap(), { config: trap() }, { files: trap(), name: 'x' },
    { config: { model_type: 12n }, weights: new Uint8Array(8), tokenizer: {} }, { config: { model_type: 'llama9' } }];
  const same = async () => (await attn.loadModel(FOLDER)).dispose();
  expect(await fuzz(sources, (s) => attn.loadModel(s), same)).toEqual([]);
  await expectNamed(() => attn.loadModel(trap()), /loadModel: the model's files could not be read: "trap"/);
  await expectNamed(() => attn.loadModel({ config: { model_type: 12n } }), /model_type 12n .*is not supported/);
}, 60000);

test('loadModel: hostile options are named errors', async () => {
  const keys = ['revision', 'hubUrl', 'accessToken', 'onProgress', 'cache', 'cacheDir', 'maxBytes', 'signal', 'idleTimeout'];
  const bad = await fuzz(hostileOptions(keys), (o) => attn.loadModel(FOLDER, o).then((m) => m.dispose()));
  expect(bad).toEqual([]);
}, 120000);
