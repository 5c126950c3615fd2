// A weight matrix as the core holds it: its storage type, its shape and its bytes. One description
// for every linear layer, the tied embeddings and the language-model heads, so a model can be held
// at 32, 16, 8 or 4 bits a weight.
//
// Layouts. A linear layer computes y = x W^T + b with W as nn.Linear stores it: out x in, each
// output's weights contiguous along the reduction (in) dimension, which is where the quantized
// types' blocks run. F32 linear weights are held in panels instead (`panels`): the outputs in
// groups of kPanel, each group an in x kPanel block (row k: the group's weights for input k), one
// group after the other, the last padded with zeros. A decoding step's one-row product then reads
// the matrix front to back in one stream, its kPanel sums in registers the whole way (an in x out
// matrix is read as one short row per input, the prefetcher restarting at each: 12 GB/s against
// 20 measured, WASM, 576 x 1536), and the tiled GEMM's micro-kernel reads a panel in place, with
// no packing. F32 embedding tables are rows x dim, i.e. out x in.
//
// Q8 is llama.cpp's Q8_0: blocks of 32 values, each an f16 scale d then 32 int8 q (34 bytes), value
// q * d. Q4 is Q4_0: an f16 scale d then 16 bytes of nibbles (18 bytes), value (q - 8) * d; byte j
// holds element j in its low nibble and element j + 16 in its high one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tensors/buffer.h"

namespace attn {

enum class WeightType { kF32 = 0, kF16 = 1, kBF16 = 2, kQ8 = 3, kQ4 = 4 };
const char* weight_type_name(WeightType t);  // "f32", "f16", "bf16", "q8", "q4"

constexpr int kPanel = 16;  // outputs per panel: four SIMD vectors of sums per row of A
// Where input k's weight for output r is in a panel-held matrix with `in` inputs (in floats).
inline std::size_t panel_index(int in, int r, int k) {
  return (static_cast<std::size_t>(r / kPanel) * in + k) * kPanel + r % kPanel;
}
// Outputs [j, j + n) of the n <= left outputs from j on, of a panel-held matrix whose output 0 is at
// lane `first` of the panel at P: the ones in j's panel (`panel` its first value), from `lane`.
struct PanelRun {
  const float* panel;
  int lane, n;
};
inline PanelRun panel_run(const float* P, int first, int in, int j, int left) {
  const int lane = (first + j) % kPanel;
  return {P + static_cast<std::size_t>((first + j) / kPanel) * in * kPanel, lane, kPanel - lane < left ? kPanel - lane : left};
}

constexpr int kQuantBlock = 32;
constexpr int kQ8BlockBytes = 2 + kQuantBlock;      // f16 scale + 32 int8
constexpr int kQ4BlockBytes = 2 + kQuantBlock / 2;  // f16 scale + 32 nibbles

inline bool is_quantized(WeightType t) { return t == WeightType::kQ8 || t == WeightType::kQ4; }
// Bytes of one stored row of `cols` values (quantized: cols a multiple of kQuantBlock).
std::size_t row_bytes(WeightType t, int cols);

// A matrix held somewhere else (a Weight, or a part of one: a slice of its outputs).
struct WeightView {
  WeightType type = WeightType::kF32;
  bool panels = false;  // F32 only: held in panels (above); `data` is the first output's panel
  const void* data = nullptr;
  int out = 0, in = 0;
  int first = 0;  // panels: the first output's place in its panel (a slice of a wider matrix)

  // Outputs [first, first + count) of this matrix.
  WeightView outputs(int first, int count) const;
  // Row r of W as out x in (output r's in weights) as float32, into out[0, in).
  void dequantize_output(int r, float* out) const;
  const unsigned char* bytes() const { return static_cast<const unsigned char*>(data); }
};

// An owned matrix. Bytes live in a float buffer (aligned, and bounded like every tensor).
struct Weight {
  WeightType type = WeightType::kF32;
  bool panels = false;
  int out = 0, in = 0;
  Buffer storage;

  // Sizes the storage for this type and shape (panels: zeroed); false if memory ran out (or too large).
  bool allocate(WeightType t, bool panels_, int out_, int in_);
  std::size_t byte_size() const;
  // Panels: output r's weights (in values) / input k's weights for outputs [first, first + n).
  void set_output(int r, const float* values);
  void set_input(int k, const float* values, int first, int n);
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(storage.data()); }
  bool empty() const { return storage.empty(); }
  WeightView view() const;
};

// Row r's values (n floats, finite) in type t's encoding, into `out` (row_bytes(t, n) bytes).
// "" = ok; else why not, naming the value: a value beyond the f16 range, or a block whose scale
// does not fit an f16.
std::string encode_row(WeightType t, const float* x, int n, unsigned char* out);

// One matrix whose outputs are the parts' outputs in order (e.g. [Q | K | V] for a fused
// projection). The parts share type, layout and inputs; they are emptied. "" = ok.
std::string concat_outputs(Weight* const* parts, int count, Weight* out);

// Quantizes n values (n a multiple of 32) into Q8_0 / Q4_0 blocks. Returns false if a block's
// scale does not fit an f16 (values beyond ~8e6, or Q4 beyond ~5e5).
bool quantize_q8(const float* x, int n, unsigned char* out);
bool quantize_q4(const float* x, int n, unsigned char* out);
// Blocks back to floats.
void dequantize_q8(const unsigned char* blocks, int n, float* out);
void dequantize_q4(const unsigned char* blocks, int n, float* out);

// Activations for the integer products: each row of A in blocks of 32, q = round(x / d) in
// [-127, 127] with d = max|x| / 127 per block (kept as float, not rounded to f16). int16 storage,
// so that the SIMD dot products read them without widening.
struct QuantizedRows {
  BasicBuffer<std::int16_t> q;  // rows x k
  Buffer scale;                 // rows x k / 32
  int rows = 0, k = 0;
  bool quantize(const float* A, int rows_, int k_, int lda);
};

// A quantized output row widened for the integer products: q as int16 (Q4: q - 8), one float
// scale per block. The scalar kernels use it; the SIMD ones widen in registers.
void unpack_quant_row(WeightType t, const unsigned char* row, int k, std::int16_t* q, float* scale);

}  // namespace attn
