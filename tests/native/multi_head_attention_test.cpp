// Multi-head attention against the double-precision reference, and its validation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "attention/multi_head_attention.h"
#include "reference.h"

namespace {

class MultiHead : public ::testing::TestWithParam<const attn::Kernels*> {};

struct RandomWeights {
  int D, H, dk, dv, kdim, vdim;
  bool bias;
  ref::MhaWeights w;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;
  attn::MhaWeightsView view() const {
    return {wq.data(), wk.data(), wv.data(), wo.data(), bq.data(), bk.data(), bv.data(), bo.data()};
  }
};

RandomWeights make_setup(std::mt19937& rng, int D, int H, int dk, int dv, int kdim, int vdim, bool bias) {
  RandomWeights s{D, H, dk, dv, kdim, vdim, bias, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  const double g = 1.0 / std::sqrt(double(D));
  s.w.wq = ref::random_vec(rng, size_t(D) * H * dk, g);
  s.w.wk = ref::random_vec(rng, size_t(kdim) * H * dk, g);
  s.w.wv = ref::random_vec(rng, size_t(vdim) * H * dv, g);
  s.w.wo = ref::random_vec(rng, size_t(H) * dv * D, g);
  s.w.bq = ref::random_vec(rng, size_t(H) * dk, 0.1);
  s.w.bk = ref::random_vec(rng, size_t(H) * dk, 0.1);
  s.w.bv = ref::random_vec(rng, size_t(H) * dv, 0.1);
  s.w.bo = ref::random_vec(rng, size_t(D), 0.1);
  s.wq = ref::to_float(s.w.wq), s.wk = ref::to_float(s.w.wk), s.wv = ref::to_float(s.w.wv);
  s.wo = ref::to_float(s.w.wo), s.bq = ref::to_float(s.w.bq), s.bk = ref::to_float(s.w.bk);
  s.bv = ref::to_float(s.w.bv), s.bo = ref::to_float(s.w.bo);
  return s;
}

TEST_P(MultiHead, MatchesDoubleReference) {
  struct C { int D, H, dk, dv, kdim, vdim; bool bias; int B, Sq, Sk; bool self, causal, padding; };
  const C cases[] = {
      {8, 2, 4, 4, 8, 8, true, 2, 5, 5, true, false, false},
      {8, 2, 4, 4, 8, 8, true, 2, 5, 5, true, true, false},
      {8, 2, 4, 4, 5, 7, true, 2, 4, 6, false, false, true},   // cross-attention, kdim/vdim
      {6, 2, 3, 5, 6, 6, false, 1, 4, 4, true, true, false},   // d_k != d_v, no bias
      {64, 4, 16, 16, 64, 64, true, 2, 19, 19, true, true, true},
      {48, 3, 16, 8, 48, 48, true, 1, 33, 33, true, false, false},
  };
  std::mt19937 rng(3);
  for (const C& c : cases) {
    RandomWeights s = make_setup(rng, c.D, c.H, c.dk, c.dv, c.kdim, c.vdim, c.bias);
    attn::MultiHeadAttention mha(*GetParam());
    ASSERT_EQ(mha.configure({c.D, c.H, c.dk, c.dv, c.kdim, c.vdim, c.bias}), "");
    ASSERT_EQ(mha.set_weights(s.view()), "");
    const auto query = ref::random_vec(rng, size_t(c.B) * c.Sq * c.D);
    const auto key = c.self ? query : ref::random_vec(rng, size_t(c.B) * c.Sk * c.kdim);
    const auto value = c.self ? query : ref::random_vec(rng, size_t(c.B) * c.Sk * c.vdim);
    ref::Masks rm;
    rm.causal = c.causal;
    if (c.padding)
      for (int i = 0; i < c.B * c.Sk; ++i) rm.key_padding.push_back(i % 4 == 3);
    ref::Vec want_w;
    const ref::Vec want = ref::mha(c.D, c.H, c.dk, c.dv, c.kdim, c.vdim, c.bias, s.w, c.B, c.Sq, c.Sk, query,
                                   key, value, rm, want_w);
    const auto qf = ref::to_float(query), kf = ref::to_float(key), vf = ref::to_float(value);
    attn::MhaInput in;
    in.query = qf.data();
    in.key = c.self ? qf.data() : kf.data();
    in.value = c.self ? qf.data() : vf.data();
    in.batch = c.B, in.seq_q = c.Sq, in.seq_k = c.Sk;
    in.masks.causal = c.causal;
    in.masks.key_padding = c.padding ? rm.key_padding.data() : nullptr;
    std::vector<float> out(want.size()), w(want_w.size());
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second call reuses the scratch buffers
      ASSERT_EQ(mha.forward(in, out.data(), w.data(), nullptr), "");
      EXPECT_ALL_CLOSE(out, want, 1e-5, 1e-4);
      EXPECT_ALL_CLOSE(w, want_w, 1e-5, 1e-4);
    }
  }
}

TEST_P(MultiHead, TraceMatchesReferenceSteps) {
  std::mt19937 rng(4);
  RandomWeights s = make_setup(rng, 6, 2, 3, 2, 6, 6, true);
  attn::MultiHeadAttention mha(*GetParam());
  ASSERT_EQ(mha.configure({6, 2, 3, 2, 0, 0, true}), "");
  ASSERT_EQ(mha.set_weights(s.view()), "");
  const auto x = ref::random_vec(rng, 2 * 4 * 6);
  const auto xf = ref::to_float(x);
  attn::MhaInput in;
  in.query = in.key = in.value = xf.data();
  in.batch = 2, in.seq_q = in.seq_k = 4;
  in.masks.causal = true;
  attn::MhaTrace t;
  std::vector<float> out(2 * 4 * 6);
  ASSERT_EQ(mha.forward(in, out.data(), nullptr, &t), "");
  const auto q = ref::split_heads(ref::linear(x, 8, 6, s.w.wq, 6, &s.w.bq), 2, 4, 2, 3);
  const auto v = ref::split_heads(ref::linear(x, 8, 6, s.w.wv, 4, &s.w.bv), 2, 4, 2, 2);
  const std::vector<float> got_q(t.q.data(), t.q.data() + t.q.size());
  const std::vector<float> got_v(t.v.data(), t.v.data() + t.v.size());
  EXPECT_ALL_CLOSE(got_q, q, 1e-5, 1e-4);
  EXPECT_ALL_CLOSE(got_v, v, 1e-5, 1e-4);
  ASSERT_EQ(t.attention.weights.size(), size_t(2 * 2 * 4 * 4));
  ASSERT_EQ(t.z.size(), size_t(2 * 2 * 4 * 2));
  ASSERT_EQ(t.concat.size(), size_t(2 * 4 * 4));
  // concat row (b=1, s=2) = [Z_head0 row, Z_head1 row]
  for (int h = 0; h < 2; ++h)
    for (int c = 0; c < 2; ++c)
      EXPECT_EQ(t.concat.data()[(1 * 4 + 2) * 4 + h * 2 + c], t.z.data()[((1 * 2 + h) * 4 + 2) * 2 + c]);
}

TEST_P(MultiHead, RejectsBadConfigsAndInputsAndStaysUsable) {
  attn::MultiHeadAttention mha(*GetParam());
  EXPECT_EQ(mha.configure({8, 0, 0, 0, 0, 0, true}), "numHeads must be >= 1, got 0");
  EXPECT_EQ(mha.configure({10, 3, 0, 0, 0, 0, true}),
            "dModel (10) is not divisible by numHeads (3); pass dK and dV explicitly");
  EXPECT_EQ(mha.configure({0, 1, 0, 0, 0, 0, true}), "dModel must be >= 1, got 0");
  EXPECT_NE(mha.configure({1 << 17, 1, 0, 0, 0, 0, true}), "");
  ASSERT_EQ(mha.configure({4, 2, 0, 0, 0, 0, true}), "");

  std::vector<float> x(1 * 3 * 4, 0.5f), out(12);
  attn::MhaInput in;
  in.query = in.key = in.value = x.data();
  in.batch = 1, in.seq_q = in.seq_k = 3;
  EXPECT_EQ(mha.forward(in, out.data(), nullptr, nullptr), "weights have not been set: call setWeights() first");

  std::mt19937 rng(9);
  RandomWeights s = make_setup(rng, 4, 2, 2, 2, 4, 4, true);
  s.wk[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(mha.set_weights(s.view()), "wK contains NaN at index 3");
  s.wk[3] = 0.1f;
  ASSERT_EQ(mha.set_weights(s.view()), "");

  in.seq_q = in.seq_k = 0;
  EXPECT_EQ(mha.forward(in, out.data(), nullptr, nullptr), "seqQ must be >= 1, got 0");
  in.seq_q = in.seq_k = 3;
  x[7] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(mha.forward(in, out.data(), nullptr, nullptr), "query contains -Infinity at index 7");
  x[7] = 0.5f;
  in.batch = 1 << 20, in.seq_q = in.seq_k = 1 << 12;
  EXPECT_NE(mha.forward(in, out.data(), nullptr, nullptr), "");
  in.batch = 1, in.seq_q = in.seq_k = 3;
  EXPECT_EQ(mha.forward(in, out.data(), nullptr, nullptr), "");
}

INSTANTIATE_TEST_SUITE_P(Twins, MultiHead,
                         ::testing::Values(&attn::scalar_kernels(), &attn::simd_kernels()),
                         [](const auto& info) { return std::string(info.param->name); });

}  // namespace
