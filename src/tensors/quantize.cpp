// Our Q8_0 / Q4_0 quantizers (quantize.h). Their blocks are ggml's, byte for byte; Q4_0's scales
// are chosen by a least-squares search rather than ggml's extreme / -8 (q4_scale).
#include "tensors/quantize.h"

#include <cmath>
#include <cstring>

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

}  // namespace attn
