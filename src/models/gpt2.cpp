#include "models/gpt2.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/parallel_gemm.h"
#include "layers/pre_norm_block.h"

namespace attn {
namespace {

constexpr int kMaxVocab = 1 << 20;
constexpr int kMaxPositions = 1 << 16;

}  // namespace

std::string Gpt2::configure(const GptConfig& c) {
  configured_ = ready_ = false;
  std::string err = check_dims({{"vocab_size", c.vocab_size, kMaxVocab}, {"n_positions", c.n_positions, kMaxPositions},
                                {"n_embd", c.n_embd, 1 << 14}, {"n_layer", c.n_layer, 1024}, {"n_head", c.n_head, 1024}});
  if (!err.empty()) return err;
  if (c.n_embd % c.n_head != 0)
    return "n_embd (" + std::to_string(c.n_embd) + ") is not divisible by n_head (" + std::to_string(c.n_head) + ")";
  if (!(c.layer_norm_eps > 0.0f) || !std::isfinite(c.layer_norm_eps)) return "layer_norm_epsilon must be a positive number";
  // The largest tensors (embeddings, MLP weights, a full context's MLP activations) must fit.
  bool ok = true;
  product_or_zero({std::size_t(c.vocab_size), std::size_t(c.n_embd)}, &ok);
  product_or_zero({std::size_t(c.n_positions), std::size_t(c.n_embd), 4}, &ok);
  product_or_zero({std::size_t(c.n_embd), std::size_t(c.n_embd), 4}, &ok);
  if (!ok) return "model too large: its tensors exceed the memory limit";
  cfg_ = c;
  const int D = c.n_embd;
  tensors_.clear();
  blocks_.clear();
  blocks_.resize(c.n_layer);
  wte_.add_to(tensors_, "wte.weight", c.vocab_size, D, /*quantizable=*/true);
  wpe_.add_to(tensors_, "wpe.weight", c.n_positions, D);
  for (int l = 0; l < c.n_layer; ++l) {
    Block& B = blocks_[l];
    const std::string p = "h." + std::to_string(l) + ".";
    B.ln_1.eps = B.ln_2.eps = c.layer_norm_eps;
    B.ln_1.add_to(tensors_, p + "ln_1.", D);
    B.c_attn.add_to(tensors_, p + "attn.c_attn.", D, 3 * D, Layout::kAsIs);
    B.c_proj.add_to(tensors_, p + "attn.c_proj.", D, D, Layout::kAsIs);
    B.ln_2.add_to(tensors_, p + "ln_2.", D);
    B.mlp.act = Activation::kGeluTanh;
    B.mlp.fc.add_to(tensors_, p + "mlp.c_fc.", D, 4 * D, Layout::kAsIs);
    B.mlp.proj.add_to(tensors_, p + "mlp.c_proj.", 4 * D, D, Layout::kAsIs);
  }
  ln_f_.eps = c.layer_norm_eps;
  ln_f_.add_to(tensors_, "ln_f.", D);
  configured_ = true;
  return "";
}

std::string Gpt2::finalize() {
  if (!configured_) return "not configured";
  if (ready_) return "";
  std::string err = tensors_.check_complete();
  if (!err.empty()) return err;
  const int D = cfg_.n_embd;
  for (Block& B : blocks_) {
    err = B.attn.configure({D, cfg_.n_head, 0, 0, 0, 0, true});
    if (!err.empty()) return err;
    // c_attn's outputs are [Q | K | V], each with head i in block i: the attention layer's fused
    // input projection as it is. The layer takes both matrices over; no copy.
    const float* b = B.c_attn.bias.data();
    err = B.attn.set_weights(MhaStoredWeights{std::move(B.c_attn.weight), std::move(B.c_proj.weight), b, b + D, b + 2 * D,
                                              B.c_proj.bias.data()});
    if (!err.empty()) return err;
    B.c_attn = Linear(), B.c_proj = Linear();
  }
  tensors_.seal();
  ready_ = true;
  return "";
}

std::string Gpt2::forward(const std::int32_t* tokens, int n, float* logits, float* attention, int trace_layer,
                          MhaTrace* trace, int logit_rows) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  if (n < 1) return "need at least one token";
  if (n > cfg_.n_positions)
    return std::to_string(n) + " tokens exceed the model's context of " + std::to_string(cfg_.n_positions) + " positions";
  std::string err = check_ids("token", tokens, n, cfg_.vocab_size, "vocabulary");
  if (!err.empty()) return err;
  if (logit_rows == -1) logit_rows = n;
  if (logit_rows < 0 || logit_rows > n)
    return "logit rows " + std::to_string(logit_rows) + " out of range [0, " + std::to_string(n) + "] (the run's tokens)";
  if (trace && (trace_layer < 0 || trace_layer >= cfg_.n_layer))
    return "trace layer " + std::to_string(trace_layer) + " out of range (n_layer " + std::to_string(cfg_.n_layer) + ")";
  const int D = cfg_.n_embd, H = cfg_.n_head;
  const std::size_t nd = std::size_t(n) * D;
  if (!x_.resize(nd) || !h_.resize(nd) || !a_.resize(nd)) return out_of_memory("activations", nd * 3);

  float* x = x_.data();
  std::memset(x, 0, nd * sizeof(float));
  wte_.add_rows(tokens, n, x);
  wpe_.add_range(0, n, x);

  for (int l = 0; l < cfg_.n_layer; ++l) {
    Block& B = blocks_[l];
    float* layer_attention = attention ? attention + std::size_t(l) * H * n * n : nullptr;
    const auto attend = [&](const float* h, float* out) {
      return B.attn.forward(causal_self_attention(h, n), out, layer_attention, trace && l == trace_layer ? trace : nullptr);
    };
    err = pre_norm_block(*kn_, B.ln_1, attend, B.ln_2, B.mlp, x, n, D, h_, a_, f_);
    if (!err.empty()) return err;
  }
  // Only the rows whose logits are wanted go through LN_f and the head.
  const int first = n - logit_rows;
  ln_f_.forward(x + std::size_t(first) * D, logit_rows, D, h_.data());
  return wte_.logits(*kn_, h_.data(), logit_rows, logits);
}

std::string Gpt2::start_decoding(int batch, int capacity) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  const auto attn = [this](int l) -> const MultiHeadAttention& { return blocks_[l].attn; };
  return start_layer_caches(cache_, cfg_.n_layer, attn, batch, std::min(capacity, cfg_.n_positions));
}

std::string Gpt2::reorder_cache(const int* order, int new_batch) { return reorder_layer_caches(cache_, order, new_batch); }

std::string Gpt2::step(const std::int32_t* tokens, int n, float* logits, float* attention) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  std::string err = check_decoding_step(cache_, n, cfg_.n_positions);
  if (!err.empty()) return err;
  const int past = cached_length(), batch = cache_[0].batch;
  const std::size_t rows = std::size_t(batch) * n;
  err = check_ids("token", tokens, rows, cfg_.vocab_size, "vocabulary");
  if (!err.empty()) return err;
  const int D = cfg_.n_embd, H = cfg_.n_head, len = past + n;
  const std::size_t nd = rows * D;
  if (!x_.resize(nd) || !h_.resize(nd) || !a_.resize(nd)) return out_of_memory("activations", nd * 3);
  float* x = x_.data();
  std::memset(x, 0, nd * sizeof(float));
  wte_.add_rows(tokens, static_cast<int>(rows), x);
  for (int b = 0; b < batch; ++b) wpe_.add_range(past, n, x + std::size_t(b) * n * D);
  for (int l = 0; l < cfg_.n_layer; ++l) {
    Block& B = blocks_[l];
    float* w = attention ? attention + std::size_t(l) * batch * H * n * len : nullptr;
    const auto attend = [&](const float* h, float* out) {
      return B.attn.forward_cached(h, n, cache_[l], true, true, nullptr, out, w);
    };
    err = pre_norm_block(*kn_, B.ln_1, attend, B.ln_2, B.mlp, x, static_cast<int>(rows), D, h_, a_, f_);
    if (!err.empty()) return err;
  }
  // Only each sequence's last position needs logits: the LM head is the largest GEMM.
  for (int b = 0; b < batch; ++b)
    ln_f_.forward(x + (std::size_t(b) * n + n - 1) * D, 1, D, h_.data() + std::size_t(b) * D);
  return wte_.logits(*kn_, h_.data(), batch, logits);
}

}  // namespace attn
