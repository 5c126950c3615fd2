// WASM SIMD peak probe: N independent f32x4 chains of acc = acc * m + c (one mul and one add,
// 8 flops per chain step). Independent chains hide the mul->add latency, so the loop is bound by
// how many f32x4 mul/add instructions the core retires per cycle. Several N are exported because
// the best N depends on the core (latency x ports) and on V8's register allocation (16 xmm).
// Built with -O3 -msimd128 as a standalone module: no imports, no Emscripten runtime.
#include <wasm_simd128.h>

template <int N>
static float chains(int iters, float m, float c) {
  const v128_t vm = wasm_f32x4_splat(m);
  const v128_t vc = wasm_f32x4_splat(c);
  v128_t acc[N];
  for (int j = 0; j < N; j++) acc[j] = wasm_f32x4_splat(1.0f + 0.001f * j);
  for (int i = 0; i < iters; i++) {
    for (int j = 0; j < N; j++) acc[j] = wasm_f32x4_add(wasm_f32x4_mul(acc[j], vm), vc);
  }
  // Fold every chain into the result so none of them is dead code.
  v128_t s = acc[0];
  for (int j = 1; j < N; j++) s = wasm_f32x4_add(s, acc[j]);
  return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) +
         wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3);
}

// Scalar twin, for the scalar build's context.
template <int N>
static float scalar_chains(int iters, float m, float c) {
  float acc[N];
  for (int j = 0; j < N; j++) acc[j] = 1.0f + 0.001f * j;
  for (int i = 0; i < iters; i++) {
    for (int j = 0; j < N; j++) acc[j] = acc[j] * m + c;
  }
  float s = 0;
  for (int j = 0; j < N; j++) s += acc[j];
  return s;
}

#define EXPORT(name) extern "C" __attribute__((export_name(#name), noinline))
EXPORT(simd_chains_4) float simd_chains_4(int n, float m, float c) { return chains<4>(n, m, c); }
EXPORT(simd_chains_8) float simd_chains_8(int n, float m, float c) { return chains<8>(n, m, c); }
EXPORT(simd_chains_12) float simd_chains_12(int n, float m, float c) { return chains<12>(n, m, c); }
EXPORT(simd_chains_14) float simd_chains_14(int n, float m, float c) { return chains<14>(n, m, c); }
EXPORT(simd_chains_16) float simd_chains_16(int n, float m, float c) { return chains<16>(n, m, c); }
EXPORT(scalar_chains_12) float scalar_chains_12(int n, float m, float c) { return scalar_chains<12>(n, m, c); }
