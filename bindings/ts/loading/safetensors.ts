// Reads the safetensors format (Hugging Face): an 8-byte little-endian header length N, N bytes
// of JSON {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then the raw
// little-endian tensor bytes, offsets relative to the end of the header. Every field of a
// possibly hostile file is checked before any byte is read through it.
import { AttentionError } from '../errors.js';
import { show } from '../validate.js';
import { fileBytes } from './file_bytes.js';

/** The dtypes of the safetensors format. Only the float ones can be read as weights; the others
 * (e.g. the I64 position_ids buffer some BERT checkpoints carry) are parsed, checked and skipped. */
export type SafetensorsDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'F8_E5M2' | 'F8_E4M3' | 'I64' | 'I32' | 'I16' | 'I8' |
  'U64' | 'U32' | 'U16' | 'U8' | 'BOOL';
const DTYPE_BYTES: Record<SafetensorsDtype, number> = {
  F64: 8, F32: 4, F16: 2, BF16: 2, F8_E5M2: 1, F8_E4M3: 1, I64: 8, I32: 4, I16: 2, I8: 1, U64: 8, U32: 4, U16: 2, U8: 1, BOOL: 1,
};
const FLOAT_DTYPES = new Set<string>(['F32', 'F16', 'BF16']);

export interface SafetensorsEntry {
  dtype: SafetensorsDtype;
  shape: number[];
  /** The tensor's stored bytes (little-endian, `dtype`), a view of the file: nothing copied. */
  bytes: Uint8Array;
  /** Decodes the tensor to float32 (a new array each call). Throws for dtypes other than F32, F16, BF16. */
  toFloat32(): Float32Array;
  /** Decodes the tensor to float32 into `out` (at least as long as the tensor), e.g. straight into
   * the WebAssembly heap: no intermediate array. Same dtypes as toFloat32. */
  decodeInto(out: Float32Array): void;
}

export interface SafetensorsFile {
  tensors: Map<string, SafetensorsEntry>;
  metadata: Record<string, string>;
}

// The largest header the format's reference implementation accepts (100 MB).
const MAX_HEADER = 100_000_000;
/** The most tensors one checkpoint file (a safetensors file or shard, a GGUF file) may list. Real
 * files list at most a few thousand (a shard of the largest mixture-of-experts checkpoints, about
 * a thousand; GGUF files under two thousand); a 100 MB header can list 1.6 million, which JSON.parse
 * alone takes over a minute to turn into objects. Checked by a pass over the header's bytes first. */
export const MAX_TENSORS_PER_FILE = 65536;

/** The JSON objects a header opens ({ outside strings): at least one per tensor entry. A pass over
 * its bytes, so that a header listing millions of entries is refused before JSON.parse. */
function countObjects(header: Uint8Array): number {
  let objects = 0, inString = false;
  for (let i = 0; i < header.length; i++) {
    const c = header[i];
    if (inString) {
      if (c === 0x5c) i++;  // \ escapes the next byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) objects++;
  }
  return objects;
}

function fail(message: string): never {
  throw new AttentionError(`safetensors: ${message}`);
}

export function parseSafetensors(input: ArrayBuffer | Uint8Array): SafetensorsFile {
  const bytes = fileBytes(input, fail);
  if (bytes.length < 8) fail(`file is ${bytes.length} bytes, too short for the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const high = view.getUint32(4, true);
  const headerLength = view.getUint32(0, true);
  if (high !== 0 || headerLength > MAX_HEADER) fail(`header length ${high ? `${high}*2^32+${headerLength}` : headerLength} is implausibly large`);
  if (8 + headerLength > bytes.length) fail(`header length ${headerLength} goes beyond the end of the file (${bytes.length} bytes): truncated?`);
  // (the header itself is one object; __metadata__ another)
  const entries = countObjects(bytes.subarray(8, 8 + headerLength)) - 1;
  if (entries > MAX_TENSORS_PER_FILE + 1) fail(`header has ${entries} entries, more than a checkpoint file may list (${MAX_TENSORS_PER_FILE} tensors)`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLength)));
  } catch (e) {
    fail(`header is not valid UTF-8 JSON (${(e as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) fail('header is not a JSON object');
  const dataStart = 8 + headerLength;
  const dataLength = bytes.length - dataStart;
  const tensors = new Map<string, SafetensorsEntry>();
  const spans: { name: string; begin: number; end: number }[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, info] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof info !== 'object' || info === null || Object.values(info).some((v) => typeof v !== 'string'))
        fail('__metadata__ must be an object of strings');
      metadata = info as Record<string, string>;
      continue;
    }
    if (typeof info !== 'object' || info === null) fail(`tensor "${name}": entry is not an object`);
    const { dtype, shape, data_offsets: offsets } = info as Record<string, unknown>;
    if (typeof dtype !== 'string' || !Object.prototype.hasOwnProperty.call(DTYPE_BYTES, dtype))
      fail(`tensor "${name}" has dtype ${JSON.stringify(dtype)}, which is not a safetensors dtype`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
      fail(`tensor "${name}" has an invalid shape ${JSON.stringify(shape)}`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0))
      fail(`tensor "${name}" has invalid data_offsets ${JSON.stringify(offsets)}`);
    const [begin, end] = offsets as [number, number];
    if (begin > end || end > dataLength)
      fail(`tensor "${name}" data_offsets [${begin}, ${end}] are out of range (data section is ${dataLength} bytes)`);
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    const width = DTYPE_BYTES[dtype as SafetensorsDtype];
    if (count * width !== end - begin)
      fail(`tensor "${name}" of shape [${(shape as number[]).join(', ')}] and dtype ${dtype} needs ${count * width} bytes but data_offsets span ${end - begin}`);
    const at = dataStart + begin;
    spans.push({ name, begin, end });
    const decodeInto = (out: Float32Array) => {
      if (!FLOAT_DTYPES.has(dtype)) fail(`tensor "${name}" has dtype ${JSON.stringify(dtype)}; supported: F32, F16, BF16`);
      if (out.length < count) fail(`tensor "${name}" has ${count} values; the output holds ${out.length}`);
      decode(bytes, at, count, dtype as SafetensorsDtype, out);
    };
    tensors.set(name, {
      dtype: dtype as SafetensorsDtype,
      shape: shape as number[],
      bytes: bytes.subarray(at, at + (end - begin)),
      toFloat32: () => {
        const out = new Float32Array(FLOAT_DTYPES.has(dtype) ? count : 0);
        decodeInto(out);
        return out;
      },
      decodeInto,
    });
  }
  checkNoOverlap(spans);
  return { tensors, metadata };
}

/** Two tensors whose data_offsets overlap would share bytes (a write through one changes the
 * other; a crafted file hides one tensor's values inside another's): refused, naming both, as the
 * reference implementation refuses offsets that are not one after the other. */
function checkNoOverlap(spans: { name: string; begin: number; end: number }[]): void {
  spans = spans.filter((s) => s.end > s.begin).sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < spans.length; i++) {
    const a = spans[i - 1], b = spans[i];
    if (b.begin < a.end)
      fail(`tensors "${a.name}" (data_offsets [${a.begin}, ${a.end}]) and "${b.name}" (data_offsets [${b.begin}, ${b.end}]) overlap`);
  }
}

// Typed-array views read the platform's byte order; safetensors is little-endian.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function decode(bytes: Uint8Array, at: number, count: number, dtype: SafetensorsDtype, out: Float32Array): void {
  const offset = bytes.byteOffset + at;
  const width = DTYPE_BYTES[dtype];
  // An aligned tensor is read through a typed-array view (several times faster than a DataView
  // per element, which matters for a model's few million weights); any other through a DataView.
  if (LITTLE_ENDIAN && offset % width === 0) {
    if (dtype === 'F32') out.set(new Float32Array(bytes.buffer, offset, count));
    else if (dtype === 'F16') {
      const table = halfTable(), half = new Uint16Array(bytes.buffer, offset, count);
      for (let i = 0; i < count; i++) out[i] = table[half[i]];
    } else {
      const bf = new Uint16Array(bytes.buffer, offset, count), bits = new Uint32Array(out.buffer, out.byteOffset, count);
      for (let i = 0; i < count; i++) bits[i] = bf[i] << 16;
    }
    return;
  }
  const view = new DataView(bytes.buffer, offset, count * width);
  if (dtype === 'F32') for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
  else if (dtype === 'F16') {
    const table = halfTable();
    for (let i = 0; i < count; i++) out[i] = table[view.getUint16(i * 2, true)];
  }
  else for (let i = 0; i < count; i++) out[i] = bfloat16ToFloat(view.getUint16(i * 2, true));
}

let HALF_TABLE: Float32Array | null = null;
/** All 65536 half-precision values, decoded once: a lookup per element beats bit twiddling. */
function halfTable(): Float32Array {
  if (!HALF_TABLE) {
    HALF_TABLE = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) HALF_TABLE[h] = halfToFloat(h);
  }
  return HALF_TABLE;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE 754 binary16 -> number, including subnormals, infinities and NaN. */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

function bfloat16ToFloat(b: number): number {
  u32[0] = b << 16;
  return f32[0];
}

/** A checkpoint's weights: one safetensors file, or the shards a model.safetensors.index.json lists. */
export type SafetensorsWeights = ArrayBuffer | Uint8Array | readonly (ArrayBuffer | Uint8Array)[];

/** One file, or the union of a sharded checkpoint's files (each tensor must be in one shard only).
 * The tensors stay views of the given bytes: nothing is copied until a tensor is read. */
export function parseWeights(weights: SafetensorsWeights): SafetensorsFile {
  if (!Array.isArray(weights)) return parseSafetensors(weights as ArrayBuffer | Uint8Array);
  const shards = weights as readonly (ArrayBuffer | Uint8Array)[];
  if (shards.length === 0) fail('no shards given');
  const tensors = new Map<string, SafetensorsEntry>();
  const metadata: Record<string, string> = {};
  shards.forEach((bytes, i) => {
    let file: SafetensorsFile;
    try {
      file = parseSafetensors(bytes);
    } catch (e) {
      throw new AttentionError(`shard ${i + 1} of ${shards.length}: ${(e as Error).message}`);
    }
    for (const [name, entry] of file.tensors) {
      if (tensors.has(name)) fail(`tensor "${name}" is in more than one shard (again in shard ${i + 1} of ${shards.length})`);
      tensors.set(name, entry);
    }
    Object.assign(metadata, file.metadata);
  });
  return { tensors, metadata };
}
