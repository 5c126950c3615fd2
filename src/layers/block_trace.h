// What one transformer block did to the residual stream, for a viewer: a model fills it for its
// traced layer (beside the attention's MhaTrace), rows x dim each unless said otherwise.
//   pre-norm (GPT-2, the Llama family):  attention input = norm_1(input);
//     after_attention = input + attention; mlp_input = norm_2(after_attention);
//     output = after_mlp = after_attention + mlp  (Gemma: attention and mlp after their sandwich norms)
//   post-LN (BERT, BART):  the attention reads input itself;
//     after_attention = input + attention, then LN_1; a decoder: after_cross = that + cross, then LN_2;
//     mlp_input = the stream after those norms; after_mlp = mlp_input + mlp; output = LN(after_mlp)
// norms: each norm the block applies to the stream, in order, with the parameters it used (a
// RMSNorm has no bias; Gemma's gains are already 1 + weight).
#pragma once

#include <cstddef>
#include <string>

#include "layers/layers.h"
#include "tensors/buffer.h"

namespace attn {

struct NormTrace {
  Buffer gain, bias;  // dim each (bias empty: RMSNorm)
  Buffer eps;         // one value
};

struct BlockTrace {
  Buffer input, attention, after_attention, cross, after_cross, mlp_input, mlp, after_mlp, output;
  MlpTrace ffn;  // rows x hidden: up, gate (gated MLPs), the down projection's input
  static constexpr int kMaxNorms = 3;
  NormTrace norms[kMaxNorms];
  int norm_count = 0;

  // Forgets a previous call's rows (a post-LN encoder fills no cross slots).
  void clear() {
    for (Buffer* b : {&input, &attention, &after_attention, &cross, &after_cross, &mlp_input, &mlp, &after_mlp, &output,
                      &ffn.up, &ffn.gate, &ffn.hidden})
      b->resize(0);
    norm_count = 0;
  }

  // Starts a call's trace: forgets the last one and keeps the block's input (n values).
  std::string begin(const float* x, std::size_t n) {
    clear();
    return keep_copy(input, x, n);
  }

  std::string keep_norm(const LayerNorm& n, int dim) { return keep_norm(n.weight.data(), n.bias.data(), n.eps, dim); }
  std::string keep_norm(const RmsNorm& n, int dim) { return keep_norm(n.weight.data(), nullptr, n.eps, dim); }

 private:
  std::string keep_norm(const float* gain, const float* bias, float eps, int dim) {
    if (norm_count == kMaxNorms) return "a block traces at most 3 norms";
    NormTrace& t = norms[norm_count++];
    std::string err = keep_copy(t.gain, gain, std::size_t(dim));
    if (err.empty()) err = keep_copy(t.bias, bias, bias ? std::size_t(dim) : 0);
    if (err.empty()) err = keep_copy(t.eps, &eps, 1);
    return err;
  }
};

// A copy of n values into trace->*slot; nothing without a trace.
inline std::string keep_in(BlockTrace* trace, Buffer BlockTrace::*slot, const float* values, std::size_t n) {
  return trace ? keep_copy(trace->*slot, values, n) : std::string();
}

}  // namespace attn
