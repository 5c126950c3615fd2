// BERT (encoder-only), composed from the shared layers:
//   x = LN(word[token] + position[i] + token_type[type])
//   per layer (post-LayerNorm): x = LN(x + Attn(x)); x = LN(x + MLP(x)), MLP = GELU(x W1 + b1) W2 + b2
// Attention is bidirectional; a batch of sentences of different lengths runs in one call with a
// key-padding mask. Optional heads: the masked-LM head (dense + GELU + LN, decoder tied to the
// word embeddings, plus a bias) and the pooler (tanh(dense(x[CLS]))).
// Checkpoint names are Hugging Face's, without the "bert." prefix (the loader strips it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensors/buffer.h"
#include "kernels/kernels.h"
#include "layers/layers.h"
#include "attention/multi_head_attention.h"
#include "layers/post_ln_block.h"
#include "tensors/tensor_table.h"

namespace attn {

struct BertConfig {
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int type_vocab_size = 0;
  int hidden_size = 0;
  int num_hidden_layers = 0;
  int num_attention_heads = 0;
  int intermediate_size = 0;
  float layer_norm_eps = 1e-12f;
  Activation hidden_act = Activation::kGeluErf;
  bool pooler = false;    // the checkpoint has pooler.dense.*
  bool mlm_head = false;  // the checkpoint has cls.predictions.*
};

class Bert {
 public:
  explicit Bert(const Kernels& kernels = default_kernels()) : kn_(&kernels) {}

  // Validates the config and declares the checkpoint's tensors in tensors().
  std::string configure(const BertConfig& c);
  const BertConfig& config() const { return cfg_; }
  TensorTable& tensors() { return tensors_; }
  // Checks every tensor is present and hands query/key/value/output to the attention layers.
  std::string finalize();

  // hidden: batch x n x hidden_size, the last layer's states. attention (optional):
  // num_layers x batch x heads x n x n. trace (optional): layer `trace_layer`'s attention walk;
  // block (optional): that layer's residual stream, norms and MLP (block_trace.h).
  std::string forward(const EncoderInput& in, float* hidden, float* attention, int trace_layer, MhaTrace* trace,
                      BlockTrace* block = nullptr);

  // Masked-LM logits (rows x vocab) for rows of final hidden states. Needs the MLM head.
  std::string mlm_logits(const float* hidden, int rows, float* logits);
  // Pooler output (batch x hidden_size) from the batch's final hidden states. Needs the pooler.
  std::string pooler(const float* hidden, int batch, int n, float* out);

  // Layer l's attention module (its weights, the mask it last applied), or null.
  const MultiHeadAttention* attention_layer(AttentionPart part, int l) const {
    const auto self = [](const PostLnBlock& b) -> const MultiHeadAttention& { return b.self.attn; };
    return part == AttentionPart::kSelf ? layer_attention(blocks_, l, self) : nullptr;
  }

 private:
  const Kernels* kn_;
  BertConfig cfg_;
  bool configured_ = false, ready_ = false;
  TensorTable tensors_;
  Embedding word_, position_, token_type_;
  LayerNorm emb_ln_;
  std::vector<PostLnBlock> blocks_;
  Linear pooler_, mlm_dense_;
  LayerNorm mlm_ln_;
  Buffer mlm_bias_;
  Buffer t_;  // head scratch, reused
};

}  // namespace attn
