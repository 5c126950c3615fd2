// The GGUF reader (bindings/ts/loading/gguf.ts, through the built package): files written by the
// repository's writer (tools/gguf/gguf_writer.mjs, in a child process: it is an ES module) read
// back value for value and byte for byte, at versions 3 and 2; the same files read by
// @huggingface/gguf (an independent parser) give the same metadata and tensor infos; a header
// read from growing prefixes of a file; and every malformed or hostile file refused with an
// AttentionError naming the problem and where.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { gguf } = require('@huggingface/gguf');
const { api } = require('./helpers.cjs');

const { parseGguf, parseGgufHeader, GGUF_TENSOR_TYPES, AttentionError } = api;

const TYPE = Object.fromEntries(GGUF_TENSOR_TYPES.map((t) => [t.name, t]));

/** Deterministic bytes (xorshift32) so a failure reproduces. */
function randomBytes(n, seed) {
  const out = new Uint8Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; out[i] = s & 255; }
  return out;
}

/** A tensor spec for the writer: random bytes of exactly the size its type and dims need. */
function tensor(name, type, dims, seed) {
  const t = TYPE[type];
  const n = dims.reduce((a, b) => a * b, 1);
  return { name, type: t.id, dims, data: randomBytes((n / t.blockElements) * t.blockBytes, seed) };
}

const U64_BIG = '9223372036854775813'; // 2^63 + 5: not a safe integer
const I64_BIG = '-4611686018427387904'; // -2^62
const TOKENS = Array.from({ length: 32000 }, (_, i) => (i % 7 === 0 ? `▁wörd${i}` : `t${i}`));
const SCORES = Float32Array.from(TOKENS, (_, i) => -(i + 1) / 3);

const METADATA = {
  'general.architecture': { type: 'string', value: 'llama' },
  'test.u8': { type: 'u8', value: 200 },
  'test.i8': { type: 'i8', value: -100 },
  'test.u16': { type: 'u16', value: 60000 },
  'test.i16': { type: 'i16', value: -30000 },
  'test.u32': { type: 'u32', value: 4000000000 },
  'test.i32': { type: 'i32', value: -2000000000 },
  'test.f32': { type: 'f32', value: 1.25 },
  'test.f64': { type: 'f64', value: Math.PI },
  'test.true': { type: 'bool', value: true },
  'test.false': { type: 'bool', value: false },
  'test.string': { type: 'string', value: 'héllo ✓ 日本語 🦙' },
  'test.empty_string': { type: 'string', value: '' },
  'test.u64_small': { type: 'u64', value: 12345 },
  'test.u64_big': { type: 'u64', value: U64_BIG },
  'test.i64_small': { type: 'i64', value: -5 },
  'test.i64_big': { type: 'i64', value: I64_BIG },
  'test.array_u8': { type: 'array', of: 'u8', value: [0, 1, 255] },
  'test.array_i8': { type: 'array', of: 'i8', value: [-128, 0, 127] },
  'test.array_u16': { type: 'array', of: 'u16', value: [0, 65535] },
  'test.array_i16': { type: 'array', of: 'i16', value: [-32768, 32767] },
  'test.array_u32': { type: 'array', of: 'u32', value: [0, 4294967295] },
  'test.array_i32': { type: 'array', of: 'i32', value: [-2147483648, 2147483647] },
  'test.array_f32': { type: 'array', of: 'f32', value: [0.5, -2, 1e-5] },
  'test.array_f64': { type: 'array', of: 'f64', value: [Math.E, -1e300] },
  'test.array_u64': { type: 'array', of: 'u64', value: ['1', U64_BIG] },
  'test.array_i64': { type: 'array', of: 'i64', value: ['-1', I64_BIG] },
  'test.array_bool': { type: 'array', of: 'bool', value: [true, false, true] },
  'test.array_string': { type: 'array', of: 'string', value: ['a', '', 'ü✓', 'x'.repeat(100)] },
  'test.array_empty': { type: 'array', of: 'f32', value: [] },
  'test.array_nested': {
    type: 'array', of: 'array', value: [
      { of: 'u8', value: [1, 2] }, { of: 'string', value: ['in', 'ner'] },
      { of: 'array', value: [{ of: 'f32', value: [0.5] }, { of: 'bool', value: [] }] },
    ],
  },
  'tokenizer.ggml.model': { type: 'string', value: 'llama' },
  'tokenizer.ggml.tokens': { type: 'array', of: 'string', value: TOKENS },
  'tokenizer.ggml.scores': { type: 'array', of: 'f32', value: Array.from(SCORES) },
  'tokenizer.ggml.token_type': { type: 'array', of: 'i32', value: TOKENS.map((_, i) => (i < 3 ? 3 : 1)) },
};

/** What each metadata value should read as (the writer's alignment key comes first). */
const EXPECTED = {
  'general.alignment': 32,
  'general.architecture': 'llama',
  'test.u8': 200, 'test.i8': -100, 'test.u16': 60000, 'test.i16': -30000, 'test.u32': 4000000000, 'test.i32': -2000000000,
  'test.f32': 1.25, 'test.f64': Math.PI, 'test.true': true, 'test.false': false,
  'test.string': 'héllo ✓ 日本語 🦙', 'test.empty_string': '',
  'test.u64_small': 12345, 'test.u64_big': BigInt(U64_BIG), 'test.i64_small': -5, 'test.i64_big': BigInt(I64_BIG),
  'test.array_u8': Uint8Array.of(0, 1, 255), 'test.array_i8': Int8Array.of(-128, 0, 127),
  'test.array_u16': Uint16Array.of(0, 65535), 'test.array_i16': Int16Array.of(-32768, 32767),
  'test.array_u32': Uint32Array.of(0, 4294967295), 'test.array_i32': Int32Array.of(-2147483648, 2147483647),
  'test.array_f32': Float32Array.of(0.5, -2, 1e-5), 'test.array_f64': Float64Array.of(Math.E, -1e300),
  'test.array_u64': BigUint64Array.of(1n, BigInt(U64_BIG)), 'test.array_i64': BigInt64Array.of(-1n, BigInt(I64_BIG)),
  'test.array_bool': [true, false, true], 'test.array_string': ['a', '', 'ü✓', 'x'.repeat(100)],
  'test.array_empty': new Float32Array(0),
  'test.array_nested': [Uint8Array.of(1, 2), ['in', 'ner'], [Float32Array.of(0.5), []]],
  'tokenizer.ggml.model': 'llama',
  'tokenizer.ggml.tokens': TOKENS,
  'tokenizer.ggml.scores': SCORES,
  'tokenizer.ggml.token_type': Int32Array.from(TOKENS, (_, i) => (i < 3 ? 3 : 1)),
};

const TENSORS = [
  tensor('f32.matrix', 'F32', [8, 3], 1),
  tensor('f32.3d', 'F32', [2, 3, 4], 2),
  tensor('f16.4d', 'F16', [2, 2, 3, 2], 3),
  tensor('f16.vector', 'F16', [64], 4),
  tensor('bf16', 'BF16', [4, 2], 5),
  tensor('q4_0', 'Q4_0', [64, 2], 6),
  tensor('q4_1', 'Q4_1', [32, 3], 7),
  tensor('q5_0', 'Q5_0', [32], 8),
  tensor('q5_1', 'Q5_1', [96], 9),
  tensor('q8_0', 'Q8_0', [32, 3], 10),
  tensor('q2_k', 'Q2_K', [256], 11),
  tensor('q3_k', 'Q3_K', [256, 2], 12),
  tensor('q4_k', 'Q4_K', [512, 3], 13),
  tensor('q5_k', 'Q5_K', [256], 14),
  tensor('q6_k', 'Q6_K', [256, 2], 15),
  tensor('q8_k', 'Q8_K', [256], 16),
];

// The small file the hostile cases patch: keys and tensor names of equal length in pairs, so one
// can be overwritten with the other.
const SMALL_METADATA = {
  'general.architecture': { type: 'string', value: 'llama' },
  'dup.k1': { type: 'u32', value: 7 },
  'dup.k2': { type: 'bool', value: true },
  'x.list': { type: 'array', of: 'u32', value: [1, 2, 3] },
};
const SMALL_TENSORS = [tensor('ta', 'F32', [4, 2], 21), tensor('tb', 'Q8_0', [32], 22), tensor('tc', 'F16', [16], 23)];

let dir, files;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gguf-reader-'));
  const nested = (depth) => (depth === 0 ? { of: 'u8', value: [1] } : { of: 'array', value: [nested(depth - 1)] });
  const specs = {
    all: { metadata: METADATA, tensors: TENSORS },
    small: { metadata: SMALL_METADATA, tensors: SMALL_TENSORS },
    empty: { metadata: {}, tensors: [] },
    align48: { metadata: { 'general.alignment': { type: 'u32', value: 48 } }, tensors: [] },
    align0: { metadata: { 'general.alignment': { type: 'u32', value: 0 } }, tensors: [] },
    alignU64: { metadata: { 'general.alignment': { type: 'u64', value: 32 } }, tensors: [] },
    deep: { metadata: { deep: { type: 'array', ...nested(40) } }, tensors: [] },
    rowQ8: { metadata: {}, tensors: [{ ...tensor('odd', 'F32', [48], 30), type: TYPE.Q8_0.id, data: Buffer.alloc(34 * 2) }] },
  };
  const list = Object.entries(specs).map(([name, s]) => ({
    file: path.join(dir, `${name}.gguf`), metadata: s.metadata,
    tensors: s.tensors.map((t) => ({ ...t, data: Buffer.from(t.data).toString('base64') })),
  }));
  // rowQ8 cannot be written as is (48 values are not whole Q8_0 blocks): written as 64 and patched below.
  list.find((s) => s.file.endsWith('rowQ8.gguf')).tensors[0].dims = [64];
  const sizes = JSON.parse(execFileSync(process.execPath, [path.join(__dirname, 'gguf_write.mjs')], {
    input: JSON.stringify(list), encoding: 'utf8', maxBuffer: 1 << 20,
  }));
  files = {};
  list.forEach((s, i) => {
    files[path.basename(s.file, '.gguf')] = new Uint8Array(fs.readFileSync(s.file));
    expect(files[path.basename(s.file, '.gguf')].length).toBe(sizes[i]);
  });
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of a file with bytes changed by `edit(buffer)`. */
function patched(name, edit) {
  const b = Buffer.from(files[name]);
  edit(b);
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}
/** Where the bytes after a string (u64 length + text) start in the header. */
function afterString(b, text) {
  const enc = Buffer.from(text);
  const at = b.indexOf(Buffer.concat([Buffer.from(new BigUint64Array([BigInt(enc.length)]).buffer), enc]));
  if (at < 0) throw new Error(`no string ${text}`);
  return at + 8 + enc.length;
}
/** A tensor info's fields' positions: n_dims, dims[], type, offset. */
function infoAt(b, name) {
  const p = afterString(b, name), n = b.readUInt32LE(p);
  return { nDims: p, dims: Array.from({ length: n }, (_, i) => p + 4 + 8 * i), type: p + 4 + 8 * n, offset: p + 8 + 8 * n };
}
/** Metadata as [key, value] pairs with each large array as one string (Jest's deep equality takes
 * seconds over 32000 elements). */
function digest(metadata) {
  return [...metadata].map(([k, v]) => [k, ArrayBuffer.isView(v) && v.length > 1000
    ? `${v.constructor.name} ${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}`
    : Array.isArray(v) && v.length > 1000 ? `strings ${v.join('\n')}` : v]);
}
function refused(bytes, pattern) {
  let error;
  try { parseGguf(bytes); } catch (e) { error = e; }
  expect(error).toBeInstanceOf(AttentionError);
  expect(error.message).toMatch(/^GGUF: /);
  expect(error.message).toMatch(pattern);
  return error;
}

describe('files from the repository writer', () => {
  test('every metadata value type reads back, in file order, with its stored type', () => {
    const file = parseGguf(files.all);
    expect(file.version).toBe(3);
    expect(file.alignment).toBe(32);
    expect([...file.metadata.keys()]).toEqual(Object.keys(EXPECTED));
    // The large arrays compared in one step (Jest's deep equality takes seconds over 32000 elements).
    const large = ['tokenizer.ggml.tokens', 'tokenizer.ggml.scores', 'tokenizer.ggml.token_type'];
    for (const [key, want] of Object.entries(EXPECTED)) if (!large.includes(key)) expect([key, file.metadata.get(key)]).toEqual([key, want]);
    expect(file.metadata.get(large[0]).join('\n') === TOKENS.join('\n')).toBe(true);
    expect(Buffer.from(file.metadata.get(large[1]).buffer).equals(Buffer.from(SCORES.buffer))).toBe(true);
    expect(Buffer.from(file.metadata.get(large[2]).buffer).equals(Buffer.from(EXPECTED[large[2]].buffer))).toBe(true);
    expect(file.metadata.get(large[2])).toBeInstanceOf(Int32Array);
    expect(file.metadataTypes.get('test.u64_big')).toBe('u64');
    expect(file.metadataTypes.get('test.array_string')).toBe('array<string>');
    expect(file.metadataTypes.get('test.array_nested')).toBe('array<array>');
    expect(file.metadataTypes.get('tokenizer.ggml.scores')).toBe('array<f32>');
    // 64-bit values: a number when safe, a bigint otherwise; arrays as BigUint64Array / BigInt64Array.
    expect(typeof file.metadata.get('test.u64_small')).toBe('number');
    expect(typeof file.metadata.get('test.u64_big')).toBe('bigint');
    // Large numeric arrays are typed arrays of their own (aligned copies, not views of the file).
    expect(file.metadata.get('tokenizer.ggml.scores')).toBeInstanceOf(Float32Array);
    expect(file.metadata.get('tokenizer.ggml.scores').buffer).not.toBe(files.all.buffer);
  });

  test('every tensor: dims as stored, shape reversed, type, absolute aligned offset, and a view of the bytes written', () => {
    const file = parseGguf(files.all);
    expect([...file.tensors.keys()]).toEqual(TENSORS.map((t) => t.name));
    let end = file.dataOffset;
    for (const t of TENSORS) {
      const got = file.tensors.get(t.name);
      const type = GGUF_TENSOR_TYPES.find((k) => k.id === t.type);
      expect(got).toMatchObject({ name: t.name, dims: t.dims, shape: [...t.dims].reverse(), type: type.name, typeId: t.type,
        elements: t.dims.reduce((a, b) => a * b, 1), byteLength: t.data.length });
      expect(got.offset % 32).toBe(0);
      expect(got.offset).toBeGreaterThanOrEqual(end);
      end = got.offset + got.byteLength;
      expect(got.data.buffer).toBe(files.all.buffer); // a view, nothing copied
      expect(got.data.byteOffset).toBe(files.all.byteOffset + got.offset);
      expect(Buffer.from(got.data).equals(Buffer.from(t.data))).toBe(true);
    }
    expect(file.dataOffset % 32).toBe(0);
    expect(file.dataOffset - file.headerLength).toBeLessThan(32);
    expect(parseGguf(files.all.buffer.slice(files.all.byteOffset, files.all.byteOffset + files.all.length)).tensors.size).toBe(TENSORS.length);
  });

  test('the type table: block sizes of ggml-common.h', () => {
    const sizes = Object.fromEntries(GGUF_TENSOR_TYPES.map((t) => [t.name, [t.id, t.blockElements, t.blockBytes]]));
    expect(sizes).toEqual({
      F32: [0, 1, 4], F16: [1, 1, 2], Q4_0: [2, 32, 18], Q4_1: [3, 32, 20], Q5_0: [6, 32, 22], Q5_1: [7, 32, 24],
      Q8_0: [8, 32, 34], Q2_K: [10, 256, 84], Q3_K: [11, 256, 110], Q4_K: [12, 256, 144], Q5_K: [13, 256, 176],
      Q6_K: [14, 256, 210], Q8_K: [15, 256, 292], BF16: [30, 1, 2],
    });
  });

  test('version 2 (the same layout) reads alike', () => {
    const v3 = parseGguf(files.all);
    const v2 = parseGguf(patched('all', (b) => b.writeUInt32LE(2, 4)));
    expect(v2.version).toBe(2);
    expect(digest(v2.metadata)).toEqual(digest(v3.metadata));
    expect([...v2.tensors.values()].map(({ data, ...info }) => info)).toEqual([...v3.tensors.values()].map(({ data, ...info }) => info));
  });

  test('strings that are not valid UTF-8 read with U+FFFD in place of each bad sequence, as TextDecoder gives them', () => {
    const file = parseGguf(patched('small', (b) => { b[afterString(b, 'llama') - 3] = 0xff; }));
    expect(file.metadata.get('general.architecture')).toBe('ll\ufffdma');
  });

  test('a file with no metadata but the alignment and no tensors', () => {
    const file = parseGguf(files.empty);
    expect(file.metadata).toEqual(new Map([['general.alignment', 32]]));
    expect(file.tensors.size).toBe(0);
    expect(file.dataOffset).toBe(files.empty.length);
  });
});

describe('@huggingface/gguf reads the same files alike', () => {
  /** Numbers and bigints compare by value; typed arrays as plain arrays. */
  const plain = (v) => (typeof v === 'bigint' || typeof v === 'number' ? String(v)
    : ArrayBuffer.isView(v) || Array.isArray(v) ? Array.from(v, plain) : v);

  test.each([3, 2])('version %i: metadata, tensor infos and the data offset', async (version) => {
    const bytes = patched('all', (b) => b.writeUInt32LE(version, 4));
    const file = path.join(dir, `hf_v${version}.gguf`);
    fs.writeFileSync(file, bytes);
    const theirs = await gguf(file, { allowLocalFile: true });
    const ours = parseGguf(bytes);
    const { version: v, tensor_count: tc, kv_count: kc, ...metadata } = theirs.metadata;
    expect([v, plain(tc), plain(kc)]).toEqual([version, String(ours.tensors.size), String(ours.metadata.size)]);
    expect(Object.keys(metadata)).toEqual([...ours.metadata.keys()]);
    for (const [key, value] of ours.metadata) expect([key, plain(metadata[key])]).toEqual([key, plain(value)]);
    expect(Number(theirs.tensorDataOffset)).toBe(ours.dataOffset);
    expect(theirs.tensorInfos.map((t) => ({ name: t.name, dims: t.shape.map(Number), typeId: t.dtype, offset: Number(t.offset) })))
      .toEqual([...ours.tensors.values()].map((t) => ({ name: t.name, dims: t.dims, typeId: t.typeId, offset: t.offset - ours.dataOffset })));
  });
});

describe('the header from a prefix of the file', () => {
  // Exactly the bytes asked for each time (every field a step) on the small file; 64 KB more at a
  // time, as a download would give them, on the one with 32000 tokens.
  test.each([['small', 0], ['all', 65536]])('%s: growing prefixes ask for more until the header is in, then give what parseGguf gives', (name, chunk) => {
    const bytes = files[name], whole = parseGguf(bytes);
    let length = 0, steps = 0, read;
    for (;;) {
      read = parseGgufHeader(bytes.subarray(0, length));
      if (read.complete) break;
      expect(read.bytesNeeded).toBeGreaterThan(length);
      expect(read.bytesNeeded).toBeLessThanOrEqual(whole.headerLength);
      length = Math.min(bytes.length, Math.max(read.bytesNeeded, length + chunk));
      steps++;
    }
    expect(length).toBeGreaterThanOrEqual(whole.headerLength);
    if (!chunk) expect(length).toBe(whole.headerLength);
    expect(steps).toBeGreaterThan(chunk ? 5 : 20);
    const { tensors, metadata, ...rest } = whole;
    const { tensors: infos, metadata: got, ...header } = read.header;
    expect(header).toEqual(rest);
    expect(digest(got)).toEqual(digest(metadata));
    expect([...infos.values()]).toEqual([...tensors.values()].map(({ data, ...info }) => info));
    expect(parseGgufHeader(bytes.subarray(0, whole.headerLength), bytes.length).complete).toBe(true);
  });

  test('with the file size: tensors past its end and claims larger than it are refused at once', () => {
    const bytes = files.small, header = parseGguf(bytes);
    expect(parseGgufHeader(bytes.subarray(0, header.headerLength), bytes.length).complete).toBe(true);
    expect(() => parseGgufHeader(bytes.subarray(0, header.headerLength), bytes.length - 1)).toThrow(/tensor "tc": data .* past the end of the file/);
    const huge = patched('small', (b) => b.writeBigUInt64LE(1n << 40n, 16));
    expect(parseGgufHeader(huge.subarray(0, 30))).toEqual({ complete: false, bytesNeeded: expect.any(Number) });
    expect(() => parseGgufHeader(huge.subarray(0, 30), huge.length)).toThrow(/metadata count at byte 16 is 1099511627776/);
    expect(() => parseGgufHeader(bytes.subarray(0, 10), 5)).toThrow(AttentionError);
  });
});

describe('malformed and hostile files: a named AttentionError', () => {
  test('not bytes, empty, bad magic', () => {
    for (const input of [5, 'GGUF', null, new Float32Array(4), [71, 71, 85, 70]]) refused(input, /expected the file's bytes/);
    refused(new Uint8Array(0), /truncated: magic at byte 0 needs 4 bytes/);
    refused(patched('small', (b) => b.write('GGML', 0)), /bad magic at byte 0: "GGML"/);
  });

  test('unknown versions, version 1 and big-endian files', () => {
    refused(patched('small', (b) => b.writeUInt32LE(7, 4)), /unknown version 7 at byte 4/);
    refused(patched('small', (b) => b.writeUInt32LE(1, 4)), /unsupported version 1 at byte 4/);
    refused(patched('small', (b) => b.writeUInt32BE(3, 4)), /big-endian GGUF \(version 3/);
    refused(patched('small', (b) => b.writeUInt32BE(2, 4)), /big-endian GGUF \(version 2/);
  });

  test('truncated header, truncated data', () => {
    const { headerLength } = parseGguf(files.small);
    refused(files.small.subarray(0, 6), /truncated: version at byte 4 needs 4 bytes, the file \(6 bytes\) has 2 left/);
    refused(files.small.subarray(0, headerLength - 3), /truncated: tensor "tc": offset at byte \d+ needs 8 bytes/);
    refused(files.small.subarray(0, files.small.length - 1), /tensor "tc": data \[\d+, \d+\) \(32 bytes of F16, dims \[16\]\) goes past the end of the file/);
  });

  test('counts that cannot fit in the file', () => {
    refused(patched('small', (b) => b.writeBigUInt64LE(1n << 60n, 8)), /tensor count at byte 8 is 1152921504606846976, which needs at least \d+ bytes; the file \(\d+ bytes\) has \d+ left/);
    refused(patched('small', (b) => b.writeBigUInt64LE(1n << 60n, 16)), /metadata count at byte 16 is 1152921504606846976/);
    refused(patched('small', (b) => b.writeBigUInt64LE(2n ** 64n - 1n, 16)), /metadata count at byte 16 is 18446744073709551615/);
    // Each fits alone; together they do not.
    const size = files.small.length;
    refused(patched('small', (b) => { b.writeBigUInt64LE(BigInt(Math.floor(size / 40)), 8); b.writeBigUInt64LE(BigInt(Math.floor(size / 20)), 16); }),
      /tensor count \d+ \(byte 8\) and metadata count \d+ \(byte 16\) need more bytes than the file's \d+ left/);
  });

  test('string and array lengths past the end', () => {
    refused(patched('small', (b) => b.writeBigUInt64LE(1n << 60n, afterString(b, 'general.architecture') + 4)),
      /metadata "general.architecture": string length at byte \d+ is 1152921504606846976, which needs at least 1152921504606846976 bytes/);
    refused(patched('small', (b) => b.writeBigUInt64LE(1n << 60n, afterString(b, 'x.list') + 8)),
      /metadata "x.list": array length at byte \d+ is 1152921504606846976, which needs at least 4611686018427387904 bytes/);
    refused(patched('small', (b) => b.writeBigUInt64LE(1n << 60n, 24)), /metadata key 0: string length at byte 24 is 1152921504606846976/);
    refused(patched('small', (b) => b.writeBigUInt64LE(1n << 62n, afterString(b, 'dup.k2') - 8 - 6)), /metadata key 3: string length at byte \d+ is 4611686018427387904/);
  });

  test('duplicate metadata keys and tensor names', () => {
    refused(patched('small', (b) => b.write('dup.k1', afterString(b, 'dup.k2') - 6)), /duplicate metadata key "dup.k1" at byte \d+/);
    refused(patched('small', (b) => b.write('ta', afterString(b, 'tb') - 2)), /duplicate tensor name "ta" at byte \d+/);
  });

  test('unknown value types, bools other than 0 and 1, arrays nested too deep', () => {
    refused(patched('small', (b) => b.writeUInt32LE(13, afterString(b, 'dup.k1'))), /metadata "dup.k1": unknown value type 13 at byte \d+/);
    refused(patched('small', (b) => b.writeUInt32LE(99, afterString(b, 'x.list') + 4)), /metadata "x.list": array element type: unknown value type 99 at byte \d+/);
    refused(patched('small', (b) => b.writeUInt8(2, afterString(b, 'dup.k2') + 4)), /metadata "dup.k2": bool at byte \d+ is 2, not 0 or 1/);
    refused(files.deep, /metadata "deep"(\[0\])+: arrays nested deeper than 16 at byte \d+/);
  });

  test('n_dims 0 or above 4, a dim of 0, dims whose product overflows', () => {
    refused(patched('small', (b) => b.writeUInt32LE(0, infoAt(b, 'tb').nDims)), /tensor "tb": n_dims 0 at byte \d+, expected 1..4/);
    refused(patched('small', (b) => b.writeUInt32LE(5, infoAt(b, 'tb').nDims)), /tensor "tb": n_dims 5 at byte \d+, expected 1..4/);
    refused(patched('small', (b) => b.writeBigUInt64LE(0n, infoAt(b, 'ta').dims[1])), /tensor "ta": dim 1 at byte \d+ is 0/);
    refused(patched('small', (b) => { const at = infoAt(b, 'ta').dims; b.writeBigUInt64LE(1n << 32n, at[0]); b.writeBigUInt64LE(1n << 32n, at[1]); }),
      /tensor "ta": dims \[4294967296, 4294967296\.\.\.\] at byte \d+ overflow/);
    refused(patched('small', (b) => b.writeBigUInt64LE(1n << 60n, infoAt(b, 'ta').dims[0])), /tensor "ta": dims \[1152921504606846976\.\.\.\] at byte \d+ overflow/);
  });

  test('unknown tensor types, rows not a whole number of blocks', () => {
    refused(patched('small', (b) => b.writeUInt32LE(99, infoAt(b, 'tb').type)), /tensor "tb": unknown tensor type 99 at byte \d+ \(known: F32 0, F16 1, .*BF16 30\)/);
    refused(patched('small', (b) => b.writeUInt32LE(16, infoAt(b, 'tb').type)), /tensor "tb": unknown tensor type 16/);
    refused(patched('rowQ8', (b) => b.writeBigUInt64LE(48n, infoAt(b, 'odd').dims[0])), /tensor "odd": row length 48 \(dims \[48\]\) is not a multiple of Q8_0's block of 32 values/);
    refused(patched('small', (b) => b.writeUInt32LE(TYPE.Q4_K.id, infoAt(b, 'ta').type)), /tensor "ta": row length 4 .* Q4_K's block of 256/);
  });

  test('tensor data misaligned, or past the end of the file', () => {
    refused(patched('small', (b) => { const at = infoAt(b, 'tb').offset; b.writeBigUInt64LE(b.readBigUInt64LE(at) + 4n, at); }),
      /tensor "tb": data offset \d+ at byte \d+ is not a multiple of the alignment 32/);
    refused(patched('small', (b) => b.writeBigUInt64LE(1n << 60n, infoAt(b, 'tb').offset)), /tensor "tb": data offset 1152921504606846976 at byte \d+ is past the end of the file/);
    refused(patched('small', (b) => b.writeBigUInt64LE(BigInt(files.small.length) & ~31n, infoAt(b, 'tb').offset)), /tensor "tb": data \[\d+, \d+\) .* goes past the end of the file/);
    refused(patched('small', (b) => b.writeBigUInt64LE(1000n, infoAt(b, 'ta').dims[1])), /tensor "ta": data \[\d+, \d+\) \(16000 bytes of F32, dims \[4, 1000\]\) goes past the end/);
  });

  test('any byte of the header changed, any length cut: a file or an AttentionError, nothing else', () => {
    const bytes = files.small, { headerLength } = parseGguf(bytes);
    const outcomes = { parsed: 0, refused: 0 };
    const attempt = (input, prefix) => {
      try {
        if (prefix) parseGgufHeader(input); else parseGguf(input);
        outcomes.parsed++;
      } catch (e) {
        if (!(e instanceof AttentionError)) throw new Error(`${e.name}: ${e.message}`);
        outcomes.refused++;
      }
    };
    for (let at = 0; at < headerLength; at++) for (const value of [0x00, 0xff, bytes[at] ^ 0x80, bytes[at] + 1 & 255]) {
      const b = bytes.slice();
      b[at] = value;
      attempt(b, false);
      attempt(b.subarray(0, headerLength), true);
    }
    for (let n = 0; n <= bytes.length; n++) { attempt(bytes.subarray(0, n), false); attempt(bytes.subarray(0, n), true); }
    expect(outcomes.refused).toBeGreaterThan(outcomes.parsed / 4);
  });

  test('general.alignment not a power of two, or not a u32', () => {
    refused(files.align48, /general.alignment 48 is not a power of two/);
    refused(files.align0, /general.alignment 0 is not a power of two/);
    refused(files.alignU64, /general.alignment is a u64, not a u32/);
  });
});
