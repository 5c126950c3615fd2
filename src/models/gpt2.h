// GPT-2 (decoder-only), composed from the shared layers:
//   x = wte[token] + wpe[position]
//   per layer: x += Attn(LN1(x)) (causal multi-head); x += MLP(LN2(x)), MLP = GELU(x W_fc + b) W_proj + b
//   logits = LN_f(x) wte^T (the LM head is tied to the token embedding)
// Checkpoint names are Hugging Face's (wte.weight, h.N.attn.c_attn.weight, ...; Conv1D: in x out).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensors/buffer.h"
#include "kernels/kernels.h"
#include "layers/layers.h"
#include "layers/pre_norm_block.h"
#include "attention/multi_head_attention.h"
#include "tensors/tensor_table.h"

namespace attn {

struct GptConfig {
  int vocab_size = 0;
  int n_positions = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  float layer_norm_eps = 1e-5f;
};

class Gpt2 {
 public:
  explicit Gpt2(const Kernels& kernels = default_kernels()) : kn_(&kernels) {}

  // Validates the config and declares the checkpoint's tensors in tensors().
  std::string configure(const GptConfig& c);
  const GptConfig& config() const { return cfg_; }
  // Set every tensor through this (only between configure() and finalize()).
  TensorTable& tensors() { return tensors_; }
  // Checks every tensor is present and hands c_attn / c_proj to the attention layers.
  std::string finalize();

  // logits: logit_rows x vocab, the next-token logits after each of the last `logit_rows`
  // positions (-1: all n). The LM head is most of a short run's work, and the last row alone
  // predicts the next token. attention (optional): n_layer x n_head x n x n. trace (optional):
  // the attention walk of layer `trace_layer`; block (optional): that layer's residual stream, norms
  // and MLP (block_trace.h).
  std::string forward(const std::int32_t* tokens, int n, float* logits, float* attention,
                      int trace_layer, MhaTrace* trace, int logit_rows = -1, BlockTrace* block = nullptr);

  // Incremental decoding with a KV cache: start_decoding() empties it for `batch` sequences of up
  // to `capacity` positions; step() runs n new positions of every sequence (tokens: batch x n)
  // through every layer, reading and extending the cache, so a new token costs one position, not
  // a re-run of the prefix. logits: batch x vocab, for each sequence's last new position.
  // attention (optional): n_layer x batch x n_head x n x length (length after the step).
  std::string start_decoding(int batch, int capacity);
  std::string step(const std::int32_t* tokens, int n, float* logits, float* attention);
  // Sequence b continues old sequence order[b] (beam search); new_batch may differ from batch.
  std::string reorder_cache(const int* order, int new_batch);
  int cached_length() const { return stack_.cached_length(); }
  // Layer l's attention module of `part` (its weights, the mask it last applied), or null.
  const MultiHeadAttention* attention_layer(AttentionPart part, int l) const {
    return part == AttentionPart::kSelf ? layer_attention(stack_.blocks, l, [](const Block& b) -> const MultiHeadAttention& { return b.attn; }) : nullptr;
  }

 private:
  struct Block {
    LayerNorm norm_1, norm_2;  // ln_1, ln_2
    Linear c_attn, c_proj;  // held only until finalize() gives them to attn
    MultiHeadAttention attn;
    Mlp mlp;
  };

  const Kernels* kn_;
  GptConfig cfg_;
  bool configured_ = false, ready_ = false;
  TensorTable tensors_;
  Embedding wte_, wpe_;
  PreNormStack<Block, LayerNorm> stack_;  // the blocks, ln_f, the KV caches, the activations
};

}  // namespace attn
