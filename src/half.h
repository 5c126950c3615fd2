// 16-bit floats as checkpoints store them, widened to float32: IEEE 754 binary16 ("F16", what
// torch.float16 saves) and bfloat16 ("BF16", the top half of a float32). Done here rather than in
// JavaScript so that a checkpoint's bytes go into the heap as they are (one memcpy) and become
// floats in one pass, straight into the model's own storage.
#pragma once

#include <cstdint>
#include <cstring>

namespace attn {

inline float bits_to_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float bf16_to_float(std::uint16_t b) { return bits_to_float(std::uint32_t(b) << 16); }

inline std::uint32_t float_to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Branch-free, so that a loop of it vectorizes (the SIMD build widens four values per step).
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t magnitude = h & 0x7fffu;
  // Shifted into float32's fields, a half's exponent is short of float32's bias by 112: multiplying
  // by 2^112 rebiases normal values and normalizes subnormal ones, exactly.
  std::uint32_t u = float_to_bits(bits_to_float(magnitude << 13) * 0x1p112f);
  u = magnitude >= 0x7c00u ? 0x7f800000u | (magnitude << 13) : u;  // infinity, NaN (payload kept)
  return bits_to_float(u | sign);
}

}  // namespace attn
