// QuantizedRows::quantize (quantized_rows.h): the scalar block quantizer and its SIMD twin.
#include "kernels/quantized_rows.h"

#include <cmath>

#include "kernels/simd4.h"
#include "tensors/quantize.h"

namespace attn {

namespace {

// One row's block of 32 (a, its first value): codes q, scale d = max|a| / 127, the block permuted
// (permute_block) and its two runs' sums. The scalar twin of quantize_block_simd.
void quantize_block(const float* a, std::int16_t* q, float* d, std::int16_t* permuted, std::int32_t* runs) {
  const float m = max_abs(a, kQuantBlock);
  *d = m / 127.0f;
  const float inv = *d > 0.0f ? 127.0f / m : 0.0f;  // (0 when m / 127 underflows: all codes 0)
  for (int i = 0; i < kQuantBlock; ++i) q[i] = static_cast<std::int16_t>(std::nearbyint(a[i] * inv));
  permute_block(q, permuted);
  for (int r = 0; r < 2; ++r) {
    std::int32_t s = 0;
    for (int i = 0; i < kOffsetRun; ++i) s += q[r * kOffsetRun + i];
    runs[r] = s;
  }
}

#if ATTN_HAVE_SIMD4
// quantize_block in four-lane vectors: the same max (NaNs skipped as the scalar comparison skips
// them), the same float products, rounded to nearest even as nearbyint; the permuted lanes are the
// int16 codes' even and odd halves of each 32-bit lane, narrowed.
void quantize_block_simd(const float* a, std::int16_t* q, float* d, std::int16_t* permuted, std::int32_t* runs) {
  using namespace simd4;
  f32x4 x[8], mv = splat(0.0f);
  for (int t = 0; t < 8; ++t) x[t] = load(a + 4 * t), mv = take_greater(mv, abs(x[t]));
  float m = 0.0f;
  for (int l = 0; l < 4; ++l) m = lane(mv, l) > m ? lane(mv, l) : m;
  *d = m / 127.0f;
  const float inv = *d > 0.0f ? 127.0f / m : 0.0f;
  const f32x4 s = splat(inv);
  i32x4 c[8];
  for (int t = 0; t < 8; ++t) c[t] = nearest_i32(mul(x[t], s));
  runs[0] = ilane_sum(iadd32(iadd32(c[0], c[1]), iadd32(c[2], c[3])));
  runs[1] = ilane_sum(iadd32(iadd32(c[4], c[5]), iadd32(c[6], c[7])));
  i32x4 v[4];
  for (int t = 0; t < 4; ++t) v[t] = inarrow16(c[2 * t], c[2 * t + 1]), istore(q + 8 * t, v[t]);
  // (int16 element 2i is the low half of 32-bit lane i, 2i + 1 its high half)
  const auto evens = [](i32x4 u, i32x4 w) { return inarrow16(isra32<16>(ishl32<16>(u)), isra32<16>(ishl32<16>(w))); };
  const auto odds = [](i32x4 u, i32x4 w) { return inarrow16(isra32<16>(u), isra32<16>(w)); };
  istore(permuted, evens(v[0], v[1]));
  istore(permuted + 8, evens(v[2], v[3]));
  istore(permuted + 16, odds(v[0], v[1]));
  istore(permuted + 24, odds(v[2], v[3]));
}
#endif

}  // namespace

bool QuantizedRows::quantize(const float* A, int rows_, int k_, int lda, bool simd) {
  rows = rows_, k = k_;
  const std::size_t blocks = std::size_t(rows_) * (k_ / kQuantBlock), n = std::size_t(rows_) * k_;
  if (!q.resize(n) || !scale.resize(blocks) || !permuted.resize(n) || !run_sums.resize(n / kOffsetRun) ||
      !run_sums_f.resize(n / kOffsetRun))
    return false;
  auto block = quantize_block;
#if ATTN_HAVE_SIMD4
  if (simd) block = quantize_block_simd;
#else
  (void)simd;
#endif
  for (int r = 0; r < rows_; ++r)
    for (int b = 0; b < k_ / kQuantBlock; ++b) {
      const std::size_t at = std::size_t(r) * (k_ / kQuantBlock) + b;
      block(A + static_cast<long>(r) * lda + b * kQuantBlock, q.data() + at * kQuantBlock, scale.data() + at,
            permuted.data() + at * kQuantBlock, run_sums.data() + 2 * at);
    }
  for (std::size_t r = 0; r < n / kOffsetRun; ++r) run_sums_f.data()[r] = static_cast<float>(run_sums.data()[r]);
  return true;
}

}  // namespace attn
