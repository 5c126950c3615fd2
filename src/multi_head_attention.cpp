#include "multi_head_attention.h"

#include <cstring>

namespace attn {
namespace {

constexpr int kMaxDim = 1 << 16;  // generous; keeps every size product far from overflow

std::string copy_weight(const char* name, const float* src, std::size_t n, Buffer& dst) {
  if (!src) return std::string(name) + " is missing";
  std::string err = check_finite(name, src, n);
  if (!err.empty()) return err;
  if (!dst.resize(n)) return out_of_memory(name, n);
  std::memcpy(dst.data(), src, n * sizeof(float));
  return "";
}

// Rearranges a batch x seq x (heads*d) projection into batch x heads x seq x d for the trace.
std::string split_heads(const Buffer& src, int batch, int seq, int heads, int d, Buffer& dst) {
  const std::size_t n = static_cast<std::size_t>(batch) * seq * heads * d;
  if (!dst.resize(n)) return out_of_memory("the trace", n);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < seq; ++i)
        std::memcpy(dst.data() + ((static_cast<long>(b) * heads + h) * seq + i) * d,
                    src.data() + (static_cast<long>(b) * seq + i) * heads * d + static_cast<long>(h) * d,
                    d * sizeof(float));
  return "";
}

}  // namespace

std::string MultiHeadAttention::configure(const MhaConfig& config) {
  MhaConfig c = config;
  if (c.d_model < 1) return "dModel must be >= 1, got " + std::to_string(c.d_model);
  if (c.num_heads < 1) return "numHeads must be >= 1, got " + std::to_string(c.num_heads);
  if (c.d_k == 0) {
    if (c.d_model % c.num_heads != 0)
      return "dModel (" + std::to_string(c.d_model) + ") is not divisible by numHeads (" +
             std::to_string(c.num_heads) + "); pass dK and dV explicitly";
    c.d_k = c.d_model / c.num_heads;
  }
  if (c.d_v == 0) c.d_v = c.d_k;
  if (c.kdim == 0) c.kdim = c.d_model;
  if (c.vdim == 0) c.vdim = c.d_model;
  const struct { const char* name; int value; } dims[] = {
      {"dModel", c.d_model}, {"numHeads", c.num_heads}, {"dK", c.d_k},
      {"dV", c.d_v},         {"kdim", c.kdim},          {"vdim", c.vdim}};
  for (const auto& d : dims)
    if (d.value < 1 || d.value > kMaxDim)
      return std::string(d.name) + " must be between 1 and " + std::to_string(kMaxDim) + ", got " +
             std::to_string(d.value);
  bool ok = true;
  product_or_zero({std::size_t(c.d_model > c.kdim ? c.d_model : c.kdim), std::size_t(c.num_heads),
                   std::size_t(c.d_k > c.d_v ? c.d_k : c.d_v)}, &ok);
  if (!ok) return "weights too large: dModel * numHeads * dK exceeds 2^31 elements";
  cfg_ = c;
  configured_ = true;
  has_weights_ = false;
  return "";
}

std::string MultiHeadAttention::set_weights(const MhaWeightsView& w) {
  if (!configured_) return "not configured";
  const MhaConfig& c = cfg_;
  const std::size_t hk = std::size_t(c.num_heads) * c.d_k, hv = std::size_t(c.num_heads) * c.d_v;
  has_weights_ = false;
  std::string err = copy_weight("wQ", w.w_q, c.d_model * hk, w_q_);
  if (err.empty()) err = copy_weight("wK", w.w_k, c.kdim * hk, w_k_);
  if (err.empty()) err = copy_weight("wV", w.w_v, c.vdim * hv, w_v_);
  if (err.empty()) err = copy_weight("wO", w.w_o, hv * c.d_model, w_o_);
  if (c.bias) {
    if (err.empty()) err = copy_weight("bQ", w.b_q, hk, b_q_);
    if (err.empty()) err = copy_weight("bK", w.b_k, hk, b_k_);
    if (err.empty()) err = copy_weight("bV", w.b_v, hv, b_v_);
    if (err.empty()) err = copy_weight("bO", w.b_o, c.d_model, b_o_);
  }
  has_weights_ = err.empty();
  return err;
}

// y (rows x out_dim) = x (rows x in_dim) W + b
std::string MultiHeadAttention::project(const char* what, const float* x, int rows, const Buffer& w,
                                        const Buffer& b, int in_dim, int out_dim, Buffer& y) {
  const std::size_t n = static_cast<std::size_t>(rows) * out_dim;
  if (!y.resize(n)) return out_of_memory(what, n);
  const bool bias = cfg_.bias;
  if (bias)
    for (int i = 0; i < rows; ++i) std::memcpy(y.data() + static_cast<long>(i) * out_dim, b.data(), out_dim * sizeof(float));
  kn_->gemm(rows, out_dim, in_dim, x, in_dim, w.data(), out_dim, y.data(), out_dim, bias);
  return "";
}

std::string MultiHeadAttention::forward(const MhaInput& in, float* output, float* weights,
                                        MhaTrace* trace) {
  if (!configured_) return "not configured";
  if (!has_weights_) return "weights have not been set: call setWeights() first";
  const MhaConfig& c = cfg_;
  AttentionShape s;
  s.batch = in.batch;
  s.heads = c.num_heads;
  s.seq_q = in.seq_q;
  s.seq_k = in.seq_k;
  s.d_k = c.d_k;
  s.d_v = c.d_v;
  std::string err = validate_shape(s);
  float scale = 0.0f;
  if (err.empty()) err = resolve_scale(in.scale, c.d_k, &scale);
  bool ok = true;
  const std::size_t q_rows = product_or_zero({std::size_t(in.batch), std::size_t(in.seq_q)}, &ok);
  const std::size_t k_rows = product_or_zero({std::size_t(in.batch), std::size_t(in.seq_k)}, &ok);
  product_or_zero({q_rows, std::size_t(c.num_heads), std::size_t(c.d_k > c.d_v ? c.d_k : c.d_v)}, &ok);
  product_or_zero({k_rows, std::size_t(c.num_heads), std::size_t(c.d_k > c.d_v ? c.d_k : c.d_v)}, &ok);
  product_or_zero({q_rows, std::size_t(c.d_model > c.kdim ? (c.d_model > c.vdim ? c.d_model : c.vdim) : (c.kdim > c.vdim ? c.kdim : c.vdim))}, &ok);
  if (err.empty() && !ok) err = "input too large: batch * seqLen * features exceeds 2^31 elements";
  if (err.empty()) err = validate_masks(s, in.masks);
  if (err.empty()) err = check_finite("query", in.query, q_rows * c.d_model);
  if (err.empty() && in.key != in.query) err = check_finite("key", in.key, k_rows * c.kdim);
  if (err.empty() && in.value != in.query && in.value != in.key)
    err = check_finite("value", in.value, k_rows * c.vdim);
  if (!err.empty()) return err;

  const int hk = c.num_heads * c.d_k, hv = c.num_heads * c.d_v;
  // Step 1 (seed 000): Q = X W^Q, K = X W^K, V = X W^V for all heads at once.
  err = project("Q", in.query, static_cast<int>(q_rows), w_q_, b_q_, c.d_model, hk, q_);
  if (err.empty()) err = project("K", in.key, static_cast<int>(k_rows), w_k_, b_k_, c.kdim, hk, k_);
  if (err.empty()) err = project("V", in.value, static_cast<int>(k_rows), w_v_, b_v_, c.vdim, hv, v_);
  if (err.empty() && !concat_.resize(q_rows * hv)) err = out_of_memory("the head outputs", q_rows * hv);
  if (!err.empty()) return err;

  // Step 2: Z_i = softmax(Q_i K_i^T / sqrt(d_k) + M) V_i, each head in its column block.
  const long sq = in.seq_q, sk = in.seq_k;
  const Strided qs{q_.data(), sq * hk, c.d_k, hk};
  const Strided ks{k_.data(), sk * hk, c.d_k, hk};
  const Strided vs{v_.data(), sk * hv, c.d_v, hv};
  const StridedOut zs{concat_.data(), sq * hv, c.d_v, hv};
  err = attention(*kn_, s, qs, ks, vs, zs, in.masks, scale, weights,
                  trace ? &trace->attention : nullptr, ws_);
  if (!err.empty()) return err;

  // Step 3: Concat(head_1..head_h) is already laid out in concat_; project it by W^O.
  if (c.bias)
    for (std::size_t i = 0; i < q_rows; ++i) std::memcpy(output + i * c.d_model, b_o_.data(), c.d_model * sizeof(float));
  kn_->gemm(static_cast<int>(q_rows), c.d_model, hv, concat_.data(), hv, w_o_.data(), c.d_model,
            output, c.d_model, c.bias);

  if (trace) {
    err = split_heads(q_, in.batch, in.seq_q, c.num_heads, c.d_k, trace->q);
    if (err.empty()) err = split_heads(k_, in.batch, in.seq_k, c.num_heads, c.d_k, trace->k);
    if (err.empty()) err = split_heads(v_, in.batch, in.seq_k, c.num_heads, c.d_v, trace->v);
    if (err.empty()) err = split_heads(concat_, in.batch, in.seq_q, c.num_heads, c.d_v, trace->z);
    if (err.empty() && !trace->concat.resize(concat_.size())) err = out_of_memory("the trace", concat_.size());
    if (err.empty()) std::memcpy(trace->concat.data(), concat_.data(), concat_.size() * sizeof(float));
    const std::size_t n_out = q_rows * c.d_model;
    if (err.empty() && !trace->output.resize(n_out)) err = out_of_memory("the trace", n_out);
    if (err.empty()) std::memcpy(trace->output.data(), output, n_out * sizeof(float));
  }
  return err;
}

}  // namespace attn
