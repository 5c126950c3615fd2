#include "models/bart.h"

#include <cmath>
#include <cstring>

#include "kernels/parallel_gemm.h"

namespace attn {
namespace {

constexpr const char* kNotLoaded = "the model is not loaded: set every tensor, then finalize()";
constexpr const char* kEncoder = "BART encoder";  // how activation checks name the two stacks
constexpr const char* kDecoder = "BART decoder";

void add_blocks(TensorTable& t, std::vector<PostLnBlock>& blocks, const std::string& stack, int layers, int dim,
                int ffn, bool cross, const BartConfig& c) {
  blocks.clear();
  blocks.resize(layers);
  for (int l = 0; l < layers; ++l) {
    PostLnBlock& B = blocks[l];
    const std::string p = stack + ".layers." + std::to_string(l) + ".";
    const auto names = [&](const std::string& a) {
      return AttentionSublayer::Names{p + a + ".q_proj.", p + a + ".k_proj.", p + a + ".v_proj.", p + a + ".out_proj.",
                                      p + a + "_layer_norm."};
    };
    B.self.add_to(t, names("self_attn"), dim, c.layer_norm_eps);
    B.has_cross = cross;
    if (cross) B.cross.add_to(t, names("encoder_attn"), dim, c.layer_norm_eps);
    B.mlp.act = c.activation;
    B.mlp.fc.add_to(t, p + "fc1.", dim, ffn, Layout::kTransposed);
    B.mlp.proj.add_to(t, p + "fc2.", ffn, dim, Layout::kTransposed);
    B.out_ln.eps = c.layer_norm_eps;
    B.out_ln.add_to(t, p + "final_layer_norm.", dim);
    B.layer = l;
    B.out_ln_name = p + "final_layer_norm";
  }
}

}  // namespace

std::string Bart::configure(const BartConfig& c) {
  configured_ = ready_ = false;
  std::string err = check_dims({{"vocab_size", c.vocab_size, 1 << 20},
                                {"max_position_embeddings", c.max_position_embeddings, 1 << 16},
                                {"d_model", c.d_model, 1 << 14},
                                {"encoder_layers", c.encoder_layers, 1024},
                                {"decoder_layers", c.decoder_layers, 1024},
                                {"encoder_attention_heads", c.encoder_attention_heads, 1024},
                                {"decoder_attention_heads", c.decoder_attention_heads, 1024},
                                {"encoder_ffn_dim", c.encoder_ffn_dim, 1 << 16},
                                {"decoder_ffn_dim", c.decoder_ffn_dim, 1 << 16}});
  if (!err.empty()) return err;
  for (int h : {c.encoder_attention_heads, c.decoder_attention_heads})
    if (c.d_model % h != 0)
      return "d_model (" + std::to_string(c.d_model) + ") is not divisible by the number of heads (" + std::to_string(h) + ")";
  if (!(c.layer_norm_eps > 0.0f) || !std::isfinite(c.layer_norm_eps)) return "layer_norm_eps must be a positive number";
  bool ok = true;
  product_or_zero({std::size_t(c.vocab_size), std::size_t(c.d_model)}, &ok);
  product_or_zero({std::size_t(c.max_position_embeddings) + kPositionOffset, std::size_t(c.d_model), 4}, &ok);
  product_or_zero({std::size_t(c.d_model), std::size_t(std::max(c.encoder_ffn_dim, c.decoder_ffn_dim))}, &ok);
  if (!ok) return "model too large: its tensors exceed the memory limit";
  cfg_ = c;
  const int D = c.d_model, P = c.max_position_embeddings + kPositionOffset;
  tensors_.clear();
  self_cache_.clear();
  cross_cache_.clear();
  shared_.add_to(tensors_, "shared.weight", c.vocab_size, D, /*quantizable=*/true);
  enc_pos_.add_to(tensors_, "encoder.embed_positions.weight", P, D);
  dec_pos_.add_to(tensors_, "decoder.embed_positions.weight", P, D);
  enc_ln_.eps = dec_ln_.eps = c.layer_norm_eps;
  enc_ln_.add_to(tensors_, "encoder.layernorm_embedding.", D);
  dec_ln_.add_to(tensors_, "decoder.layernorm_embedding.", D);
  add_blocks(tensors_, encoder_, "encoder", c.encoder_layers, D, c.encoder_ffn_dim, false, c);
  add_blocks(tensors_, decoder_, "decoder", c.decoder_layers, D, c.decoder_ffn_dim, true, c);
  tensors_.add("final_logits_bias", {1, c.vocab_size}, &final_logits_bias_, Layout::kAsIs, true);
  configured_ = true;
  return "";
}

std::string Bart::finalize() {
  if (!configured_) return "not configured";
  if (ready_) return "";
  std::string err = tensors_.check_complete();
  if (!err.empty()) return err;
  for (PostLnBlock& B : encoder_)
    if (err.empty()) err = B.finalize(cfg_.d_model, cfg_.encoder_attention_heads);
  for (PostLnBlock& B : decoder_)
    if (err.empty()) err = B.finalize(cfg_.d_model, cfg_.decoder_attention_heads);
  if (!err.empty()) return err;
  if (final_logits_bias_.empty()) {  // optional in the checkpoint: zeros
    if (!final_logits_bias_.resize(cfg_.vocab_size)) return out_of_memory("final_logits_bias", cfg_.vocab_size);
    std::memset(final_logits_bias_.data(), 0, cfg_.vocab_size * sizeof(float));
  }
  tensors_.seal();
  ready_ = true;
  return "";
}

std::string Bart::check_tokens(const std::int32_t* ids, std::size_t n, int positions) const {
  if (positions > cfg_.max_position_embeddings)
    return std::to_string(positions) + " positions exceed the model's " + std::to_string(cfg_.max_position_embeddings) +
           " (max_position_embeddings)";
  return check_ids("token", ids, n, cfg_.vocab_size, "vocabulary");
}

void Bart::embed(const std::int32_t* ids, int batch, int n, int past, const Embedding& positions, const LayerNorm& ln,
                 float* x) const {
  const int D = cfg_.d_model;
  const std::size_t rows = std::size_t(batch) * n, nd = rows * D;
  std::memset(x, 0, nd * sizeof(float));
  shared_.add_rows(ids, static_cast<int>(rows), x);
  if (cfg_.scale_embedding) {
    const float s = std::sqrt(static_cast<float>(D));
    for (std::size_t i = 0; i < nd; ++i) x[i] *= s;
  }
  for (int b = 0; b < batch; ++b) positions.add_range(kPositionOffset + past, n, x + std::size_t(b) * n * D);
  ln.forward(x, static_cast<int>(rows), D, x);
}

std::string Bart::lm_head(const float* y, int rows, float* logits, const ActivationCheck& check) const {
  const int V = cfg_.vocab_size;
  std::string err = shared_.logits(*kn_, y, rows, logits);
  if (!err.empty()) return err;
  for (int r = 0; r < rows; ++r) add_in_place(logits + std::size_t(r) * V, final_logits_bias_.data(), V);
  return check(logits, rows, V, [] { return std::string("the logits (shared.weight, tied head, + final_logits_bias)"); });
}

std::string Bart::encode(const EncoderInput& in, float* memory, float* attention, int trace_layer, MhaTrace* trace,
                         BlockTrace* block) {
  if (!ready_) return kNotLoaded;
  if (in.batch < 1 || in.n < 1) return "need at least one source sequence of at least one token";
  bool ok = true;
  const std::size_t rows = product_or_zero({std::size_t(in.batch), std::size_t(in.n)}, &ok);
  product_or_zero({rows, std::size_t(std::max(cfg_.d_model, cfg_.encoder_ffn_dim))}, &ok);
  if (!ok) return "input too large: batch * tokens * features exceeds the memory limit";
  std::string err = check_tokens(in.tokens, rows, in.n);
  if (!err.empty()) return err;
  if (trace && (trace_layer < 0 || trace_layer >= cfg_.encoder_layers))
    return "trace layer " + std::to_string(trace_layer) + " out of range (encoder_layers " + std::to_string(cfg_.encoder_layers) + ")";
  embed(in.tokens, in.batch, in.n, 0, enc_pos_, enc_ln_, memory);
  const ActivationCheck check(kEncoder, {in.n, 0});
  err = check(memory, rows, cfg_.d_model, [] { return std::string("the embeddings (encoder.layernorm_embedding)"); });
  if (!err.empty()) return err;
  Masks masks;
  masks.key_padding = in.padding;
  const std::size_t plane = std::size_t(in.batch) * cfg_.encoder_attention_heads * in.n * in.n;
  for (int l = 0; l < cfg_.encoder_layers; ++l) {
    err = encoder_[l].forward(*kn_, memory, in.batch, in.n, masks, nullptr, attention ? attention + l * plane : nullptr,
                              nullptr, trace && l == trace_layer ? trace : nullptr, nullptr, check,
                              l == trace_layer ? block : nullptr);
    if (!err.empty()) return err;
  }
  return "";
}

std::string Bart::decode(const std::int32_t* tokens, int batch, int T, const Memory& memory, float* logits,
                         float* self_attention, float* cross_attention, int trace_layer, MhaTrace* self_trace,
                         MhaTrace* cross_trace, BlockTrace* block) {
  if (!ready_) return kNotLoaded;
  if (batch < 1 || T < 1 || memory.seq < 1 || !memory.states) return "need at least one target token and the encoder output";
  bool ok = true;
  const std::size_t rows = product_or_zero({std::size_t(batch), std::size_t(T)}, &ok);
  product_or_zero({rows, std::size_t(std::max({cfg_.d_model, cfg_.decoder_ffn_dim, cfg_.vocab_size}))}, &ok);
  if (!ok) return "input too large: batch * tokens * features exceeds the memory limit";
  std::string err = check_tokens(tokens, rows, T);
  if (!err.empty()) return err;
  if ((self_trace || cross_trace) && (trace_layer < 0 || trace_layer >= cfg_.decoder_layers))
    return "trace layer " + std::to_string(trace_layer) + " out of range (decoder_layers " + std::to_string(cfg_.decoder_layers) + ")";
  const std::size_t nd = rows * cfg_.d_model;
  if (!x_.resize(nd)) return out_of_memory("activations", nd);
  float* y = x_.data();
  embed(tokens, batch, T, 0, dec_pos_, dec_ln_, y);
  const ActivationCheck check(kDecoder, {T, 0});
  err = check(y, rows, cfg_.d_model, [] { return std::string("the embeddings (decoder.layernorm_embedding)"); });
  if (!err.empty()) return err;
  Masks masks;
  masks.causal = true;
  const int H = cfg_.decoder_attention_heads;
  const std::size_t self_plane = rows * H * T, cross_plane = rows * H * memory.seq;
  for (int l = 0; l < cfg_.decoder_layers; ++l) {
    const bool traced = l == trace_layer;
    err = decoder_[l].forward(*kn_, y, batch, T, masks, &memory, self_attention ? self_attention + l * self_plane : nullptr,
                              cross_attention ? cross_attention + l * cross_plane : nullptr,
                              traced ? self_trace : nullptr, traced ? cross_trace : nullptr, check, traced ? block : nullptr);
    if (!err.empty()) return err;
  }
  return lm_head(y, static_cast<int>(rows), logits, check.with({T, 0}, "token"));
}

std::string Bart::start_decoding(const Memory& memory, int batch, int capacity) {
  if (!ready_) return kNotLoaded;
  if (batch < 1 || memory.seq < 1 || !memory.states) return "need the encoder output of at least one source token";
  if (capacity > cfg_.max_position_embeddings) capacity = cfg_.max_position_embeddings;
  self_cache_.clear();
  cross_cache_.clear();
  self_cache_.resize(cfg_.decoder_layers);
  cross_cache_.resize(cfg_.decoder_layers);
  std::string err;
  for (int l = 0; l < cfg_.decoder_layers && err.empty(); ++l) {
    err = decoder_[l].self.attn.start_cache(self_cache_[l], batch, capacity);
    if (err.empty()) err = decoder_[l].cross.attn.start_cache(cross_cache_[l], batch, memory.seq);
    if (err.empty()) err = decoder_[l].cross.attn.fill_cache(memory.states, batch, memory.seq, cross_cache_[l]);
  }
  if (!err.empty()) {
    self_cache_.clear();
    cross_cache_.clear();
    return err;
  }
  const std::size_t n = std::size_t(batch) * memory.seq;
  if (memory.padding) cross_padding_.assign(memory.padding, memory.padding + n);
  else cross_padding_.assign(n, 0);
  return "";
}

std::string Bart::reorder_cache(const int* order, int new_batch) {
  if (self_cache_.empty()) return "no decoding in progress: call start_decoding() first";
  const int S = cross_cache_[0].length;
  for (std::size_t l = 0; l < self_cache_.size(); ++l) {
    std::string err = self_cache_[l].reorder(order, new_batch);
    if (err.empty()) err = cross_cache_[l].reorder(order, new_batch);
    if (!err.empty()) return err;
  }
  std::vector<std::uint8_t> padding(std::size_t(new_batch) * S);
  for (int b = 0; b < new_batch; ++b)
    std::memcpy(padding.data() + std::size_t(b) * S, cross_padding_.data() + std::size_t(order[b]) * S, S);
  cross_padding_.swap(padding);
  return "";
}

std::string Bart::step(const std::int32_t* tokens, int n, float* logits, float* self_attention, float* cross_attention) {
  if (!ready_) return kNotLoaded;
  if (self_cache_.empty()) return "no decoding in progress: call start_decoding() first";
  if (n < 1) return "need at least one token";
  const int past = cached_length(), batch = self_cache_[0].batch, S = cross_cache_[0].length;
  if (past + n > self_cache_[0].capacity)
    return std::to_string(past + n) + " target tokens exceed the decoding capacity of " +
           std::to_string(self_cache_[0].capacity) + " positions";
  const std::size_t rows = std::size_t(batch) * n, nd = rows * cfg_.d_model;
  std::string err = check_tokens(tokens, rows, past + n);
  if (!err.empty()) return err;
  if (!x_.resize(nd) || !h_.resize(std::size_t(batch) * cfg_.d_model)) return out_of_memory("activations", nd);
  float* y = x_.data();
  embed(tokens, batch, n, past, dec_pos_, dec_ln_, y);
  const ActivationCheck check(kDecoder, {n, past});
  err = check(y, rows, cfg_.d_model, [] { return std::string("the embeddings (decoder.layernorm_embedding)"); });
  if (!err.empty()) return err;
  const int H = cfg_.decoder_attention_heads, len = past + n;
  const std::size_t self_plane = rows * H * len, cross_plane = rows * H * S;
  for (int l = 0; l < cfg_.decoder_layers; ++l) {
    err = decoder_[l].step(*kn_, y, n, self_cache_[l], &cross_cache_[l], cross_padding_.data(),
                           self_attention ? self_attention + l * self_plane : nullptr,
                           cross_attention ? cross_attention + l * cross_plane : nullptr, check);
    if (!err.empty()) return err;
  }
  for (int b = 0; b < batch; ++b)  // only each sequence's last new position needs logits
    std::memcpy(h_.data() + std::size_t(b) * cfg_.d_model, y + (std::size_t(b) * n + n - 1) * cfg_.d_model,
                cfg_.d_model * sizeof(float));
  return lm_head(h_.data(), batch, logits, check.with({1, past + n - 1}, "token"));  // row b: sequence b's last position
}

}  // namespace attn
