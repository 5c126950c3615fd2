// Finding NaN and infinite values, and naming them in errors: used by the tensor table (checkpoint
// values) and the attention core (inputs, masks). Below both, so tensors/ needs nothing above it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace attn {

// Index of the first NaN or infinite value, or -1.
inline long first_non_finite(const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return static_cast<long>(i);
  return -1;
}

// True when every one of x[0..n) is finite: one pass without a branch per value, so compilers
// vectorize it (max over the magnitudes' bit patterns; NaN and the infinities have every
// exponent bit set, above every finite pattern). For checks on the hot path (a model's
// activations); first_non_finite then finds the value.
inline bool all_finite(const float* x, std::size_t n) {
  std::uint32_t top = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, x + i, sizeof u);
    u &= 0x7fffffffu;
    top = u > top ? u : top;
  }
  return top < 0x7f800000u;
}

// "<name> contains NaN|Infinity|-Infinity at index <index>": check_finite's words, for callers that
// find the value themselves (e.g. at an index of a stored, not yet transposed, tensor).
inline std::string non_finite_message(const std::string& name, float value, long index) {
  const char* what = std::isnan(value) ? "NaN" : (value > 0 ? "Infinity" : "-Infinity");
  return name + " contains " + what + " at index " + std::to_string(index);
}

}  // namespace attn
