// The thread pool covers every index exactly once, and threaded layers match single-threaded ones.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <thread>
#include <limits>
#include <random>
#include <vector>

#include "attention/attention.h"
#include "attention/multi_head_attention.h"
#include "kernels/parallel.h"
#include "kernels/parallel_gemm.h"
#include "reference.h"
#include "tensors/quantize.h"
#include "kernels/quantized_rows.h"
#include "tensors/weight_types.h"

namespace {

class Threads : public ::testing::Test {
 protected:
  void TearDown() override { attn::set_num_threads(1); }
};

TEST_F(Threads, ParallelForCoversEveryIndexOnceWithAlignedChunks) {
  ASSERT_EQ(attn::set_num_threads(2), 2);
  for (int n : {1, 7, 8, 9, 64, 1000})
    for (int grain : {1, 8}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> max_worker{0};
      attn::parallel_for(n, grain, [&](int b, int e, int w) {
        if (b % grain != 0) ADD_FAILURE() << "chunk start " << b << " not aligned to " << grain;
        for (int i = b; i < e; ++i) hits[i]++;
        int m = max_worker.load();
        while (w > m && !max_worker.compare_exchange_weak(m, w)) {}
      });
      for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n " << n << " index " << i;
      EXPECT_LT(max_worker.load(), 2);
    }
  // Many jobs in a row: no lost wake-ups.
  std::atomic<long> total{0};
  for (int round = 0; round < 2000; ++round)
    attn::parallel_for(16, 1, [&](int b, int e, int) { total += e - b; });
  EXPECT_EQ(total.load(), 2000L * 16);
}

TEST_F(Threads, AThreadHeldUpTakesFewerChunks) {
  // Chunks are handed out dynamically: while one thread is stuck in a slow chunk (as if
  // descheduled), the other takes the rest instead of waiting with a fixed half of the work.
  ASSERT_EQ(attn::set_num_threads(2), 2);
  std::atomic<int> per_worker[2] = {{0}, {0}};
  std::atomic<int> slow_worker{-1};
  attn::parallel_for(100, 1, [&](int b, int, int w) {
    per_worker[w]++;
    if (b == 0) {
      slow_worker = w;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  ASSERT_GE(slow_worker.load(), 0);
  EXPECT_EQ(per_worker[0] + per_worker[1], 100);
  EXPECT_LE(per_worker[slow_worker.load()].load(), 10) << "the held-up thread kept a fixed share";
}

TEST_F(Threads, BalancedGrainGivesAlignedChunksPerThread) {
  ASSERT_EQ(attn::set_num_threads(2), 2);
  EXPECT_EQ(attn::balanced_grain(100, 4), 13);      // 8 chunks: ceil(100 / 8)
  EXPECT_EQ(attn::balanced_grain(100, 4, 8), 16);   // rounded up to whole 8-column panels
  EXPECT_EQ(attn::balanced_grain(3, 4, 8), 8);      // never below one aligned unit
}

TEST_F(Threads, TwoThreadsGiveTheSameLayerOutput) {
  std::mt19937 rng(11);
  const int D = 96, H = 6, B = 2, S = 70;
  const auto w = ref::to_float(ref::random_vec(rng, 4 * D * D + 4 * D, 0.1));
  attn::MultiHeadAttention mha;
  ASSERT_EQ(mha.configure({D, H, 0, 0, 0, 0, true}), "");
  const float* p = w.data();
  ASSERT_EQ(mha.set_weights({p, p + D * D, p + 2 * D * D, p + 3 * D * D, p + 4 * D * D, p + 4 * D * D + D,
                             p + 4 * D * D + 2 * D, p + 4 * D * D + 3 * D}),
            "");
  const auto x = ref::to_float(ref::random_vec(rng, size_t(B) * S * D));
  attn::MhaInput in;
  in.query = in.key = in.value = x.data();
  in.batch = B, in.seq_q = in.seq_k = S;
  in.masks.causal = true;
  std::vector<float> one(B * S * D), two(B * S * D), w1(B * H * S * S), w2(B * H * S * S);
  attn::set_num_threads(1);
  ASSERT_EQ(mha.forward(in, one.data(), w1.data(), nullptr), "");
  ASSERT_EQ(attn::set_num_threads(2), 2);
  ASSERT_EQ(mha.forward(in, two.data(), w2.data(), nullptr), "");
  for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << i;  // same arithmetic, same order
  for (size_t i = 0; i < w1.size(); ++i) ASSERT_EQ(w1[i], w2[i]) << i;
  ASSERT_EQ(mha.forward(in, two.data(), nullptr, nullptr), "");  // the tiled path, threaded
  for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], two[i], 1e-5) << i;
}

// A decoding step's few queries against a long context read K's rows as stored (no K^T): with
// enough keys the heads go over threads. 1 and 2 threads give the same bits (each head's sums in
// the same order), both equal the float64 reference; grouped heads (K/V shared by pairs) included.
TEST_F(Threads, FewQueriesOverLongContextMatchFloat64OnOneAndTwoThreads) {
  std::mt19937 rng(23);
  const int B = 1, H = 4, Sk = 1500, d = 64;
  for (int Sq : {1, 3, 8}) {
    const auto q = ref::random_vec(rng, size_t(B) * H * Sq * d), k = ref::random_vec(rng, size_t(B) * H * Sk * d),
               v = ref::random_vec(rng, size_t(B) * H * Sk * d);
    ref::Masks rm;
    ref::Vec want, want_w;
    const double scale = 1.0 / std::sqrt(double(d));
    ref::attention(B, H, Sq, Sk, d, d, q, k, v, rm, scale, want, want_w);
    const auto qf = ref::to_float(q), kf = ref::to_float(k), vf = ref::to_float(v);
    const attn::AttentionShape s{B, H, Sq, Sk, d, d};
    std::vector<float> one(want.size()), two(want.size());
    attn::AttentionWorkspace ws;
    const float dflt = std::numeric_limits<float>::quiet_NaN();
    attn::set_num_threads(1);
    ASSERT_EQ(attn::scaled_dot_product_attention(attn::default_kernels(), s, qf.data(), kf.data(), vf.data(), {}, dflt,
                                                 one.data(), nullptr, nullptr, ws), "");
    ASSERT_EQ(attn::set_num_threads(2), 2);
    ASSERT_EQ(attn::scaled_dot_product_attention(attn::default_kernels(), s, qf.data(), kf.data(), vf.data(), {}, dflt,
                                                 two.data(), nullptr, nullptr, ws), "");
    for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << "Sq " << Sq << " at " << i;
    EXPECT_ALL_CLOSE(one, want, 1e-5, 1e-4);
  }
  // A decoding step of grouped heads (K/V heads shared by groups of 2 and 4 of 8 query heads), on
  // one thread and over two, with a per-head float mask whose holes differ by head.
  const int Hg = 8, Sq = 1;
  for (int group : {2, 4}) {
    const auto q = ref::random_vec(rng, size_t(Hg) * Sq * d), k = ref::random_vec(rng, size_t(Hg / group) * Sk * d),
               v = ref::random_vec(rng, size_t(Hg / group) * Sk * d);
    ref::Masks rm;
    rm.kind = 2, rm.per_head = true;
    std::uniform_int_distribution<int> coin(0, 3);
    for (int i = 0; i < Hg * Sq * Sk; ++i) rm.float_mask.push_back(coin(rng) == 0 ? -std::numeric_limits<float>::infinity() : -0.25f * coin(rng));
    ref::Vec kg, vg, want, want_w;  // the reference's K/V: each head's group's rows
    for (int h = 0; h < Hg; ++h) {
      kg.insert(kg.end(), k.begin() + (h / group) * size_t(Sk) * d, k.begin() + (h / group + 1) * size_t(Sk) * d);
      vg.insert(vg.end(), v.begin() + (h / group) * size_t(Sk) * d, v.begin() + (h / group + 1) * size_t(Sk) * d);
    }
    const double scale = 1.0 / std::sqrt(double(d));
    ref::attention(B, Hg, Sq, Sk, d, d, q, kg, vg, rm, scale, want, want_w);
    const auto qf = ref::to_float(q), kf = ref::to_float(k), vf = ref::to_float(v);
    attn::Masks m;
    m.attn_kind = attn::MaskKind::Float, m.attn = rm.float_mask.data(), m.attn_per_head = true;
    const attn::AttentionShape s{B, Hg, Sq, Sk, d, d};
    const attn::Strided qs{qf.data(), long(Hg) * d, d, d};
    const attn::Strided ks{kf.data(), long(Hg / group) * Sk * d, long(Sk) * d, d, group};
    const attn::Strided vs{vf.data(), long(Hg / group) * Sk * d, long(Sk) * d, d, group};
    std::vector<float> one(want.size()), two(want.size());
    attn::AttentionWorkspace ws;
    for (int threads : {1, 2}) {
      ASSERT_EQ(attn::set_num_threads(threads), threads);
      std::vector<float>& out = threads == 1 ? one : two;
      const attn::StridedOut zs{out.data(), long(Hg) * d, d, d};
      ASSERT_EQ(attn::attention(attn::default_kernels(), s, qs, ks, vs, zs, m, float(scale), nullptr, nullptr, ws), "");
    }
    for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << "group " << group << " at " << i;
    EXPECT_ALL_CLOSE(one, want, 1e-5, 1e-4);
  }
}

// A float32 linear layer's product over threads, in tiles of whole panels (and of rows, when
// many): equal to x W^T + b in float64 to float rounding, for decoding-shaped (a few rows) and
// prefill-shaped calls, ragged sizes, and a slice of the outputs that starts inside a panel.
TEST_F(Threads, PanelProductsOverThreadsMatchFloat64) {
  std::mt19937 rng(5);
  const int N = 1030, K = 771;  // over the split threshold; neither a multiple of 16 nor of 8
  const auto W = ref::to_float(ref::random_vec(rng, size_t(N) * K, 0.1));  // out x in
  const auto bias = ref::to_float(ref::random_vec(rng, N));
  attn::Weight w;
  ASSERT_TRUE(w.allocate(attn::WeightType::kF32, true, N, K));
  for (int r = 0; r < N; ++r) w.set_output(r, W.data() + size_t(r) * K);
  ASSERT_EQ(attn::set_num_threads(2), 2);
  for (int M : {1, 3, 8, 200}) {
    for (bool with_bias : {false, true})
      for (int first : {0, 21}) {
        const int n = N - first - 5;
        const attn::WeightView v = w.view().outputs(first, n);
        const auto X = ref::to_float(ref::random_vec(rng, size_t(M) * K));
        std::vector<float> Y(size_t(M) * n);
        ASSERT_EQ(attn::linear(attn::default_kernels(), X.data(), M, v, with_bias ? bias.data() + first : nullptr, Y.data(), n), "");
        for (int i = 0; i < M; i += (M > 8 ? 13 : 1))
          for (int j = 0; j < n; ++j) {
            double want = with_bias ? bias[first + j] : 0.0;
            for (int k = 0; k < K; ++k) want += double(X[size_t(i) * K + k]) * W[size_t(first + j) * K + k];
            ASSERT_NEAR(Y[size_t(i) * n + j], want, 1e-4) << "M=" << M << " first=" << first << " i=" << i << " j=" << j;
          }
      }
  }
}

// A matrix of random values held as type t (F32 in panels, as models hold it).
attn::Weight held_as(attn::WeightType t, int out, int in, std::mt19937& rng) {
  const auto W = ref::to_float(ref::random_vec(rng, size_t(out) * in, 0.1));
  attn::Weight w;
  EXPECT_TRUE(w.allocate(t, t == attn::WeightType::kF32, out, in));
  for (int r = 0; r < out; ++r) {
    if (t == attn::WeightType::kF32) w.set_output(r, W.data() + size_t(r) * in);
    else EXPECT_EQ(attn::encode_row(t, W.data() + size_t(r) * in, in, w.bytes() + attn::row_bytes(t, in) * r), "");
  }
  return w;
}

// Several products of the same rows in one dispatch (a decoding step's gate and up): each part's
// outputs equal, to the bit, linear() of that part alone on one thread (the split does not change
// any output's sum), at every storage type, with and without biases, for part widths that are
// not whole 16-output runs; and two threads make one barrier for all the parts.
TEST_F(Threads, FusedPartsInOneDispatchEqualEachProductOnOneThread) {
  using attn::WeightType;
  std::mt19937 rng(17);
  const int K = 512, outs[] = {1000, 536, 40};
  for (WeightType t : {WeightType::kF32, WeightType::kF16, WeightType::kBF16, WeightType::kQ8_0, WeightType::kQ4_0,
                       WeightType::kQ5_1, WeightType::kQ4_K, WeightType::kQ6_K}) {
    std::vector<attn::Weight> w;
    for (int n : outs) w.push_back(held_as(t, n, K, rng));
    const auto bias = ref::to_float(ref::random_vec(rng, 1000));
    for (int M : {1, 3})
      for (bool with_bias : {false, true}) {
        const auto X = ref::to_float(ref::random_vec(rng, size_t(M) * K));
        std::vector<std::vector<float>> one(3), two(3);
        std::vector<attn::LinearPart> parts;
        attn::set_num_threads(1);
        for (int p = 0; p < 3; ++p) {
          one[p].assign(size_t(M) * (outs[p] + 3), -7.0f), two[p] = one[p];
          ASSERT_EQ(attn::linear(attn::default_kernels(), X.data(), M, w[p].view(), with_bias ? bias.data() : nullptr,
                                 one[p].data(), outs[p] + 3),
                    "");
          parts.push_back({w[p].view(), with_bias ? bias.data() : nullptr, two[p].data(), outs[p] + 3});
        }
        ASSERT_EQ(attn::set_num_threads(2), 2);
        attn::reset_pool_stats();
        ASSERT_EQ(attn::linear_parts(attn::default_kernels(), X.data(), M, parts.data(), 3), "");
        EXPECT_EQ(attn::pool_stats().dispatches, 1) << attn::weight_type_name(t);
        for (int p = 0; p < 3; ++p)
          for (size_t i = 0; i < one[p].size(); ++i)
            ASSERT_EQ(one[p][i], two[p][i]) << attn::weight_type_name(t) << " M " << M << " part " << p << " at " << i;
      }
  }
}

// The fused dispatch against float64: F32 parts' outputs are x W^T + b to float rounding.
TEST_F(Threads, FusedPartsMatchFloat64) {
  std::mt19937 rng(23);
  const int K = 384, N0 = 700, N1 = 333;
  const auto W0 = ref::to_float(ref::random_vec(rng, size_t(N0) * K, 0.1));
  const auto W1 = ref::to_float(ref::random_vec(rng, size_t(N1) * K, 0.1));
  attn::Weight w0, w1;
  ASSERT_TRUE(w0.allocate(attn::WeightType::kF32, true, N0, K) && w1.allocate(attn::WeightType::kF32, true, N1, K));
  for (int r = 0; r < N0; ++r) w0.set_output(r, W0.data() + size_t(r) * K);
  for (int r = 0; r < N1; ++r) w1.set_output(r, W1.data() + size_t(r) * K);
  const auto b1 = ref::to_float(ref::random_vec(rng, N1));
  const auto X = ref::to_float(ref::random_vec(rng, 2 * K));
  std::vector<float> y0(2 * N0), y1(2 * N1);
  const attn::LinearPart parts[] = {{w0.view(), nullptr, y0.data(), N0}, {w1.view(), b1.data(), y1.data(), N1}};
  ASSERT_EQ(attn::set_num_threads(2), 2);
  ASSERT_EQ(attn::linear_parts(attn::default_kernels(), X.data(), 2, parts, 2), "");
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < N0; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += double(X[size_t(i) * K + k]) * W0[size_t(j) * K + k];
      ASSERT_NEAR(y0[size_t(i) * N0 + j], want, 1e-4) << i << "," << j;
    }
    for (int j = 0; j < N1; ++j) {
      double want = b1[j];
      for (int k = 0; k < K; ++k) want += double(X[size_t(i) * K + k]) * W1[size_t(j) * K + k];
      ASSERT_NEAR(y1[size_t(i) * N1 + j], want, 1e-4) << i << "," << j;
    }
  }
}

// The forms of the quantized activations made once per quantize(): each block permuted as the
// packed codes' lanes read it, and each run of 16's sum, from the codes themselves.
TEST(QuantizedActivations, PermutedCodesAndRunSumsFollowTheCodes) {
  std::mt19937 rng(3);
  const int rows = 3, K = 96;
  const auto X = ref::to_float(ref::random_vec(rng, size_t(rows) * K));
  attn::QuantizedRows q;
  ASSERT_TRUE(q.quantize(X.data(), rows, K, K));
  for (int b = 0; b < rows * K / 32; ++b)
    for (int i = 0; i < 8; ++i) {
      const std::int16_t* a = q.q.data() + 32 * b;
      const std::int16_t* p = q.permuted.data() + 32 * b;
      ASSERT_EQ(p[i], a[2 * i]);
      ASSERT_EQ(p[8 + i], a[2 * i + 16]);
      ASSERT_EQ(p[16 + i], a[2 * i + 1]);
      ASSERT_EQ(p[24 + i], a[2 * i + 17]);
    }
  for (int r = 0; r < rows * K / 16; ++r) {
    int s = 0;
    for (int i = 0; i < 16; ++i) s += q.q.data()[16 * r + i];
    ASSERT_EQ(q.run_sums.data()[r], s);
    ASSERT_EQ(q.run_sums_f.data()[r], float(s));
  }
}

// The SIMD block quantizer against its scalar twin, to the bit, on rows with a stride (lda > k):
// random values, a block of zeros, a block of underflowing values, exact ties (max 127, so the codes
// are the values rounded to even: 2.5 -> 2, 1.5 -> 2, -3.5 -> -4, 0.5 -> 0) and a NaN (skipped by both maxima).
TEST(QuantizedActivations, SimdBlocksEqualTheScalarTwin) {
  std::mt19937 rng(5);
  const int rows = 3, K = 160, lda = 171;
  std::normal_distribution<float> g(0.0f, 2.0f);
  std::vector<float> X(size_t(rows) * lda);
  for (float& v : X) v = g(rng);
  for (int i = 0; i < 32; ++i) X[32 + i] = 0.0f, X[64 + i] = 1e-44f * (i % 3), X[lda + i] = float(i % 7) - 3.5f;
  X[lda] = 127.0f, X[lda + 1] = 2.5f, X[lda + 2] = 0.5f;
  X[2 * lda + 40] = std::nanf("");
  attn::QuantizedRows s, v;
  ASSERT_TRUE(s.quantize(X.data(), rows, K, lda, false));
  ASSERT_TRUE(v.quantize(X.data(), rows, K, lda, true));
  EXPECT_EQ(s.q.data()[K + 1], 2);
  EXPECT_EQ(s.q.data()[K + 5], 2);  // (1.5)
  EXPECT_EQ(s.q.data()[K + 7], -4);  // (-3.5)
  EXPECT_EQ(s.q.data()[K + 2], 0);
  const size_t n = size_t(rows) * K;
  for (size_t i = 0; i < n; ++i) {
    if (i / 32 == size_t(2 * K + 40) / 32) continue;  // (the NaN's block: its codes are the cast of NaN, unspecified)
    ASSERT_EQ(s.q.data()[i], v.q.data()[i]) << i;
    ASSERT_EQ(s.permuted.data()[i], v.permuted.data()[i]) << i;
  }
  for (size_t b = 0; b < n / 32; ++b) ASSERT_EQ(s.scale.data()[b], v.scale.data()[b]) << b;
  for (size_t r = 0; r < n / 16; ++r) {
    if (r / 2 == size_t(2 * K + 40) / 32) continue;
    ASSERT_EQ(s.run_sums.data()[r], v.run_sums.data()[r]) << r;
    ASSERT_EQ(s.run_sums_f.data()[r], v.run_sums_f.data()[r]) << r;
  }
}

}  // namespace
