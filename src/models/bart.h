// BART (encoder-decoder, "cross-attention transformer"), composed from the shared layers:
//   embed(ids) = LN_emb(shared[ids] * scale + positions[2 + i])    (BART's learned positions start at row 2)
//   encoder: post-LN blocks with bidirectional self-attention over the source (padding masked)
//   decoder: post-LN blocks with causal self-attention, cross-attention (queries from the decoder,
//            keys and values from the encoder output), the MLP
//   logits = y shared^T + final_logits_bias  (the LM head is tied to the shared token table)
// Checkpoint names are Hugging Face's BartForConditionalGeneration's without the "model." prefix.
// Decoding runs incrementally: the decoder's self-attention keys/values are cached step by step,
// the cross-attention keys/values are computed once per source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensors/buffer.h"
#include "kernels/kernels.h"
#include "layers/activation_check.h"
#include "layers/layers.h"
#include "attention/multi_head_attention.h"
#include "layers/post_ln_block.h"
#include "tensors/tensor_table.h"

namespace attn {

struct BartConfig {
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int d_model = 0;
  int encoder_layers = 0, decoder_layers = 0;
  int encoder_attention_heads = 0, decoder_attention_heads = 0;
  int encoder_ffn_dim = 0, decoder_ffn_dim = 0;
  Activation activation = Activation::kGeluErf;
  bool scale_embedding = false;  // multiply token embeddings by sqrt(d_model)
  float layer_norm_eps = 1e-5f;
};

class Bart {
 public:
  static constexpr int kPositionOffset = 2;

  explicit Bart(const Kernels& kernels = default_kernels()) : kn_(&kernels) {}

  std::string configure(const BartConfig& c);
  const BartConfig& config() const { return cfg_; }
  TensorTable& tensors() { return tensors_; }
  std::string finalize();

  // Source batch (tokens, padding; no token types) -> memory: batch x n x d_model. attention
  // (optional): encoder_layers x batch x heads x n x n; trace: layer trace_layer's self-attention.
  // block (optional, encode and decode): layer trace_layer's residual stream, norms and MLP.
  std::string encode(const EncoderInput& in, float* memory, float* attention, int trace_layer, MhaTrace* trace,
                     BlockTrace* block = nullptr);
  // The decoder over whole target prefixes at once (teacher forcing): tokens batch x T, memory
  // from encode() (memory.seq = source length). logits: batch x T x vocab. Self-attention
  // (optional): decoder_layers x batch x heads x T x T; cross: decoder_layers x batch x heads x T x S.
  // Traces: layer trace_layer's self- and cross-attention walks (either may be null).
  std::string decode(const std::int32_t* tokens, int batch, int T, const Memory& memory, float* logits,
                     float* self_attention, float* cross_attention, int trace_layer, MhaTrace* self_trace,
                     MhaTrace* cross_trace, BlockTrace* block = nullptr);

  // Incremental decoding: start_decoding() computes every layer's cross-attention keys/values
  // from `memory` once and empties the self-attention caches (up to `capacity` target positions).
  // step() runs n new target positions of every sequence (tokens: batch x n): logits batch x vocab
  // for each last new position; attention (optional) as in decode() with T = n and length.
  std::string start_decoding(const Memory& memory, int batch, int capacity);
  std::string step(const std::int32_t* tokens, int n, float* logits, float* self_attention, float* cross_attention);
  // Sequence b continues old sequence order[b] (beam search); new_batch may differ from batch.
  std::string reorder_cache(const int* order, int new_batch);
  int cached_length() const { return self_cache_.empty() ? 0 : self_cache_[0].length; }

  // Layer l's attention module of `part` (its weights, the mask it last applied), or null.
  const MultiHeadAttention* attention_layer(AttentionPart part, int l) const {
    const auto self = [](const PostLnBlock& b) -> const MultiHeadAttention& { return b.self.attn; };
    const auto cross = [](const PostLnBlock& b) -> const MultiHeadAttention& { return b.cross.attn; };
    if (part == AttentionPart::kSelf) return layer_attention(encoder_, l, self);
    if (part == AttentionPart::kCross) return layer_attention(decoder_, l, cross);
    return layer_attention(decoder_, l, self);
  }

 private:
  // Token + position embeddings and LayerNorm of batch x n ids starting at position `past`.
  void embed(const std::int32_t* ids, int batch, int n, int past, const Embedding& positions, const LayerNorm& ln,
             float* x) const;
  // logits (rows x vocab) of rows of final decoder states, checked finite.
  std::string lm_head(const float* y, int rows, float* logits, const ActivationCheck& check) const;
  std::string check_tokens(const std::int32_t* ids, std::size_t n, int positions) const;

  const Kernels* kn_;
  BartConfig cfg_;
  bool configured_ = false, ready_ = false;
  TensorTable tensors_;
  Embedding shared_, enc_pos_, dec_pos_;
  LayerNorm enc_ln_, dec_ln_;
  Buffer final_logits_bias_;
  std::vector<PostLnBlock> encoder_, decoder_;
  std::vector<KvCache> self_cache_, cross_cache_;
  std::vector<std::uint8_t> cross_padding_;  // batch x source length, follows reorder_cache()
  Buffer x_, h_;                             // per-call activations, reused
};

}  // namespace attn
