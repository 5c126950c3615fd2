// The safetensors reader on good files and on malformed or hostile ones: each gets a clear
// AttentionError naming the problem, never a crash or an out-of-bounds read.
const { api } = require('./helpers.cjs');

/** Builds a safetensors file from { name: { dtype, shape, bytes } } (optionally a raw header). */
function build(tensors, { header: rawHeader, pad = true } = {}) {
  let offset = 0;
  const header = {};
  const chunks = [];
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.length] };
    chunks.push(t.bytes);
    offset += t.bytes.length;
  }
  let json = rawHeader ?? JSON.stringify({ __metadata__: { format: 'pt' }, ...header });
  if (pad) while ((8 + Buffer.byteLength(json)) % 8) json += ' ';
  const headerBytes = Buffer.from(json);
  const out = Buffer.alloc(8 + headerBytes.length + offset);
  out.writeUInt32LE(headerBytes.length, 0);
  headerBytes.copy(out, 8);
  let at = 8 + headerBytes.length;
  for (const c of chunks) { Buffer.from(c).copy(out, at); at += c.length; }
  return new Uint8Array(out);
}
const f32 = (values) => new Uint8Array(Float32Array.from(values).buffer);

test('F32, F16 and BF16 tensors decode exactly', () => {
  const half = new Uint16Array([0x3c00, 0xc000, 0x3555, 0x0001, 0x7bff, 0x0000, 0x8000]); // 1, -2, 0.333, 2^-24, 65504, 0, -0
  const bf16 = new Uint16Array([0x3f80, 0xc040, 0x4049]); // 1, -3, 3.140625
  const file = api.parseSafetensors(build({
    a: { dtype: 'F32', shape: [2, 2], bytes: f32([1, 2.5, -3, 1e-8]) },
    h: { dtype: 'F16', shape: [7], bytes: new Uint8Array(half.buffer) },
    b: { dtype: 'BF16', shape: [3], bytes: new Uint8Array(bf16.buffer) },
    empty: { dtype: 'F32', shape: [0, 3], bytes: new Uint8Array(0) },
  }));
  expect(file.metadata).toEqual({ format: 'pt' });
  expect(Array.from(file.tensors.get('a').toFloat32())).toEqual(Array.from(Float32Array.from([1, 2.5, -3, 1e-8])));
  expect(file.tensors.get('a').shape).toEqual([2, 2]);
  const h = file.tensors.get('h').toFloat32();
  expect(Array.from(h)).toEqual([1, -2, Math.fround(0.333251953125), Math.fround(2 ** -24), 65504, 0, -0]);
  expect(Array.from(file.tensors.get('b').toFloat32())).toEqual([1, -3, 3.140625]);
  expect(file.tensors.get('empty').toFloat32().length).toBe(0);
});

test('the same values from any byte offset (aligned: typed-array views; unaligned: DataView) and through decodeInto', () => {
  const half = new Uint16Array([0x3c00, 0xc000, 0x3555, 0x0001, 0x7bff, 0x0000, 0x8000, 0x7c00, 0xfc00]);
  const bf16 = new Uint16Array([0x3f80, 0xc040, 0x4049, 0x0001]);
  const bytes = build({
    a: { dtype: 'F32', shape: [3], bytes: f32([1, -2.5, 1e-8]) },
    h: { dtype: 'F16', shape: [9], bytes: new Uint8Array(half.buffer) },
    b: { dtype: 'BF16', shape: [4], bytes: new Uint8Array(bf16.buffer) },
  });
  const want = {
    a: Array.from(Float32Array.from([1, -2.5, 1e-8])),
    h: [1, -2, Math.fround(0.333251953125), Math.fround(2 ** -24), 65504, 0, -0, Infinity, -Infinity],
    b: Array.from(new Float32Array(Uint32Array.from(bf16, (x) => x << 16).buffer)),
  };
  for (const shift of [0, 1, 2, 3]) {
    const at = new Uint8Array(bytes.length + shift).subarray(shift);
    at.set(bytes);
    const file = api.parseSafetensors(at);
    for (const [name, values] of Object.entries(want)) {
      expect([shift, name, Array.from(file.tensors.get(name).toFloat32())]).toEqual([shift, name, values]);
      const out = new Float32Array(values.length + 2).fill(7);
      file.tensors.get(name).decodeInto(out);
      expect([shift, name, Array.from(out)]).toEqual([shift, name, [...values, 7, 7]]);
    }
  }
  expect(() => api.parseSafetensors(bytes).tensors.get('a').decodeInto(new Float32Array(2))).toThrow(/tensor "a" has 3 values; the output holds 2/);
});

describe('malformed and hostile files', () => {
  const good = () => build({ w: { dtype: 'F32', shape: [4], bytes: f32([1, 2, 3, 4]) } });
  const bad = (bytes, message) => {
    let error;
    try { api.parseSafetensors(bytes); } catch (e) { error = e; }
    expect(error).toBeInstanceOf(api.AttentionError);
    expect(error.message).toMatch(message);
  };
  test('too short for the length prefix', () => bad(new Uint8Array(5), /file is 5 bytes, too short/));
  test('truncated data section', () => bad(good().subarray(0, good().length - 3), /data_offsets \[0, 16\] are out of range \(data section is 13 bytes\)/));
  test('header length beyond the file', () => {
    const b = good(); new DataView(b.buffer).setUint32(0, 10_000, true);
    bad(b, /header length 10000 goes beyond the end of the file/);
  });
  test('absurd 64-bit header length', () => {
    const b = good(); new DataView(b.buffer).setUint32(4, 7, true);
    bad(b, /header length .* is implausibly large/);
  });
  test('header that is not JSON', () => bad(build({}, { header: '{"w": {"dtype": "F32",' }), /header is not valid UTF-8 JSON/));
  test('header that is JSON but not an object', () => bad(build({}, { header: '[1, 2, 3]' }), /header is not a JSON object/));
  test('offsets out of range', () => bad(build({}, { header: JSON.stringify({ w: { dtype: 'F32', shape: [4], data_offsets: [0, 1 << 30] } }) }), /out of range/));
  test('offsets reversed', () => bad(build({ x: { dtype: 'F32', shape: [1], bytes: f32([1]) } }, { header: JSON.stringify({ w: { dtype: 'F32', shape: [0], data_offsets: [4, 0] } }) }), /data_offsets \[4, 0\] are out of range/));
  test('negative or fractional offsets', () => bad(build({}, { header: JSON.stringify({ w: { dtype: 'F32', shape: [1], data_offsets: [-4, 0] } }) }), /invalid data_offsets/));
  test('a dtype named like an Object property', () => bad(build({ w: { dtype: 'toString', shape: [1], bytes: new Uint8Array(4) } }), /has dtype "toString", which is not a safetensors dtype/));
  test('metadata that is not strings', () => bad(build({}, { header: JSON.stringify({ __metadata__: { a: 1 } }) }), /__metadata__ must be an object of strings/));
  test('a non-float dtype parses (checkpoints carry I64 buffers) but cannot be read as weights', () => {
    const file = api.parseSafetensors(build({ w: { dtype: 'I64', shape: [2], bytes: new Uint8Array(16) } }));
    expect(file.tensors.get('w').shape).toEqual([2]);
    expect(() => file.tensors.get('w').toFloat32()).toThrow(/tensor "w" has dtype "I64"; supported: F32, F16, BF16/);
  });
  test('a non-float dtype with the wrong byte span', () => bad(build({ w: { dtype: 'I64', shape: [3], bytes: new Uint8Array(16) } }), /needs 24 bytes but data_offsets span 16/));
  test('shape that disagrees with the byte span', () => bad(build({ w: { dtype: 'F32', shape: [5], bytes: f32([1, 2, 3, 4]) } }), /shape \[5\] and dtype F32 needs 20 bytes but data_offsets span 16/));
  test('invalid shape', () => bad(build({}, { header: JSON.stringify({ w: { dtype: 'F32', shape: [-1], data_offsets: [0, 0] } }) }), /invalid shape \[-1\]/));
  test('a huge shape product cannot wrap around', () => bad(build({ w: { dtype: 'F32', shape: [2 ** 26, 2 ** 26], bytes: f32([1]) } }), /needs \d+ bytes but data_offsets span 4/));
  test('invalid UTF-8 in the header', () => {
    const b = good(); b[9] = 0xff;
    bad(b, /not valid UTF-8 JSON/);
  });
  test('anything but bytes is refused before use (a number is not a length to allocate)', () => {
    for (const v of [1e9, null, 'file', [1, 2], new Float32Array(good().buffer), new DataView(good().buffer)])
      bad(v, /^safetensors: expected the file's bytes \(a Uint8Array or an ArrayBuffer\), got /);
    expect(api.parseSafetensors(good().buffer).tensors.get('w').toFloat32()).toEqual(Float32Array.from([1, 2, 3, 4]));
  });
});
