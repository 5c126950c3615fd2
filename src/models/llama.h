// The Llama-family decoder (Llama, Qwen2, Qwen3, Mistral, Phi-3, SmolLM2/3, TinyLlama, Gemma 3),
// composed from the shared layers:
//   x = embed_tokens[token]                                  (Gemma: times sqrt(hidden_size))
//   per layer: x += Attn(RMSNorm(x)), causal, rotary on Q and K (Qwen3, Gemma 3: each head's Q and
//              K RMSNormed first; SmolLM3: no rotation in some layers), grouped-query K/V heads;
//              x += down(silu(gate(h)) * up(h)), h = RMSNorm(x)
//              (Gemma 3: a norm on each of the two outputs before it joins x, the tanh GELU for
//              silu, sliding-window layers with their own rope base between global ones)
//   logits = RMSNorm_f(x) lm_head^T (lm_head tied to embed_tokens when tie_word_embeddings;
//            Gemma: cap * tanh(logits / cap) with final_logit_softcapping)
// Checkpoint names are Hugging Face's, unchanged: model.embed_tokens.weight,
// model.layers.N.self_attn.{q,k,v,o}_proj.weight (q/k/v .bias with attention_bias: Qwen2),
// model.layers.N.mlp.{gate,up,down}_proj.weight, model.layers.N.{input,post_attention}_layernorm.weight,
// model.norm.weight, lm_head.weight (nn.Linear: out x in).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensors/buffer.h"
#include "kernels/kernels.h"
#include "layers/layers.h"
#include "layers/pre_norm_block.h"
#include "attention/multi_head_attention.h"
#include "attention/rotary.h"
#include "tensors/tensor_table.h"

namespace attn {

struct LlamaConfig {
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int hidden_size = 0;
  int intermediate_size = 0;
  int num_hidden_layers = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;  // 0: num_attention_heads
  int head_dim = 0;             // 0: hidden_size / num_attention_heads
  float rms_norm_eps = 1e-6f;
  RopeConfig rope;
  bool attention_bias = false;  // biases on q, k and v (Qwen2); o_proj has none
  bool tie_word_embeddings = false;
  // Mistral's sliding window (0: none): each position attends to the latest sliding_window ones.
  int sliding_window = 0;
  // Qwen3: RMSNorm over each head's Q and K (self_attn.q_norm / k_norm, head_dim gains, eps
  // rms_norm_eps) before the rotation.
  bool qk_norm = false;
  // SmolLM3: which layers rotate Q and K, a character a layer ('1' rotates, '0' does not: its
  // no_rope_layers); empty: every layer.
  std::string rope_layers;
  // Phi-3: Q, K and V stored as one self_attn.qkv_proj ([Q | K | V] outputs), gate and up as one
  // mlp.gate_up_proj ([gate | up]); both read as stored.
  bool fused_projections = false;
  // Gemma 3. Which layers attend within sliding_window, a character a layer ('1': windowed; its
  // layer_types); empty: every layer when sliding_window is set.
  std::string window_layers;
  // The windowed layers' rope base (rope_local_base_freq, no scaling); 0: they rotate as the rest.
  double rope_local_theta = 0.0;
  float attention_scale = 0.0f;          // the scores' scale (query_pre_attn_scalar^-1/2); 0: 1/sqrt(head_dim)
  float final_logit_softcapping = 0.0f;  // 0: none
  bool unit_offset_norms = false;        // every RMSNorm gain is 1 + weight
  bool sandwich_norms = false;           // post_attention_layernorm on the attention's output,
                                         // pre_/post_feedforward_layernorm around the MLP
  bool scale_embeddings = false;         // embeddings times sqrt(hidden_size)
  bool gelu_mlp = false;                 // GeGLU (tanh GELU) in place of SwiGLU
  // config.json's model_type ("qwen2", "gemma3_text", ...): how errors name the model.
  std::string model_type = "llama";
};

class Llama {
 public:
  explicit Llama(const Kernels& kernels = default_kernels()) : kn_(&kernels) {}

  // Validates the config and declares the checkpoint's tensors in tensors().
  std::string configure(const LlamaConfig& c);
  const LlamaConfig& config() const { return cfg_; }
  // The longest run: max_position_embeddings.
  int context() const { return cfg_.max_position_embeddings; }
  TensorTable& tensors() { return tensors_; }
  // Checks every tensor is present and hands Q/K/V/O to the attention layers.
  std::string finalize();
  // Tensor i of tensors() as the model holds it now (after finalize: Q, K, V and O, and their
  // biases, read from the attention layers), for saving it (held_tensor.h). Norm gains are as
  // held: with unit_offset_norms, 1 + the checkpoint's weight. "" = ok.
  std::string held_tensor(int i, HeldTensor* out) const;

  // As Gpt2::forward. attention (optional): n_layer x n_head x n x n, per query head.
  std::string forward(const std::int32_t* tokens, int n, float* logits, float* attention, int trace_layer,
                      MhaTrace* trace, int logit_rows = -1, BlockTrace* block = nullptr);

  // As Gpt2's KV-cache decoding; the cache holds the K/V heads only (already rotated).
  std::string start_decoding(int batch, int capacity);
  std::string step(const std::int32_t* tokens, int n, float* logits, float* attention);
  std::string reorder_cache(const int* order, int new_batch);
  int cached_length() const { return stack_.cached_length(); }
  // Each layer's KV cache while decoding (a sliding-window layer's rolls: rows for 2 x window).
  const std::vector<KvCache>& caches() const { return stack_.cache; }
  // Layer l's attention module of `part` (its weights, the mask it last applied), or null.
  const MultiHeadAttention* attention_layer(AttentionPart part, int l) const {
    return part == AttentionPart::kSelf ? layer_attention(stack_.blocks, l, [](const Block& b) -> const MultiHeadAttention& { return b.attn; }) : nullptr;
  }

 private:
  struct Block {
    RmsNorm norm_1, norm_2;  // input_layernorm, post_attention_layernorm
    RmsNorm q_norm, k_norm;  // qk_norm only
    RmsNorm post_1, post_2;  // sandwich_norms only: on the attention's and the MLP's outputs
    Linear q, k, v, o, qkv;  // held only until finalize() gives them to attn (qkv: fused_projections)
    MultiHeadAttention attn;
    GatedMlp mlp;
  };
  // The LM head's logits (rows x vocab), checked finite (rows as `rows` say) before the softcap.
  std::string head_logits(const float* x, int rows, float* logits, const ActivationCheck& check);
  // How activation checks name this model: "<model_type> model".
  const char* label() const { return label_.c_str(); }
  // x (rows x hidden) = the tokens' embeddings (scaled, for Gemma).
  void embed(const std::int32_t* tokens, int rows);
  // "" unless the scaled embeddings overflowed (the table itself is checked finite when loaded).
  std::string check_embeddings(const float* x, int rows, const ActivationCheck& check) const;
  // Gemma stores each RMSNorm gain as weight - 1: the gains become 1 + weight once loaded.
  void offset_norm_gains();
  bool windowed(int layer) const {
    return cfg_.sliding_window > 0 && (cfg_.window_layers.empty() || cfg_.window_layers[layer] == '1');
  }

  const Kernels* kn_;
  LlamaConfig cfg_;
  std::string label_;  // "<model_type> model"
  bool configured_ = false, ready_ = false;
  TensorTable tensors_;
  RotaryEmbedding rotary_, rotary_local_;  // rotary_local_: the windowed layers' (rope_local_theta)
  Embedding embed_, lm_head_;  // lm_head_ unused when tied
  PreNormStack<Block, RmsNorm> stack_;  // the blocks, model.norm, the KV caches, the activations
};

}  // namespace attn
