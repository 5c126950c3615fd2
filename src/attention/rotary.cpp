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

// Each head of `dim` values rotates its first 2 * half (pairs i, i + half); the rest pass through.
void rotate_heads(float* row, int heads, int dim, int half, const float* cos, const float* sin) {
  for (int h = 0; h < heads; ++h) {
    float* x = row + static_cast<long>(h) * dim;
    for (int i = 0; i < half; ++i) {
      const float a = x[i], b = x[i + half];
      x[i] = a * cos[i] - b * sin[i];
      x[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

// longrope's frequencies: theta^(-2i/d) / factors[i].
std::string longrope_freq(double theta, int rotary_dim, const std::vector<double>& factors, const char* name,
                          std::vector<double>& f) {
  if (int(factors.size()) != rotary_dim / 2)
    return std::string("rope_scaling ") + name + " must hold " + std::to_string(rotary_dim / 2) +
           " numbers (half the rotated head), got " + std::to_string(factors.size());
  f.assign(rotary_dim / 2, 0.0);
  for (int i = 0; i < rotary_dim / 2; ++i) {
    if (!(factors[i] > 0) || !std::isfinite(factors[i]))
      return std::string("rope_scaling ") + name + "[" + std::to_string(i) + "] must be a positive number";
    f[i] = 1.0 / (factors[i] * std::pow(theta, 2.0 * i / rotary_dim));
  }
  return "";
}

}  // namespace

std::string RotaryEmbedding::configure(const RopeConfig& c, int head_dim) {
  if (head_dim < 2 || head_dim % 2 != 0) return "rotary embeddings need an even head_dim, got " + std::to_string(head_dim);
  const int rot = c.rotary_dim == 0 ? head_dim : c.rotary_dim;
  if (rot < 2 || rot % 2 != 0 || rot > head_dim)
    return "the rotated part of a head (partial_rotary_factor x head_dim) must be even and in [2, " +
           std::to_string(head_dim) + "], got " + std::to_string(rot);
  if (!(c.theta > 1.0) || !std::isfinite(c.theta)) return "rope_theta must be a number above 1";
  if (!c.scaling.empty() && c.scaling != "linear" && c.scaling != "llama3" && c.scaling != "longrope")
    return "rope_scaling type '" + c.scaling + "' is not supported (supported: linear, llama3, longrope)";
  if (!c.scaling.empty() && (!(c.factor >= 1.0) || !std::isfinite(c.factor)))
    return "rope_scaling factor must be a number >= 1";
  if (c.scaling == "llama3" && (!(c.low_freq_factor > 0) || !(c.high_freq_factor > c.low_freq_factor) ||
                                c.original_max_position_embeddings < 1))
    return "rope_scaling llama3 needs 0 < low_freq_factor < high_freq_factor and original_max_position_embeddings >= 1";
  if (!(c.attention_factor > 0) || !std::isfinite(c.attention_factor))
    return "rope_scaling attention_factor must be a positive number";
  dim_ = head_dim, rotary_dim_ = rot, original_max_ = c.original_max_position_embeddings;
  attention_factor_ = c.scaling == "longrope" ? c.attention_factor : 1.0;
  long_freq_.clear();
  if (c.scaling == "longrope") {
    if (original_max_ < 1) return "rope_scaling longrope needs original_max_position_embeddings >= 1";
    std::string err = longrope_freq(c.theta, rot, c.short_factor, "short_factor", inv_freq_);
    if (err.empty()) err = longrope_freq(c.theta, rot, c.long_factor, "long_factor", long_freq_);
    return err;
  }
  inv_freq_.assign(rot / 2, 0.0);
  for (int i = 0; i < rot / 2; ++i) inv_freq_[i] = 1.0 / std::pow(c.theta, 2.0 * i / rot);
  if (c.scaling == "linear")
    for (double& f : inv_freq_) f /= c.factor;  // position / factor: the same angles
  if (c.scaling == "llama3") llama3_scale(c, inv_freq_);
  return "";
}

void RotaryEmbedding::apply(float* q, long q_ld, int q_heads, float* k, long k_ld, int k_heads, int batch, int seq,
                            int first_position) const {
  const int half = rotary_dim_ / 2;
  // HF computes the angles of a call from its last position (longrope's switch); the cached
  // positions keep the angles they were rotated with, as there.
  const std::vector<double>& freq = inv_freq(first_position + seq);
  std::vector<float> cos(half), sin(half);
  for (int i = 0; i < seq; ++i) {
    const double pos = first_position + i;
    for (int j = 0; j < half; ++j) {
      cos[j] = static_cast<float>(std::cos(pos * freq[j]) * attention_factor_);
      sin[j] = static_cast<float>(std::sin(pos * freq[j]) * attention_factor_);
    }
    for (int b = 0; b < batch; ++b) {
      const long row = static_cast<long>(b) * seq + i;
      if (q) rotate_heads(q + row * q_ld, q_heads, dim_, half, cos.data(), sin.data());
      if (k) rotate_heads(k + row * k_ld, k_heads, dim_, half, cos.data(), sin.data());
    }
  }
}

}  // namespace attn
