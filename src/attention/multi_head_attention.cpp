#include "attention/multi_head_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/parallel_gemm.h"

namespace attn {
namespace {

// rows x cols weights over a rolled cache's rows, written as rows x (dropped + cols) over every
// position: the dropped positions' weights are 0 (outside the window).
void widen_rows(const float* w, std::size_t rows, int cols, int dropped, float* out) {
  const std::size_t width = std::size_t(dropped) + cols;
  for (std::size_t r = 0; r < rows; ++r) {
    std::fill(out + r * width, out + r * width + dropped, 0.0f);
    std::memcpy(out + r * width + dropped, w + r * cols, std::size_t(cols) * sizeof(float));
  }
}

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

// Places an in x cols matrix (the caller's layout: row k holds input k's weights) as outputs
// [c0, c0 + cols) of w.
void place_columns(const float* src, int cols, Weight& w, int c0) {
  for (int k = 0; k < w.in; ++k) w.set_input(k, src + static_cast<long>(k) * cols, c0, cols);
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
  if (c.num_kv_heads == 0) c.num_kv_heads = c.num_heads;
  if (c.num_kv_heads < 1 || c.num_kv_heads > c.num_heads || c.num_heads % c.num_kv_heads != 0)
    return "numHeads (" + std::to_string(c.num_heads) + ") is not a multiple of numKvHeads (" +
           std::to_string(c.num_kv_heads) + ")";
  if (c.rotary && c.rotary->head_dim() != c.d_k)
    return "the rotary embedding's head_dim (" + std::to_string(c.rotary->head_dim()) + ") is not dK (" +
           std::to_string(c.d_k) + ")";
  if (c.window < 0) return "window must be >= 0, got " + std::to_string(c.window);
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
  heads_off_.clear();
  return "";
}

std::string MultiHeadAttention::set_weights(const MhaWeightsView& w) {
  if (!configured_) return "not configured";
  const MhaConfig& c = cfg_;
  if (c.num_kv_heads != c.num_heads) return "grouped-query attention takes a model's stored weights";
  const int hk = c.num_heads * c.d_k, hv = c.num_heads * c.d_v;
  // Validate everything before touching the stored weights: a refused set leaves the last good ones.
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
  has_weights_ = false;  // from here on the stored weights change
  fused_ = c.kdim == c.d_model && c.vdim == c.d_model;
  const int width = fused_ ? 2 * hk + hv : hk;
  if (!w_in_.allocate(WeightType::kF32, true, width, c.d_model) || !w_o_.allocate(WeightType::kF32, true, c.d_model, hv))
    return out_of_memory("the weights", std::size_t(c.d_model) * (width + hv));
  place_columns(w.w_q, hk, w_in_, 0);
  place_columns(w.w_o, c.d_model, w_o_, 0);
  if (fused_) {
    place_columns(w.w_k, hk, w_in_, hk);
    place_columns(w.w_v, hv, w_in_, 2 * hk);
    w_k_sep_ = Weight(), w_v_sep_ = Weight();
  } else {
    if (!w_k_sep_.allocate(WeightType::kF32, true, hk, c.kdim) || !w_v_sep_.allocate(WeightType::kF32, true, hv, c.vdim))
      return out_of_memory("the weights", std::size_t(c.kdim) * hk + std::size_t(c.vdim) * hv);
    place_columns(w.w_k, hk, w_k_sep_, 0);
    place_columns(w.w_v, hv, w_v_sep_, 0);
  }
  std::string err = copy_biases(w.b_q, w.b_k, w.b_v, w.b_o);
  if (!err.empty()) return err;
  set_projections();
  has_weights_ = true;
  return "";
}

std::string MultiHeadAttention::set_weights(MhaStoredWeights&& w) {
  if (!configured_) return "not configured";
  const MhaConfig& c = cfg_;
  has_weights_ = false;
  if (c.kdim != c.d_model || c.vdim != c.d_model) return "stored weights need kdim = vdim = dModel";
  const bool parts = w.qkv.empty();
  const bool shaped = parts ? w.q.out == q_width() && w.k.out == k_width() && w.v.out == v_width() && w.q.in == c.d_model &&
                                  w.k.in == c.d_model && w.v.in == c.d_model && !w.q.empty() && !w.k.empty() && !w.v.empty()
                            : w.qkv.out == q_width() + k_width() + v_width() && w.qkv.in == c.d_model;
  if (!shaped || w.o.out != c.d_model || w.o.in != z_width() || w.o.empty())
    return "the stored attention weights do not match the layer's shape";
  fused_ = true;
  w_k_sep_ = Weight(), w_v_sep_ = Weight();
  std::string err;
  if (!parts) {
    w_in_ = std::move(w.qkv);
  } else if (w.q.type == w.k.type && w.k.type == w.v.type && w.q.panels == w.k.panels && w.k.panels == w.v.panels) {
    Weight* parts[] = {&w.q, &w.k, &w.v};
    err = concat_outputs(parts, 3, &w_in_);
  } else {
    w_in_ = std::move(w.q), w_k_sep_ = std::move(w.k), w_v_sep_ = std::move(w.v);
  }
  w_o_ = std::move(w.o);
  if (err.empty()) err = copy_biases(w.b_q, w.b_k, w.b_v, w.b_o);
  if (!err.empty()) return err;
  set_projections();
  has_weights_ = true;
  return "";
}

std::string MultiHeadAttention::copy_biases(const float* b_q, const float* b_k, const float* b_v, const float* b_o) {
  const MhaConfig& c = cfg_;
  const int hq = q_width(), hk = k_width(), hv = v_width();
  const int width = fused_ ? hq + hk + hv : hq;
  if (!b_in_.resize(width) || !b_o_.resize(c.d_model) || (!fused_ && (!b_k_sep_.resize(hk) || !b_v_sep_.resize(hv))))
    return out_of_memory("the biases", std::size_t(width) + c.d_model + hk + hv);
  const auto bias_or_zero = [&](const float* b, float* dst, int n) {
    for (int i = 0; i < n; ++i) dst[i] = c.bias && b ? b[i] : 0.0f;
  };
  bias_or_zero(b_q, b_in_.data(), hq);
  bias_or_zero(b_o, b_o_.data(), c.d_model);
  bias_or_zero(b_k, fused_ ? b_in_.data() + hq : b_k_sep_.data(), hk);
  bias_or_zero(b_v, fused_ ? b_in_.data() + hq + hk : b_v_sep_.data(), hv);
  return "";
}

void MultiHeadAttention::set_projections() {
  const int hq = q_width(), hk = k_width(), hv = v_width();
  const WeightView in = w_in_.view();
  const bool one_matrix = w_k_sep_.empty();
  proj_all_ = {one_matrix ? in : WeightView(), b_in_.data()};
  proj_q_ = {in.outputs(0, hq), b_in_.data()};
  if (one_matrix) {
    proj_k_ = {in.outputs(hq, hk), b_in_.data() + hq};
    proj_v_ = {in.outputs(hq + hk, hv), b_in_.data() + hq + hk};
  } else {
    proj_k_ = {w_k_sep_.view(), fused_ ? b_in_.data() + hq : b_k_sep_.data()};
    proj_v_ = {w_v_sep_.view(), fused_ ? b_in_.data() + hq + hk : b_v_sep_.data()};
  }
  proj_o_ = {w_o_.view(), b_o_.data()};
}

std::string AppliedMask::fill(const Masks& m, int batch_, int heads, int seq_q_, int seq_k_) {
  batch = batch_, seq_q = seq_q_, seq_k = seq_k_;
  const std::size_t n = std::size_t(batch) * seq_q * seq_k;
  if (!hidden.resize(n)) return out_of_memory("the applied mask", n / 4);
  std::uint8_t* out = hidden.data();
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < seq_q; ++i)
      for (int j = 0; j < seq_k; ++j) *out++ = hides(m, seq_q, seq_k, heads, b, 0, i, j) ? 1 : 0;
  return "";
}

std::string MultiHeadAttention::held(MhaProjection p, WeightView* w, const float** bias) const {
  if (!has_weights_) return "weights have not been set";
  if (p == MhaProjection::kQkv && !w_k_sep_.empty()) return "Q, K and V are held as three matrices, not one";
  const Projection& proj = p == MhaProjection::kQ ? proj_q_ : p == MhaProjection::kK ? proj_k_
                           : p == MhaProjection::kV ? proj_v_ : p == MhaProjection::kO ? proj_o_ : proj_all_;
  *w = proj.w;
  *bias = cfg_.bias ? proj.b : nullptr;
  return "";
}

std::string MultiHeadAttention::head_weights(int head, HeadWeights* out) const {
  if (!has_weights_) return "weights have not been set";
  const MhaConfig& c = cfg_;
  if (head < 0 || head >= c.num_heads)
    return "head " + std::to_string(head) + " out of range (" + std::to_string(c.num_heads) + " heads)";
  HeadWeights& w = *out;
  w = HeadWeights();
  w.d_model = c.d_model, w.kdim = c.kdim, w.vdim = c.vdim, w.d_k = c.d_k, w.d_v = c.d_v, w.kv_head = head / group();
  // Columns [first, first + width) of a projection held out x in, as in x width (the seeds' layout).
  const auto columns = [](const Projection& p, int first, int width, std::vector<float>& m, std::vector<float>* bias) {
    std::vector<float> row(p.w.in);
    m.assign(std::size_t(p.w.in) * width, 0.0f);
    for (int r = 0; r < width; ++r) {
      p.w.dequantize_output(first + r, row.data());
      for (int k = 0; k < p.w.in; ++k) m[std::size_t(k) * width + r] = row[k];
    }
    if (bias && p.b) bias->assign(p.b + first, p.b + first + width);
  };
  columns(proj_q_, head * c.d_k, c.d_k, w.w_q, c.bias ? &w.b_q : nullptr);
  columns(proj_k_, w.kv_head * c.d_k, c.d_k, w.w_k, c.bias ? &w.b_k : nullptr);
  columns(proj_v_, w.kv_head * c.d_v, c.d_v, w.w_v, c.bias ? &w.b_v : nullptr);
  // W^O's rows [head d_v, (head + 1) d_v): each output's inputs from this head.
  std::vector<float> row(proj_o_.w.in);
  w.w_o.assign(std::size_t(c.d_v) * c.d_model, 0.0f);
  for (int r = 0; r < c.d_model; ++r) {
    proj_o_.w.dequantize_output(r, row.data());
    for (int k = 0; k < c.d_v; ++k) w.w_o[std::size_t(k) * c.d_model + r] = row[head * c.d_v + k];
  }
  if (c.bias && proj_o_.b) w.b_o.assign(proj_o_.b, proj_o_.b + c.d_model);
  return "";
}

std::string MultiHeadAttention::set_heads_off(const std::uint8_t* off, int n) {
  if (!configured_) return "not configured";
  if (n == 0) {
    heads_off_.clear();
    return "";
  }
  if (n != cfg_.num_heads)
    return "heads to switch off: need " + std::to_string(cfg_.num_heads) + " flags (one per head), got " + std::to_string(n);
  heads_off_.assign(off, off + n);
  if (std::none_of(heads_off_.begin(), heads_off_.end(), [](std::uint8_t f) { return f != 0; })) heads_off_.clear();
  return "";
}

void MultiHeadAttention::zero_heads_off(float* concat, std::size_t rows) const {
  if (heads_off_.empty()) return;
  const int hz = z_width(), dv = cfg_.d_v;
  for (std::size_t r = 0; r < rows; ++r)
    for (int h = 0; h < cfg_.num_heads; ++h)
      if (heads_off_[h]) std::fill_n(concat + r * hz + std::size_t(h) * dv, dv, 0.0f);
}

std::string MultiHeadAttention::project(const float* x, int rows, const Projection& p, float* y, int ldy) const {
  return linear(*kn_, x, rows, p.w, p.b, y, ldy);  // b is zeros without bias
}

void MultiHeadAttention::norm_heads(float* x, long ld, long rows, int heads, const float* gain) const {
  const int d = cfg_.d_k;
  for (long r = 0; r < rows; ++r)
    for (int h = 0; h < heads; ++h) {
      float* v = x + r * ld + long(h) * d;
      double ss = 0;
      for (int i = 0; i < d; ++i) ss += double(v[i]) * v[i];
      const float inv = static_cast<float>(1.0 / std::sqrt(ss / d + cfg_.qk_norm_eps));
      for (int i = 0; i < d; ++i) v[i] = v[i] * inv * gain[i];
    }
}

std::string MultiHeadAttention::project_qkv(const float* x, int rows, float* y) const {
  const int hq = q_width(), hk = k_width(), width = hq + hk + v_width();
  if (proj_all_.w.out > 0) return project(x, rows, proj_all_, y, width);
  std::string err = project(x, rows, proj_q_, y, width);
  if (err.empty()) err = project(x, rows, proj_k_, y + hq, width);
  if (err.empty()) err = project(x, rows, proj_v_, y + hq + hk, width);
  return err;
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
  if (err.empty()) err = resolve_scale(std::isnan(in.scale) && c.scale > 0 ? c.scale : in.scale, c.d_k, &scale);
  bool ok = true;
  const std::size_t q_rows = product_or_zero({std::size_t(in.batch), std::size_t(in.seq_q)}, &ok);
  const std::size_t k_rows = product_or_zero({std::size_t(in.batch), std::size_t(in.seq_k)}, &ok);
  // Every per-call buffer fits: Q|K|V side by side (3 * heads * max(dK, dV) per row), inputs, output.
  const std::size_t per_row = 3 * std::size_t(c.num_heads) * std::size_t(std::max(c.d_k, c.d_v));
  product_or_zero({std::max(q_rows, k_rows), std::max(per_row, std::size_t(std::max({c.d_model, c.kdim, c.vdim})))}, &ok);
  if (err.empty() && !ok) err = "input too large: batch * seqLen * features exceeds the memory limit";
  Masks masks = in.masks;
  if (masks.causal && c.window > 0) masks.window = c.window;
  if (err.empty()) err = validate_masks(s, masks);
  if (!c.model_activations) {
    if (err.empty()) err = check_finite("query", in.query, q_rows * c.d_model);
    if (err.empty() && in.key != in.query) err = check_finite("key", in.key, k_rows * c.kdim);
    if (err.empty() && in.value != in.query && in.value != in.key)
      err = check_finite("value", in.value, k_rows * c.vdim);
  }
  if (!err.empty()) return err;

  const int hq = q_width(), hk = k_width(), hv = v_width(), hz = z_width();
  const long sq = in.seq_q, sk = in.seq_k;
  // Step 1 (seed 000): Q = X W^Q, K = X W^K, V = X W^V for all heads at once.
  float *q, *k;
  const float* v;
  long q_ld, k_ld, v_ld;
  if (fused_ && in.key == in.query && in.value == in.query && in.seq_k == in.seq_q) {
    // Self-attention: one GEMM over X yields [Q | K | V] side by side.
    const int width = hq + hk + hv;
    if (!qkv_.resize(q_rows * width)) return out_of_memory("Q, K and V", q_rows * width);
    err = project_qkv(in.query, static_cast<int>(q_rows), qkv_.data());
    if (!err.empty()) return err;
    q = qkv_.data(), k = q + hq, v = q + hq + hk;
    q_ld = k_ld = v_ld = width;
  } else {  // (separate matrices only without grouped K/V heads: hq = hk)
    if (!qkv_.resize(q_rows * hk) || !k_.resize(k_rows * hk) || !v_.resize(k_rows * hv))
      return out_of_memory("Q, K and V", q_rows * hk + k_rows * (hk + hv));
    err = project(in.query, static_cast<int>(q_rows), proj_q_, qkv_.data(), hk);
    if (err.empty()) err = project(in.key, static_cast<int>(k_rows), proj_k_, k_.data(), hk);
    if (err.empty()) err = project(in.value, static_cast<int>(k_rows), proj_v_, v_.data(), hv);
    if (!err.empty()) return err;
    q = qkv_.data(), k = k_.data(), v = v_.data();
    q_ld = k_ld = hk, v_ld = hv;
  }
  if (trace)  // (empty unless this layer fills them below: a model's layers differ)
    for (Buffer* b : {&trace->q_before_norm, &trace->k_before_norm, &trace->q_before_rotary, &trace->k_before_rotary}) b->resize(0);
  if (trace && c.q_norm && c.k_norm) {  // the walk shows the per-head norm as a step of its own
    err = split_heads(q, q_ld, in.batch, in.seq_q, c.num_heads, c.d_k, trace->q_before_norm);
    if (err.empty()) err = split_heads(k, k_ld, in.batch, in.seq_k, c.num_kv_heads, c.d_k, trace->k_before_norm);
    if (!err.empty()) return err;
  }
  if (c.q_norm) norm_heads(q, q_ld, q_rows, c.num_heads, c.q_norm);
  if (c.k_norm) norm_heads(k, k_ld, k_rows, c.num_kv_heads, c.k_norm);
  if (c.rotary) {
    if (trace) {  // the walk shows what the rotation does: Q and K before it too
      err = split_heads(q, q_ld, in.batch, in.seq_q, c.num_heads, c.d_k, trace->q_before_rotary);
      if (err.empty()) err = split_heads(k, k_ld, in.batch, in.seq_k, c.num_kv_heads, c.d_k, trace->k_before_rotary);
      if (!err.empty()) return err;
    }
    // Query and key rows both at positions 0.. of their sequence.
    c.rotary->apply(q, q_ld, c.num_heads, nullptr, 0, 0, in.batch, in.seq_q, 0);
    c.rotary->apply(nullptr, 0, 0, k, k_ld, c.num_kv_heads, in.batch, in.seq_k, 0);
  }
  if (!concat_.resize(q_rows * hz)) return out_of_memory("the head outputs", q_rows * hz);

  // Step 2: Z_i = softmax(Q_i K_i^T / sqrt(d_k) + M) V_i, each head in its column block (reading
  // its group's K/V head).
  const Strided qs{q, sq * q_ld, c.d_k, q_ld};
  const Strided ks{k, sk * k_ld, c.d_k, k_ld, group()};
  const Strided vs{v, sk * v_ld, c.d_v, v_ld, group()};
  const StridedOut zs{concat_.data(), sq * hz, c.d_v, hz};
  err = attention(*kn_, s, qs, ks, vs, zs, masks, scale, weights,
                  trace ? &trace->attention : nullptr, ws_);
  if (err.empty() && (weights || trace)) err = mask_.fill(masks, in.batch, c.num_heads, in.seq_q, in.seq_k);
  if (!err.empty()) return err;

  // Step 3: Concat(head_1..head_h) is already laid out in concat_ (switched-off heads zeroed);
  // project it by W^O.
  zero_heads_off(concat_.data(), q_rows);
  err = project(concat_.data(), static_cast<int>(q_rows), proj_o_, output, c.d_model);
  if (!err.empty()) return err;

  if (trace) {
    err = split_heads(q, q_ld, in.batch, in.seq_q, c.num_heads, c.d_k, trace->q);
    if (err.empty()) err = split_heads(k, k_ld, in.batch, in.seq_k, c.num_kv_heads, c.d_k, trace->k);
    if (err.empty()) err = split_heads(v, v_ld, in.batch, in.seq_k, c.num_kv_heads, c.d_v, trace->v);
    if (err.empty()) err = split_heads(concat_.data(), hz, in.batch, in.seq_q, c.num_heads, c.d_v, trace->z);
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

namespace attn {

std::string KvCache::reset(int batch_, int limit_, int hk_, int hv_, int window_) {
  const int rows_each = window_ > 0 ? std::min(limit_, 2 * window_) : limit_;
  bool ok = batch_ >= 1 && limit_ >= 1 && window_ >= 0;
  const std::size_t rows = product_or_zero({std::size_t(batch_), std::size_t(rows_each)}, &ok);
  product_or_zero({rows, std::size_t(std::max(hk_, hv_)), 2}, &ok);
  if (!ok) return "KV cache of " + std::to_string(batch_) + " x " + std::to_string(limit_) + " positions is out of range";
  if (!k.resize(rows * hk_) || !v.resize(rows * hv_)) return out_of_memory("the KV cache", rows * (hk_ + hv_));
  batch = batch_, capacity = rows_each, length = 0, hk = hk_, hv = hv_;
  window = window_, dropped = 0, limit = limit_;
  return "";
}

std::string KvCache::keep_rows(int first, int new_capacity, const int* order, int new_batch) {
  // Copy the kept rows aside, then gather them into the (possibly resized) cache.
  const int kept = length - first;
  const std::size_t used_k = std::size_t(kept) * hk, used_v = std::size_t(kept) * hv;
  if (!scratch.resize(std::size_t(batch) * (used_k + used_v))) return out_of_memory("the KV cache", batch * (used_k + used_v));
  const std::size_t stride_k = std::size_t(capacity) * hk, stride_v = std::size_t(capacity) * hv;
  float* old_k = scratch.data();
  float* old_v = old_k + batch * used_k;
  for (int b = 0; b < batch; ++b) {
    std::memcpy(old_k + b * used_k, k.data() + b * stride_k + std::size_t(first) * hk, used_k * sizeof(float));
    std::memcpy(old_v + b * used_v, v.data() + b * stride_v + std::size_t(first) * hv, used_v * sizeof(float));
  }
  const std::size_t new_k = std::size_t(new_capacity) * hk, new_v = std::size_t(new_capacity) * hv;
  if (!k.resize(new_batch * new_k) || !v.resize(new_batch * new_v))
    return out_of_memory("the KV cache", new_batch * (new_k + new_v));
  for (int b = 0; b < new_batch; ++b) {
    const int from = order ? order[b] : b;
    std::memcpy(k.data() + b * new_k, old_k + from * used_k, used_k * sizeof(float));
    std::memcpy(v.data() + b * new_v, old_v + from * used_v, used_v * sizeof(float));
  }
  batch = new_batch, capacity = new_capacity, dropped += first, length = kept;
  return "";
}

std::string KvCache::make_room(int n) {
  if (length + n <= capacity) return "";
  if (window == 0)
    return std::to_string(length + n) + " positions exceed the KV cache's capacity of " + std::to_string(capacity);
  const int keep = std::min(length, window - 1);
  return keep_rows(length - keep, std::max(capacity, keep + n), nullptr, batch);
}

std::string KvCache::reorder(const int* order, int new_batch) {
  if (new_batch < 1) return "reorder needs at least one sequence";
  for (int b = 0; b < new_batch; ++b)
    if (order[b] < 0 || order[b] >= batch)
      return "reorder: sequence " + std::to_string(order[b]) + " out of range (batch " + std::to_string(batch) + ")";
  return keep_rows(0, capacity, order, new_batch);
}

std::string MultiHeadAttention::start_cache(KvCache& cache, int batch, int capacity) const {
  if (!has_weights_) return "weights have not been set: call setWeights() first";
  // A causal window rolls the cache (only self-attention caches are started this way).
  return cache.reset(batch, capacity, k_width(), v_width(), cfg_.window);
}

std::string MultiHeadAttention::fill_cache(const float* memory, int batch, int seq, KvCache& cache) {
  if (!has_weights_) return "weights have not been set: call setWeights() first";
  if (cfg_.kdim != cfg_.vdim) return "fill_cache needs kdim = vdim (keys and values from one memory)";
  if (batch != cache.batch || seq < 1 || seq > cache.capacity)
    return "memory of " + std::to_string(batch) + " x " + std::to_string(seq) + " does not fit the cache (" +
           std::to_string(cache.batch) + " x " + std::to_string(cache.capacity) + ")";
  std::string err = cfg_.model_activations ? "" : check_finite("memory", memory, std::size_t(batch) * seq * cfg_.kdim);
  if (!err.empty()) return err;
  const int hk = cache.hk, hv = cache.hv;
  for (int b = 0; b < batch; ++b) {
    const float* m = memory + std::size_t(b) * seq * cfg_.kdim;
    err = project(m, seq, proj_k_, cache.k.data() + std::size_t(b) * cache.capacity * hk, hk);
    if (err.empty()) err = project(m, seq, proj_v_, cache.v.data() + std::size_t(b) * cache.capacity * hv, hv);
    if (!err.empty()) return err;
  }
  cache.length = seq;
  return "";
}

std::string MultiHeadAttention::forward_cached(const float* query, int seq_q, KvCache& cache, bool append, bool causal,
                                               const std::uint8_t* key_padding, float* output, float* weights) {
  if (!has_weights_) return "weights have not been set: call setWeights() first";
  const MhaConfig& c = cfg_;
  const int batch = cache.batch, hq = q_width(), hk = k_width(), hv = v_width(), hz = z_width();
  if (hk != cache.hk || hv != cache.hv) return "the KV cache was made for another layer shape";
  if (seq_q < 1) return "need at least one new position";
  if (append && !fused_) return "a self-attention cache needs kdim = vdim = dModel";
  if (!append && cache.length < 1) return "the cross-attention cache is empty: fill it from the encoder output first";
  const std::size_t q_rows = std::size_t(batch) * seq_q;
  std::string err = c.model_activations ? "" : check_finite("query", query, q_rows * c.d_model);
  if (err.empty() && append) err = cache.make_room(seq_q);
  if (!err.empty()) return err;
  float* q;
  long q_ld;
  if (append) {
    // One GEMM over the new rows yields [Q | K | V]; K and V go to the end of the cache.
    const int width = hq + hk + hv;
    if (!qkv_.resize(q_rows * width)) return out_of_memory("Q, K and V", q_rows * width);
    err = project_qkv(query, static_cast<int>(q_rows), qkv_.data());
    if (!err.empty()) return err;
    if (c.q_norm) norm_heads(qkv_.data(), width, q_rows, c.num_heads, c.q_norm);
    if (c.k_norm) norm_heads(qkv_.data() + hq, width, q_rows, c.num_kv_heads, c.k_norm);
    // The new rows sit at positions length.. : rotated there, K enters the cache rotated.
    if (c.rotary)
      c.rotary->apply(qkv_.data(), width, c.num_heads, qkv_.data() + hq, width, c.num_kv_heads, batch, seq_q,
                      cache.positions());
    for (int b = 0; b < batch; ++b)
      for (int i = 0; i < seq_q; ++i) {
        const float* row = qkv_.data() + (std::size_t(b) * seq_q + i) * width;
        const std::size_t at = std::size_t(b) * cache.capacity + cache.length + i;
        std::memcpy(cache.k.data() + at * hk, row + hq, hk * sizeof(float));
        std::memcpy(cache.v.data() + at * hv, row + hq + hk, hv * sizeof(float));
      }
    cache.length += seq_q;
    q = qkv_.data(), q_ld = width;
  } else {
    if (!qkv_.resize(q_rows * hq)) return out_of_memory("Q", q_rows * hq);
    err = project(query, static_cast<int>(q_rows), proj_q_, qkv_.data(), hq);
    if (!err.empty()) return err;
    q = qkv_.data(), q_ld = hq;
  }
  AttentionShape s{batch, c.num_heads, seq_q, cache.length, c.d_k, c.d_v};
  Masks m;
  m.causal = causal;
  m.causal_offset = cache.length - seq_q;
  if (causal) m.window = c.window;
  m.key_padding = key_padding;
  float scale = 0.0f;
  err = resolve_scale(c.scale > 0 ? c.scale : std::numeric_limits<float>::quiet_NaN(), c.d_k, &scale);
  if (!err.empty()) return err;
  if (!concat_.resize(q_rows * hz)) return out_of_memory("the head outputs", q_rows * hz);
  const long cap = cache.capacity;
  const Strided qs{q, seq_q * q_ld, c.d_k, q_ld};
  const Strided ks{cache.k.data(), cap * hk, c.d_k, hk, group()};
  const Strided vs{cache.v.data(), cap * hv, c.d_v, hv, group()};
  const StridedOut zs{concat_.data(), long(seq_q) * hz, c.d_v, hz};
  // A rolled cache's weights cover its rows only: computed aside, then widened to every position.
  const std::size_t cells = std::size_t(batch) * c.num_heads * seq_q * cache.length;
  if (weights && cache.dropped > 0 && !rolled_weights_.resize(cells)) return out_of_memory("the attention weights", cells);
  float* w = weights && cache.dropped > 0 ? rolled_weights_.data() : weights;
  err = attention(*kn_, s, qs, ks, vs, zs, m, scale, w, nullptr, ws_);
  if (err.empty() && w != weights) widen_rows(w, cells / cache.length, cache.length, cache.dropped, weights);
  m.causal_offset += cache.dropped;
  if (err.empty() && weights) err = mask_.fill(m, batch, c.num_heads, seq_q, cache.positions());
  if (!err.empty()) return err;
  zero_heads_off(concat_.data(), q_rows);
  return project(concat_.data(), static_cast<int>(q_rows), proj_o_, output, c.d_model);
}

std::string reorder_layer_caches(std::vector<KvCache>& caches, const int* order, int new_batch) {
  if (caches.empty()) return "no decoding in progress: call start_decoding() first";
  for (KvCache& c : caches) {
    std::string err = c.reorder(order, new_batch);
    if (!err.empty()) return err;
  }
  return "";
}

std::string check_decoding_step(const std::vector<KvCache>& caches, int n, int context) {
  if (caches.empty()) return "no decoding in progress: call start_decoding() first";
  if (n < 1) return "need at least one token";
  const KvCache& c = caches[0];
  if (c.positions() + n > c.limit)
    return std::to_string(c.positions() + n) + " tokens exceed the decoding capacity of " + std::to_string(c.limit) +
           " positions (the model's context is " + std::to_string(context) + ")";
  return "";
}

}  // namespace attn
