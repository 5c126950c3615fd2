#include "models/llama.h"

#include "layers/pre_norm_block.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {
namespace {

constexpr int kMaxVocab = 1 << 20;
constexpr int kMaxPositions = 1 << 20;

std::string check_config(const LlamaConfig& c) {
  std::string err = check_dims({{"vocab_size", c.vocab_size, kMaxVocab},
                                {"max_position_embeddings", c.max_position_embeddings, kMaxPositions},
                                {"hidden_size", c.hidden_size, 1 << 14},
                                {"intermediate_size", c.intermediate_size, 1 << 16},
                                {"num_hidden_layers", c.num_hidden_layers, 1024},
                                {"num_attention_heads", c.num_attention_heads, 1024}});
  if (!err.empty()) return err;
  if (c.head_dim == 0 && c.hidden_size % c.num_attention_heads != 0)
    return "hidden_size (" + std::to_string(c.hidden_size) + ") is not divisible by num_attention_heads (" +
           std::to_string(c.num_attention_heads) + ")";
  if (c.head_dim < 0 || c.head_dim > 1024) return "head_dim must be between 1 and 1024, got " + std::to_string(c.head_dim);
  const int kv = c.num_key_value_heads == 0 ? c.num_attention_heads : c.num_key_value_heads;
  if (kv < 1 || kv > c.num_attention_heads || c.num_attention_heads % kv != 0)
    return "num_attention_heads (" + std::to_string(c.num_attention_heads) +
           ") is not a multiple of num_key_value_heads (" + std::to_string(c.num_key_value_heads) + ")";
  if (!(c.rms_norm_eps > 0.0f) || !std::isfinite(c.rms_norm_eps)) return "rms_norm_eps must be a positive number";
  if (c.sliding_window < 0) return "sliding_window must be >= 0, got " + std::to_string(c.sliding_window);
  if (!c.rope_layers.empty() && (int(c.rope_layers.size()) != c.num_hidden_layers ||
                                 c.rope_layers.find_first_not_of("01") != std::string::npos))
    return "rope_layers must be one '0' or '1' per layer (" + std::to_string(c.num_hidden_layers) + "), got \"" +
           c.rope_layers + "\"";
  if (!c.window_layers.empty() && (int(c.window_layers.size()) != c.num_hidden_layers ||
                                   c.window_layers.find_first_not_of("01") != std::string::npos))
    return "window_layers must be one '0' or '1' per layer (" + std::to_string(c.num_hidden_layers) + "), got \"" +
           c.window_layers + "\"";
  if (!(c.rope_local_theta == 0.0 || c.rope_local_theta > 1.0) || !std::isfinite(c.rope_local_theta))
    return "rope_local_base_freq must be a number above 1";
  if (!(c.attention_scale >= 0.0f) || !std::isfinite(c.attention_scale))
    return "the attention scale (query_pre_attn_scalar^-1/2) must be a positive number";
  if (!(c.final_logit_softcapping >= 0.0f) || !std::isfinite(c.final_logit_softcapping))
    return "final_logit_softcapping must be a positive number or null";
  bool ok = true;
  product_or_zero({std::size_t(c.vocab_size), std::size_t(c.hidden_size)}, &ok);
  product_or_zero({std::size_t(c.hidden_size), std::size_t(c.intermediate_size), 2}, &ok);
  if (!ok) return "model too large: its tensors exceed the memory limit";
  return "";
}

}  // namespace

std::string Llama::configure(const LlamaConfig& config) {
  configured_ = ready_ = false;
  std::string err = check_config(config);
  if (!err.empty()) return err;
  LlamaConfig c = config;
  if (c.num_key_value_heads == 0) c.num_key_value_heads = c.num_attention_heads;
  if (c.head_dim == 0) c.head_dim = c.hidden_size / c.num_attention_heads;
  err = rotary_.configure(c.rope, c.head_dim);
  if (err.empty() && c.rope_local_theta > 0) {
    RopeConfig local;  // Gemma 3's local layers: their own base, no scaling
    local.theta = c.rope_local_theta;
    local.rotary_dim = c.rope.rotary_dim;
    err = rotary_local_.configure(local, c.head_dim);
  }
  if (!err.empty()) return err;
  cfg_ = c;
  label_ = (c.model_type.empty() ? std::string("llama") : c.model_type) + " model";
  const int D = c.hidden_size, hq = c.num_attention_heads * c.head_dim, hkv = c.num_key_value_heads * c.head_dim;
  tensors_.clear();
  stack_.blocks.clear();
  stack_.blocks.resize(c.num_hidden_layers);
  embed_.add_to(tensors_, "model.embed_tokens.weight", c.vocab_size, D, /*quantizable=*/true);
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    Block& B = stack_.blocks[l];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    B.norm_1.eps = B.norm_2.eps = c.rms_norm_eps;
    B.norm_1.add_to(tensors_, p + "input_layernorm.weight", D);
    if (c.fused_projections) {
      B.qkv.add_to(tensors_, p + "self_attn.qkv_proj.", D, hq + 2 * hkv, Layout::kTransposed, c.attention_bias);
    } else {
      B.q.add_to(tensors_, p + "self_attn.q_proj.", D, hq, Layout::kTransposed, c.attention_bias);
      B.k.add_to(tensors_, p + "self_attn.k_proj.", D, hkv, Layout::kTransposed, c.attention_bias);
      B.v.add_to(tensors_, p + "self_attn.v_proj.", D, hkv, Layout::kTransposed, c.attention_bias);
    }
    B.o.add_to(tensors_, p + "self_attn.o_proj.", hq, D, Layout::kTransposed, false);
    if (c.qk_norm) {
      B.q_norm.eps = B.k_norm.eps = c.rms_norm_eps;
      B.q_norm.add_to(tensors_, p + "self_attn.q_norm.weight", c.head_dim);
      B.k_norm.add_to(tensors_, p + "self_attn.k_norm.weight", c.head_dim);
    }
    if (c.sandwich_norms) {  // Gemma's post_attention_layernorm is on the attention's output
      B.post_1.eps = B.post_2.eps = c.rms_norm_eps;
      B.post_1.add_to(tensors_, p + "post_attention_layernorm.weight", D);
      B.norm_2.add_to(tensors_, p + "pre_feedforward_layernorm.weight", D);
      B.post_2.add_to(tensors_, p + "post_feedforward_layernorm.weight", D);
    } else {
      B.norm_2.add_to(tensors_, p + "post_attention_layernorm.weight", D);
    }
    if (c.fused_projections) B.mlp.add_fused_to(tensors_, p + "mlp.", D, c.intermediate_size);
    else B.mlp.add_to(tensors_, p + "mlp.", D, c.intermediate_size);
    B.mlp.act = c.gelu_mlp ? Activation::kGeluTanh : Activation::kSilu;
  }
  stack_.final_norm.eps = c.rms_norm_eps;
  stack_.final_norm.add_to(tensors_, "model.norm.weight", D);
  // Where each sublayer's output is checked: after o_proj / down_proj, or Gemma's norm on them.
  if (c.sandwich_norms)
    stack_.names = {"model.layers.", "input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                    "post_feedforward_layernorm"};
  else
    stack_.names = {"model.layers.", "input_layernorm", "self_attn.o_proj", "post_attention_layernorm", "mlp.down_proj"};
  if (!c.tie_word_embeddings) lm_head_.add_to(tensors_, "lm_head.weight", c.vocab_size, D, /*quantizable=*/true);
  configured_ = true;
  return "";
}

std::string Llama::finalize() {
  if (!configured_) return "not configured";
  if (ready_) return "";
  std::string err = tensors_.check_complete();
  if (!err.empty()) return err;
  MhaConfig mc{cfg_.hidden_size, cfg_.num_attention_heads, cfg_.head_dim, cfg_.head_dim, 0, 0, cfg_.attention_bias};
  mc.num_kv_heads = cfg_.num_key_value_heads;
  mc.qk_norm_eps = cfg_.rms_norm_eps;
  mc.scale = cfg_.attention_scale;
  mc.model_activations = true;  // (checked by the stack: activation_check.h)
  if (cfg_.unit_offset_norms) offset_norm_gains();
  stack_.post_norms.clear();
  for (int l = 0; l < cfg_.num_hidden_layers; ++l) {
    Block& B = stack_.blocks[l];
    mc.window = windowed(l) ? cfg_.sliding_window : 0;
    const RotaryEmbedding* rotary = windowed(l) && cfg_.rope_local_theta > 0 ? &rotary_local_ : &rotary_;
    mc.rotary = cfg_.rope_layers.empty() || cfg_.rope_layers[l] == '1' ? rotary : nullptr;
    if (cfg_.sandwich_norms) stack_.post_norms.push_back({&B.post_1, &B.post_2});
    mc.q_norm = cfg_.qk_norm ? B.q_norm.weight.data() : nullptr;
    mc.k_norm = cfg_.qk_norm ? B.k_norm.weight.data() : nullptr;
    err = B.attn.configure(mc);
    // The attention layer takes Q, K, V and O over (fusing the first three); no o bias.
    MhaStoredWeights w;
    if (err.empty()) {
      w.q = std::move(B.q.weight), w.k = std::move(B.k.weight), w.v = std::move(B.v.weight), w.o = std::move(B.o.weight);
      w.qkv = std::move(B.qkv.weight);  // (fused_projections: [Q | K | V] as stored)
      const float* b = B.qkv.bias.data();
      const int hq = cfg_.num_attention_heads * cfg_.head_dim, hkv = cfg_.num_key_value_heads * cfg_.head_dim;
      w.b_q = b ? b : B.q.bias.data(), w.b_k = b ? b + hq : B.k.bias.data(), w.b_v = b ? b + hq + hkv : B.v.bias.data();
      err = B.attn.set_weights(std::move(w));
    }
    B.q = Linear(), B.k = Linear(), B.v = Linear(), B.o = Linear(), B.qkv = Linear();
    if (!err.empty()) return err;
  }
  tensors_.seal();
  ready_ = true;
  return "";
}

std::string Llama::held_tensor(int i, HeldTensor* out) const {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  if (i < 0 || i >= tensors_.size()) return "tensor " + std::to_string(i) + " out of range";
  if (tensors_.held_in_place(i, out)) return "";
  // The rest went to the attention layers: model.layers.<l>.self_attn.<q|k|v|o|qkv>_proj.<weight|bias>.
  const std::string& name = tensors_.entry(i).name;
  int layer = -1, at = 0;
  char proj[4] = {}, part[7] = {};
  if (std::sscanf(name.c_str(), "model.layers.%d.self_attn.%3[qkvo]_proj.%6[a-z]%n", &layer, proj, part, &at) != 3 ||
      at != int(name.size()) || layer < 0 || layer >= cfg_.num_hidden_layers)
    return "tensor " + name + " is not held (optional, and not in the checkpoint)";
  const std::string p = proj;
  const MhaProjection which = p == "q" ? MhaProjection::kQ : p == "k" ? MhaProjection::kK : p == "v" ? MhaProjection::kV
                              : p == "o" ? MhaProjection::kO : MhaProjection::kQkv;
  const float* bias = nullptr;
  std::string err = stack_.blocks[layer].attn.held(which, &out->weight, &bias);
  if (!err.empty()) return name + ": " + err;
  if (std::string(part) == "weight") return "";
  if (!bias) return name + ": the layer holds no bias";
  out->count = static_cast<std::size_t>(out->weight.out);
  out->weight = WeightView();
  out->values = bias;
  return "";
}

void Llama::offset_norm_gains() {
  const auto offset = [](RmsNorm& n) {
    for (std::size_t i = 0; i < n.weight.size(); ++i) n.weight.data()[i] += 1.0f;
  };
  for (Block& B : stack_.blocks)
    for (RmsNorm* n : {&B.norm_1, &B.norm_2, &B.post_1, &B.post_2, &B.q_norm, &B.k_norm}) offset(*n);
  offset(stack_.final_norm);
}

std::string Llama::head_logits(const float* x, int rows, float* logits, const ActivationCheck& check) {
  const bool tied = cfg_.tie_word_embeddings;
  std::string err = tied ? embed_.logits(*kn_, x, rows, logits) : lm_head_.logits(*kn_, x, rows, logits);
  // (before the softcap, which would turn an infinite logit into a finite one)
  if (err.empty()) err = check(logits, rows, cfg_.vocab_size, [tied] {
    return std::string(tied ? "the logits (model.embed_tokens.weight, tied head)" : "the logits (lm_head.weight)");
  });
  const float cap = cfg_.final_logit_softcapping;
  if (err.empty() && cap > 0)
    for (std::size_t i = 0, n = std::size_t(rows) * cfg_.vocab_size; i < n; ++i) logits[i] = cap * std::tanh(logits[i] / cap);
  return err;
}

std::string Llama::check_embeddings(const float* x, int rows, const ActivationCheck& check) const {
  // (finite tables give finite rows, but Gemma's scaling by sqrt(hidden) can overflow them)
  if (!cfg_.scale_embeddings) return "";
  return check(x, rows, cfg_.hidden_size, [] { return std::string("the embeddings (model.embed_tokens.weight, scaled)"); });
}

void Llama::embed(const std::int32_t* tokens, int rows) {
  float* x = stack_.x.data();
  embed_.add_rows(tokens, rows, x);
  if (!cfg_.scale_embeddings) return;
  const float scale = std::sqrt(static_cast<float>(cfg_.hidden_size));
  for (std::size_t i = 0, n = std::size_t(rows) * cfg_.hidden_size; i < n; ++i) x[i] *= scale;
}

std::string Llama::forward(const std::int32_t* tokens, int n, float* logits, float* attention, int trace_layer,
                           MhaTrace* trace, int logit_rows, BlockTrace* block) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  std::string err = check_decoder_forward(tokens, n, context(), cfg_.vocab_size, logit_rows, trace != nullptr, trace_layer,
                                          cfg_.num_hidden_layers);
  if (err.empty()) err = stack_.begin(n, cfg_.hidden_size);
  if (!err.empty()) return err;
  embed(tokens, n);  // (positions enter through the rotation of q and k)
  const ActivationCheck check(label(), {n, 0});
  err = check_embeddings(stack_.x.data(), n, check);
  if (!err.empty()) return err;
  const std::size_t per_layer = std::size_t(cfg_.num_attention_heads) * n * n;
  err = stack_.run(*kn_, n, cfg_.hidden_size, check, [&](int l, MultiHeadAttention& attn, const float* h, float* out) {
    return attn.forward(causal_self_attention(h, n), out, attention ? attention + l * per_layer : nullptr,
                        trace && l == trace_layer ? trace : nullptr);
  }, block, trace_layer);
  if (!err.empty()) return err;
  return head_logits(stack_.final_rows(n - logit_rows, logit_rows, 1, cfg_.hidden_size), logit_rows, logits,
                     check.with({logit_rows, n - logit_rows}, "token"));
}

std::string Llama::start_decoding(int batch, int capacity) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  const auto attn = [this](int l) -> const MultiHeadAttention& { return stack_.blocks[l].attn; };
  return start_layer_caches(stack_.cache, cfg_.num_hidden_layers, attn, batch, std::min(capacity, context()));
}

std::string Llama::reorder_cache(const int* order, int new_batch) {
  return reorder_layer_caches(stack_.cache, order, new_batch);
}

std::string Llama::step(const std::int32_t* tokens, int n, float* logits, float* attention) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  std::string err = stack_.begin_step(tokens, n, context(), cfg_.vocab_size, cfg_.hidden_size);
  if (!err.empty()) return err;
  const int past = cached_length(), batch = stack_.cache[0].batch, D = cfg_.hidden_size;
  embed(tokens, batch * n);
  const ActivationCheck check(label(), {n, past});
  err = check_embeddings(stack_.x.data(), batch * n, check);
  if (!err.empty()) return err;
  const std::size_t per_layer = std::size_t(batch) * cfg_.num_attention_heads * n * (past + n);
  err = stack_.run(*kn_, batch * n, D, check, [&](int l, MultiHeadAttention& attn, const float* h, float* out) {
    return attn.forward_cached(h, n, stack_.cache[l], true, true, nullptr, out, attention ? attention + l * per_layer : nullptr);
  });
  if (!err.empty()) return err;
  // Each sequence's last position.
  return head_logits(stack_.final_rows(n - 1, batch, n, D), batch, logits, check.with({1, past + n - 1}, "token"));
}

}  // namespace attn
