// The weight types' table (weight_types.h): each type's encoding, decoding and widening, and its row.
#include "tensors/weight_types.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "tensors/half.h"
#include "tensors/quantize.h"

namespace attn {

namespace {

std::string show(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// --- F32, F16, BF16: one value at a time -----------------------------------------------------

std::string encode_f32(const float* x, int n, unsigned char* out) {
  std::memcpy(out, x, std::size_t(n) * sizeof(float));
  return "";
}
void decode_f32(const unsigned char* row, int n, float* out) { std::memcpy(out, row, std::size_t(n) * sizeof(float)); }

// A 16-bit format: its rounding and its all-ones exponent (what a value past its range becomes).
template <std::uint16_t (*kRound)(float), std::uint16_t kExponent>
std::string encode_16(const float* x, int n, unsigned char* out, const char* name) {
  for (int i = 0; i < n; ++i) {
    const std::uint16_t h = kRound(x[i]);
    if ((h & kExponent) == kExponent)
      return "value " + show(x[i]) + " at column " + std::to_string(i) + " is too large for " + name;
    std::memcpy(out + 2 * i, &h, 2);
  }
  return "";
}
std::string encode_f16(const float* x, int n, unsigned char* out) { return encode_16<float_to_half, 0x7c00u>(x, n, out, "f16"); }
std::string encode_bf16(const float* x, int n, unsigned char* out) {
  return encode_16<float_to_bf16, 0x7f80u>(x, n, out, "bf16");
}
void decode_f16(const unsigned char* row, int n, float* out) {
  for (int k = 0; k < n; ++k) out[k] = half_to_float(load_u16(row + 2 * k));
}
void decode_bf16(const unsigned char* row, int n, float* out) {
  for (int k = 0; k < n; ++k) out[k] = bf16_to_float(load_u16(row + 2 * k));
}

// --- Q8_0, Q4_0: blocks of 32 -----------------------------------------------------------------

std::string scale_error(const char* name, const float* x, int n) {
  return "values up to " + show(max_abs(x, n)) + " are too large for " + name + "'s f16 block scales";
}
std::string encode_q8_0(const float* x, int n, unsigned char* out) {
  return quantize_q8(x, n, out) ? "" : scale_error("q8", x, n);
}
std::string encode_q4_0(const float* x, int n, unsigned char* out) {
  return quantize_q4(x, n, out) ? "" : scale_error("q4", x, n);
}

void unpack_q8_0(const unsigned char* row, int n, std::int16_t* q, float* scale) {
  const BlockQ8_0* blocks = reinterpret_cast<const BlockQ8_0*>(row);
  for (int b = 0; b < n / kQuantBlock; ++b) {
    scale[b] = half_to_float(blocks[b].d);
    for (int i = 0; i < kQuantBlock; ++i) q[b * kQuantBlock + i] = blocks[b].qs[i];
  }
}
void unpack_q4_0(const unsigned char* row, int n, std::int16_t* q, float* scale) {
  const BlockQ4_0* blocks = reinterpret_cast<const BlockQ4_0*>(row);
  for (int b = 0; b < n / kQuantBlock; ++b) {
    scale[b] = half_to_float(blocks[b].d);
    std::int16_t* o = q + b * kQuantBlock;
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      o[j] = static_cast<std::int16_t>((blocks[b].qs[j] & 15) - 8);
      o[j + 16] = static_cast<std::int16_t>((blocks[b].qs[j] >> 4) - 8);
    }
  }
}

// --- The table: one row per type, in WeightType's order -----------------------------------------

constexpr WeightTypeInfo kWeightTypes[] = {
    {WeightType::kF32, "f32", 1, 4, encode_f32, decode_f32, nullptr},
    {WeightType::kF16, "f16", 1, 2, encode_f16, decode_f16, nullptr},
    {WeightType::kBF16, "bf16", 1, 2, encode_bf16, decode_bf16, nullptr},
    {WeightType::kQ8_0, "q8", kQuantBlock, sizeof(BlockQ8_0), encode_q8_0, dequantize_q8, unpack_q8_0},
    {WeightType::kQ4_0, "q4", kQuantBlock, sizeof(BlockQ4_0), encode_q4_0, dequantize_q4, unpack_q4_0},
};
static_assert(sizeof kWeightTypes / sizeof kWeightTypes[0] == kWeightTypeCount, "one row per WeightType");

constexpr bool rows_in_order() {
  for (int i = 0; i < kWeightTypeCount; ++i)
    if (static_cast<int>(kWeightTypes[i].type) != i) return false;
  return true;
}
static_assert(rows_in_order(), "kWeightTypes' rows follow WeightType's order");

}  // namespace

const WeightTypeInfo& weight_type_info(WeightType t) { return kWeightTypes[static_cast<int>(t)]; }

}  // namespace attn
