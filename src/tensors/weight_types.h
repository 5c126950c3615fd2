// The weight types, as one table. Each type a weight matrix can be held in has one row in
// weight_types.cpp (its name, values and bytes per block, and how a row is encoded, decoded and
// widened for the integer products), and, if it is quantized, one block struct here with its size
// asserted, as ggml's block_q8_0. Kernels find a type's integer product by the type (Kernels::
// gemm_bt_quant, indexed by WeightType); a type with no kernel there is refused by name.
//
// Adding a type: its enumerator below (before kCount), its block struct, its row in kWeightTypes,
// and its kernels in kernels/kernels_quant_*.cpp with a row in each Kernels table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn {

enum class WeightType : int { kF32, kF16, kBF16, kQ8_0, kQ4_0, kCount };
constexpr int kWeightTypeCount = static_cast<int>(WeightType::kCount);

constexpr int kQuantBlock = 32;  // values per block of every quantized type so far

// llama.cpp's Q8_0: an f16 scale d and 32 int8 codes; value q * d.
struct BlockQ8_0 {
  std::uint16_t d;
  std::int8_t qs[kQuantBlock];
};
static_assert(sizeof(BlockQ8_0) == 2 + kQuantBlock, "Q8_0 blocks are 34 bytes, as ggml's");

// llama.cpp's Q4_0: an f16 scale d and 16 bytes of nibbles; value (q - 8) * d. Byte j holds
// element j in its low nibble and element j + 16 in its high one.
struct BlockQ4_0 {
  std::uint16_t d;
  std::uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ4_0) == 2 + kQuantBlock / 2, "Q4_0 blocks are 18 bytes, as ggml's");

// The block struct of a quantized type, for kernels written once per type (templates).
template <WeightType T>
struct BlockOf;
template <>
struct BlockOf<WeightType::kQ8_0> {
  using type = BlockQ8_0;
};
template <>
struct BlockOf<WeightType::kQ4_0> {
  using type = BlockQ4_0;
};

struct WeightTypeInfo {
  WeightType type;
  const char* name;  // as loadModel's dtype says it, and in error messages
  int block;         // values per block (1: a plain number format)
  int block_bytes;   // bytes per block
  // Values x[0, n) (finite; n a multiple of block) in this encoding, into out. "" = ok, else why
  // not, naming the value (beyond the f16 range; a block whose scale does not fit an f16).
  std::string (*encode)(const float* x, int n, unsigned char* out);
  // n encoded values back to float32.
  void (*decode)(const unsigned char* row, int n, float* out);
  // Quantized types: n values widened to int16 codes (zero point removed) and one float scale per
  // block, what the integer products' scalar twins read. Null for the float formats.
  void (*unpack)(const unsigned char* row, int n, std::int16_t* q, float* scale);
};

// The row of type t (a valid WeightType; kCount is not one).
const WeightTypeInfo& weight_type_info(WeightType t);
inline const char* weight_type_name(WeightType t) { return weight_type_info(t).name; }
inline bool is_quantized(WeightType t) { return weight_type_info(t).unpack != nullptr; }
// Bytes of one stored row of `cols` values (cols a multiple of the type's block).
inline std::size_t row_bytes(WeightType t, int cols) {
  const WeightTypeInfo& i = weight_type_info(t);
  return static_cast<std::size_t>(cols) / i.block * i.block_bytes;
}

// Values x[0, n) in type t's encoding (its row's encode).
inline std::string encode_row(WeightType t, const float* x, int n, unsigned char* out) {
  return weight_type_info(t).encode(x, n, out);
}

}  // namespace attn
