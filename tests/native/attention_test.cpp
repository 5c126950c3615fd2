// Standalone scaled dot-product attention against the double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "attention/attention.h"
#include "reference.h"

namespace {

class Attention : public ::testing::TestWithParam<const attn::Kernels*> {};

struct Case {
  int B, H, Sq, Sk, dk, dv;
  bool causal;
  int mask_kind;  // 0 none, 1 bool, 2 float
  bool per_head, key_padding;
  double magnitude;
  float scale;  // NaN = default
};

void run_case(const attn::Kernels& kn, const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  const auto q = ref::random_vec(rng, size_t(c.B) * c.H * c.Sq * c.dk, c.magnitude);
  const auto k = ref::random_vec(rng, size_t(c.B) * c.H * c.Sk * c.dk, c.magnitude);
  const auto v = ref::random_vec(rng, size_t(c.B) * c.H * c.Sk * c.dv);
  ref::Masks rm;
  rm.causal = c.causal;
  rm.kind = c.mask_kind;
  rm.per_head = c.per_head;
  const size_t mask_n = size_t(c.Sq) * c.Sk * (c.per_head ? size_t(c.B) * c.H : 1);
  std::uniform_int_distribution<int> coin(0, 4);
  if (c.mask_kind == 1)
    for (size_t i = 0; i < mask_n; ++i) rm.bool_mask.push_back(coin(rng) == 0);
  if (c.mask_kind == 2)
    for (size_t i = 0; i < mask_n; ++i)
      rm.float_mask.push_back(coin(rng) == 0 ? -std::numeric_limits<float>::infinity() : -0.5f * coin(rng));
  if (c.key_padding)
    for (int i = 0; i < c.B * c.Sk; ++i) rm.key_padding.push_back(coin(rng) == 0);

  attn::Masks m;
  m.causal = c.causal;
  m.key_padding = c.key_padding ? rm.key_padding.data() : nullptr;
  m.attn_kind = c.mask_kind == 1 ? attn::MaskKind::Bool : c.mask_kind == 2 ? attn::MaskKind::Float : attn::MaskKind::None;
  m.attn = c.mask_kind == 1 ? static_cast<const void*>(rm.bool_mask.data()) : rm.float_mask.data();
  m.attn_per_head = c.per_head;

  const double scale = std::isnan(c.scale) ? 1.0 / std::sqrt(double(c.dk)) : c.scale;
  ref::Vec want_out, want_w;
  ref::attention(c.B, c.H, c.Sq, c.Sk, c.dk, c.dv, q, k, v, rm, scale, want_out, want_w);

  const auto qf = ref::to_float(q), kf = ref::to_float(k), vf = ref::to_float(v);
  std::vector<float> out(want_out.size()), w(want_w.size());
  attn::AttentionWorkspace ws;
  attn::AttentionShape s{c.B, c.H, c.Sq, c.Sk, c.dk, c.dv};
  const std::string err = attn::scaled_dot_product_attention(kn, s, qf.data(), kf.data(), vf.data(), m, c.scale,
                                                             out.data(), w.data(), nullptr, ws);
  ASSERT_EQ(err, "");
  // Scores of magnitude ~1e4 carry float32 rounding of ~1e-3 absolute into the softmax.
  const double abs_tol = c.magnitude > 10 ? 2e-3 : 1e-5;
  EXPECT_ALL_CLOSE(w, want_w, abs_tol, 1e-4);
  EXPECT_ALL_CLOSE(out, want_out, abs_tol * 10, 1e-4);

  // Without weights the tiled online-softmax path runs; it must agree with the same reference.
  std::vector<float> tiled(want_out.size(), -7.0f);
  ASSERT_EQ(attn::scaled_dot_product_attention(kn, s, qf.data(), kf.data(), vf.data(), m, c.scale, tiled.data(),
                                               nullptr, nullptr, ws),
            "");
  EXPECT_ALL_CLOSE(tiled, want_out, abs_tol * 10, 1e-4);
}

TEST_P(Attention, MatchesDoubleReference) {
  const float dflt = std::numeric_limits<float>::quiet_NaN();
  const Case cases[] = {
      {1, 1, 1, 1, 1, 1, false, 0, false, false, 1, dflt},
      {2, 3, 5, 5, 4, 4, false, 0, false, false, 1, dflt},
      {2, 3, 5, 5, 4, 4, true, 0, false, false, 1, dflt},
      {1, 2, 4, 7, 3, 6, false, 0, false, false, 1, dflt},   // cross: seq_q != seq_k, d_k != d_v
      {1, 2, 7, 4, 3, 6, true, 0, false, false, 1, dflt},    // causal with seq_q > seq_k
      {2, 2, 6, 6, 8, 8, false, 1, false, true, 1, dflt},    // bool mask + key padding
      {2, 2, 6, 9, 8, 5, true, 2, true, true, 1, dflt},      // per-head float mask + both others
      {1, 4, 9, 9, 16, 16, false, 1, true, false, 1, dflt},
      {1, 2, 5, 5, 8, 8, false, 0, false, false, 30, dflt},  // scores ~1e3-1e4: needs max subtraction
      {2, 2, 3, 5, 4, 4, false, 0, false, false, 1, 0.3f},   // scale override
      {1, 1, 33, 65, 17, 9, true, 2, false, true, 1, dflt},  // SIMD tails everywhere
      // Several query and key blocks of the tiled path (32 x 128), with every mask kind.
      {1, 2, 70, 300, 16, 8, true, 0, false, false, 1, dflt},
      {2, 2, 97, 260, 8, 12, false, 2, true, true, 1, dflt},
      {1, 1, 300, 300, 8, 8, true, 1, false, true, 1, dflt},
      {1, 2, 40, 270, 8, 8, false, 0, false, false, 30, dflt},  // huge scores across blocks
      {1, 1, 260, 100, 4, 4, true, 0, false, false, 1, dflt},   // causal, seq_q > seq_k
  };
  unsigned seed = 10;
  for (const Case& c : cases) run_case(*GetParam(), c, seed++);
}

TEST_P(Attention, Seed001ScoresThroughSoftmax) {
  // Seed 001: q.k = [32, 88, 56, 72], divided by sqrt(d_k) = 8 -> [4, 11, 7, 9]. Its printed
  // softmax [0.0008, 0.87, 0.015, 0.011] has typos: the truth is [0.00079, 0.86613, 0.01586,
  // 0.11722] (0.015 rounds 0.0159, and 0.011 should be 0.117; the printed row sums to 0.897).
  const int dk = 64;
  std::vector<float> q(dk, 0.0f), k(4 * dk, 0.0f), v(4 * 2, 0.0f);
  q[0] = 1.0f;
  const float scores[] = {32, 88, 56, 72};
  for (int j = 0; j < 4; ++j) k[j * dk] = scores[j];
  std::vector<float> out(2), w(4);
  attn::AttentionWorkspace ws;
  ASSERT_EQ(attn::scaled_dot_product_attention(*GetParam(), {1, 1, 1, 4, dk, 2}, q.data(), k.data(), v.data(), {},
                                               std::numeric_limits<float>::quiet_NaN(), out.data(), w.data(),
                                               nullptr, ws),
            "");
  const double want[] = {0.0007898, 0.8661287, 0.0158637, 0.1172178};
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(w[j], want[j], 2e-6);
}

TEST_P(Attention, FullyMaskedRowGivesZerosNotNaN) {
  std::vector<float> q(2 * 4, 1.0f), k(3 * 4, 1.0f), v(3 * 2, 5.0f);
  const std::uint8_t padding[] = {1, 1, 1};
  attn::Masks m;
  m.key_padding = padding;
  attn::AttentionWorkspace ws;
  for (bool with_weights : {true, false}) {  // both the materializing and the tiled path
    std::vector<float> out(2 * 2, -1.0f), w(2 * 3, -1.0f);
    ASSERT_EQ(attn::scaled_dot_product_attention(*GetParam(), {1, 1, 2, 3, 4, 2}, q.data(), k.data(), v.data(), m,
                                                 std::numeric_limits<float>::quiet_NaN(), out.data(),
                                                 with_weights ? w.data() : nullptr, nullptr, ws),
              "");
    if (with_weights)
      for (float f : w) EXPECT_EQ(f, 0.0f);
    for (float f : out) EXPECT_EQ(f, 0.0f);
  }
}

TEST_P(Attention, TraceHoldsEveryStep) {
  std::mt19937 rng(5);
  const auto q = ref::to_float(ref::random_vec(rng, 3 * 2)), k = ref::to_float(ref::random_vec(rng, 3 * 2));
  const auto v = ref::to_float(ref::random_vec(rng, 3 * 2));
  attn::Masks m;
  m.causal = true;
  attn::AttentionTrace t;
  attn::AttentionWorkspace ws;
  std::vector<float> out(6);
  ASSERT_EQ(attn::scaled_dot_product_attention(*GetParam(), {1, 1, 3, 3, 2, 2}, q.data(), k.data(), v.data(), m,
                                               std::numeric_limits<float>::quiet_NaN(), out.data(), nullptr, &t, ws),
            "");
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const float raw = q[i * 2] * k[j * 2] + q[i * 2 + 1] * k[j * 2 + 1];
      EXPECT_NEAR(t.raw_scores.data()[i * 3 + j], raw, 1e-6);
      EXPECT_NEAR(t.scaled_scores.data()[i * 3 + j], raw / std::sqrt(2.0f), 1e-6);
      if (j > i) EXPECT_EQ(t.masked_scores.data()[i * 3 + j], -std::numeric_limits<float>::infinity());
      else EXPECT_EQ(t.masked_scores.data()[i * 3 + j], t.scaled_scores.data()[i * 3 + j]);
    }
  EXPECT_EQ(t.weights.data()[0], 1.0f);  // the first token can only see itself
}

TEST_P(Attention, RejectsBadInput) {
  std::vector<float> q(8, 1.0f), k(8, 1.0f), v(8, 1.0f), out(8);
  attn::AttentionWorkspace ws;
  const float dflt = std::numeric_limits<float>::quiet_NaN();
  auto run = [&](attn::AttentionShape s, const attn::Masks& m, float scale = std::numeric_limits<float>::quiet_NaN()) {
    return attn::scaled_dot_product_attention(*GetParam(), s, q.data(), k.data(), v.data(), m, scale, out.data(),
                                              nullptr, nullptr, ws);
  };
  EXPECT_EQ(run({1, 1, 0, 2, 4, 4}, {}), "seqQ must be >= 1, got 0");
  EXPECT_EQ(run({1, 0, 2, 2, 4, 4}, {}), "heads must be >= 1, got 0");
  EXPECT_NE(run({1, 1, 2, 2, 4, 4}, {}, std::numeric_limits<float>::infinity()), "");
  q[5] = dflt;
  EXPECT_EQ(run({1, 1, 2, 2, 4, 4}, {}), "q contains NaN at index 5");
  q[5] = 1.0f;
  v[7] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(run({1, 1, 2, 2, 4, 4}, {}), "v contains Infinity at index 7");
  v[7] = 1.0f;
  const float bad_mask[] = {0, 0, std::numeric_limits<float>::infinity(), 0};
  attn::Masks m;
  m.attn_kind = attn::MaskKind::Float;
  m.attn = bad_mask;
  EXPECT_NE(run({1, 1, 2, 2, 4, 4}, m).find("attn_mask contains +Infinity"), std::string::npos);
  EXPECT_EQ(run({1, 1, 2, 2, 4, 4}, {}), "");  // still usable afterwards
}

INSTANTIATE_TEST_SUITE_P(Twins, Attention,
                         ::testing::Values(&attn::scalar_kernels(), &attn::simd_kernels()),
                         [](const auto& info) { return std::string(info.param->name); });

}  // namespace
