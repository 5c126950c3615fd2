// A GGUF (version 3) writer: header, key-values, tensor infos, then each tensor's bytes at an
// offset aligned to general.alignment (32). Little-endian throughout. Tensors stream to the file
// one at a time (a SmolLM2-135M-sized F32 file is 540 MB; only one tensor is in memory at once).
//
// Layout (what llama.cpp's gguf.cpp reads): "GGUF", u32 version, u64 tensor count, u64 key-value
// count; each key-value: string key, u32 value type, value; each tensor info: string name, u32
// dimension count, u64 dimensions (ne[0] first: the contiguous one, i.e. a row's length), u32
// ggml type, u64 offset from the data start. Strings are u64 length + UTF-8 bytes.
import { closeSync, openSync, writeSync } from 'node:fs';

import { typeBytes } from './ggml_quant.mjs';

export const ALIGNMENT = 32;
const VALUE = { u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12 };

/** Growable little-endian byte sink for the header. */
class Bytes {
  constructor() { this.buf = new Uint8Array(1 << 16); this.view = new DataView(this.buf.buffer); this.n = 0; }
  reserve(k) {
    if (this.n + k <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.n + k));
    next.set(this.buf.subarray(0, this.n));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  put(kind, v) {
    const size = { u8: 1, i8: 1, bool: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, u64: 8, i64: 8, f64: 8 }[kind];
    this.reserve(size);
    const at = this.n;
    switch (kind) {
      case 'u8': case 'bool': this.view.setUint8(at, Number(v)); break;
      case 'i8': this.view.setInt8(at, v); break;
      case 'u16': this.view.setUint16(at, v, true); break;
      case 'i16': this.view.setInt16(at, v, true); break;
      case 'u32': this.view.setUint32(at, v, true); break;
      case 'i32': this.view.setInt32(at, v, true); break;
      case 'f32': this.view.setFloat32(at, v, true); break;
      case 'f64': this.view.setFloat64(at, v, true); break;
      case 'u64': this.view.setBigUint64(at, BigInt(v), true); break;
      case 'i64': this.view.setBigInt64(at, BigInt(v), true); break;
      default: throw new Error(`unknown GGUF value type ${kind}`);
    }
    this.n += size;
  }
  string(s) {
    const b = new TextEncoder().encode(s);
    this.put('u64', b.length);
    this.reserve(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }
  pad(alignment) { const k = (alignment - (this.n % alignment)) % alignment; this.reserve(k); this.n += k; }
  bytes() { return this.buf.subarray(0, this.n); }
}

/** A typed metadata value: { type: 'u32' | 'f32' | 'string' | 'bool' | ..., value } or an array
 * { type: 'array', of: 'string' | 'f32' | 'i32' | ..., value: [...] }; an array of arrays is
 * { type: 'array', of: 'array', value: [{ of, value }, ...] }. */
function putValue(out, { type, of, value }) {
  if (!(type in VALUE)) throw new Error(`unknown GGUF value type ${type}`);
  out.put('u32', VALUE[type]);
  if (type === 'string') out.string(value);
  else if (type === 'array') putArray(out, of, value);
  else out.put(type, value);
}

/** An array's element type, count and elements (an element that is an array has no type tag of its own). */
function putArray(out, of, value) {
  if (!(of in VALUE)) throw new Error(`unsupported GGUF array element type ${of}`);
  out.put('u32', VALUE[of]);
  out.put('u64', value.length);
  for (const v of value) {
    if (of === 'string') out.string(v);
    else if (of === 'array') putArray(out, v.of, v.value);
    else out.put(of, v);
  }
}

/**
 * The header (everything before the tensor data, padded) and each tensor's data offset.
 * tensors: [{ name, dims: [ne0, ne1, ...], type (GGML_TYPE), ... }].
 */
export function ggufHeader(metadata, tensors) {
  const out = new Bytes();
  out.put('u32', 0x46554747);  // "GGUF" read as a little-endian u32
  out.put('u32', 3);
  out.put('u64', tensors.length);
  const kv = { 'general.alignment': { type: 'u32', value: ALIGNMENT }, ...metadata };
  out.put('u64', Object.keys(kv).length);
  for (const [key, v] of Object.entries(kv)) { out.string(key); putValue(out, v); }
  const offsets = [];
  let offset = 0;
  for (const t of tensors) {
    const n = t.dims.reduce((a, b) => a * b, 1);
    out.string(t.name);
    out.put('u32', t.dims.length);
    for (const d of t.dims) out.put('u64', d);
    out.put('u32', t.type);
    out.put('u64', offset);
    offsets.push(offset);
    offset += typeBytes(t.type, n);
    offset += (ALIGNMENT - (offset % ALIGNMENT)) % ALIGNMENT;
  }
  out.pad(ALIGNMENT);
  return { header: out.bytes(), offsets, dataBytes: offset };
}

/**
 * Writes a GGUF file. Each tensor's `bytes()` returns its data already in its type (see
 * ggml_quant.mjs encode), called once, in order, so large files never sit in memory whole.
 * Returns the file's size in bytes.
 */
export function writeGguf(file, metadata, tensors) {
  const { header, dataBytes } = ggufHeader(metadata, tensors);
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, header);
    let written = 0;
    for (const t of tensors) {
      const b = t.bytes();
      const want = typeBytes(t.type, t.dims.reduce((a, c) => a * c, 1));
      if (b.length !== want) throw new Error(`tensor ${t.name}: ${b.length} bytes, its shape and type need ${want}`);
      writeSync(fd, b);
      written += b.length;
      const pad = (ALIGNMENT - (written % ALIGNMENT)) % ALIGNMENT;
      if (pad) writeSync(fd, new Uint8Array(pad));
      written += pad;
    }
    if (written !== dataBytes) throw new Error(`wrote ${written} data bytes, the header promised ${dataBytes}`);
    return header.length + written;
  } finally {
    closeSync(fd);
  }
}
