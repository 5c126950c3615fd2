// The residual block of the decoder-only models (GPT-2: LayerNorm and a GELU MLP; the Llama family:
// RMSNorm and SwiGLU), one loop for both, whole-sequence or cached:
//   x += Attn(norm_1(x));  x += FFN(norm_2(x))
#pragma once

#include <string>

#include "tensors/buffer.h"
#include "kernels/kernels.h"
#include "layers/layers.h"
#include "attention/multi_head_attention.h"

namespace attn {

// x: rows x dim, updated in place. attend(h, out) runs the layer's attention on the normed rows h
// into out (rows x dim). h and a hold rows x dim; f is the FFN's scratch.
template <class Norm, class Ffn, class Attend>
std::string pre_norm_block(const Kernels& kn, const Norm& norm_1, const Attend& attend, const Norm& norm_2, const Ffn& ffn,
                           float* x, int rows, int dim, Buffer& h, Buffer& a, Buffer& f) {
  const std::size_t n = std::size_t(rows) * dim;
  norm_1.forward(x, rows, dim, h.data());
  std::string err = attend(h.data(), a.data());
  if (!err.empty()) return err;
  add_in_place(x, a.data(), n);
  norm_2.forward(x, rows, dim, h.data());
  err = ffn.forward(kn, h.data(), rows, f, a.data());
  if (!err.empty()) return err;
  add_in_place(x, a.data(), n);
  return "";
}

// The causal self-attention of one whole sequence of n rows (batch 1), as both models run it.
inline MhaInput causal_self_attention(const float* h, int n) {
  MhaInput in;
  in.query = in.key = in.value = h;
  in.batch = 1;
  in.seq_q = in.seq_k = n;
  in.masks.causal = true;
  return in;
}

}  // namespace attn
