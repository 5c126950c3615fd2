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

// The 16 bits at p (little-endian, as stored; p need not be aligned).
inline std::uint16_t load_u16(const unsigned char* p) {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

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

namespace attn {

// float32 -> IEEE half, rounded to nearest even (what torch's .half() does). Finite values above
// the half range become infinity; callers that store halves check for it.
inline std::uint16_t float_to_half(float f) {
  const std::uint32_t u = float_to_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN, infinity
  if (a >= 0x477ff000u) return sign | 0x7c00u;                               // rounds past 65504
  if (a < 0x38800000u) {
    // A subnormal half (or zero): scaling by 2^-(-14-10)... the float's value times 2^24, rounded.
    const float scaled = bits_to_float(a) * 0x1p24f;  // exact: a power-of-two scaling
    // Round half to even by the float unit's own rounding: adding 2^23 leaves the integer part.
    const float rounded = (scaled + 0x1p23f) - 0x1p23f;
    return sign | static_cast<std::uint16_t>(rounded);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits to even.
  const std::uint32_t rebased = a - (112u << 23);
  const std::uint32_t lsb = (rebased >> 13) & 1u;
  return sign | static_cast<std::uint16_t>((rebased + 0x0fffu + lsb) >> 13);
}

// float32 -> bfloat16, rounded to nearest even (finite inputs).
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t u = float_to_bits(f);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace attn
