// The relaxed-SIMD build's integer products (attention_relaxed.wasm): the packed types of blocks of
// 32 (Q4_0, Q4_1, Q5_0, Q5_1) dotted with i32x4.relaxed_dot_i8x16_i7x16_add_s, and the Kernels
// table that build uses (the SIMD build's, with these in the quantized row). Compiled by clang-19
// with -mrelaxed-simd (clang 14 of Emscripten 3.1.6 emits a pre-standard opcode); CMakeLists.txt.
//
// The instruction multiplies signed bytes (first operand) by 7-bit ones (second) and adds each
// four products into an int32 lane. Engines may treat the second operand's top bit as they like
// (x86 reads it unsigned, Arm signed; V8 in Node 20 gives yet other numbers for it), so the sum is
// only defined when every second-operand lane is in 0..127. Here that operand is always a stored
// weight code before its zero point (0..15 for Q4_*, 0..31 for Q5_*), the first one the
// activations' codes (-127..127, narrowed to bytes): the sums are exact, as the scalar twin's, and
// so are the pairwise int16 sums x86 makes on the way (2 x 127 x 31 < 2^15).
//
// Q8_0's codes are signed: splitting them (|w| and sign(w) onto the activations, or the
// activations into their positive and negative parts) costs more instructions per block than the
// SIMD build's widening load and i32x4.dot_i16x8_s, so Q8_0 and the K-quants keep the SIMD kernels.
//
// Per block of four rows, as kernels_quant_simd.cpp's four_rows: each row's four lanes of sums
// stored as soon as made (V8 spills otherwise), the four rows' sums in one vector, less the zero
// point times the activations' sum, then the scalar twin's float operations in its order.
#if defined(__wasm_relaxed_simd__)
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kernels_quant.h"
#include "kernels/simd4.h"
#include "tensors/quantize.h"
#include "kernels/quantized_rows.h"

namespace attn {
namespace {
using namespace simd4;

// Four int32 lanes of sums of four products, added to acc (the sum is exact: see above).
inline i32x4 idot8(i32x4 a_bytes, i32x4 codes7, i32x4 acc) { return wasm_i32x4_relaxed_dot_i8x16_i7x16_add(a_bytes, codes7, acc); }

// The activations' codes (-127..127) as bytes, in their order: one narrowing per 16.
void narrow_codes(const std::int16_t* q, long n, std::int8_t* out) {
  for (long k = 0; k < n; k += 16)
    wasm_v128_store(out + k, wasm_i8x16_narrow_i16x8(wasm_v128_load(q + k), wasm_v128_load(q + k + 8)));
}

template <WeightType T>
constexpr int kZeroPoint = T == WeightType::kQ4_0 ? 8 : T == WeightType::kQ5_0 ? 16 : 0;
template <WeightType T>
constexpr bool kHasMin = T == WeightType::kQ4_1 || T == WeightType::kQ5_1;
template <WeightType T>
constexpr bool kFifthBit = T == WeightType::kQ5_0 || T == WeightType::kQ5_1;

// One block's stored codes (before the zero point) dotted with the activations' bytes a0 (elements
// 0..15) and a1 (16..31): byte j of the block's qs holds element j (low nibble) and j + 16 (high).
template <WeightType T>
inline i32x4 block_dot(i32x4 a0, i32x4 a1, const unsigned char* blk) {
  using Block = typename BlockOf<T>::type;
  const i32x4 v = iload(blk + offsetof(Block, qs)), nib = wasm_i8x16_splat(15);
  i32x4 lo = iand(v, nib), hi = iand(iushr16<4>(v), nib);
  if constexpr (kFifthBit<T>) {
    // bit j of qh: element j's 5th bit (byte j of e0, j - 16 of e1), moved to bit 4
    i32x4 e0, e1;
    ibits_to_bytes(blk + offsetof(Block, qh), e0, e1);
    const i32x4 bit = wasm_i8x16_splat(16);
    lo = ior(lo, iand(e0, bit)), hi = ior(hi, iand(e1, bit));
  }
  return idot8(a1, hi, idot8(a0, lo, isplat32(0)));
}

inline f32x4 halves_at(const unsigned char* const b[4], std::size_t at) {
  return half_high_to_float(load_u16_high_x4(b[0] + at, b[1] + at, b[2] + at, b[3] + at));
}

// Where the bytes touched ahead end up, so that the compiler keeps those loads.
std::atomic<unsigned> touch_sink{0};

// One activation row (codes as bytes a8, block scales as, runs of 16's sums) against rows b[0..3]:
// lane r the scalar twin's acc for row r. When `ahead` is set (a decoding step), each block touches
// the next four rows' bytes as far on, one byte per cache line: the hardware prefetcher stops at
// the jump to them (kernels_quant_simd.cpp measured the same touches at 3x the stream).
template <WeightType T>
inline f32x4 four_rows(int blocks, const std::int8_t* a8, const float* as, const std::int32_t* sums, const float* runs,
                       const unsigned char* const b[4], const unsigned char* ahead, unsigned& sink, i32x4* fence) {
  using Block = typename BlockOf<T>::type;
  f32x4 acc = splat(0.0f);
  for (int k = 0; k < blocks; ++k) {
    if (ahead) {
      const unsigned char* t = ahead + std::size_t(k) * 4 * sizeof(Block);
      sink += t[0] + t[64];
    }
    const i32x4 a0 = iload(a8 + 32 * k), a1 = iload(a8 + 32 * k + 16);
    const std::size_t at = std::size_t(k) * sizeof(Block);
    i32x4 d[4];
    for (int r = 0; r < 4; ++r) {
      d[r] = block_dot<T>(a0, a1, b[r] + at);
      store_in_order(fence + r, d[r]);
    }
    i32x4 dots = isum4(d[0], d[1], d[2], d[3]);
    if (kZeroPoint<T>) dots = isub32(dots, isplat32(kZeroPoint<T> * (sums[2 * k] + sums[2 * k + 1])));
    acc = add(acc, mul(i32_to_f32(dots), mul(splat(as[k]), halves_at(b, at))));
    if constexpr (kHasMin<T>) {
      const f32x4 m = halves_at(b, at + offsetof(Block, m));
      acc = add(acc, mul(splat(as[k]), add(mul(m, splat(runs[2 * k])), mul(m, splat(runs[2 * k + 1])))));
    }
  }
  return acc;
}

inline void store_rows(float* c, f32x4 v, int n) {
  alignas(16) float t[4];
  store(t, v);
  for (int r = 0; r < n; ++r) c[r] = t[r];
}

// C = A B^T, four rows of B at a time (the last N % 4 beside copies of row N - 1, not stored),
// every row of A against them while they are in cache.
template <WeightType T>
void gemm_bt_quant_relaxed(int M, int N, int K, const QuantizedRows& A, const unsigned char* B, float* C, int ldc) {
  const int blocks = K / kQuantBlock;
  const std::size_t rb = row_bytes(T, K);
  thread_local std::vector<std::int8_t> bytes;
  thread_local i32x4 fence_slots[4];
  bytes.resize(std::size_t(M) * K);
  narrow_codes(A.q.data(), long(M) * K, bytes.data());
  unsigned sink = 0;
  for (int j = 0; j < N; j += 4) {
    const unsigned char* b[4];
    for (int r = 0; r < 4; ++r) b[r] = B + std::size_t(j + r < N ? j + r : N - 1) * rb;
    const unsigned char* ahead = M == 1 && j + 8 <= N ? b[0] + 4 * rb : nullptr;
    for (int i = 0; i < M; ++i) {
      const long at = long(i) * K;
      const f32x4 acc = four_rows<T>(blocks, bytes.data() + at, A.scale.data() + at / kQuantBlock, A.run_sums.data() + at / kOffsetRun,
                                     A.run_sums_f.data() + at / kOffsetRun, b, ahead, sink, fence_slots);
      store_rows(C + long(i) * ldc + j, acc, N - j < 4 ? N - j : 4);
    }
  }
  touch_sink.store(sink, std::memory_order_relaxed);
}

QuantKernels relaxed_quant_kernels() {
  QuantKernels k = simd_quant_kernels();
  k.set(WeightType::kQ4_0, gemm_bt_quant_relaxed<WeightType::kQ4_0>)
      .set(WeightType::kQ4_1, gemm_bt_quant_relaxed<WeightType::kQ4_1>)
      .set(WeightType::kQ5_0, gemm_bt_quant_relaxed<WeightType::kQ5_0>)
      .set(WeightType::kQ5_1, gemm_bt_quant_relaxed<WeightType::kQ5_1>);
  return k;
}

}  // namespace

// The SIMD build's kernels with the relaxed products: what this build uses (kernels_simd.cpp's
// default_kernels is weak; this one replaces it when this file is linked in).
const Kernels& default_kernels() {
  static const Kernels k = [] {
    Kernels r = simd_kernels();
    r.name = "relaxed";
    r.gemm_bt_quant = relaxed_quant_kernels();
    return r;
  }();
  return k;
}

}  // namespace attn
#endif
