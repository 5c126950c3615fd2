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
// The storage types and their encodings are weight_types.h's table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tensors/buffer.h"
#include "tensors/weight_types.h"

namespace attn {

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

// One matrix whose outputs are the parts' outputs in order (e.g. [Q | K | V] for a fused
// projection). The parts share type, layout and inputs; they are emptied. "" = ok.
std::string concat_outputs(Weight* const* parts, int count, Weight* out);

}  // namespace attn
