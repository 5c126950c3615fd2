// Four-lane float vectors: the one place that knows which instruction set the SIMD kernels use.
// In WebAssembly (-msimd128) they map onto wasm_simd128.h; natively onto SSE, so the very same
// SIMD kernels build and get tested on the host against their scalar twins.
#pragma once

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define ATTN_HAVE_SIMD4 1
namespace attn::simd4 {
using f32x4 = v128_t;
inline f32x4 load(const float* p) { return wasm_v128_load(p); }
inline void store(float* p, f32x4 v) { wasm_v128_store(p, v); }
inline f32x4 splat(float x) { return wasm_f32x4_splat(x); }
inline f32x4 add(f32x4 a, f32x4 b) { return wasm_f32x4_add(a, b); }
inline f32x4 sub(f32x4 a, f32x4 b) { return wasm_f32x4_sub(a, b); }
inline f32x4 mul(f32x4 a, f32x4 b) { return wasm_f32x4_mul(a, b); }
// pmax is one instruction; max() with NaN semantics is a longer sequence. Inputs are validated finite.
inline f32x4 max(f32x4 a, f32x4 b) { return wasm_f32x4_pmax(a, b); }
inline float lane(f32x4 v, int i) {
  switch (i) {
    case 0: return wasm_f32x4_extract_lane(v, 0);
    case 1: return wasm_f32x4_extract_lane(v, 1);
    case 2: return wasm_f32x4_extract_lane(v, 2);
    default: return wasm_f32x4_extract_lane(v, 3);
  }
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
inline f32x4 add(f32x4 a, f32x4 b) { return _mm_add_ps(a, b); }
inline f32x4 sub(f32x4 a, f32x4 b) { return _mm_sub_ps(a, b); }
inline f32x4 mul(f32x4 a, f32x4 b) { return _mm_mul_ps(a, b); }
inline f32x4 max(f32x4 a, f32x4 b) { return _mm_max_ps(a, b); }
inline float lane(f32x4 v, int i) {
  alignas(16) float tmp[4];
  _mm_store_ps(tmp, v);
  return tmp[i];
}
}  // namespace attn::simd4
#else
#define ATTN_HAVE_SIMD4 0
#endif

#if ATTN_HAVE_SIMD4
namespace attn::simd4 {
// a*b + c. Separate multiply and add: relaxed-SIMD FMA is unusable with this toolchain.
inline f32x4 madd(f32x4 a, f32x4 b, f32x4 c) { return add(mul(a, b), c); }
inline float hsum(f32x4 v) { return (lane(v, 0) + lane(v, 2)) + (lane(v, 1) + lane(v, 3)); }
inline float hmax(f32x4 v) {
  float a = lane(v, 0) > lane(v, 1) ? lane(v, 0) : lane(v, 1);
  float b = lane(v, 2) > lane(v, 3) ? lane(v, 2) : lane(v, 3);
  return a > b ? a : b;
}
}  // namespace attn::simd4
#endif
