#include "attention/rotary.h"

#include <cmath>
#include <vector>

namespace attn {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Hugging Face's _compute_llama3_parameters: high frequencies kept, low ones divided by factor,
// the band between interpolated.
void llama3_scale(const RopeConfig& c, std::vector<double>& f) {
  const double old_len = c.original_max_position_embeddings;
  const double low_wavelen = old_len / c.low_freq_factor, high_wavelen = old_len / c.high_freq_factor;
  for (double& freq : f) {
    const double wavelen = 2 * kPi / freq;
    if (wavelen < high_wavelen) continue;
    if (wavelen > low_wavelen) {
      freq /= c.factor;
      continue;
    }
    const double smooth = (old_len / wavelen - c.low_freq_factor) / (c.high_freq_factor - c.low_freq_factor);
    freq = (1 - smooth) * freq / c.factor + smooth * freq;
  }
}

void rotate_heads(float* row, int heads, int dim, const float* cos, const float* sin) {
  const int half = dim / 2;
  for (int h = 0; h < heads; ++h) {
    float* x = row + static_cast<long>(h) * dim;
    for (int i = 0; i < half; ++i) {
      const float a = x[i], b = x[i + half];
      x[i] = a * cos[i] - b * sin[i];
      x[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace

std::string RotaryEmbedding::configure(const RopeConfig& c, int head_dim) {
  if (head_dim < 2 || head_dim % 2 != 0) return "rotary embeddings need an even head_dim, got " + std::to_string(head_dim);
  if (!(c.theta > 1.0) || !std::isfinite(c.theta)) return "rope_theta must be a number above 1";
  if (!c.scaling.empty() && c.scaling != "linear" && c.scaling != "llama3")
    return "rope_scaling type '" + c.scaling + "' is not supported (supported: linear, llama3)";
  if (!c.scaling.empty() && (!(c.factor >= 1.0) || !std::isfinite(c.factor)))
    return "rope_scaling factor must be a number >= 1";
  if (c.scaling == "llama3" && (!(c.low_freq_factor > 0) || !(c.high_freq_factor > c.low_freq_factor) ||
                                c.original_max_position_embeddings < 1))
    return "rope_scaling llama3 needs 0 < low_freq_factor < high_freq_factor and original_max_position_embeddings >= 1";
  dim_ = head_dim;
  inv_freq_.assign(head_dim / 2, 0.0);
  for (int i = 0; i < head_dim / 2; ++i) inv_freq_[i] = 1.0 / std::pow(c.theta, 2.0 * i / head_dim);
  if (c.scaling == "linear")
    for (double& f : inv_freq_) f /= c.factor;  // position / factor: the same angles
  if (c.scaling == "llama3") llama3_scale(c, inv_freq_);
  return "";
}

void RotaryEmbedding::apply(float* q, long q_ld, int q_heads, float* k, long k_ld, int k_heads, int batch, int seq,
                            int first_position) const {
  const int half = dim_ / 2;
  std::vector<float> cos(half), sin(half);
  for (int i = 0; i < seq; ++i) {
    const double pos = first_position + i;
    for (int j = 0; j < half; ++j) {
      cos[j] = static_cast<float>(std::cos(pos * inv_freq_[j]));
      sin[j] = static_cast<float>(std::sin(pos * inv_freq_[j]));
    }
    for (int b = 0; b < batch; ++b) {
      const long row = static_cast<long>(b) * seq + i;
      if (q) rotate_heads(q + row * q_ld, q_heads, dim_, cos.data(), sin.data());
      if (k) rotate_heads(k + row * k_ld, k_heads, dim_, cos.data(), sin.data());
    }
  }
}

}  // namespace attn
