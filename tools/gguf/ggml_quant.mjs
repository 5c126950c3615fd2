// ggml's storage types for a GGUF file, written the way ggml's reference code makes them
// (quantize_row_q8_0_ref, quantize_row_q4_0_ref, GGML_FP32_TO_FP16), so that llama.cpp reads the
// same network we hand our own loader. Browser-safe (the bench page builds our side's weights
// from the same blocks). Float arithmetic is float32 as in C: every step goes through Math.fround.
//
// Q8_0 block (34 bytes): f16 d = amax / 127, then 32 int8 q = roundf(x / d) (half away from zero,
// with 1/d taken from the unrounded d). Q4_0 block (18 bytes): f16 d = max / -8 where max is the
// signed value of largest magnitude, then 16 bytes; byte j holds element j in its low nibble and
// element j + 16 in its high one, nibble = min(15, trunc(x / d + 8.5)); value (nibble - 8) * d.

export const QK = 32;
// ggml's type ids by name (ggml.h's enum ggml_type). encode/decode below handle F32, F16, Q8_0 and
// Q4_0; the others are for files whose bytes are made elsewhere (the package's encodeWeights).
export const GGML_TYPE = { F32: 0, F16: 1, Q4_0: 2, Q4_1: 3, Q5_0: 6, Q5_1: 7, Q8_0: 8, Q2_K: 10, Q3_K: 11, Q4_K: 12, Q5_K: 13, Q6_K: 14, BF16: 30 };
/** The name of a ggml type id (GGML_TYPE's inverse). */
export const typeName = (id) => Object.keys(GGML_TYPE).find((k) => GGML_TYPE[k] === id);
const OWN = new Set([GGML_TYPE.F32, GGML_TYPE.F16, GGML_TYPE.Q8_0, GGML_TYPE.Q4_0]);
function own(type, what) {
  if (!OWN.has(type)) throw new Error(`ggml_quant.mjs ${what}s F32, F16, Q8_0 and Q4_0, not ${typeName(type) ?? type}`);
}
export const BLOCK_BYTES = { [GGML_TYPE.Q8_0]: 2 + QK, [GGML_TYPE.Q4_0]: 2 + QK / 2 };

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half bits of a float32, round to nearest even (what F16C's _cvtss_sh(x, 0) does). */
export function toHalf(x) {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    // Subnormal half: shift the implicit-one mantissa right, rounding to nearest even.
    mant |= 0x800000;
    const shift = 14 - e;
    const half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && (half & 1)) ? 1 : 0));
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1)) ? 1 : 0));
}

/** The float value of half bits. */
export function fromHalf(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** roundf: half away from zero (exact for float32 inputs: |v| + 0.5 is exact in a double). */
const roundf = (v) => (v < 0 ? -Math.floor(-v + 0.5) : Math.floor(v + 0.5));

function quantizeBlockQ8(x, at, view, out) {
  let amax = 0;
  for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[at + j]));
  const d = Math.fround(amax / 127);
  const id = d ? Math.fround(1 / d) : 0;
  view.setUint16(out, toHalf(d), true);
  for (let j = 0; j < QK; j++) view.setInt8(out + 2 + j, roundf(Math.fround(x[at + j] * id)));
}

function quantizeBlockQ4(x, at, view, out) {
  let amax = 0;
  let max = 0;
  for (let j = 0; j < QK; j++) {
    const v = x[at + j];
    if (amax < Math.abs(v)) { amax = Math.abs(v); max = v; }
  }
  const d = Math.fround(max / -8);
  const id = d ? Math.fround(1 / d) : 0;
  view.setUint16(out, toHalf(d), true);
  // (int8_t)(x * id + 8.5f) truncates; the sum is >= 0.5 here, so truncation is floor.
  const code = (v) => Math.min(15, Math.trunc(Math.fround(Math.fround(v * id) + 8.5)));
  for (let j = 0; j < QK / 2; j++) view.setUint8(out + 2 + j, code(x[at + j]) | (code(x[at + j + QK / 2]) << 4));
}

// Every storage type's [values per block, bytes per block] by ggml type id (ggml-common.h's block
// structs), so a file can carry tensors of types this module does not encode (bytes made elsewhere).
const STORAGE = {
  0: [1, 4], 1: [1, 2], 2: [QK, 18], 3: [QK, 20], 6: [QK, 22], 7: [QK, 24], 8: [QK, 34],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292], 30: [1, 2],
};

/** Bytes of n values (a whole number of blocks for the block types) stored as `type`. */
export function typeBytes(type, n) {
  if (!(type in STORAGE)) throw new Error(`unknown ggml type ${type}`);
  const [values, bytes] = STORAGE[type];
  if (n % values) throw new Error(`${n} values are not a whole number of ${values}-value blocks`);
  return (n / values) * bytes;
}

/** x (Float32Array) stored as `type`, into a new Uint8Array. */
export function encode(type, x) {
  own(type, 'encode');
  const out = new Uint8Array(typeBytes(type, x.length));
  const view = new DataView(out.buffer);
  if (type === GGML_TYPE.F32) out.set(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
  else if (type === GGML_TYPE.F16) for (let i = 0; i < x.length; i++) view.setUint16(2 * i, toHalf(x[i]), true);
  else {
    const block = type === GGML_TYPE.Q8_0 ? quantizeBlockQ8 : quantizeBlockQ4;
    for (let b = 0; b < x.length / QK; b++) block(x, b * QK, view, b * BLOCK_BYTES[type]);
  }
  return out;
}

/** The float32 values that bytes of `type` hold (n of them). */
export function decode(type, bytes, n) {
  own(type, 'decode');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const x = new Float32Array(n);
  if (type === GGML_TYPE.F32) x.set(new Float32Array(bytes.slice(0, 4 * n).buffer));
  else if (type === GGML_TYPE.F16) for (let i = 0; i < n; i++) x[i] = fromHalf(view.getUint16(2 * i, true));
  else {
    const size = BLOCK_BYTES[type];
    for (let b = 0; b < n / QK; b++) {
      const d = fromHalf(view.getUint16(b * size, true));
      for (let j = 0; j < QK; j++) {
        if (type === GGML_TYPE.Q8_0) x[b * QK + j] = view.getInt8(b * size + 2 + j) * d;
        else {
          const byte = view.getUint8(b * size + 2 + (j % (QK / 2)));
          x[b * QK + j] = ((j < QK / 2 ? byte & 15 : byte >> 4) - 8) * d;
        }
      }
    }
  }
  return x;
}
