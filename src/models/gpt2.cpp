#include "models/gpt2.h"

#include <algorithm>
#include <cmath>

#include "kernels/parallel_gemm.h"
#include "layers/pre_norm_block.h"

namespace attn {
namespace {

constexpr int kMaxVocab = 1 << 20;
constexpr int kMaxPositions = 1 << 16;
constexpr const char* kModel = "GPT-2 model";  // how activation checks name it

std::string embeddings() { return "the embeddings (wte.weight + wpe.weight)"; }
std::string logits_name() { return "the logits (wte.weight, tied head)"; }

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
  stack_.blocks.clear();
  stack_.blocks.resize(c.n_layer);
  wte_.add_to(tensors_, "wte.weight", c.vocab_size, D, /*quantizable=*/true);
  wpe_.add_to(tensors_, "wpe.weight", c.n_positions, D);
  for (int l = 0; l < c.n_layer; ++l) {
    Block& B = stack_.blocks[l];
    const std::string p = "h." + std::to_string(l) + ".";
    B.norm_1.eps = B.norm_2.eps = c.layer_norm_eps;
    B.norm_1.add_to(tensors_, p + "ln_1.", D);
    B.c_attn.add_to(tensors_, p + "attn.c_attn.", D, 3 * D, Layout::kAsIs);
    B.c_proj.add_to(tensors_, p + "attn.c_proj.", D, D, Layout::kAsIs);
    B.norm_2.add_to(tensors_, p + "ln_2.", D);
    B.mlp.act = Activation::kGeluTanh;
    B.mlp.fc.add_to(tensors_, p + "mlp.c_fc.", D, 4 * D, Layout::kAsIs);
    B.mlp.proj.add_to(tensors_, p + "mlp.c_proj.", 4 * D, D, Layout::kAsIs);
  }
  stack_.final_norm.eps = c.layer_norm_eps;
  stack_.final_norm.add_to(tensors_, "ln_f.", D);
  stack_.names = {"h.", "ln_1", "attn.c_proj", "ln_2", "mlp.c_proj"};
  configured_ = true;
  return "";
}

std::string Gpt2::finalize() {
  if (!configured_) return "not configured";
  if (ready_) return "";
  std::string err = tensors_.check_complete();
  if (!err.empty()) return err;
  const int D = cfg_.n_embd;
  for (Block& B : stack_.blocks) {
    MhaConfig mc{D, cfg_.n_head, 0, 0, 0, 0, true};
    mc.model_activations = true;  // (checked by the stack: activation_check.h)
    err = B.attn.configure(mc);
    if (!err.empty()) return err;
    // c_attn's outputs are [Q | K | V], each with head i in block i: the attention layer's fused
    // input projection as it is. The layer takes both matrices over; no copy.
    const float* b = B.c_attn.bias.data();
    MhaStoredWeights w{std::move(B.c_attn.weight), std::move(B.c_proj.weight)};
    w.b_q = b, w.b_k = b + D, w.b_v = b + 2 * D, w.b_o = B.c_proj.bias.data();
    err = B.attn.set_weights(std::move(w));
    if (!err.empty()) return err;
    B.c_attn = Linear(), B.c_proj = Linear();
  }
  tensors_.seal();
  ready_ = true;
  return "";
}

std::string Gpt2::forward(const std::int32_t* tokens, int n, float* logits, float* attention, int trace_layer,
                          MhaTrace* trace, int logit_rows, BlockTrace* block) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  std::string err = check_decoder_forward(tokens, n, cfg_.n_positions, cfg_.vocab_size, logit_rows, trace != nullptr,
                                          trace_layer, cfg_.n_layer);
  if (err.empty()) err = stack_.begin(n, cfg_.n_embd);
  if (!err.empty()) return err;
  wte_.add_rows(tokens, n, stack_.x.data());
  wpe_.add_range(0, n, stack_.x.data());
  const ActivationCheck check(kModel, {n, 0});
  err = check(stack_.x.data(), n, cfg_.n_embd, embeddings);
  if (!err.empty()) return err;
  const std::size_t per_layer = std::size_t(cfg_.n_head) * n * n;
  err = stack_.run(*kn_, n, cfg_.n_embd, check, [&](int l, MultiHeadAttention& attn, const float* h, float* out) {
    return attn.forward(causal_self_attention(h, n), out, attention ? attention + l * per_layer : nullptr,
                        trace && l == trace_layer ? trace : nullptr);
  }, block, trace_layer);
  if (err.empty())
    err = wte_.logits(*kn_, stack_.final_rows(n - logit_rows, logit_rows, 1, cfg_.n_embd), logit_rows, logits);
  if (!err.empty()) return err;
  return check.with({logit_rows, n - logit_rows}, "token")(logits, logit_rows, cfg_.vocab_size, logits_name);
}

std::string Gpt2::start_decoding(int batch, int capacity) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  const auto attn = [this](int l) -> const MultiHeadAttention& { return stack_.blocks[l].attn; };
  return start_layer_caches(stack_.cache, cfg_.n_layer, attn, batch, std::min(capacity, cfg_.n_positions));
}

std::string Gpt2::reorder_cache(const int* order, int new_batch) {
  return reorder_layer_caches(stack_.cache, order, new_batch);
}

std::string Gpt2::step(const std::int32_t* tokens, int n, float* logits, float* attention) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  std::string err = stack_.begin_step(tokens, n, cfg_.n_positions, cfg_.vocab_size, cfg_.n_embd);
  if (!err.empty()) return err;
  const int past = cached_length(), batch = stack_.cache[0].batch, D = cfg_.n_embd;
  float* x = stack_.x.data();
  wte_.add_rows(tokens, batch * n, x);
  for (int b = 0; b < batch; ++b) wpe_.add_range(past, n, x + std::size_t(b) * n * D);
  const ActivationCheck check(kModel, {n, past});
  err = check(x, std::size_t(batch) * n, D, embeddings);
  if (!err.empty()) return err;
  const std::size_t per_layer = std::size_t(batch) * cfg_.n_head * n * (past + n);
  err = stack_.run(*kn_, batch * n, D, check, [&](int l, MultiHeadAttention& attn, const float* h, float* out) {
    return attn.forward_cached(h, n, stack_.cache[l], true, true, nullptr, out, attention ? attention + l * per_layer : nullptr);
  });
  // Each sequence's last position only.
  if (err.empty()) err = wte_.logits(*kn_, stack_.final_rows(n - 1, batch, n, D), batch, logits);
  if (!err.empty()) return err;
  return check.with({1, past + n - 1}, "token")(logits, batch, cfg_.vocab_size, logits_name);
}

}  // namespace attn
