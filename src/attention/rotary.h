// Rotary position embeddings (RoFormer; Hugging Face's "rotate half" convention, as Llama, Qwen2
// and Mistral checkpoints are trained with): in each head, dimension i < d/2 is paired with
// i + d/2 and the pair is rotated by the angle position * inv_freq[i],
//   x'[i]       = x[i] cos - x[i + d/2] sin
//   x'[i + d/2] = x[i + d/2] cos + x[i] sin,      inv_freq[i] = theta^(-2i/d),
// applied to Q and K after their projection, so a score depends on the two positions only through
// their difference. rope_scaling stretches inv_freq: "linear" divides every frequency by factor,
// "llama3" divides only the low frequencies (wavelengths beyond the original context / low_freq_factor)
// and blends the middle band, "longrope" (Phi-3) divides frequency i by short_factor[i], or by
// long_factor[i] once a run reaches past original_max_position_embeddings, and scales cos and sin by
// attention_factor. A partial rotation (Phi-4-mini's partial_rotary_factor) rotates only the first
// rotary_dim values of each head, as a head of that size, and passes the rest through.
#pragma once

#include <string>
#include <vector>

namespace attn {

struct RopeConfig {
  double theta = 10000.0;
  std::string scaling;  // "", "linear" or "llama3" (others are refused by name)
  double factor = 1.0;
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  int original_max_position_embeddings = 8192;          // llama3, longrope
  std::vector<double> short_factor, long_factor;        // longrope: rotary_dim / 2 each
  double attention_factor = 1.0;                        // longrope: cos and sin scaled by it
  int rotary_dim = 0;                                   // the rotated values of a head; 0: all
};

class RotaryEmbedding {
 public:
  // head_dim (and rotary_dim) even, >= 2. "" = ok, else why not (naming the setting).
  std::string configure(const RopeConfig& c, int head_dim);
  int head_dim() const { return dim_; }
  // The frequencies of a run of `positions` positions (longrope switches past the original context).
  const std::vector<double>& inv_freq(int positions = 1) const {
    return !long_freq_.empty() && positions > original_max_ ? long_freq_ : inv_freq_;
  }

  // Rotates, in place, every head of rows laid out batch x seq (row b*seq + i at x + row*ld, head
  // h at + h*head_dim), row i at position first_position + i. q and k (either may be null) are
  // rotated together so each position's angles are computed once.
  void apply(float* q, long q_ld, int q_heads, float* k, long k_ld, int k_heads, int batch, int seq,
             int first_position) const;

 private:
  int dim_ = 0, rotary_dim_ = 0, original_max_ = 0;
  double attention_factor_ = 1.0;
  std::vector<double> inv_freq_, long_freq_;  // long_freq_: longrope's past the original context
};

}  // namespace attn
