// Where a checkpoint's tensors are, checked before any is used: two tensors of one file whose
// data_offsets overlap are refused naming both (as the reference safetensors library refuses
// offsets that are not one after the other), and a model.safetensors.index.json whose weight_map
// names the wrong shard for a tensor (or a shard that holds it not at all) is refused naming the
// tensor and both shards. The module loads a good model afterwards.
const fs = require('node:fs');
const { api } = require('./helpers.cjs');
const { modelFiles, writeFolder, tmpRoot } = require('./load_sources.cjs');

/** A safetensors file with the given header entries over `data` bytes of data. */
function file(header, data) {
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8) json += ' ';
  const out = new Uint8Array(8 + json.length + data);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(new TextEncoder().encode(json), 8);
  return out;
}
const entry = (begin, end, shape = [(end - begin) / 4]) => ({ dtype: 'F32', shape, data_offsets: [begin, end] });

let attn, root;
beforeAll(async () => {
  attn = await api.loadAttention({ threads: 1 });
  root = tmpRoot();
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

test('overlapping data_offsets are refused naming both tensors; adjacent, gapped and empty ones are not', () => {
  expect(() => api.parseSafetensors(file({ a: entry(0, 16), b: entry(8, 24) }, 24)))
    .toThrow(/^safetensors: tensors "a" \(data_offsets \[0, 16\]\) and "b" \(data_offsets \[8, 24\]\) overlap$/);
  // The same bytes under two names, listed in any order.
  expect(() => api.parseSafetensors(file({ w: entry(16, 32), alias: entry(16, 32), x: entry(0, 16) }, 32)))
    .toThrow(/tensors "w" \(data_offsets \[16, 32\]\) and "alias" \(data_offsets \[16, 32\]\) overlap|tensors "alias" .* and "w" .* overlap/);
  // One inside another.
  expect(() => api.parseSafetensors(file({ big: entry(0, 64), small: entry(20, 28) }, 64))).toThrow(/"big" .* and "small" .* overlap/);
  const ok = api.parseSafetensors(file({ a: entry(0, 16), b: entry(16, 32), gap: entry(40, 48), empty: entry(8, 8, [0]) }, 48));
  expect([...ok.tensors.keys()]).toEqual(['a', 'b', 'gap', 'empty']);
});

test('loadModel: a folder whose weights overlap is refused by the tensors\' names', async () => {
  const files = modelFiles();
  const bytes = files.get('model.safetensors');
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString());
  // The final norm's bytes now also serve as the first layer's input norm (same shape).
  header['model.layers.0.input_layernorm.weight'].data_offsets = header['model.norm.weight'].data_offsets;
  let json = JSON.stringify(header);
  json += ' '.repeat(n - json.length);
  files.set('model.safetensors', Buffer.concat([bytes.subarray(0, 8), Buffer.from(json), bytes.subarray(8 + n)]));
  const error = await attn.loadModel(writeFolder(root, files)).catch((e) => e);
  expect(error).toBeInstanceOf(api.AttentionError);
  expect(error.message).toMatch(/tensors "model\.(norm|layers\.0\.input_layernorm)\.weight" .* and "model\.(norm|layers\.0\.input_layernorm)\.weight" .* overlap/);
});

describe('model.safetensors.index.json', () => {
  const sharded = (edit) => {
    const files = modelFiles(2);
    const index = JSON.parse(files.get('model.safetensors.index.json'));
    edit(index.weight_map);
    files.set('model.safetensors.index.json', Buffer.from(JSON.stringify(index)));
    return writeFolder(root, files);
  };

  test('a tensor named in the wrong shard is refused naming it and both shards', async () => {
    let moved;
    const dir = sharded((map) => {
      moved = Object.keys(map).find((t) => map[t] === 'model-00002-of-00002.safetensors');
      map[moved] = 'model-00001-of-00002.safetensors';
    });
    const error = await attn.loadModel(dir).catch((e) => e);
    expect(error).toBeInstanceOf(api.AttentionError);
    expect(error.message).toBe(`model.safetensors.index.json: weight_map puts tensor "${moved}" in model-00001-of-00002.safetensors, but it is in model-00002-of-00002.safetensors`);
  });

  test('a tensor no shard holds is refused by name', async () => {
    const dir = sharded((map) => { map['model.layers.7.mlp.up_proj.weight'] = 'model-00001-of-00002.safetensors'; });
    await expect(attn.loadModel(dir)).rejects.toThrow(/^model\.safetensors\.index\.json: weight_map puts tensor "model\.layers\.7\.mlp\.up_proj\.weight" in model-00001-of-00002\.safetensors, but no shard holds it$/);
  });

  test('the true map loads, and the module works after the refusals', async () => {
    const model = await attn.loadModel(sharded(() => {}));
    expect(model.run([0, 3, 4]).logits.length).toBe(3 * 23);
    model.dispose();
  });
});
