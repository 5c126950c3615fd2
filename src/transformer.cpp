#include "transformer.h"

#include <cmath>
#include <cstring>

#include "parallel_gemm.h"

namespace attn {
namespace {

constexpr int kMaxVocab = 1 << 20;
constexpr int kMaxPositions = 1 << 16;

// y = (x - mean) / sqrt(var + eps) * g + b, per row of D.
void layer_norm(const float* x, int rows, int D, const float* g, const float* b, float eps, float* y) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<long>(r) * D;
    float* yr = y + static_cast<long>(r) * D;
    float mean = 0.0f;
    for (int i = 0; i < D; ++i) mean += xr[i];
    mean /= D;
    float var = 0.0f;
    for (int i = 0; i < D; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const float inv = 1.0f / std::sqrt(var / D + eps);
    for (int i = 0; i < D; ++i) yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
  }
}

// GPT-2's GELU, the tanh approximation ("gelu_new").
void gelu_tanh(float* x, std::size_t n) {
  const float c = std::sqrt(2.0f / 3.14159265358979f);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
  }
}

// Copies columns [c0, c0 + n) of a rows x cols matrix.
void copy_columns(const float* src, int rows, int cols, int c0, int n, float* dst) {
  for (int r = 0; r < rows; ++r) std::memcpy(dst + static_cast<long>(r) * n, src + static_cast<long>(r) * cols + c0, n * sizeof(float));
}

}  // namespace

bool gpt_tensor_per_layer(GptTensor t) {
  return t != GptTensor::kWte && t != GptTensor::kWpe && t != GptTensor::kLnFWeight && t != GptTensor::kLnFBias;
}

const char* gpt_tensor_name(GptTensor t) {
  switch (t) {
    case GptTensor::kWte: return "wte.weight";
    case GptTensor::kWpe: return "wpe.weight";
    case GptTensor::kLnFWeight: return "ln_f.weight";
    case GptTensor::kLnFBias: return "ln_f.bias";
    case GptTensor::kLn1Weight: return "ln_1.weight";
    case GptTensor::kLn1Bias: return "ln_1.bias";
    case GptTensor::kAttnWeight: return "attn.c_attn.weight";
    case GptTensor::kAttnBias: return "attn.c_attn.bias";
    case GptTensor::kAttnProjWeight: return "attn.c_proj.weight";
    case GptTensor::kAttnProjBias: return "attn.c_proj.bias";
    case GptTensor::kLn2Weight: return "ln_2.weight";
    case GptTensor::kLn2Bias: return "ln_2.bias";
    case GptTensor::kFcWeight: return "mlp.c_fc.weight";
    case GptTensor::kFcBias: return "mlp.c_fc.bias";
    case GptTensor::kMlpProjWeight: return "mlp.c_proj.weight";
    case GptTensor::kMlpProjBias: return "mlp.c_proj.bias";
    default: return "?";
  }
}

std::size_t gpt_tensor_size(const GptConfig& c, GptTensor t) {
  const std::size_t D = c.n_embd;
  switch (t) {
    case GptTensor::kWte: return std::size_t(c.vocab_size) * D;
    case GptTensor::kWpe: return std::size_t(c.n_positions) * D;
    case GptTensor::kAttnWeight: return D * 3 * D;
    case GptTensor::kAttnBias: return 3 * D;
    case GptTensor::kAttnProjWeight: return D * D;
    case GptTensor::kFcWeight: return D * 4 * D;
    case GptTensor::kFcBias: return 4 * D;
    case GptTensor::kMlpProjWeight: return 4 * D * D;
    default: return D;  // layer norm weights and biases, projection biases
  }
}

Buffer* Gpt2::Layer::slot(GptTensor t) {
  switch (t) {
    case GptTensor::kLn1Weight: return &ln1_w;
    case GptTensor::kLn1Bias: return &ln1_b;
    case GptTensor::kAttnWeight: return &attn_w;
    case GptTensor::kAttnBias: return &attn_b;
    case GptTensor::kAttnProjWeight: return &attn_proj_w;
    case GptTensor::kAttnProjBias: return &attn_proj_b;
    case GptTensor::kLn2Weight: return &ln2_w;
    case GptTensor::kLn2Bias: return &ln2_b;
    case GptTensor::kFcWeight: return &fc_w;
    case GptTensor::kFcBias: return &fc_b;
    case GptTensor::kMlpProjWeight: return &mlp_proj_w;
    case GptTensor::kMlpProjBias: return &mlp_proj_b;
    default: return nullptr;
  }
}

Buffer* Gpt2::slot(GptTensor t, int layer) {
  switch (t) {
    case GptTensor::kWte: return &wte_;
    case GptTensor::kWpe: return &wpe_;
    case GptTensor::kLnFWeight: return &lnf_w_;
    case GptTensor::kLnFBias: return &lnf_b_;
    default: return layers_[layer].slot(t);
  }
}

std::string Gpt2::configure(const GptConfig& c) {
  const struct { const char* name; int value, max; } dims[] = {
      {"vocab_size", c.vocab_size, kMaxVocab}, {"n_positions", c.n_positions, kMaxPositions},
      {"n_embd", c.n_embd, 1 << 14}, {"n_layer", c.n_layer, 1024}, {"n_head", c.n_head, 1024}};
  for (const auto& d : dims)
    if (d.value < 1 || d.value > d.max)
      return std::string(d.name) + " must be between 1 and " + std::to_string(d.max) + ", got " + std::to_string(d.value);
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
  layers_.clear();
  layers_.resize(c.n_layer);
  configured_ = true;
  ready_ = false;
  return "";
}

std::string Gpt2::set_tensor(GptTensor t, int layer, const float* data, std::size_t n) {
  if (!configured_) return "not configured";
  if (ready_) return "the model is finalized: configure() again to load new weights";
  if (t >= GptTensor::kCount) return "unknown tensor";
  const bool per_layer = gpt_tensor_per_layer(t);
  if (per_layer && (layer < 0 || layer >= cfg_.n_layer))
    return std::string(gpt_tensor_name(t)) + ": layer " + std::to_string(layer) + " out of range (n_layer " + std::to_string(cfg_.n_layer) + ")";
  const std::string name = per_layer ? "h." + std::to_string(layer) + "." + gpt_tensor_name(t) : gpt_tensor_name(t);
  const std::size_t want = gpt_tensor_size(cfg_, t);
  if (n != want) return name + " has " + std::to_string(n) + " elements, expected " + std::to_string(want);
  std::string err = check_finite(name.c_str(), data, n);
  if (!err.empty()) return err;
  Buffer* b = slot(t, layer);
  if (!b->resize(n)) return out_of_memory(name.c_str(), n);
  std::memcpy(b->data(), data, n * sizeof(float));
  return "";
}

std::string Gpt2::finalize() {
  if (!configured_) return "not configured";
  for (int t = 0; t < static_cast<int>(GptTensor::kCount); ++t) {
    const GptTensor tensor = static_cast<GptTensor>(t);
    const int n_layers = gpt_tensor_per_layer(tensor) ? cfg_.n_layer : 1;
    for (int l = 0; l < n_layers; ++l)
      if (slot(tensor, l)->empty())
        return std::string("missing tensor ") + (gpt_tensor_per_layer(tensor) ? "h." + std::to_string(l) + "." : "") + gpt_tensor_name(tensor);
  }
  const int D = cfg_.n_embd;
  Buffer wq, wk, wv;
  if (!wq.resize(std::size_t(D) * D) || !wk.resize(std::size_t(D) * D) || !wv.resize(std::size_t(D) * D))
    return out_of_memory("attention weights", 3 * std::size_t(D) * D);
  for (Layer& L : layers_) {
    std::string err = L.attn.configure({D, cfg_.n_head, 0, 0, 0, 0, true});
    if (!err.empty()) return err;
    // c_attn's columns are [Q | K | V], each with head i in column block i: our layout.
    copy_columns(L.attn_w.data(), D, 3 * D, 0, D, wq.data());
    copy_columns(L.attn_w.data(), D, 3 * D, D, D, wk.data());
    copy_columns(L.attn_w.data(), D, 3 * D, 2 * D, D, wv.data());
    const float* b = L.attn_b.data();
    err = L.attn.set_weights({wq.data(), wk.data(), wv.data(), L.attn_proj_w.data(), b, b + D, b + 2 * D, L.attn_proj_b.data()});
    if (!err.empty()) return err;
    // The attention layer holds its own copy now; drop these (GPT-2 small: ~110 MB).
    L.attn_w = Buffer(), L.attn_b = Buffer(), L.attn_proj_w = Buffer(), L.attn_proj_b = Buffer();
  }
  ready_ = true;
  return "";
}

std::string Gpt2::forward(const std::int32_t* tokens, int n, float* logits, float* attention, int trace_layer,
                          MhaTrace* trace) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  if (n < 1) return "need at least one token";
  if (n > cfg_.n_positions)
    return std::to_string(n) + " tokens exceed the model's context of " + std::to_string(cfg_.n_positions) + " positions";
  for (int i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= cfg_.vocab_size)
      return "token " + std::to_string(tokens[i]) + " at position " + std::to_string(i) + " is outside the vocabulary of " +
             std::to_string(cfg_.vocab_size);
  if (trace && (trace_layer < 0 || trace_layer >= cfg_.n_layer))
    return "trace layer " + std::to_string(trace_layer) + " out of range (n_layer " + std::to_string(cfg_.n_layer) + ")";
  const int D = cfg_.n_embd, H = cfg_.n_head;
  const std::size_t nd = std::size_t(n) * D;
  if (!x_.resize(nd) || !h_.resize(nd) || !a_.resize(nd) || !f_.resize(nd * 4)) return out_of_memory("activations", nd * 7);

  float* x = x_.data();
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < D; ++c)
      x[static_cast<long>(i) * D + c] = wte_.data()[static_cast<long>(tokens[i]) * D + c] + wpe_.data()[static_cast<long>(i) * D + c];

  for (int l = 0; l < cfg_.n_layer; ++l) {
    Layer& L = layers_[l];
    layer_norm(x, n, D, L.ln1_w.data(), L.ln1_b.data(), cfg_.layer_norm_eps, h_.data());
    MhaInput in;
    in.query = in.key = in.value = h_.data();
    in.batch = 1;
    in.seq_q = in.seq_k = n;
    in.masks.causal = true;
    float* layer_attention = attention ? attention + std::size_t(l) * H * n * n : nullptr;
    std::string err = L.attn.forward(in, a_.data(), layer_attention, trace && l == trace_layer ? trace : nullptr);
    if (!err.empty()) return err;
    for (std::size_t i = 0; i < nd; ++i) x[i] += a_.data()[i];

    layer_norm(x, n, D, L.ln2_w.data(), L.ln2_b.data(), cfg_.layer_norm_eps, h_.data());
    linear(*kn_, h_.data(), n, D, L.fc_w.data(), 4 * D, L.fc_b.data(), 4 * D, f_.data(), 4 * D);
    gelu_tanh(f_.data(), nd * 4);
    linear(*kn_, f_.data(), n, 4 * D, L.mlp_proj_w.data(), D, L.mlp_proj_b.data(), D, a_.data(), D);
    for (std::size_t i = 0; i < nd; ++i) x[i] += a_.data()[i];
  }
  layer_norm(x, n, D, lnf_w_.data(), lnf_b_.data(), cfg_.layer_norm_eps, h_.data());
  gemm_bt_parallel(*kn_, n, cfg_.vocab_size, D, h_.data(), D, wte_.data(), D, logits, cfg_.vocab_size);
  return "";
}

}  // namespace attn
