// A model's own activations checked for NaN and infinities where an overflow first shows cheaply
// (its embeddings, each sublayer's input and output on the residual stream, its logits), so a
// non-finite value the weights produce (e.g. bf16 weights of 1e38 overflowing float32) is named by
// model, layer and tensor, instead of surfacing later as if the input held it. One vectorized pass
// over rows x dim per check: small next to the matrix products that make those rows.
#pragma once

#include <cstddef>
#include <string>

#include "tensors/finite.h"

namespace attn {

// How a call's rows map to the input: row r is sequence r / per_sequence at position
// first_position + r % per_sequence (per_sequence 0: rows without positions, named "row r").
struct RowPositions {
  int per_sequence = 0;
  int first_position = 0;
};

class ActivationCheck {
 public:
  // model: how messages name it ("GPT-2 model", "BART decoder"). column: what a row's values are
  // ("feature", or "token" for logits).
  ActivationCheck(const char* model, RowPositions rows, const char* column = "feature")
      : model_(model), rows_(rows), column_(column) {}
  ActivationCheck with(RowPositions rows, const char* column) const { return ActivationCheck(model_, rows, column); }

  // "" when x (rows x cols) is finite; else the message naming the value and where(), e.g.
  // "qwen2 model: Infinity in layer 3's MLP output (model.layers.3.mlp.down_proj) at position 5,
  // feature 17: the model's weights produced it (float32 overflowed), not the input". where()
  // runs only then: no names are built on the hot path.
  template <class Where>
  std::string operator()(const float* x, std::size_t rows, int cols, const Where& where) const {
    return all_finite(x, rows * std::size_t(cols)) ? std::string() : report(x, rows, cols, where());
  }

 private:
  std::string report(const float* x, std::size_t rows, int cols, const std::string& where) const;
  const char* model_;
  RowPositions rows_;
  const char* column_;
};

// "layer <l>'s <what> (<tensor>)", the words every model's checks use.
std::string layer_tensor(int layer, const char* what, const std::string& tensor);

}  // namespace attn
