// A plain double-precision attention written for the tests: the formulas of the seeds, literally,
// with none of the library's layouts, kernels or scratch buffers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ref {

using Vec = std::vector<double>;

struct Masks {
  bool causal = false;
  std::vector<std::uint8_t> key_padding;  // B x Sk or empty
  int kind = 0;                           // 0 none, 1 bool, 2 float
  std::vector<std::uint8_t> bool_mask;    // Sq x Sk or B x H x Sq x Sk
  std::vector<float> float_mask;
  bool per_head = false;
};

// out[b][h][i][:] = sum_j softmax_j(scale * q_i . k_j + M_ij) v_j; all-masked rows give zeros.
inline void attention(int B, int H, int Sq, int Sk, int dk, int dv, const Vec& q, const Vec& k,
                      const Vec& v, const Masks& m, double scale, Vec& out, Vec& weights) {
  const double inf = std::numeric_limits<double>::infinity();
  out.assign(static_cast<size_t>(B) * H * Sq * dv, 0.0);
  weights.assign(static_cast<size_t>(B) * H * Sq * Sk, 0.0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < Sq; ++i) {
        std::vector<double> s(Sk);
        double mx = -inf;
        for (int j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int c = 0; c < dk; ++c)
            dot += q[((size_t(b) * H + h) * Sq + i) * dk + c] * k[((size_t(b) * H + h) * Sk + j) * dk + c];
          s[j] = dot * scale;
          const size_t mi = m.per_head ? ((size_t(b) * H + h) * Sq + i) * Sk + j : size_t(i) * Sk + j;
          bool masked = (m.causal && j > i) || (!m.key_padding.empty() && m.key_padding[size_t(b) * Sk + j]);
          if (m.kind == 1 && m.bool_mask[mi]) masked = true;
          if (m.kind == 2) s[j] += m.float_mask[mi];
          if (masked) s[j] = -inf;
          mx = std::max(mx, s[j]);
        }
        if (mx == -inf) continue;  // nothing to attend to: zero weights, zero output
        double sum = 0;
        for (int j = 0; j < Sk; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int j = 0; j < Sk; ++j) {
          const double p = s[j] / sum;
          weights[((size_t(b) * H + h) * Sq + i) * Sk + j] = p;
          for (int c = 0; c < dv; ++c)
            out[((size_t(b) * H + h) * Sq + i) * dv + c] += p * v[((size_t(b) * H + h) * Sk + j) * dv + c];
        }
      }
}

// y[r][o] = sum_i x[r][i] w[i][o] + bias[o]
inline Vec linear(const Vec& x, int rows, int in, const Vec& w, int out, const Vec* bias) {
  Vec y(static_cast<size_t>(rows) * out, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double acc = bias ? (*bias)[o] : 0.0;
      for (int i = 0; i < in; ++i) acc += x[size_t(r) * in + i] * w[size_t(i) * out + o];
      y[size_t(r) * out + o] = acc;
    }
  return y;
}

// B x S x (H*d) -> B x H x S x d
inline Vec split_heads(const Vec& x, int B, int S, int H, int d) {
  Vec y(x.size());
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < S; ++s)
      for (int h = 0; h < H; ++h)
        for (int c = 0; c < d; ++c)
          y[((size_t(b) * H + h) * S + s) * d + c] = x[((size_t(b) * S + s) * H + h) * d + c];
  return y;
}

struct MhaWeights {
  Vec wq, wk, wv, wo, bq, bk, bv, bo;
};

inline Vec mha(int D, int H, int dk, int dv, int kdim, int vdim, bool bias, const MhaWeights& w,
               int B, int Sq, int Sk, const Vec& query, const Vec& key, const Vec& value,
               const Masks& m, Vec& weights) {
  const Vec q = split_heads(linear(query, B * Sq, D, w.wq, H * dk, bias ? &w.bq : nullptr), B, Sq, H, dk);
  const Vec k = split_heads(linear(key, B * Sk, kdim, w.wk, H * dk, bias ? &w.bk : nullptr), B, Sk, H, dk);
  const Vec v = split_heads(linear(value, B * Sk, vdim, w.wv, H * dv, bias ? &w.bv : nullptr), B, Sk, H, dv);
  Vec z;
  attention(B, H, Sq, Sk, dk, dv, q, k, v, m, 1.0 / std::sqrt(double(dk)), z, weights);
  Vec concat(static_cast<size_t>(B) * Sq * H * dv);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < Sq; ++s)
        for (int c = 0; c < dv; ++c)
          concat[((size_t(b) * Sq + s) * H + h) * dv + c] = z[((size_t(b) * H + h) * Sq + s) * dv + c];
  return linear(concat, B * Sq, H * dv, w.wo, D, bias ? &w.bo : nullptr);
}

// Random float32-representable values, so float and double code start from identical inputs.
inline Vec random_vec(std::mt19937& rng, size_t n, double scale = 1.0) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Vec v(n);
  for (auto& x : v) x = static_cast<float>(dist(rng) * scale);
  return v;
}

inline std::vector<float> to_float(const Vec& v) { return std::vector<float>(v.begin(), v.end()); }

}  // namespace ref

namespace ref {
// Fails the test at the first element outside |a - e| <= abs + rel * |e|.
#define EXPECT_ALL_CLOSE(actual, expected, abs_tol, rel_tol)                                    \
  do {                                                                                          \
    ASSERT_EQ((actual).size(), (expected).size());                                              \
    for (size_t i_ = 0; i_ < (expected).size(); ++i_) {                                         \
      const double e_ = (expected)[i_], a_ = (actual)[i_];                                      \
      ASSERT_LE(std::fabs(a_ - e_), (abs_tol) + (rel_tol) * std::fabs(e_))                      \
          << "at index " << i_ << ": got " << a_ << ", expected " << e_;                        \
    }                                                                                           \
  } while (0)
}  // namespace ref
