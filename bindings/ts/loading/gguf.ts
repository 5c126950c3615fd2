// Reads GGUF, llama.cpp's model file (ggml's docs/gguf.md), versions 2 and 3, little-endian:
//   "GGUF", u32 version, u64 tensor count, u64 metadata count,
//   metadata: string key, u32 value type, value (strings: u64 length + UTF-8 bytes, no NUL;
//             arrays: u32 element type, u64 count, elements; an element may itself be an array),
//   tensor infos: string name, u32 n_dims, u64 dims (innermost first), u32 ggml type, u64 offset
//             relative to the data section,
//   padding to general.alignment (32 when absent), then the data section.
// Version 1 (u32 counts and lengths) and big-endian files (version 3 allows them) are refused by
// name. Every count, length and offset of a possibly hostile file is checked against the bytes
// that remain before anything is read or allocated through it: nothing is allocated past the
// file's size, and each problem is an AttentionError naming it and where (key or tensor, byte).
import { AttentionError } from '../errors.js';
import { show } from '../validate.js';
import { fileBytes } from './file_bytes.js';
import { MAX_TENSORS_PER_FILE } from './safetensors.js';

/** A ggml storage type this reader knows: its name, its id in the file, and how many values a
 * block of `blockBytes` bytes holds (1 and the element size for the unquantized types). Sizes are
 * those of ggml-common.h's block structs (its static_asserts). */
export interface GgufTensorType {
  readonly name: GgufTypeName;
  readonly id: number;
  readonly blockElements: number;
  readonly blockBytes: number;
}

export type GgufTypeName = 'F32' | 'F16' | 'Q4_0' | 'Q4_1' | 'Q5_0' | 'Q5_1' | 'Q8_0' | 'Q2_K' | 'Q3_K' | 'Q4_K' |
  'Q5_K' | 'Q6_K' | 'Q8_K' | 'BF16';

const type = (name: GgufTypeName, id: number, blockElements: number, blockBytes: number): GgufTensorType =>
  Object.freeze({ name, id, blockElements, blockBytes });

/** The tensor types a GGUF file may hold here, by ggml type id. Any other id is refused by name. */
export const GGUF_TENSOR_TYPES: readonly GgufTensorType[] = Object.freeze([
  type('F32', 0, 1, 4),
  type('F16', 1, 1, 2),
  type('Q4_0', 2, 32, 18),   // f16 d, 16 bytes of nibbles
  type('Q4_1', 3, 32, 20),   // f16 d, f16 m, 16 bytes of nibbles
  type('Q5_0', 6, 32, 22),   // f16 d, 4 bytes of fifth bits, 16 bytes of nibbles
  type('Q5_1', 7, 32, 24),   // f16 d, f16 m, 4 + 16 bytes
  type('Q8_0', 8, 32, 34),   // f16 d, 32 int8
  type('Q2_K', 10, 256, 84), // 16 bytes of scales, 64 of 2-bit quants, f16 d, f16 dmin
  type('Q3_K', 11, 256, 110), // 32 bytes of high bits, 64 of 2-bit quants, 12 of scales, f16 d
  type('Q4_K', 12, 256, 144), // f16 d, f16 dmin, 12 bytes of scales and mins, 128 of nibbles
  type('Q5_K', 13, 256, 176), // f16 d, f16 dmin, 12 bytes of scales, 32 of high bits, 128 of nibbles
  type('Q6_K', 14, 256, 210), // 128 bytes of low nibbles, 64 of high 2 bits, 16 int8 scales, f16 d
  type('Q8_K', 15, 256, 292), // f32 d, 256 int8, 16 int16 block sums
  type('BF16', 30, 1, 2),
]);
const TYPE_BY_ID = new Map(GGUF_TENSOR_TYPES.map((t) => [t.id, t]));

/** The metadata value types of the format, by their id in the file. */
export type GgufValueType = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'bool' | 'string' | 'array' | 'u64' | 'i64' | 'f64';
/** The value types by their id in the file (the index). */
export const GGUF_VALUE_TYPES: readonly GgufValueType[] = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'bool', 'string', 'array', 'u64', 'i64', 'f64'];
/** Bytes a value of each type takes (strings and arrays: their length fields). */
export const GGUF_VALUE_WIDTH: Record<GgufValueType, number> = { u8: 1, i8: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, bool: 1, string: 8, array: 12, u64: 8, i64: 8, f64: 8 };

/** A numeric array's values: one typed array per element type (u64 / i64: BigUint64Array / BigInt64Array). */
export type GgufNumericArray = Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array |
  Float64Array | BigUint64Array | BigInt64Array;
/** An array value: numeric elements as a typed array (a copy, so aligned and independent of the
 * file's bytes), booleans and strings as plain arrays, nested arrays as an array of arrays. */
export type GgufArray = GgufNumericArray | boolean[] | string[] | GgufArray[];
/**
 * A metadata value. Integers up to 32 bits and floats are numbers. A u64 / i64 scalar is a number
 * when it is a safe integer (|v| <= 2^53 - 1, every count or id a real file holds) and a bigint
 * otherwise, so `typeof v === 'number'` holds for all usable values; u64 / i64 arrays are
 * BigUint64Array / BigInt64Array. Strings are decoded as UTF-8 (an invalid sequence becomes U+FFFD,
 * as TextDecoder does).
 */
export type GgufValue = number | bigint | boolean | string | GgufArray;

/** A tensor as the header describes it. */
export interface GgufTensorInfo {
  name: string;
  /** The dimensions as stored: innermost (contiguous, a row's length) first, ggml's ne[0], ne[1], ... */
  dims: number[];
  /** The same dimensions outermost first, as safetensors and PyTorch write them: `dims` reversed. */
  shape: number[];
  /** The storage type's name, e.g. 'Q4_K'. */
  type: GgufTypeName;
  /** The storage type's ggml id, e.g. 12 for Q4_K. */
  typeId: number;
  /** The number of values (the product of the dimensions). */
  elements: number;
  /** Where the tensor's bytes start, from the start of the file (the data section's start plus the offset stored). */
  offset: number;
  /** The tensor's bytes: elements / the type's block elements * its block bytes. */
  byteLength: number;
}

/** A tensor of a whole file: its info and its bytes. */
export interface GgufTensor extends GgufTensorInfo {
  /** The tensor's stored bytes, a view of the file (nothing copied). */
  data: Uint8Array;
}

/** Everything before the data section. */
export interface GgufHeader {
  version: 2 | 3;
  /** general.alignment, or 32 when the file does not set it. */
  alignment: number;
  /** The key-values in file order (see GgufValue for how each value type reads). */
  metadata: Map<string, GgufValue>;
  /** Each key's value type as stored: 'u32', 'string', ..., and arrays as 'array<f32>', 'array<string>', 'array<array>'. */
  metadataTypes: Map<string, string>;
  tensors: Map<string, GgufTensorInfo>;
  /** Where the data section starts: the end of the tensor infos, rounded up to the alignment. */
  dataOffset: number;
  /** The bytes from the start of the file to the end of the tensor infos (dataOffset before padding). */
  headerLength: number;
}

/** A whole file: the header, and each tensor's bytes as a view. */
export interface GgufFile extends GgufHeader {
  tensors: Map<string, GgufTensor>;
}

/** What parseGgufHeader learns from a prefix of a file: the header, or how many bytes it needs first. */
export type GgufHeaderRead =
  | { complete: true; header: GgufHeader }
  /** `bytesNeeded`: the prefix length to try next (at least; a later length field may ask for more). */
  | { complete: false; bytesNeeded: number };

/** "GGUF" read as a little-endian u32. */
export const GGUF_MAGIC = 0x46554747;
/** The data alignment when general.alignment is absent (and the one a writer here uses). */
export const GGUF_ALIGNMENT = 32;
const MAX_DIMS = 4; // GGML_MAX_DIMS
// Deeper nesting than any writer makes; the limit keeps a hostile file from exhausting the stack.
const MAX_ARRAY_DEPTH = 16;
// The fewest bytes a key-value (key length, value type, a 1-byte value) and a tensor info (name
// length, n_dims, one dim, type, offset) take: a count that cannot fit is refused before the loop.
const MIN_KV_BYTES = 8 + 4 + 1;
const MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const UTF8 = new TextDecoder('utf-8');

function fail(message: string): never {
  throw new AttentionError(`GGUF: ${message}`);
}

/** Thrown inside the reader when a prefix ends before the header does (not an error). */
class NeedMore {
  constructor(readonly bytes: number) {}
}

class Reader {
  pos = 0;
  private readonly view: DataView;
  /**
   * bytes: what is at hand; size: the file's size (bytes.length for a whole file; for a prefix
   * the size when known, else Number.MAX_SAFE_INTEGER). Reading past `size` is the file's fault
   * (an error); past `bytes` but within `size` means the prefix is too short (NeedMore).
   */
  constructor(readonly bytes: Uint8Array, readonly size: number) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get sizeKnown(): boolean { return this.size !== Number.MAX_SAFE_INTEGER; }
  get remaining(): number { return this.size - this.pos; }

  need(k: number, what: string): void {
    if (this.pos + k <= this.bytes.length) return;
    if (k > this.remaining)
      fail(`truncated: ${what} at byte ${this.pos} needs ${k} bytes, ${this.sizeKnown ? `the file (${this.size} bytes) has ${Math.max(0, this.remaining)} left` : 'more than any file holds'}`);
    throw new NeedMore(this.pos + k);
  }

  u32(what: string): number {
    this.need(4, what);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  u64(what: string): bigint {
    this.need(8, what);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** A u64 count of items of at least `minBytes` each, refused when they cannot fit in what remains. */
  count(what: string, minBytes: number, at = this.pos): number {
    const n = this.u64(what);
    if (n * BigInt(minBytes) > BigInt(Math.max(0, this.size - this.pos)))
      fail(`${what} at byte ${at} is ${n}, which needs at least ${n * BigInt(minBytes)} bytes; ${this.sizeKnown ? `the file (${this.size} bytes) has ${this.size - this.pos} left` : 'more than any file holds'}`);
    return Number(n);
  }

  string(what: string): string {
    const at = this.pos;
    const n = this.count(`${what}: string length`, 1, at);
    this.need(n, `${what}: string of ${n} bytes`);
    const s = decodeUtf8(this.bytes, this.pos, n);
    this.pos += n;
    return s;
  }

  /** Element i of a string array: the common case (a length that fits, bytes at hand) read
   * without building a description; anything else through string(), which names the problem or
   * asks for more bytes. */
  stringElement(what: string, i: number): string {
    const p = this.pos;
    if (p + 8 <= this.bytes.length) {
      const n = this.view.getUint32(p, true);
      if (this.view.getUint32(p + 4, true) === 0 && p + 8 + n <= this.bytes.length && n <= this.size - p - 8) {
        this.pos = p + 8 + n;
        return decodeUtf8(this.bytes, p + 8, n);
      }
    }
    return this.string(`${what}[${i}]`);
  }

  /** One value of `type` (not an array). */
  scalar(type: GgufValueType, what: string): number | bigint | boolean | string {
    if (type === 'string') return this.string(what);
    const w = GGUF_VALUE_WIDTH[type];
    this.need(w, `${what}: ${type} value`);
    const v = this.view, p = this.pos;
    let x: number | bigint | boolean;
    switch (type) {
      case 'u8': x = v.getUint8(p); break;
      case 'i8': x = v.getInt8(p); break;
      case 'u16': x = v.getUint16(p, true); break;
      case 'i16': x = v.getInt16(p, true); break;
      case 'u32': x = v.getUint32(p, true); break;
      case 'i32': x = v.getInt32(p, true); break;
      case 'f32': x = v.getFloat32(p, true); break;
      case 'f64': x = v.getFloat64(p, true); break;
      case 'u64': case 'i64': {
        const b = type === 'u64' ? v.getBigUint64(p, true) : v.getBigInt64(p, true);
        x = b >= -MAX_SAFE && b <= MAX_SAFE ? Number(b) : b;
        break;
      }
      case 'bool': {
        const b = v.getUint8(p);
        if (b > 1) fail(`${what}: bool at byte ${p} is ${b}, not 0 or 1`);
        x = b === 1;
        break;
      }
      default: return fail(`${what}: value type ${type} is not a scalar`);
    }
    this.pos += w;
    return x;
  }

  valueType(what: string): GgufValueType {
    const at = this.pos;
    const id = this.u32(`${what}: value type`);
    const t = GGUF_VALUE_TYPES[id];
    if (t === undefined) fail(`${what}: unknown value type ${id} at byte ${at} (known: 0..12)`);
    return t;
  }

  /** A value of `type`; returns it and its type's description. */
  value(type: GgufValueType, what: string, depth = 0): [GgufValue, string] {
    if (type !== 'array') return [this.scalar(type, what), type];
    if (depth >= MAX_ARRAY_DEPTH) fail(`${what}: arrays nested deeper than ${MAX_ARRAY_DEPTH} at byte ${this.pos}`);
    const of = this.valueType(`${what}: array element type`);
    const n = this.count(`${what}: array length`, GGUF_VALUE_WIDTH[of]);
    if (of === 'string') {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(this.stringElement(what, i));
      return [out, 'array<string>'];
    }
    if (of === 'array') {
      const out: GgufArray[] = [];
      // Each element is an array without a value-type tag of its own: element type, count, elements.
      for (let i = 0; i < n; i++) out.push(this.value('array', `${what}[${i}]`, depth + 1)[0] as GgufArray);
      return [out, 'array<array>'];
    }
    if (of === 'bool') {
      const out: boolean[] = [];
      for (let i = 0; i < n; i++) out.push(this.scalar('bool', `${what}[${i}]`) as boolean);
      return [out, 'array<bool>'];
    }
    const w = GGUF_VALUE_WIDTH[of];
    this.need(n * w, `${what}: ${n} ${of} values`);
    const out = numericArray(of, this.bytes, this.pos, n);
    this.pos += n * w;
    return [out, `array<${of}>`];
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function numericArray(type: GgufValueType, bytes: Uint8Array, at: number, n: number): GgufNumericArray {
  const make = (buffer: ArrayBuffer): GgufNumericArray => {
    switch (type) {
      case 'u8': return new Uint8Array(buffer);
      case 'i8': return new Int8Array(buffer);
      case 'u16': return new Uint16Array(buffer);
      case 'i16': return new Int16Array(buffer);
      case 'u32': return new Uint32Array(buffer);
      case 'i32': return new Int32Array(buffer);
      case 'f32': return new Float32Array(buffer);
      case 'f64': return new Float64Array(buffer);
      case 'u64': return new BigUint64Array(buffer);
      case 'i64': return new BigInt64Array(buffer);
      default: return fail(`array of ${type} is not numeric`);
    }
  };
  const w = GGUF_VALUE_WIDTH[type];
  // One copy of the bytes (aligned, so a typed array can view it); on a big-endian platform each
  // element is swapped in place through a DataView.
  // (Not bytes.slice: on a Node Buffer, which a file read gives, slice is a view of the whole file.)
  const copy = new Uint8Array(n * w);
  copy.set(bytes.subarray(at, at + n * w));
  if (!LITTLE_ENDIAN && w > 1) {
    const view = new DataView(copy.buffer);
    for (let i = 0; i < n * w; i += w) for (let j = 0; j < w / 2; j++) {
      const a = view.getUint8(i + j);
      view.setUint8(i + j, view.getUint8(i + w - 1 - j));
      view.setUint8(i + w - 1 - j, a);
    }
  }
  return make(copy.buffer);
}

/** UTF-8 bytes to a string (an invalid sequence becomes U+FFFD, as TextDecoder makes it); short
 * ASCII strings (most keys and token texts) without a TextDecoder call each. */
function decodeUtf8(bytes: Uint8Array, at: number, n: number): string {
  if (n <= 32) {
    let s = '';
    for (let i = 0; i < n; i++) {
      const c = bytes[at + i];
      if (c >= 0x80) return UTF8.decode(bytes.subarray(at, at + n));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return UTF8.decode(bytes.subarray(at, at + n));
}

function readHeader(r: Reader): GgufHeader {
  const magic = r.u32('magic');
  if (magic !== GGUF_MAGIC) {
    const text = Array.from(r.bytes.subarray(0, 4), (c) => (c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '.')).join('');
    fail(`bad magic at byte 0: "${text}" (0x${magic.toString(16).padStart(8, '0')}), expected "GGUF": not a GGUF file`);
  }
  const version = r.u32('version');
  if (version === 0x02000000 || version === 0x03000000)
    fail(`big-endian GGUF (version ${version >>> 24} at byte 4 reads byte-swapped): only little-endian files are supported`);
  if (version === 1) fail('unsupported version 1 at byte 4 (u32 counts, before August 2023): convert the file again; versions 2 and 3 are read');
  if (version !== 2 && version !== 3) fail(`unknown version ${version} at byte 4: versions 2 and 3 are read`);
  const tensorCountAt = r.pos;
  const tensorCount = r.count('tensor count', MIN_TENSOR_INFO_BYTES);
  if (tensorCount > MAX_TENSORS_PER_FILE) fail(`tensor count ${tensorCount} at byte ${tensorCountAt} is more than a checkpoint file may list (${MAX_TENSORS_PER_FILE})`);
  const kvCountAt = r.pos;
  const kvCount = r.count('metadata count', MIN_KV_BYTES);
  if (BigInt(tensorCount) * BigInt(MIN_TENSOR_INFO_BYTES) + BigInt(kvCount) * BigInt(MIN_KV_BYTES) > BigInt(Math.max(0, r.remaining)))
    fail(`tensor count ${tensorCount} (byte ${tensorCountAt}) and metadata count ${kvCount} (byte ${kvCountAt}) need more bytes than the file's ${r.remaining} left`);

  const metadata = new Map<string, GgufValue>();
  const metadataTypes = new Map<string, string>();
  for (let i = 0; i < kvCount; i++) {
    const at = r.pos;
    const key = r.string(`metadata key ${i}`);
    if (metadata.has(key)) fail(`duplicate metadata key ${JSON.stringify(key)} at byte ${at}`);
    const what = `metadata ${JSON.stringify(key)}`;
    const [value, description] = r.value(r.valueType(what), what);
    metadata.set(key, value);
    metadataTypes.set(key, description);
  }
  let alignment = GGUF_ALIGNMENT;
  if (metadata.has('general.alignment')) {
    const a = metadata.get('general.alignment');
    if (metadataTypes.get('general.alignment') !== 'u32') fail(`general.alignment is a ${metadataTypes.get('general.alignment')}, not a u32`);
    if (typeof a !== 'number' || a === 0 || (a & (a - 1)) !== 0) fail(`general.alignment ${show(a)} is not a power of two`);
    alignment = a;
  }

  const infos: { info: Omit<GgufTensorInfo, 'offset'>; relative: number; at: number }[] = [];
  const names = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const at = r.pos;
    const name = r.string(`tensor ${i}: name`);
    if (names.has(name)) fail(`duplicate tensor name ${JSON.stringify(name)} at byte ${at}`);
    names.add(name);
    const what = `tensor ${JSON.stringify(name)}`;
    const nDimsAt = r.pos;
    const nDims = r.u32(`${what}: n_dims`);
    if (nDims === 0 || nDims > MAX_DIMS) fail(`${what}: n_dims ${nDims} at byte ${nDimsAt}, expected 1..${MAX_DIMS}`);
    const dims: number[] = [];
    let elements = 1;
    for (let d = 0; d < nDims; d++) {
      const dimAt = r.pos;
      const dim = r.u64(`${what}: dim ${d}`);
      if (dim === 0n) fail(`${what}: dim ${d} at byte ${dimAt} is 0`);
      if (dim > MAX_SAFE || BigInt(elements) * dim > MAX_SAFE)
        fail(`${what}: dims [${[...dims, dim].join(', ')}...] at byte ${dimAt} overflow: more than 2^53 - 1 values`);
      dims.push(Number(dim));
      elements *= Number(dim);
    }
    const typeAt = r.pos;
    const typeId = r.u32(`${what}: type`);
    const t = TYPE_BY_ID.get(typeId);
    if (!t) fail(`${what}: unknown tensor type ${typeId} at byte ${typeAt} (known: ${GGUF_TENSOR_TYPES.map((k) => `${k.name} ${k.id}`).join(', ')})`);
    if (dims[0] % t.blockElements !== 0)
      fail(`${what}: row length ${dims[0]} (dims [${dims.join(', ')}]) is not a multiple of ${t.name}'s block of ${t.blockElements} values`);
    const offsetAt = r.pos;
    const relative = r.u64(`${what}: offset`);
    if (relative % BigInt(alignment) !== 0n) fail(`${what}: data offset ${relative} at byte ${offsetAt} is not a multiple of the alignment ${alignment}`);
    if (relative > MAX_SAFE || (r.sizeKnown && relative > BigInt(r.size)))
      fail(`${what}: data offset ${relative} at byte ${offsetAt} is past the end of the file${r.sizeKnown ? ` (${r.size} bytes)` : ''}`);
    const byteLength = (elements / t.blockElements) * t.blockBytes;
    infos.push({ info: { name, dims, shape: [...dims].reverse(), type: t.name, typeId, elements, byteLength }, relative: Number(relative), at });
  }
  const headerLength = r.pos;
  const dataOffset = Math.ceil(headerLength / alignment) * alignment;
  const tensors = new Map<string, GgufTensorInfo>();
  for (const { info, relative } of infos) {
    const offset = dataOffset + relative;
    if (r.sizeKnown && offset + info.byteLength > r.size)
      fail(`tensor ${JSON.stringify(info.name)}: data [${offset}, ${offset + info.byteLength}) (${info.byteLength} bytes of ${info.type}, dims [${info.dims.join(', ')}]) goes past the end of the file (${r.size} bytes): truncated?`);
    tensors.set(info.name, { ...info, offset });
  }
  return { version, alignment, metadata, metadataTypes, tensors, dataOffset, headerLength };
}

/**
 * Reads a GGUF header from the first bytes of a file, e.g. while the rest downloads: the tensor
 * list, types and sizes are known before the data arrives. Returns `{ complete: true, header }`
 * once `prefix` holds the whole header, else `{ complete: false, bytesNeeded }` (call again with
 * at least that many bytes). With `fileSize`, tensors past the end of the file and counts or
 * lengths larger than the file are refused at once; without it only the prefix is checked.
 * Throws AttentionError for a malformed or hostile header (see parseGguf).
 */
export function parseGgufHeader(prefix: Uint8Array | ArrayBuffer, fileSize?: number): GgufHeaderRead {
  const bytes = fileBytes(prefix, fail);
  if (fileSize !== undefined && (!Number.isSafeInteger(fileSize) || fileSize < bytes.length))
    fail(`fileSize ${show(fileSize)} must be an integer at least the prefix's ${bytes.length} bytes`);
  try {
    return { complete: true, header: readHeader(new Reader(bytes, fileSize ?? Number.MAX_SAFE_INTEGER)) };
  } catch (e) {
    if (e instanceof NeedMore) return { complete: false, bytesNeeded: e.bytes };
    throw e;
  }
}

/**
 * Reads a whole GGUF file (version 2 or 3, little-endian): its metadata, and each tensor's info
 * and bytes (a view of `bytes`, nothing copied). Throws AttentionError naming the problem and where
 * (key or tensor, byte offset) for: bad magic, an unknown version or a big-endian file, a header
 * or tensor data cut short, a count, string or array length larger than the bytes left, an unknown
 * value or tensor type, duplicate keys or tensor names, n_dims outside 1..4, a dim of 0 or a
 * product past 2^53, a row length not a multiple of its type's block, a data offset not a multiple
 * of the alignment, and general.alignment not a power of two.
 */
export function parseGguf(bytes: Uint8Array | ArrayBuffer): GgufFile {
  const file = fileBytes(bytes, fail);
  const header = readHeader(new Reader(file, file.length));
  const tensors = new Map<string, GgufTensor>();
  for (const [name, t] of header.tensors) tensors.set(name, { ...t, data: file.subarray(t.offset, t.offset + t.byteLength) });
  return { ...header, tensors };
}
