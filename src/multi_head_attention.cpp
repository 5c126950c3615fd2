#include "multi_head_attention.h"

#include <algorithm>
#include <cstring>

#include "parallel_gemm.h"

namespace attn {
namespace {

constexpr int kMaxDim = 1 << 16;  // generous; keeps every size product far from overflow

// Rearranges a batch x seq x (heads*d) projection (rows `row_stride` apart) into
// batch x heads x seq x d for the trace.
std::string split_heads(const float* src, long row_stride, int batch, int seq, int heads, int d, Buffer& dst) {
  const std::size_t n = static_cast<std::size_t>(batch) * seq * heads * d;
  if (!dst.resize(n)) return out_of_memory("the trace", n);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < seq; ++i)
        std::memcpy(dst.data() + ((static_cast<long>(b) * heads + h) * seq + i) * d,
                    src + (static_cast<long>(b) * seq + i) * row_stride + static_cast<long>(h) * d,
                    d * sizeof(float));
  return "";
}

// Copies a rows x cols block into columns [c0, c0 + cols) of a matrix with leading dim ld.
void place_columns(const float* src, int rows, int cols, float* dst, int ld, int c0) {
  for (int r = 0; r < rows; ++r) std::memcpy(dst + static_cast<long>(r) * ld + c0, src + static_cast<long>(r) * cols, cols * sizeof(float));
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
  // Every weight matrix, including [W^Q | W^K | W^V] side by side, fits: at most
  // max(dModel, kdim, vdim) x 3 x numHeads x max(dK, dV) floats (this also keeps widths in int).
  bool ok = true;
  const int widest_in = std::max({c.d_model, c.kdim, c.vdim});
  product_or_zero({std::size_t(widest_in), 3, std::size_t(c.num_heads), std::size_t(std::max(c.d_k, c.d_v))}, &ok);
  if (!ok) return "weights too large: max(dModel, kdim, vdim) * 3 * numHeads * max(dK, dV) exceeds the memory limit";
  cfg_ = c;
  configured_ = true;
  has_weights_ = false;
  return "";
}

std::string MultiHeadAttention::set_weights(const MhaWeightsView& w) {
  if (!configured_) return "not configured";
  const MhaConfig& c = cfg_;
  const int hk = c.num_heads * c.d_k, hv = c.num_heads * c.d_v;
  has_weights_ = false;
  // Validate everything before touching the stored weights.
  const struct { const char* name; const float* p; std::size_t n; bool needed; } inputs[] = {
      {"wQ", w.w_q, std::size_t(c.d_model) * hk, true}, {"wK", w.w_k, std::size_t(c.kdim) * hk, true},
      {"wV", w.w_v, std::size_t(c.vdim) * hv, true},    {"wO", w.w_o, std::size_t(hv) * c.d_model, true},
      {"bQ", w.b_q, std::size_t(hk), c.bias},            {"bK", w.b_k, std::size_t(hk), c.bias},
      {"bV", w.b_v, std::size_t(hv), c.bias},            {"bO", w.b_o, std::size_t(c.d_model), c.bias}};
  for (const auto& in : inputs) {
    if (!in.needed) continue;
    if (!in.p) return std::string(in.name) + " is missing";
    std::string err = check_finite(in.name, in.p, in.n);
    if (!err.empty()) return err;
  }
  fused_ = c.kdim == c.d_model && c.vdim == c.d_model;
  const int width = fused_ ? 2 * hk + hv : hk;
  if (!w_in_.resize(std::size_t(c.d_model) * width) || !b_in_.resize(width) ||
      !w_o_.resize(std::size_t(hv) * c.d_model) || !b_o_.resize(c.d_model))
    return out_of_memory("the weights", std::size_t(c.d_model) * (width + hv));
  place_columns(w.w_q, c.d_model, hk, w_in_.data(), width, 0);
  std::memcpy(w_o_.data(), w.w_o, std::size_t(hv) * c.d_model * sizeof(float));
  const auto bias_or_zero = [&](const float* b, float* dst, int n) {
    for (int i = 0; i < n; ++i) dst[i] = c.bias ? b[i] : 0.0f;
  };
  bias_or_zero(w.b_q, b_in_.data(), hk);
  bias_or_zero(w.b_o, b_o_.data(), c.d_model);
  proj_q_ = {w_in_.data(), width, b_in_.data()};
  if (fused_) {
    place_columns(w.w_k, c.d_model, hk, w_in_.data(), width, hk);
    place_columns(w.w_v, c.d_model, hv, w_in_.data(), width, 2 * hk);
    bias_or_zero(w.b_k, b_in_.data() + hk, hk);
    bias_or_zero(w.b_v, b_in_.data() + 2 * hk, hv);
    proj_k_ = {w_in_.data() + hk, width, b_in_.data() + hk};
    proj_v_ = {w_in_.data() + 2 * hk, width, b_in_.data() + 2 * hk};
  } else {
    if (!w_k_sep_.resize(std::size_t(c.kdim) * hk) || !b_k_sep_.resize(hk) ||
        !w_v_sep_.resize(std::size_t(c.vdim) * hv) || !b_v_sep_.resize(hv))
      return out_of_memory("the weights", std::size_t(c.kdim) * hk + std::size_t(c.vdim) * hv);
    std::memcpy(w_k_sep_.data(), w.w_k, std::size_t(c.kdim) * hk * sizeof(float));
    std::memcpy(w_v_sep_.data(), w.w_v, std::size_t(c.vdim) * hv * sizeof(float));
    bias_or_zero(w.b_k, b_k_sep_.data(), hk);
    bias_or_zero(w.b_v, b_v_sep_.data(), hv);
    proj_k_ = {w_k_sep_.data(), hk, b_k_sep_.data()};
    proj_v_ = {w_v_sep_.data(), hv, b_v_sep_.data()};
  }
  has_weights_ = true;
  return "";
}

void MultiHeadAttention::project(const float* x, int rows, int in_dim, const Projection& p, int out_dim,
                                 float* y, int ldy) const {
  linear(*kn_, x, rows, in_dim, p.w, p.ld, p.b, out_dim, y, ldy);  // b is zeros without bias
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
  // Every per-call buffer fits: Q|K|V side by side (3 * heads * max(dK, dV) per row), inputs, output.
  const std::size_t per_row = 3 * std::size_t(c.num_heads) * std::size_t(std::max(c.d_k, c.d_v));
  product_or_zero({std::max(q_rows, k_rows), std::max(per_row, std::size_t(std::max({c.d_model, c.kdim, c.vdim})))}, &ok);
  if (err.empty() && !ok) err = "input too large: batch * seqLen * features exceeds the memory limit";
  if (err.empty()) err = validate_masks(s, in.masks);
  if (err.empty()) err = check_finite("query", in.query, q_rows * c.d_model);
  if (err.empty() && in.key != in.query) err = check_finite("key", in.key, k_rows * c.kdim);
  if (err.empty() && in.value != in.query && in.value != in.key)
    err = check_finite("value", in.value, k_rows * c.vdim);
  if (!err.empty()) return err;

  const int hk = c.num_heads * c.d_k, hv = c.num_heads * c.d_v;
  const long sq = in.seq_q, sk = in.seq_k;
  // Step 1 (seed 000): Q = X W^Q, K = X W^K, V = X W^V for all heads at once.
  const float *q, *k, *v;
  long q_ld, k_ld, v_ld;
  if (fused_ && in.key == in.query && in.value == in.query && in.seq_k == in.seq_q) {
    // Self-attention: one GEMM over X yields [Q | K | V] side by side.
    const int width = 2 * hk + hv;
    if (!qkv_.resize(q_rows * width)) return out_of_memory("Q, K and V", q_rows * width);
    const Projection all{w_in_.data(), width, b_in_.data()};
    project(in.query, static_cast<int>(q_rows), c.d_model, all, width, qkv_.data(), width);
    q = qkv_.data(), k = q + hk, v = q + 2 * hk;
    q_ld = k_ld = v_ld = width;
  } else {
    if (!qkv_.resize(q_rows * hk) || !k_.resize(k_rows * hk) || !v_.resize(k_rows * hv))
      return out_of_memory("Q, K and V", q_rows * hk + k_rows * (hk + hv));
    project(in.query, static_cast<int>(q_rows), c.d_model, proj_q_, hk, qkv_.data(), hk);
    project(in.key, static_cast<int>(k_rows), c.kdim, proj_k_, hk, k_.data(), hk);
    project(in.value, static_cast<int>(k_rows), c.vdim, proj_v_, hv, v_.data(), hv);
    q = qkv_.data(), k = k_.data(), v = v_.data();
    q_ld = k_ld = hk, v_ld = hv;
  }
  if (!concat_.resize(q_rows * hv)) return out_of_memory("the head outputs", q_rows * hv);

  // Step 2: Z_i = softmax(Q_i K_i^T / sqrt(d_k) + M) V_i, each head in its column block.
  const Strided qs{q, sq * q_ld, c.d_k, q_ld};
  const Strided ks{k, sk * k_ld, c.d_k, k_ld};
  const Strided vs{v, sk * v_ld, c.d_v, v_ld};
  const StridedOut zs{concat_.data(), sq * hv, c.d_v, hv};
  err = attention(*kn_, s, qs, ks, vs, zs, in.masks, scale, weights,
                  trace ? &trace->attention : nullptr, ws_);
  if (!err.empty()) return err;

  // Step 3: Concat(head_1..head_h) is already laid out in concat_; project it by W^O.
  project(concat_.data(), static_cast<int>(q_rows), hv, {w_o_.data(), c.d_model, b_o_.data()}, c.d_model, output,
          c.d_model);

  if (trace) {
    err = split_heads(q, q_ld, in.batch, in.seq_q, c.num_heads, c.d_k, trace->q);
    if (err.empty()) err = split_heads(k, k_ld, in.batch, in.seq_k, c.num_heads, c.d_k, trace->k);
    if (err.empty()) err = split_heads(v, v_ld, in.batch, in.seq_k, c.num_heads, c.d_v, trace->v);
    if (err.empty()) err = split_heads(concat_.data(), hv, in.batch, in.seq_q, c.num_heads, c.d_v, trace->z);
    if (err.empty() && !trace->concat.resize(concat_.size())) err = out_of_memory("the trace", concat_.size());
    if (err.empty()) std::memcpy(trace->concat.data(), concat_.data(), concat_.size() * sizeof(float));
    const std::size_t n_out = q_rows * c.d_model;
    if (err.empty() && (!trace->output.resize(n_out) || !trace->x.resize(n_out))) err = out_of_memory("the trace", 2 * n_out);
    if (err.empty()) std::memcpy(trace->output.data(), output, n_out * sizeof(float));
    if (err.empty()) std::memcpy(trace->x.data(), in.query, n_out * sizeof(float));
  }
  return err;
}

}  // namespace attn
