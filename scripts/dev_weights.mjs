// Random weights for the development models (scripts/make_dev_model.mjs, scripts/make_dev_bert.mjs):
// a seeded normal generator, so a dev model is the same on every machine, and a safetensors writer.
import { writeFileSync } from 'node:fs';

/** Deterministic normal samples (mulberry32 + Box-Muller). */
export function randomFill(seed = 12345) {
  const uniform = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = (std) => std * Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  /** n samples of N(mean, std^2) as a Float32Array. */
  return (n, std, mean = 0) => Float32Array.from({ length: n }, () => mean + normal(std));
}

/**
 * Writes { name: [shape, Float32Array] } as safetensors: u64 header length, JSON header (padded to
 * 8 bytes), then the raw F32 data in the order given. Returns the file's size in bytes.
 */
export function writeSafetensors(path, tensors, metadata) {
  const header = {};
  let offset = 0;
  for (const [name, [shape, data]] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  header.__metadata__ = metadata;
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const file = Buffer.alloc(8 + json.length + offset);
  file.writeBigUInt64LE(BigInt(json.length), 0);
  file.write(json, 8, 'latin1');
  let at = 8 + json.length;
  for (const [, [, data]] of Object.entries(tensors)) {
    Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(file, at);
    at += data.byteLength;
  }
  writeFileSync(path, file);
  return file.length;
}
