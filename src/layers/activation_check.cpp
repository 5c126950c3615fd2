#include "layers/activation_check.h"

namespace attn {

std::string ActivationCheck::report(const float* x, std::size_t rows, int cols, const std::string& where) const {
  const long i = first_non_finite(x, rows * std::size_t(cols));
  const long r = i / cols, c = i % cols;
  const float v = x[i];
  std::string at;
  if (rows_.per_sequence <= 0) {
    at = "row " + std::to_string(r);
  } else {
    at = "position " + std::to_string(rows_.first_position + r % rows_.per_sequence);
    if (rows > std::size_t(rows_.per_sequence)) at += " of sequence " + std::to_string(r / rows_.per_sequence);
  }
  const char* what = v != v ? "NaN" : (v > 0 ? "Infinity" : "-Infinity");
  return std::string(model_) + ": " + what + " in " + where + " at " + at + ", " + column_ + " " + std::to_string(c) +
         ": the model's weights produced it (float32 overflowed), not the input";
}

std::string layer_tensor(int layer, const char* what, const std::string& tensor) {
  return "layer " + std::to_string(layer) + "'s " + what + " (" + tensor + ")";
}

}  // namespace attn
