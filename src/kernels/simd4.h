// Four-lane float vectors: the one place that knows which instruction set the SIMD kernels use.
// In WebAssembly (-msimd128) they map onto wasm_simd128.h; natively onto SSE, so the very same
// SIMD kernels build and get tested on the host against their scalar twins.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define ATTN_HAVE_SIMD4 1
namespace attn::simd4 {
using f32x4 = v128_t;
inline f32x4 load(const float* p) { return wasm_v128_load(p); }
inline void store(float* p, f32x4 v) { wasm_v128_store(p, v); }
inline f32x4 splat(float x) { return wasm_f32x4_splat(x); }
// One v128.load32_splat: V8 emits a single broadcast-load for it.
inline f32x4 load_splat(const float* p) { return wasm_v128_load32_splat(p); }
inline f32x4 add(f32x4 a, f32x4 b) { return wasm_f32x4_add(a, b); }
inline f32x4 sub(f32x4 a, f32x4 b) { return wasm_f32x4_sub(a, b); }
inline f32x4 mul(f32x4 a, f32x4 b) { return wasm_f32x4_mul(a, b); }
inline f32x4 div(f32x4 a, f32x4 b) { return wasm_f32x4_div(a, b); }
inline f32x4 abs(f32x4 a) { return wasm_f32x4_abs(a); }
// pmax is one instruction; max() with NaN semantics is a longer sequence. Inputs are validated finite.
inline f32x4 max(f32x4 a, f32x4 b) { return wasm_f32x4_pmax(a, b); }
inline f32x4 min(f32x4 a, f32x4 b) { return wasm_f32x4_pmin(a, b); }
// Lanes where a >= b keep x, the others become +0.0f.
inline f32x4 keep_if_ge(f32x4 x, f32x4 a, f32x4 b) { return wasm_v128_and(x, wasm_f32x4_ge(a, b)); }
// Integer view of the lanes, for building powers of two in the exponent field.
inline f32x4 i32_add(f32x4 a, f32x4 b) { return wasm_i32x4_add(a, b); }
inline f32x4 i32_sub(f32x4 a, f32x4 b) { return wasm_i32x4_sub(a, b); }
inline f32x4 i32_shl23(f32x4 a) { return wasm_i32x4_shl(a, 23); }
inline f32x4 i32_splat(int v) { return wasm_i32x4_splat(v); }
// Four IEEE halves (any alignment) zero-extended into the four 32-bit lanes.
inline f32x4 load_u16x4(const std::uint16_t* p) { return wasm_u32x4_load16x4(p); }
// Eight 16-bit values (any alignment) in the top halves of two vectors' 32-bit lanes (values 0-3,
// 4-7), the bottom halves zero: one load and two shuffles (punpcklwd / punpckhwd on x86).
inline void load_u16x8_high(const std::uint16_t* p, f32x4& lo, f32x4& hi) {
  const v128_t v = wasm_v128_load(p), z = wasm_i32x4_splat(0);
  lo = wasm_i16x8_shuffle(z, v, 0, 8, 1, 9, 2, 10, 3, 11);
  hi = wasm_i16x8_shuffle(z, v, 4, 12, 5, 13, 6, 14, 7, 15);
}
inline f32x4 bit_and(f32x4 a, f32x4 b) { return wasm_v128_and(a, b); }
template <int n>
inline f32x4 i32_shl(f32x4 a) { return wasm_i32x4_shl(a, n); }
inline f32x4 i32_sra3(f32x4 a) { return wasm_i32x4_shr(a, 3); }
inline float lane(f32x4 v, int i) {
  switch (i) {
    case 0: return wasm_f32x4_extract_lane(v, 0);
    case 1: return wasm_f32x4_extract_lane(v, 1);
    case 2: return wasm_f32x4_extract_lane(v, 2);
    default: return wasm_f32x4_extract_lane(v, 3);
  }
}
// Integer lanes (the quantized products): a separate type name, the same 128 bits.
using i32x4 = v128_t;
inline i32x4 iload(const void* p) { return wasm_v128_load(p); }
// A store the compiler must keep where it is (volatile): V8 keeps memory operations in program order
// but computes as late as it can, so a value stored here is computed before the loads that follow.
inline void store_in_order(i32x4* p, i32x4 v) { *static_cast<volatile i32x4*>(p) = v; }
// Eight signed bytes widened to int16 as they are loaded: i16x8.load8x8_s (one pmovsxbw on x86).
inline i32x4 iload8_widen(const void* p) { return wasm_i16x8_load8x8(p); }
inline i32x4 isplat16(int v) { return wasm_i16x8_splat(static_cast<std::int16_t>(v)); }
inline i32x4 isplat32(int v) { return wasm_i32x4_splat(v); }
// Sum of adjacent int16 products into int32 lanes: i32x4.dot_i16x8_s.
inline i32x4 idot16(i32x4 a, i32x4 b) { return wasm_i32x4_dot_i16x8(a, b); }
inline i32x4 iadd32(i32x4 a, i32x4 b) { return wasm_i32x4_add(a, b); }
inline i32x4 isub32(i32x4 a, i32x4 b) { return wasm_i32x4_sub(a, b); }
inline i32x4 iand(i32x4 a, i32x4 b) { return wasm_v128_and(a, b); }
// Each 16-bit lane shifted right by n, zeros in.
template <int n>
inline i32x4 iushr16(i32x4 a) { return wasm_u16x8_shr(a, n); }
template <int n>
inline i32x4 ishl16(i32x4 a) { return wasm_i16x8_shl(a, n); }
inline i32x4 ior(i32x4 a, i32x4 b) { return wasm_v128_or(a, b); }
// Each 32-bit lane shifted by n: right with zeros in (ushr), left, right with the sign (sra).
template <int n>
inline i32x4 iushr32(i32x4 a) { return wasm_u32x4_shr(a, n); }
template <int n>
inline i32x4 ishl32(i32x4 a) { return wasm_i32x4_shl(a, n); }
template <int n>
inline i32x4 isra32(i32x4 a) { return wasm_i32x4_shr(a, n); }
// The 32 bits at p (little-endian) as bytes: byte j of lo 0xff when bit j is set, else 0 (j < 16);
// hi the same for bits 16 .. 31. Each byte of p spread over 8 lanes, then tested against its bit.
inline void ibits_to_bytes(const void* p, i32x4& lo, i32x4& hi) {
  const v128_t v = wasm_v128_load32_splat(p), bit = wasm_u64x2_splat(0x8040201008040201ull);
  lo = wasm_i8x16_shuffle(v, v, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  hi = wasm_i8x16_shuffle(v, v, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  lo = wasm_i8x16_eq(wasm_v128_and(lo, bit), bit), hi = wasm_i8x16_eq(wasm_v128_and(hi, bit), bit);
}
// The 4 x 4 matrix of 32-bit lanes in a, b, c, d (rows) transposed in place.
inline void itranspose4(i32x4& a, i32x4& b, i32x4& c, i32x4& d) {
  const i32x4 ab0 = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab1 = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
  const i32x4 cd0 = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd1 = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
  a = wasm_i64x2_shuffle(ab0, cd0, 0, 2), b = wasm_i64x2_shuffle(ab0, cd0, 1, 3);
  c = wasm_i64x2_shuffle(ab1, cd1, 0, 2), d = wasm_i64x2_shuffle(ab1, cd1, 1, 3);
}
// The 16-bit values at four addresses in the top halves of the four 32-bit lanes, bottom halves
// zero (four v128.load16_lane: pinsrw on x86): e.g. four rows' f16 block scales for half_high_to_float.
inline f32x4 load_u16_high_x4(const void* p0, const void* p1, const void* p2, const void* p3) {
  v128_t v = wasm_i32x4_splat(0);
  v = wasm_v128_load16_lane(p0, v, 1);
  v = wasm_v128_load16_lane(p1, v, 3);
  v = wasm_v128_load16_lane(p2, v, 5);
  return wasm_v128_load16_lane(p3, v, 7);
}
inline f32x4 i32_to_f32(i32x4 a) { return wasm_f32x4_convert_i32x4(a); }
inline void istore(void* p, i32x4 v) { wasm_v128_store(p, v); }
// x > m ? x : m per lane (m kept where x is NaN, as the scalar `x > m ? x : m`).
inline f32x4 take_greater(f32x4 m, f32x4 x) { return wasm_f32x4_pmax(m, x); }
// Each lane rounded to the nearest integer, ties to even (as std::nearbyint in the default mode), as int32.
inline i32x4 nearest_i32(f32x4 a) { return wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(a)); }
// Eight int16 lanes from two vectors of int32 (a's lanes first), saturated: i16x8.narrow_i32x4_s.
inline i32x4 inarrow16(i32x4 a, i32x4 b) { return wasm_i16x8_narrow_i32x4(a, b); }
// isum4 in two steps, so that two rows' sums can be folded before the next two are made:
// ipair_sum(a, b) = [a0 + a2, b0 + b2, a1 + a3, b1 + b3]; ipairs_sum of two of those, the four totals.
inline i32x4 ipair_sum(i32x4 a, i32x4 b) {
  return iadd32(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
}
inline i32x4 ipairs_sum(i32x4 ab, i32x4 cd) {
  return iadd32(wasm_i64x2_shuffle(ab, cd, 0, 2), wasm_i64x2_shuffle(ab, cd, 1, 3));
}
inline int ilane_sum(i32x4 a) {
  return wasm_i32x4_extract_lane(a, 0) + wasm_i32x4_extract_lane(a, 1) + wasm_i32x4_extract_lane(a, 2) +
         wasm_i32x4_extract_lane(a, 3);
}
}  // namespace attn::simd4
#elif defined(__SSE2__)
#include <emmintrin.h>
#define ATTN_HAVE_SIMD4 1
namespace attn::simd4 {
using f32x4 = __m128;
inline f32x4 load(const float* p) { return _mm_loadu_ps(p); }
inline void store(float* p, f32x4 v) { _mm_storeu_ps(p, v); }
inline f32x4 splat(float x) { return _mm_set1_ps(x); }
inline f32x4 load_splat(const float* p) { return _mm_load1_ps(p); }
inline f32x4 add(f32x4 a, f32x4 b) { return _mm_add_ps(a, b); }
inline f32x4 sub(f32x4 a, f32x4 b) { return _mm_sub_ps(a, b); }
inline f32x4 mul(f32x4 a, f32x4 b) { return _mm_mul_ps(a, b); }
inline f32x4 div(f32x4 a, f32x4 b) { return _mm_div_ps(a, b); }
inline f32x4 abs(f32x4 a) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), a); }
inline f32x4 max(f32x4 a, f32x4 b) { return _mm_max_ps(a, b); }
inline f32x4 min(f32x4 a, f32x4 b) { return _mm_min_ps(a, b); }
inline f32x4 keep_if_ge(f32x4 x, f32x4 a, f32x4 b) { return _mm_and_ps(x, _mm_cmpge_ps(a, b)); }
inline f32x4 i32_add(f32x4 a, f32x4 b) { return _mm_castsi128_ps(_mm_add_epi32(_mm_castps_si128(a), _mm_castps_si128(b))); }
inline f32x4 i32_sub(f32x4 a, f32x4 b) { return _mm_castsi128_ps(_mm_sub_epi32(_mm_castps_si128(a), _mm_castps_si128(b))); }
inline f32x4 i32_shl23(f32x4 a) { return _mm_castsi128_ps(_mm_slli_epi32(_mm_castps_si128(a), 23)); }
inline f32x4 i32_splat(int v) { return _mm_castsi128_ps(_mm_set1_epi32(v)); }
inline f32x4 load_u16x4(const std::uint16_t* p) {
  const __m128i h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm_castsi128_ps(_mm_unpacklo_epi16(h, _mm_setzero_si128()));
}
inline void load_u16x8_high(const std::uint16_t* p, f32x4& lo, f32x4& hi) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), z = _mm_setzero_si128();
  lo = _mm_castsi128_ps(_mm_unpacklo_epi16(z, v));
  hi = _mm_castsi128_ps(_mm_unpackhi_epi16(z, v));
}
inline f32x4 bit_and(f32x4 a, f32x4 b) { return _mm_and_ps(a, b); }
template <int n>
inline f32x4 i32_shl(f32x4 a) { return _mm_castsi128_ps(_mm_slli_epi32(_mm_castps_si128(a), n)); }
inline f32x4 i32_sra3(f32x4 a) { return _mm_castsi128_ps(_mm_srai_epi32(_mm_castps_si128(a), 3)); }
inline float lane(f32x4 v, int i) {
  alignas(16) float tmp[4];
  _mm_store_ps(tmp, v);
  return tmp[i];
}
using i32x4 = __m128i;
inline i32x4 iload(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline void store_in_order(i32x4*, i32x4) {}  // (native compilers schedule by themselves)
// (SSE2 has no pmovsxbw: each byte duplicated into a 16-bit lane, then shifted down 8 with its sign.)
inline i32x4 iload8_widen(const void* p) {
  const __m128i x = _mm_loadl_epi64(static_cast<const __m128i*>(p));
  return _mm_srai_epi16(_mm_unpacklo_epi8(x, x), 8);
}
inline i32x4 isplat16(int v) { return _mm_set1_epi16(static_cast<short>(v)); }
inline i32x4 isplat32(int v) { return _mm_set1_epi32(v); }
// pmaddwd: the same sums of adjacent int16 products as WebAssembly's i32x4.dot_i16x8_s.
inline i32x4 idot16(i32x4 a, i32x4 b) { return _mm_madd_epi16(a, b); }
inline i32x4 iadd32(i32x4 a, i32x4 b) { return _mm_add_epi32(a, b); }
inline i32x4 isub32(i32x4 a, i32x4 b) { return _mm_sub_epi32(a, b); }
inline i32x4 iand(i32x4 a, i32x4 b) { return _mm_and_si128(a, b); }
template <int n>
inline i32x4 iushr16(i32x4 a) { return _mm_srli_epi16(a, n); }
template <int n>
inline i32x4 ishl16(i32x4 a) { return _mm_slli_epi16(a, n); }
inline i32x4 ior(i32x4 a, i32x4 b) { return _mm_or_si128(a, b); }
template <int n>
inline i32x4 iushr32(i32x4 a) { return _mm_srli_epi32(a, n); }
template <int n>
inline i32x4 ishl32(i32x4 a) { return _mm_slli_epi32(a, n); }
template <int n>
inline i32x4 isra32(i32x4 a) { return _mm_srai_epi32(a, n); }
// (SSE2 has no byte shuffle: the bytes doubled by unpacks, 1 -> 2 -> 4 -> 8 copies.)
inline void ibits_to_bytes(const void* p, i32x4& lo, i32x4& hi) {
  std::int32_t w;
  std::memcpy(&w, p, 4);
  __m128i v = _mm_cvtsi32_si128(w);
  v = _mm_unpacklo_epi8(v, v), v = _mm_unpacklo_epi16(v, v);
  const __m128i bit = _mm_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  lo = _mm_unpacklo_epi32(v, v), hi = _mm_unpackhi_epi32(v, v);
  lo = _mm_cmpeq_epi8(_mm_and_si128(lo, bit), bit), hi = _mm_cmpeq_epi8(_mm_and_si128(hi, bit), bit);
}
inline void itranspose4(i32x4& a, i32x4& b, i32x4& c, i32x4& d) {
  const i32x4 ab0 = _mm_unpacklo_epi32(a, b), ab1 = _mm_unpackhi_epi32(a, b);
  const i32x4 cd0 = _mm_unpacklo_epi32(c, d), cd1 = _mm_unpackhi_epi32(c, d);
  a = _mm_unpacklo_epi64(ab0, cd0), b = _mm_unpackhi_epi64(ab0, cd0);
  c = _mm_unpacklo_epi64(ab1, cd1), d = _mm_unpackhi_epi64(ab1, cd1);
}
inline f32x4 load_u16_high_x4(const void* p0, const void* p1, const void* p2, const void* p3) {
  std::uint16_t h[4];
  std::memcpy(&h[0], p0, 2), std::memcpy(&h[1], p1, 2), std::memcpy(&h[2], p2, 2), std::memcpy(&h[3], p3, 2);
  __m128i v = _mm_setzero_si128();
  v = _mm_insert_epi16(v, h[0], 1), v = _mm_insert_epi16(v, h[1], 3);
  v = _mm_insert_epi16(v, h[2], 5), v = _mm_insert_epi16(v, h[3], 7);
  return _mm_castsi128_ps(v);
}
inline f32x4 i32_to_f32(i32x4 a) { return _mm_cvtepi32_ps(a); }
inline void istore(void* p, i32x4 v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
inline f32x4 take_greater(f32x4 m, f32x4 x) { return _mm_max_ps(x, m); }  // (maxps: its first operand if greater, else its second)
inline i32x4 nearest_i32(f32x4 a) { return _mm_cvtps_epi32(a); }  // (MXCSR's rounding: to nearest, ties to even)
inline i32x4 inarrow16(i32x4 a, i32x4 b) { return _mm_packs_epi32(a, b); }
inline i32x4 ipair_sum(i32x4 a, i32x4 b) { return _mm_add_epi32(_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b)); }
inline i32x4 ipairs_sum(i32x4 ab, i32x4 cd) { return _mm_add_epi32(_mm_unpacklo_epi64(ab, cd), _mm_unpackhi_epi64(ab, cd)); }
inline int ilane_sum(i32x4 a) {
  alignas(16) std::int32_t t[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(t), a);
  return t[0] + t[1] + t[2] + t[3];
}
}  // namespace attn::simd4
#else
#define ATTN_HAVE_SIMD4 0
#endif

#if ATTN_HAVE_SIMD4
namespace attn::simd4 {
// [sum of a's lanes, of b's, of c's, of d's].
inline i32x4 isum4(i32x4 a, i32x4 b, i32x4 c, i32x4 d) { return ipairs_sum(ipair_sum(a, b), ipair_sum(c, d)); }
// a*b + c. Separate multiply and add: relaxed-SIMD FMA is unusable with this toolchain.
inline f32x4 madd(f32x4 a, f32x4 b, f32x4 c) { return add(mul(a, b), c); }
// e^x for x <= 0 (softmax arguments after subtracting the row max), to ~2 ulp. Inputs below
// -87.3 (including -inf from masks) give exact zeros, never denormals.
inline f32x4 exp_nonpositive(f32x4 x) {
  const f32x4 lo = splat(-87.3f);
  const f32x4 xc = max(x, lo);
  // n = round(x / ln 2) with the 1.5 * 2^23 trick: the integer lands in the low mantissa bits.
  const f32x4 magic = splat(12582912.0f);
  const f32x4 t = madd(xc, splat(1.44269504088896341f), magic);
  const f32x4 n = sub(t, magic);
  // r = x - n ln2, split in two constants so r keeps full precision.
  f32x4 r = sub(xc, mul(n, splat(0.693359375f)));
  r = sub(r, mul(n, splat(-2.12194440e-4f)));
  // e^r on [-ln2/2, ln2/2]: degree-6 Taylor/minimax polynomial (Cephes expf coefficients).
  f32x4 p = splat(1.9875691500e-4f);
  p = madd(p, r, splat(1.3981999507e-3f));
  p = madd(p, r, splat(8.3334519073e-3f));
  p = madd(p, r, splat(4.1665795894e-2f));
  p = madd(p, r, splat(1.6666665459e-1f));
  p = madd(p, r, splat(5.0000001201e-1f));
  p = madd(mul(p, r), r, add(r, splat(1.0f)));
  // 2^n: n's bits (t - magic as integers) added to the exponent field of 1.0.
  const f32x4 pow2n = i32_shl23(i32_add(i32_sub(t, magic), i32_splat(127)));
  return keep_if_ge(mul(p, pow2n), x, lo);
}

// Four finite IEEE halves as floats, exactly (half_to_float's arithmetic without its infinity and
// NaN case: tensors kept as halves are checked finite when they are loaded).
// Finite halves in the top 16 bits of each lane, as floats: shifted right 3 with the sign, the
// sign, exponent and mantissa land in float32's fields (the exponent short of float32's bias by
// 112); the mask clears the sign's three copies. Multiplying by 2^112 rebiases normal values and
// normalizes subnormal ones.
inline f32x4 half_high_to_float(f32x4 high) {
  return mul(bit_and(i32_sra3(high), i32_splat(int(0x8fffe000u))), splat(0x1p112f));
}
inline f32x4 load_half(const std::uint16_t* p) { return half_high_to_float(i32_shl<16>(load_u16x4(p))); }

inline float hsum(f32x4 v) { return (lane(v, 0) + lane(v, 2)) + (lane(v, 1) + lane(v, 3)); }
inline float hmax(f32x4 v) {
  float a = lane(v, 0) > lane(v, 1) ? lane(v, 0) : lane(v, 1);
  float b = lane(v, 2) > lane(v, 3) ? lane(v, 2) : lane(v, 3);
  return a > b ? a : b;
}
}  // namespace attn::simd4
#endif
