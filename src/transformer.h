// A GPT-2-style decoder-only transformer forward pass built on the attention core:
//   x = wte[token] + wpe[position]
//   per layer: x += Attn(LN1(x)) (causal multi-head); x += MLP(LN2(x)), MLP = GELU(x W_fc + b) W_proj + b
//   logits = LN_f(x) wte^T (the LM head is tied to the token embedding)
// Tensors use GPT-2's Conv1D layout (in x out), which is this library's y = x W + b layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "buffer.h"
#include "kernels.h"
#include "multi_head_attention.h"

namespace attn {

struct GptConfig {
  int vocab_size = 0;
  int n_positions = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  float layer_norm_eps = 1e-5f;
};

// One entry per distinct tensor of a GPT-2 checkpoint; per-layer ones take a layer index.
enum class GptTensor {
  kWte,        // vocab x D
  kWpe,        // n_positions x D
  kLnFWeight,  // D
  kLnFBias,    // D
  kLn1Weight, kLn1Bias,          // D
  kAttnWeight, kAttnBias,        // c_attn: D x 3D (columns Q | K | V), 3D
  kAttnProjWeight, kAttnProjBias,// c_proj: D x D, D
  kLn2Weight, kLn2Bias,          // D
  kFcWeight, kFcBias,            // c_fc: D x 4D, 4D
  kMlpProjWeight, kMlpProjBias,  // mlp c_proj: 4D x D, D
  kCount
};

// Expected element count of a tensor under a config.
std::size_t gpt_tensor_size(const GptConfig& c, GptTensor t);
bool gpt_tensor_per_layer(GptTensor t);
const char* gpt_tensor_name(GptTensor t);  // GPT-2's name, "h.N." prefix omitted for layers

class Gpt2 {
 public:
  explicit Gpt2(const Kernels& kernels = default_kernels()) : kn_(&kernels) {}

  std::string configure(const GptConfig& c);
  const GptConfig& config() const { return cfg_; }

  // Copies one tensor in (rejecting wrong sizes and NaN/Inf). Only before finalize().
  std::string set_tensor(GptTensor t, int layer, const float* data, std::size_t n);
  // Checks every tensor is present and builds the attention layers (which take over the
  // c_attn / c_proj tensors). Call once after loading.
  std::string finalize();

  // logits: n x vocab. attention (optional): n_layer x n_head x n x n. trace (optional): the
  // attention walk of layer `trace_layer`.
  std::string forward(const std::int32_t* tokens, int n, float* logits, float* attention,
                      int trace_layer, MhaTrace* trace);

 private:
  struct Layer {
    Buffer ln1_w, ln1_b, attn_w, attn_b, attn_proj_w, attn_proj_b;
    Buffer ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b;
    MultiHeadAttention attn;
    Buffer* slot(GptTensor t);
  };
  Buffer* slot(GptTensor t, int layer);

  const Kernels* kn_;
  GptConfig cfg_;
  bool configured_ = false, ready_ = false;
  Buffer wte_, wpe_, lnf_w_, lnf_b_;
  std::vector<Layer> layers_;
  Buffer x_, h_, a_, f_;  // per-call activations, reused
};

}  // namespace attn
