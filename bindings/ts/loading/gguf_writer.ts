// Writes GGUF version 3 (the layout gguf.ts reads; ggml's docs/gguf.md), little-endian:
//   "GGUF", u32 version, u64 tensor count, u64 metadata count, the key-values, the tensor infos
//   (name, u32 n_dims, u64 dims innermost first, u32 ggml type, u64 offset in the data section),
//   padding to general.alignment, then each tensor's bytes at its offset, each padded to the
//   alignment.
// The header is made first (every tensor's type and size is known before its bytes are), then the
// tensors are asked for one at a time: a file never needs to be in memory whole.
import { AttentionError } from '../errors.js';
import { GGUF_ALIGNMENT, GGUF_MAGIC, GGUF_TENSOR_TYPES, GGUF_VALUE_TYPES, GGUF_VALUE_WIDTH } from './gguf.js';
import type { GgufTypeName, GgufValue, GgufValueType } from './gguf.js';

/** A key-value to write: its type as parseGguf's metadataTypes names it ('u32', 'string', 'f32',
 * 'array<string>', 'array<i32>', ...; nested arrays are not written) and its value as parseGguf
 * reads it (numbers, bigints for u64 / i64 past 2^53, strings, booleans, arrays or typed arrays). */
export interface GgufEntry {
  type: string;
  value: GgufValue;
}

/** A tensor to write: its name, its dims (innermost first, ggml's ne) and its type. */
export interface GgufTensorPlan {
  name: string;
  dims: number[];
  type: GgufTypeName;
}

/** The bytes before the data section, and where each tensor's bytes go in it. */
export interface GgufLayout {
  header: Uint8Array;
  /** Each tensor's offset from the start of the data section (a multiple of the alignment). */
  offsets: number[];
  /** Each tensor's byte length (without padding). */
  byteLengths: number[];
  /** The whole file's size in bytes. */
  fileBytes: number;
}

const UTF8 = new TextEncoder();
const padded = (n: number) => Math.ceil(n / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;

/** A growable little-endian byte sink for the header. */
class Sink {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;

  private reserve(k: number): void {
    if (this.length + k <= this.buf.length) return;
    const next = new Uint8Array(Math.max(2 * this.buf.length, this.length + k));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  scalar(type: GgufValueType, v: number | bigint | boolean): void {
    const w = GGUF_VALUE_WIDTH[type], at = this.length;
    this.reserve(w);
    const d = this.view;
    switch (type) {
      case 'u8': d.setUint8(at, Number(v)); break;
      case 'i8': d.setInt8(at, Number(v)); break;
      case 'bool': d.setUint8(at, v ? 1 : 0); break;
      case 'u16': d.setUint16(at, Number(v), true); break;
      case 'i16': d.setInt16(at, Number(v), true); break;
      case 'u32': d.setUint32(at, Number(v), true); break;
      case 'i32': d.setInt32(at, Number(v), true); break;
      case 'f32': d.setFloat32(at, Number(v), true); break;
      case 'f64': d.setFloat64(at, Number(v), true); break;
      case 'u64': d.setBigUint64(at, BigInt(v), true); break;
      case 'i64': d.setBigInt64(at, BigInt(v), true); break;
      default: throw new AttentionError(`GGUF writer: ${type} is not a scalar type`);
    }
    this.length += w;
  }

  string(s: string): void {
    const b = UTF8.encode(s);
    this.scalar('u64', b.length);
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, padded(this.length));  // (the padding is the zeros past length)
  }
}

const typeId = (type: GgufValueType) => GGUF_VALUE_TYPES.indexOf(type);

/** A value type's name, checked (a key is named in the error). */
function valueType(name: string, key: string): GgufValueType {
  if (!GGUF_VALUE_TYPES.includes(name as GgufValueType) || name === 'array')
    throw new AttentionError(`GGUF writer: metadata ${JSON.stringify(key)} has type ${JSON.stringify(name)}; expected one of ${GGUF_VALUE_TYPES.join(', ')} or array<type>`);
  return name as GgufValueType;
}

function putEntry(out: Sink, key: string, { type, value }: GgufEntry): void {
  out.string(key);
  const array = /^array<(.+)>$/.exec(type);
  if (!array) {
    const t = valueType(type, key);
    out.scalar('u32', typeId(t));
    if (t === 'string') out.string(String(value));
    else out.scalar(t, value as number | bigint | boolean);
    return;
  }
  const of = valueType(array[1], key);
  if (!(typeof value === 'object' && value !== null && 'length' in value))
    throw new AttentionError(`GGUF writer: metadata ${JSON.stringify(key)} is an ${type} but its value is not an array`);
  out.scalar('u32', typeId('array'));
  out.scalar('u32', typeId(of));
  out.scalar('u64', value.length);
  const items = value as ArrayLike<unknown>;
  for (let i = 0; i < items.length; i++) {
    if (of === 'string') out.string(String(items[i]));
    else out.scalar(of, items[i] as number | bigint | boolean);
  }
}

/** The bytes a tensor of this type and these dims takes. */
export function ggufTensorBytes(t: GgufTensorPlan): number {
  const type = GGUF_TENSOR_TYPES.find((k) => k.name === t.type);
  if (!type) throw new AttentionError(`GGUF writer: tensor ${t.name} has unknown type ${t.type}`);
  if (t.dims[0] % type.blockElements !== 0)
    throw new AttentionError(`GGUF writer: tensor ${t.name}'s rows of ${t.dims[0]} are not whole ${t.type} blocks of ${type.blockElements}`);
  return (t.dims.reduce((a, b) => a * b, 1) / type.blockElements) * type.blockBytes;
}

/** The header of a file with these key-values (general.alignment is added) and tensors, in order. */
export function ggufLayout(metadata: ReadonlyMap<string, GgufEntry>, tensors: readonly GgufTensorPlan[]): GgufLayout {
  const out = new Sink();
  out.scalar('u32', GGUF_MAGIC);
  out.scalar('u32', 3);
  out.scalar('u64', tensors.length);
  const entries = new Map(metadata);
  entries.set('general.alignment', { type: 'u32', value: GGUF_ALIGNMENT });
  out.scalar('u64', entries.size);
  for (const [key, entry] of entries) putEntry(out, key, entry);
  const offsets: number[] = [], byteLengths: number[] = [];
  let offset = 0;
  for (const t of tensors) {
    const n = ggufTensorBytes(t);
    out.string(t.name);
    out.scalar('u32', t.dims.length);
    for (const d of t.dims) out.scalar('u64', d);
    out.scalar('u32', GGUF_TENSOR_TYPES.find((k) => k.name === t.type)!.id);
    out.scalar('u64', offset);
    offsets.push(offset);
    byteLengths.push(n);
    offset = padded(offset + n);
  }
  const header = out.bytes();
  return { header, offsets, byteLengths, fileBytes: header.length + offset };
}

/**
 * The file in parts: the header, then each tensor's bytes (`bytesOf(i)`, asked for in order, once
 * each) with the zeros that pad it to the alignment. A tensor of the wrong size is refused by name.
 */
export function* ggufParts(layout: GgufLayout, tensors: readonly GgufTensorPlan[], bytesOf: (i: number) => Uint8Array): Generator<Uint8Array> {
  yield layout.header;
  for (let i = 0; i < tensors.length; i++) {
    const bytes = bytesOf(i);
    if (bytes.length !== layout.byteLengths[i])
      throw new AttentionError(`GGUF writer: tensor ${tensors[i].name} has ${bytes.length} bytes; its dims [${tensors[i].dims.join(', ')}] and type ${tensors[i].type} need ${layout.byteLengths[i]}`);
    yield bytes;
    const pad = padded(bytes.length) - bytes.length;
    if (pad) yield new Uint8Array(pad);
  }
}

/** Parts (ggufParts) as one file. */
export function joinParts(parts: Iterable<Uint8Array>, fileBytes: number): Uint8Array {
  const file = new Uint8Array(fileBytes);
  let at = 0;
  for (const p of parts) {
    file.set(p, at);
    at += p.length;
  }
  if (at !== fileBytes) throw new AttentionError(`GGUF writer: wrote ${at} bytes, the layout says ${fileBytes}`);
  return file;
}

/** Parts as a ReadableStream, one part for each read and none ahead of it (so a consumer's
 * back-pressure holds the tensors not yet read in the model, not in copies). */
export function partsStream(parts: Iterator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      try {
        const next = parts.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (e) {
        controller.error(e);
      }
    },
    cancel() {
      parts.return?.(undefined);
    },
  }, { highWaterMark: 0 });
}
