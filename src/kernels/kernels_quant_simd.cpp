// SIMD twins of the quantized products (kernels_quant_scalar.cpp), written against simd4.h.
// Each block of 32 weights is widened to int16 in registers (Q8: sign-extended bytes; Q4: nibbles
// minus 8) and meets A's int16 block in four 8-lane dot products (WebAssembly's i32x4.dot_i16x8_s,
// SSE2's pmaddwd): exact integer sums. Four rows of B go side by side, so one vector of four
// block sums takes the scales and joins four float accumulators, lane r the scalar twin's `acc`
// for row r: the same float operations in the same order, so the twins agree to the bit.
// A decoding step (one row of A) reads each weight byte once, front to back through four rows.
#include <cstring>
#include <vector>

#include "tensors/half.h"
#include "kernels/kernels_quant.h"
#include "kernels/simd4.h"
#include "tensors/weight.h"

namespace attn {

#if ATTN_HAVE_SIMD4
namespace {
using namespace simd4;

// A block's 32 values as four int16 vectors (values 0-7, 8-15, 16-23, 24-31).
template <WeightType T>
inline void widen_block(const unsigned char* block, i32x4 w[4]) {
  const unsigned char* q = block + 2;  // after the f16 scale
  if (T == WeightType::kQ8) {
    const i32x4 lo = iload(q), hi = iload(q + 16);
    w[0] = iwiden8_low(lo), w[1] = iwiden8_high(lo), w[2] = iwiden8_low(hi), w[3] = iwiden8_high(hi);
  } else {
    // Byte j: element j in its low nibble, element j + 16 in its high one.
    const i32x4 bytes = iload(q), mask = isplat8(15), eight = isplat8(8);
    const i32x4 lo = isub8(iand(bytes, mask), eight), hi = isub8(iand(ishr16_4(bytes), mask), eight);
    w[0] = iwiden8_low(lo), w[1] = iwiden8_high(lo), w[2] = iwiden8_low(hi), w[3] = iwiden8_high(hi);
  }
}

// The integer dot product of A's block (32 int16) with one stored block, as four int32 lanes.
template <WeightType T>
inline i32x4 block_dot(const i32x4 a[4], const unsigned char* block) {
  i32x4 w[4];
  widen_block<T>(block, w);
  return iadd32(iadd32(idot16(a[0], w[0]), idot16(a[1], w[1])), iadd32(idot16(a[2], w[2]), idot16(a[3], w[3])));
}

float scale_of(const unsigned char* block) {
  std::uint16_t h;
  std::memcpy(&h, block, 2);
  return half_to_float(h);
}

template <WeightType T>
void gemm_bt_quant_simd(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                        int ldc) {
  constexpr int kBlockBytes = T == WeightType::kQ8 ? kQ8BlockBytes : kQ4BlockBytes;
  const int blocks = K / kQuantBlock;
  const std::size_t rb = row_bytes(T, K);
  thread_local std::vector<float> scale_block;  // four rows' block scales, interleaved: [block][row]
  if (scale_block.size() < std::size_t(blocks) * 4) scale_block.resize(std::size_t(blocks) * 4);
  float* scales = scale_block.data();  // (a plain pointer: no thread-local lookup in the loops)
  int j = 0;
  for (; j + 4 <= N; j += 4) {
    const unsigned char* b[4];
    for (int r = 0; r < 4; ++r) b[r] = B + (j + r) * rb;
    for (int k = 0; k < blocks; ++k)
      for (int r = 0; r < 4; ++r) scales[std::size_t(k) * 4 + r] = scale_of(b[r] + k * kBlockBytes);
    for (int i = 0; i < M; ++i) {
      const std::int16_t* a = Aq + static_cast<long>(i) * K;
      const float* as = As + static_cast<long>(i) * blocks;
      f32x4 acc = splat(0.0f);
      for (int k = 0; k < blocks; ++k) {
        const i32x4 av[4] = {iload(a + 32 * k), iload(a + 32 * k + 8), iload(a + 32 * k + 16), iload(a + 32 * k + 24)};
        const std::size_t at = std::size_t(k) * kBlockBytes;
        const i32x4 dots = isum4(block_dot<T>(av, b[0] + at), block_dot<T>(av, b[1] + at), block_dot<T>(av, b[2] + at),
                                 block_dot<T>(av, b[3] + at));
        // (as the scalar twin: the dot as float, times the product of the two scales, added)
        acc = add(acc, mul(i32_to_f32(dots), mul(splat(as[k]), load(scales + 4 * k))));
      }
      store(C + static_cast<long>(i) * ldc + j, acc);
    }
  }
  for (; j < N; ++j) {  // the last N % 4 rows of B, one at a time
    const unsigned char* b = B + j * rb;
    for (int i = 0; i < M; ++i) {
      const std::int16_t* a = Aq + static_cast<long>(i) * K;
      const float* as = As + static_cast<long>(i) * blocks;
      float acc = 0.0f;
      for (int k = 0; k < blocks; ++k) {
        const i32x4 av[4] = {iload(a + 32 * k), iload(a + 32 * k + 8), iload(a + 32 * k + 16), iload(a + 32 * k + 24)};
        const int dot = ilane_sum(block_dot<T>(av, b + std::size_t(k) * kBlockBytes));
        acc += static_cast<float>(dot) * (as[k] * scale_of(b + std::size_t(k) * kBlockBytes));
      }
      C[static_cast<long>(i) * ldc + j] = acc;
    }
  }
}

}  // namespace

void gemm_bt_q8_simd(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                     int ldc) {
  gemm_bt_quant_simd<WeightType::kQ8>(M, N, K, Aq, As, B, C, ldc);
}

void gemm_bt_q4_simd(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                     int ldc) {
  gemm_bt_quant_simd<WeightType::kQ4>(M, N, K, Aq, As, B, C, ldc);
}
#endif

}  // namespace attn
