#include "attention.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace attn {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The additive mask M of one (batch, head), applied to its scaled score matrix in place.
void apply_masks(const AttentionShape& s, const Masks& m, int b, int h, float* scores) {
  const long plane = static_cast<long>(s.seq_q) * s.seq_k;
  const long mask_offset = m.attn_per_head ? (static_cast<long>(b) * s.heads + h) * plane : 0;
  const std::uint8_t* kp = m.key_padding ? m.key_padding + static_cast<long>(b) * s.seq_k : nullptr;
  for (int i = 0; i < s.seq_q; ++i) {
    float* row = scores + static_cast<long>(i) * s.seq_k;
    const long mrow = mask_offset + static_cast<long>(i) * s.seq_k;
    for (int j = 0; j < s.seq_k; ++j) {
      bool masked = (m.causal && j > i) || (kp && kp[j]);
      if (m.attn_kind == MaskKind::Bool)
        masked = masked || static_cast<const std::uint8_t*>(m.attn)[mrow + j];
      else if (m.attn_kind == MaskKind::Float)
        row[j] += static_cast<const float*>(m.attn)[mrow + j];
      if (masked) row[j] = kNegInf;
    }
  }
}

void copy_plane(float* dst, const float* src, long n) { std::memcpy(dst, src, n * sizeof(float)); }

}  // namespace

long first_non_finite(const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return static_cast<long>(i);
  return -1;
}

std::string validate_masks(const AttentionShape& s, const Masks& m) {
  if (m.attn_kind != MaskKind::None && !m.attn) return "attn_mask kind given without data";
  if (m.attn_kind == MaskKind::Float) {
    const long n = static_cast<long>(s.seq_q) * s.seq_k * (m.attn_per_head ? static_cast<long>(s.batch) * s.heads : 1);
    const float* f = static_cast<const float*>(m.attn);
    for (long i = 0; i < n; ++i)
      if (std::isnan(f[i]) || f[i] == std::numeric_limits<float>::infinity())
        return "attn_mask contains " + std::string(std::isnan(f[i]) ? "NaN" : "+Infinity") +
               " at index " + std::to_string(i) + " (only finite values and -Infinity are allowed)";
  }
  return "";
}

std::string attention(const Kernels& kn, const AttentionShape& s, const Strided& q,
                      const Strided& k, const Strided& v, const StridedOut& z, const Masks& m,
                      float scale, float* weights, AttentionTrace* trace,
                      AttentionWorkspace& ws) {
  bool ok = true;
  const std::size_t plane = product_or_zero({std::size_t(s.seq_q), std::size_t(s.seq_k)}, &ok);
  const std::size_t kt = product_or_zero({std::size_t(s.d_k), std::size_t(s.seq_k)}, &ok);
  const std::size_t all_planes =
      product_or_zero({plane, std::size_t(s.batch), std::size_t(s.heads)}, &ok);
  if (!ok) return "attention is too large: batch*heads*seqQ*seqK overflows";
  if (!ws.scores.resize(plane)) return out_of_memory("the score matrix", plane);
  if (!ws.k_t.resize(kt)) return out_of_memory("the transposed keys", kt);
  if (trace) {
    for (Buffer* t : {&trace->raw_scores, &trace->scaled_scores, &trace->masked_scores, &trace->weights})
      if (!t->resize(all_planes)) return out_of_memory("the attention trace", all_planes * 4);
  }
  const bool any_mask = m.causal || m.key_padding || m.attn_kind != MaskKind::None;
  float* S = ws.scores.data();
  float* Kt = ws.k_t.data();

  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h) {
      const long at = (static_cast<long>(b) * s.heads + h) * static_cast<long>(plane);
      // Q K^T: transpose this head's keys once so the product streams through the GEMM kernel.
      const float* kb = k.at(b, h);
      for (int j = 0; j < s.seq_k; ++j)
        for (int c = 0; c < s.d_k; ++c) Kt[static_cast<long>(c) * s.seq_k + j] = kb[j * k.row_stride + c];
      kn.gemm(s.seq_q, s.seq_k, s.d_k, q.at(b, h), static_cast<int>(q.row_stride), Kt, s.seq_k, S,
              s.seq_k, false);
      if (trace) copy_plane(trace->raw_scores.data() + at, S, plane);

      // Divide by sqrt(d_k) so the softmax does not saturate as d_k grows.
      for (std::size_t i = 0; i < plane; ++i) S[i] *= scale;
      if (trace) copy_plane(trace->scaled_scores.data() + at, S, plane);

      if (any_mask) apply_masks(s, m, b, h, S);
      if (trace) copy_plane(trace->masked_scores.data() + at, S, plane);

      for (int i = 0; i < s.seq_q; ++i) kn.softmax_row(S + static_cast<long>(i) * s.seq_k, s.seq_k);
      if (trace) copy_plane(trace->weights.data() + at, S, plane);
      if (weights) copy_plane(weights + at, S, plane);

      // Z = softmax(...) V, written straight into this head's slot of the output.
      kn.gemm(s.seq_q, s.d_v, s.seq_k, S, s.seq_k, v.at(b, h), static_cast<int>(v.row_stride),
              z.at(b, h), static_cast<int>(z.row_stride), false);
    }
  return "";
}

}  // namespace attn

namespace attn {

std::string check_finite(const char* name, const float* x, std::size_t n) {
  const long i = first_non_finite(x, n);
  if (i < 0) return "";
  const char* what = std::isnan(x[i]) ? "NaN" : (x[i] > 0 ? "Infinity" : "-Infinity");
  return std::string(name) + " contains " + what + " at index " + std::to_string(i);
}

std::string validate_shape(const AttentionShape& s) {
  const struct { const char* name; int value; } dims[] = {
      {"batch", s.batch}, {"heads", s.heads}, {"seqQ", s.seq_q},
      {"seqK", s.seq_k},  {"dK", s.d_k},      {"dV", s.d_v}};
  for (const auto& d : dims)
    if (d.value < 1) return std::string(d.name) + " must be >= 1, got " + std::to_string(d.value);
  bool ok = true;
  product_or_zero({std::size_t(s.batch), std::size_t(s.heads), std::size_t(s.seq_q), std::size_t(s.seq_k)}, &ok);
  product_or_zero({std::size_t(s.batch), std::size_t(s.heads), std::size_t(s.seq_k), std::size_t(s.d_k > s.d_v ? s.d_k : s.d_v)}, &ok);
  product_or_zero({std::size_t(s.batch), std::size_t(s.heads), std::size_t(s.seq_q), std::size_t(s.d_k > s.d_v ? s.d_k : s.d_v)}, &ok);
  if (!ok) return "shape is too large: the tensors would exceed 2^31 elements";
  return "";
}

std::string resolve_scale(float requested, int d_k, float* scale) {
  if (std::isnan(requested)) {
    *scale = 1.0f / std::sqrt(static_cast<float>(d_k));
    return "";
  }
  if (!std::isfinite(requested)) return "scale must be a finite number";
  *scale = requested;
  return "";
}

std::string scaled_dot_product_attention(const Kernels& kn, const AttentionShape& s,
                                         const float* q, const float* k, const float* v,
                                         const Masks& m, float scale, float* out, float* weights,
                                         AttentionTrace* trace, AttentionWorkspace& ws) {
  std::string err = validate_shape(s);
  if (err.empty()) err = resolve_scale(scale, s.d_k, &scale);
  if (err.empty()) err = validate_masks(s, m);
  const long bh = static_cast<long>(s.batch) * s.heads;
  if (err.empty()) err = check_finite("q", q, bh * s.seq_q * s.d_k);
  if (err.empty()) err = check_finite("k", k, bh * s.seq_k * s.d_k);
  if (err.empty()) err = check_finite("v", v, bh * s.seq_k * s.d_v);
  if (!err.empty()) return err;
  const long sq = s.seq_q, sk = s.seq_k;
  const Strided qs{q, s.heads * sq * s.d_k, sq * s.d_k, s.d_k};
  const Strided ks{k, s.heads * sk * s.d_k, sk * s.d_k, s.d_k};
  const Strided vs{v, s.heads * sk * s.d_v, sk * s.d_v, s.d_v};
  const StridedOut zs{out, s.heads * sq * s.d_v, sq * s.d_v, s.d_v};
  return attention(kn, s, qs, ks, vs, zs, m, scale, weights, trace, ws);
}

}  // namespace attn
