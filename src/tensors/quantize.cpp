// Our Q8_0 / Q4_0 quantizers (quantize.h). Their blocks are ggml's, byte for byte; Q4_0's scales
// are chosen by a least-squares search rather than ggml's extreme / -8 (q4_scale).
#include "tensors/quantize.h"

#include <cmath>
#include <cstring>

#include "kernels/simd4.h"
#include "tensors/half.h"

namespace attn {

float max_abs(const float* x, int n) {
  float m = 0.0f;
  for (int i = 0; i < n; ++i) m = std::fabs(x[i]) > m ? std::fabs(x[i]) : m;
  return m;
}

// Rounded away from zero, never toward it: a smaller scale would push the block's largest value
// past the top code and clip it (by far more than half a step when the scale is a subnormal half,
// for blocks of tiny values).
bool block_scale(float d, std::uint16_t* bits, float* rounded) {
  *bits = float_to_half(d);
  if (std::fabs(half_to_float(*bits)) < std::fabs(d)) ++*bits;  // the next half away from zero
  *rounded = half_to_float(*bits);
  return std::isfinite(*rounded);
}

// Scales are rounded to f16 (upward in magnitude) before the values are divided by them, so that
// q * d (with the d the kernels read) is within d / 2 of each value, and |q| <= 127.
bool quantize_q8(const float* x, int n, unsigned char* out) {
  for (int b = 0; b < n; b += kQuantBlock, out += sizeof(BlockQ8_0)) {
    std::uint16_t bits;
    float d;
    if (!block_scale(max_abs(x + b, kQuantBlock) / 127.0f, &bits, &d)) return false;
    std::memcpy(out, &bits, 2);
    const float inv = d > 0.0f ? 1.0f / d : 0.0f;
    for (int i = 0; i < kQuantBlock; ++i) {
      const float q = std::nearbyint(x[b + i] * inv);
      out[2 + i] = static_cast<unsigned char>(static_cast<std::int8_t>(q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q));
    }
  }
  return true;
}

namespace {

// Q4_0's codes for one block at scale d (nibble = round(x / d) + 8, clipped to [0, 15]).
void q4_codes(const float* x, float d, unsigned char* nibbles) {
  const float inv = d != 0.0f ? 1.0f / d : 0.0f;
  const auto code = [&](int i) {
    const float q = std::nearbyint(x[i] * inv) + 8.0f;
    return static_cast<unsigned char>(q < 0.0f ? 0.0f : q > 15.0f ? 15.0f : q);
  };
  for (int j = 0; j < kQuantBlock / 2; ++j) nibbles[j] = static_cast<unsigned char>(code(j) | code(j + 16) << 4);
}

// Q4_0's scale for one block: ggml's d = extreme / -8 (the value of largest magnitude exactly at
// code 0) leaves the other 15 codes a step of |extreme| / 8, so most values sit far from one. As
// llama.cpp's make_qx_quants, try codes from scales around it, give each set of codes its
// least-squares scale (sum x q / sum q^2), and keep the pair with the smallest squared error: a
// few values then clip, for a finer step everywhere else (brown-gpt2 held-out perplexity at q4,
// its head at q8: +2.6% over f32 with this scale, +4.4% with ggml's).
float q4_scale(const float* x) {
  float extreme = 0.0f;
  for (int i = 0; i < kQuantBlock; ++i)
    if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
  if (extreme == 0.0f) return 0.0f;
  // Nine candidates, 7.2 to 8.8 steps across the extreme (19 in steps of 0.1: brown-gpt2's q4
  // perplexity 333.52 instead of 333.67, for about three times the GPT-2-small load time).
  float best_d = extreme / -8.0f, best_fit = -1.0f;
  for (int t = -4; t <= 4; ++t) {
    const float inv = -(8.0f + 0.2f * t) / extreme;
    float xq = 0, qq = 0;
    for (int i = 0; i < kQuantBlock; ++i) {
      float q = std::nearbyint(x[i] * inv);
      q = q < -8.0f ? -8.0f : q > 7.0f ? 7.0f : q;
      xq += x[i] * q, qq += q * q;
    }
    // The squared error with the least-squares scale is sum x^2 - (sum x q)^2 / sum q^2.
    if (qq > 0 && xq * xq / qq > best_fit) best_fit = xq * xq / qq, best_d = xq / qq;
  }
  return best_d;
}

}  // namespace

bool quantize_q4(const float* x, int n, unsigned char* out) {
  for (int b = 0; b < n; b += kQuantBlock, out += sizeof(BlockQ4_0)) {
    std::uint16_t bits;
    float d;
    if (!block_scale(q4_scale(x + b), &bits, &d)) return false;
    std::memcpy(out, &bits, 2);
    q4_codes(x + b, d, out + 2);  // (with the scale as stored)
  }
  return true;
}

void dequantize_q8(const unsigned char* blocks, int n, float* out) {
  for (int b = 0; b < n; b += kQuantBlock, blocks += sizeof(BlockQ8_0)) {
    const float d = half_to_float(load_u16(blocks));
    for (int i = 0; i < kQuantBlock; ++i) out[b + i] = static_cast<std::int8_t>(blocks[2 + i]) * d;
  }
}

void dequantize_q4(const unsigned char* blocks, int n, float* out) {
  for (int b = 0; b < n; b += kQuantBlock, blocks += sizeof(BlockQ4_0)) {
    const float d = half_to_float(load_u16(blocks));
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      out[b + j] = ((blocks[2 + j] & 15) - 8) * d;
      out[b + j + 16] = ((blocks[2 + j] >> 4) - 8) * d;
    }
  }
}

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
