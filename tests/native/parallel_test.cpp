// The thread pool covers every index exactly once, and threaded layers match single-threaded ones.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <random>
#include <vector>

#include "attention/multi_head_attention.h"
#include "kernels/parallel.h"
#include "kernels/parallel_gemm.h"
#include "reference.h"

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

}  // namespace
