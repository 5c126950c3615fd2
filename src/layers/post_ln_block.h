// The post-LayerNorm transformer layer of the original Transformer, BERT and BART:
//   x = LN(x + SelfAttn(x))
//   x = LN(x + CrossAttn(x, memory))   decoder layers only: queries from x, keys/values from memory
//   x = LN(x + MLP(x))
// BERT's encoder layers and BART's encoder and decoder layers are this block under different
// checkpoint names; each model registers the names, the block does the arithmetic.
#pragma once

#include <cstdint>
#include <string>

#include "tensors/buffer.h"
#include "kernels/kernels.h"
#include "layers/activation_check.h"
#include "layers/block_trace.h"
#include "layers/layers.h"
#include "attention/multi_head_attention.h"
#include "tensors/tensor_table.h"

namespace attn {

// Multi-head attention as checkpoints store it: four nn.Linear layers (out x in) and the
// LayerNorm that follows the residual. finalize() hands the projections to the attention layer.
struct AttentionSublayer {
  Linear q, k, v, o;  // held only until finalize()
  MultiHeadAttention attn;
  LayerNorm ln;
  std::string output_name;  // the LayerNorm's checkpoint name: where the sublayer's output is checked
  struct Names {
    std::string q, k, v, o, ln;  // prefixes: "<name>weight" / "<name>bias"
  };
  void add_to(TensorTable& t, const Names& names, int dim, float eps);
  std::string finalize(int dim, int heads);
};

// The encoder output a decoder layer attends to.
struct Memory {
  const float* states = nullptr;          // batch x seq x dim
  const std::uint8_t* padding = nullptr;  // batch x seq, nonzero = padding, or null
  int seq = 0;
};

struct PostLnBlock {
  AttentionSublayer self, cross;
  bool has_cross = false;
  Mlp mlp;
  LayerNorm out_ln;
  // For the activation checks' messages: the layer's index and out_ln's checkpoint name.
  int layer = 0;
  std::string out_ln_name;

  std::string finalize(int dim, int heads);
  // The whole sequence at once. x: batch x n x dim, updated in place. self_masks: padding for an
  // encoder, causal for a decoder. memory: needed iff has_cross. Weights (optional): batch x heads
  // x n x n (self) and batch x heads x n x memory.seq (cross); traces likewise. Each sublayer's
  // output (x after its LayerNorm) goes through `check`: the first non-finite value stops the run.
  // block (optional): the residual stream, the norms and the MLP's intermediates (block_trace.h).
  std::string forward(const Kernels& kn, float* x, int batch, int n, const Masks& self_masks, const Memory* memory,
                      float* self_weights, float* cross_weights, MhaTrace* self_trace, MhaTrace* cross_trace,
                      const ActivationCheck& check, BlockTrace* block = nullptr);
  // Incremental decoding: n new positions per sequence (batch = the caches' batch), causal
  // self-attention through self_cache (extended by these rows), cross-attention through
  // cross_cache (filled from the encoder output). Weights (optional): batch x heads x n x length.
  std::string step(const Kernels& kn, float* x, int n, KvCache& self_cache, KvCache* cross_cache,
                   const std::uint8_t* cross_padding, float* self_weights, float* cross_weights,
                   const ActivationCheck& check);

 private:
  std::string finish(const Kernels& kn, float* x, std::size_t rows, const ActivationCheck& check,
                     BlockTrace* block = nullptr);  // MLP sublayer
  // x (rows x dim) after `sub`'s LayerNorm ("self-attention" or "cross-attention").
  std::string check_sublayer(const ActivationCheck& check, const float* x, std::size_t rows, const char* what,
                             const AttentionSublayer& sub) const;
  Buffer a_, f_;                                                      // per-call scratch
};

}  // namespace attn
