// The weight types, as one table. Each type a weight matrix can be held in has one row in
// weight_types.cpp (its name, values and bytes per block, and how a row is encoded, decoded and
// widened for the integer products), and, if it is quantized, one block struct here with its size
// asserted, as ggml's block_q8_0. Kernels find a type's integer product by the type (Kernels::
// gemm_bt_quant, indexed by WeightType); a type with no kernel there is refused by name.
//
// Adding a type: its enumerator below (before kCount), its block struct, its row in kWeightTypes,
// and its kernels in kernels/kernels_quant_*.cpp with a row in each Kernels table.
//
// The GGUF (llama.cpp) types beyond Q8_0 / Q4_0 (issue 33): the legacy blocks of 32 with a 5th bit
// or a min (Q5_0, Q4_1, Q5_1) and the K-quants' super-blocks of 256 (Q2_K .. Q6_K), whose sub-blocks
// of 16 or 32 have their own 4-, 6- or 8-bit scales (and mins) under the block's f16 d (and dmin).
// Their blocks are ggml's, byte for byte (ggml-common.h); decode is ggml's dequantize_row_* formula.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn {

enum class WeightType : int {
  kF32, kF16, kBF16, kQ8_0, kQ4_0,
  kQ4_K, kQ6_K, kQ5_0, kQ4_1, kQ5_1, kQ5_K, kQ3_K, kQ2_K,
  kCount
};
constexpr int kWeightTypeCount = static_cast<int>(WeightType::kCount);

// Values per block of Q8_0, Q4_0, Q5_0, Q4_1, Q5_1; the unit of the integer products' scales (one
// per 32 values, of the weights and of the activations alike) for every quantized type.
constexpr int kQuantBlock = 32;
constexpr int kSuperBlock = 256;  // values per block of the K-quants (ggml's QK_K)
constexpr int kOffsetRun = 16;    // values per offset of unpack (below)

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

// llama.cpp's Q4_1: f16 d and m, nibbles as Q4_0's; value q * d + m (q in 0..15).
struct BlockQ4_1 {
  std::uint16_t d, m;
  std::uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ4_1) == 20, "Q4_1 blocks are 20 bytes, as ggml's");

// llama.cpp's Q5_0: f16 d, the 5th bits (bit i of the little-endian qh: element i) and nibbles as
// Q4_0's; value (q - 16) * d.
struct BlockQ5_0 {
  std::uint16_t d;
  std::uint8_t qh[4];
  std::uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ5_0) == 22, "Q5_0 blocks are 22 bytes, as ggml's");

// llama.cpp's Q5_1: Q5_0's codes with a min; value q * d + m (q in 0..31).
struct BlockQ5_1 {
  std::uint16_t d, m;
  std::uint8_t qh[4];
  std::uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ5_1) == 24, "Q5_1 blocks are 24 bytes, as ggml's");

// llama.cpp's Q2_K: 16 sub-blocks of 16; scales[j] holds sub-block j's scale (low nibble) and min
// (high nibble); element i's 2 bits are bits 2 ((i % 128) / 32) of qs[32 (i / 128) + i % 32];
// value d * sc * q - dmin * m.
struct BlockQ2_K {
  std::uint8_t scales[kSuperBlock / 16];
  std::uint8_t qs[kSuperBlock / 4];
  std::uint16_t d, dmin;
};
static_assert(sizeof(BlockQ2_K) == 84, "Q2_K blocks are 84 bytes, as ggml's");

// llama.cpp's Q3_K: 16 sub-blocks of 16 with 6-bit scales (stored + 32, packed in 12 bytes); element
// i's low 2 bits as Q2_K's, its 3rd bit bit i / 32 of hmask[i % 32]; value d * (sc - 32) * (q - 4).
struct BlockQ3_K {
  std::uint8_t hmask[kSuperBlock / 8];
  std::uint8_t qs[kSuperBlock / 4];
  std::uint8_t scales[12];
  std::uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110, "Q3_K blocks are 110 bytes, as ggml's");

// llama.cpp's Q4_K: 8 sub-blocks of 32 with 6-bit scales and mins packed in 12 bytes (ggml's
// get_scale_min_k4); element i's nibble in qs[32 (i / 64) + i % 32], high when i % 64 >= 32;
// value d * sc * q - dmin * m.
struct BlockQ4_K {
  std::uint16_t d, dmin;
  std::uint8_t scales[12];
  std::uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockQ4_K) == 144, "Q4_K blocks are 144 bytes, as ggml's");

// llama.cpp's Q5_K: Q4_K with a 5th bit per element, bit i / 32 of qh[i % 32].
struct BlockQ5_K {
  std::uint16_t d, dmin;
  std::uint8_t scales[12];
  std::uint8_t qh[kSuperBlock / 8];
  std::uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockQ5_K) == 176, "Q5_K blocks are 176 bytes, as ggml's");

// llama.cpp's Q6_K: 16 sub-blocks of 16 with int8 scales; element i (h = i / 128, t = i % 128):
// low 4 bits in ql[64 h + 32 (t / 32 % 2) + t % 32] (high nibble when t >= 64), high 2 bits at bit
// 2 (t / 32) of qh[32 h + t % 32]; value d * sc * (q - 32).
struct BlockQ6_K {
  std::uint8_t ql[kSuperBlock / 2];
  std::uint8_t qh[kSuperBlock / 4];
  std::int8_t scales[kSuperBlock / 16];
  std::uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210, "Q6_K blocks are 210 bytes, as ggml's");

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
template <>
struct BlockOf<WeightType::kQ4_K> {
  using type = BlockQ4_K;
};
template <>
struct BlockOf<WeightType::kQ6_K> {
  using type = BlockQ6_K;
};
template <>
struct BlockOf<WeightType::kQ5_0> {
  using type = BlockQ5_0;
};
template <>
struct BlockOf<WeightType::kQ4_1> {
  using type = BlockQ4_1;
};
template <>
struct BlockOf<WeightType::kQ5_1> {
  using type = BlockQ5_1;
};
template <>
struct BlockOf<WeightType::kQ5_K> {
  using type = BlockQ5_K;
};
template <>
struct BlockOf<WeightType::kQ3_K> {
  using type = BlockQ3_K;
};
template <>
struct BlockOf<WeightType::kQ2_K> {
  using type = BlockQ2_K;
};

struct WeightTypeInfo {
  WeightType type;
  const char* name;  // as loadModel's dtype says it, and in error messages
  const char* stored_name;  // as a checkpoint names it: safetensors' dtype, GGUF's ggml type
  int block;         // values per block (1: a plain number format)
  int block_bytes;   // bytes per block
  // Values x[0, n) (finite; n a multiple of block) in this encoding, into out. "" = ok, else why
  // not, naming the value (beyond the f16 range; a block whose scale does not fit an f16).
  std::string (*encode)(const float* x, int n, unsigned char* out);
  // n encoded values back to float32.
  void (*decode)(const unsigned char* row, int n, float* out);
  // Quantized types: n values widened for the integer products' scalar twins, so that value k is
  //   scale[k / 32] * q[k] + offset[k / 16]
  // q: int16 codes, zero point removed and any sub-block scale folded in (K-quants: q * sc, within
  // int16: at most 32 x 128 for Q6_K); scale: one float per 32 values (the block's d, or the
  // super-block's d for the K-quants); offset: one float per 16 values, the min (Q4_1, Q5_1: m; Q2_K,
  // Q4_K, Q5_K: -dmin * m of the sub-block), 0 for the types without one. The value equals decode's
  // up to float rounding (decode multiplies d * sc first, as ggml). The product of a row of 32 with
  // an activation block (int16 codes a, scale s) is then
  //   s * scale * sum(a q) + s * (offset[0] * sum(a[0..16)) + offset[1] * sum(a[16..32)))
  // with the second term left out when both offsets are 0 (kernels_quant_scalar.cpp). Null for the
  // float formats.
  void (*unpack)(const unsigned char* row, int n, std::int16_t* q, float* scale, float* offset);
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
