// Checkpoint headers in time linear in their size, with a cap (issue 38): a safetensors header
// listing more tensors than any checkpoint file does (a 100 MB header holds 1.6 million entries,
// which JSON.parse alone takes over a minute to build) is refused after one pass over its bytes,
// before it is parsed; a GGUF file's tensor count likewise. The files are built here.
const { api } = require('./helpers.cjs');
const { expectNamed } = require('./fuzz.cjs');

/** A safetensors file whose header lists `count` one-float tensors, each in its own 4 bytes
 * (tensors that overlap are refused: safetensors_layout.test.cjs). */
function manyTensors(count, name = (i) => `t${i}`) {
  const parts = [];
  for (let i = 0; i < count; i++) parts.push(`${JSON.stringify(name(i))}:{"dtype":"F32","shape":[1],"data_offsets":[${4 * i},${4 * i + 4}]}`);
  const header = Buffer.from(`{"__metadata__":{"format":"pt"},${parts.join(',')}}`);
  const file = Buffer.alloc(8 + header.length + 4 * count);
  file.writeUInt32LE(header.length, 0);
  header.copy(file, 8);
  return file;
}

test('a safetensors header over MAX_TENSORS_PER_FILE entries is refused by name before it is parsed', async () => {
  const cap = 65536;
  await expectNamed(() => api.parseSafetensors(manyTensors(cap + 1)), new RegExp(`^safetensors: header has ${cap + 2} entries, more than a checkpoint file may list \\(${cap} tensors\\)$`));
  // Braces inside names (and escaped quotes before them) are not entries.
  const file = api.parseSafetensors(manyTensors(3, (i) => `{{"{\\${i}`));
  expect([...file.tensors.keys()]).toEqual(['{{"{\\0', '{{"{\\1', '{{"{\\2']);
  expect(api.parseSafetensors(manyTensors(1000)).tensors.size).toBe(1000);
});

test('a GGUF file over MAX_TENSORS_PER_FILE tensors is refused by name', async () => {
  const count = 65537, file = Buffer.alloc(24 + count * 32);
  file.write('GGUF', 0, 'latin1');
  file.writeUInt32LE(3, 4);
  file.writeBigUInt64LE(BigInt(count), 8);
  file.writeBigUInt64LE(0n, 16);
  await expectNamed(() => api.parseGguf(file), /^GGUF: tensor count 65537 at byte 8 is more than a checkpoint file may list \(65536\)$/);
});
