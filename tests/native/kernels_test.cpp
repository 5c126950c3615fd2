// The SIMD kernels against their scalar twins, and both against double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tensors/half.h"
#include "kernels/kernels.h"
#include "tensors/weight.h"
#include "reference.h"

namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

struct GemmCase {
  int M, N, K, pad;
  bool accumulate;
};

TEST(Kernels, SimdTwinIsCompiledNatively) { EXPECT_TRUE(attn::have_simd_kernels()); }

TEST(Kernels, GemmSimdMatchesScalarAndDouble) {
  std::mt19937 rng(1);
  const int sizes_m[] = {1, 2, 3, 4, 5, 7, 8, 13, 33};
  const int sizes_n[] = {1, 3, 4, 7, 8, 9, 16, 17, 40, 75};
  const int sizes_k[] = {1, 3, 8, 255, 256, 257, 300, 511, 512, 513, 1100};
  for (int M : sizes_m)
    for (int N : sizes_n)
      for (int K : sizes_k)
        for (int pad : {0, 3})
          for (bool acc : {false, true}) {
            const int lda = K + pad, ldb = N + pad, ldc = N + pad;
            const auto A = ref::random_vec(rng, size_t(M) * lda);
            const auto B = ref::random_vec(rng, size_t(K) * ldb);
            const auto C0 = ref::random_vec(rng, size_t(M) * ldc);
            std::vector<float> a = ref::to_float(A), b = ref::to_float(B);
            std::vector<float> cs = ref::to_float(C0), cv = cs;
            attn::scalar_kernels().gemm(M, N, K, a.data(), lda, b.data(), ldb, cs.data(), ldc, acc);
            attn::simd_kernels().gemm(M, N, K, a.data(), lda, b.data(), ldb, cv.data(), ldc, acc);
            for (int i = 0; i < M; ++i)
              for (int j = 0; j < ldc; ++j) {
                const size_t at = size_t(i) * ldc + j;
                if (j >= N) {  // padding columns must be left untouched
                  ASSERT_EQ(cv[at], float(C0[at]));
                  continue;
                }
                double want = acc ? C0[at] : 0.0, mag = std::fabs(want);
                for (int k = 0; k < K; ++k) {
                  want += A[size_t(i) * lda + k] * B[size_t(k) * ldb + j];
                  mag += std::fabs(A[size_t(i) * lda + k] * B[size_t(k) * ldb + j]);
                }
                // float32 summation error grows with K; bound it by the sum of magnitudes.
                const double tol = 1e-6 * mag * std::sqrt(double(K)) + 1e-6;
                ASSERT_NEAR(cs[at], want, tol) << "scalar M" << M << " N" << N << " K" << K;
                ASSERT_NEAR(cv[at], want, tol) << "simd M" << M << " N" << N << " K" << K;
                ASSERT_NEAR(cv[at], cs[at], 2 * tol) << "twins M" << M << " N" << N << " K" << K;
              }
          }
}

// Float32 linear weights held in panels (weight.h): each kernel set against float64, for row
// counts on both sides of the streaming path, outputs that start and end inside panels (a slice of
// a fused projection), depths around the GEMM's depth block, with and without accumulating.
TEST(Kernels, GemmPanelsTwinsMatchDouble) {
  std::mt19937 rng(11);
  const attn::Kernels* sets[] = {&attn::scalar_kernels(), &attn::simd_kernels(), &attn::eigen_kernels()};
  for (int M : {1, 2, 3, 5, 9})
    for (int K : {0, 1, 7, 300, 513, 1100})
      for (int first : {0, 3, 8, 21})
        for (int N : {1, 5, 8, 13, 16, 40})
          for (bool acc : {false, true}) {
            const int total = first + N + 6, lda = K + 2, ldc = N + 3;  // W's outputs: more than used
            attn::Weight w;
            ASSERT_TRUE(w.allocate(attn::WeightType::kF32, true, total, K));
            const auto Wd = ref::random_vec(rng, size_t(total) * K), A = ref::random_vec(rng, size_t(M) * lda);
            const auto C0 = ref::random_vec(rng, size_t(M) * ldc);
            const auto wf = ref::to_float(Wd), a = ref::to_float(A);
            for (int r = 0; r < total; ++r) w.set_output(r, wf.data() + size_t(r) * K);
            const attn::WeightView v = w.view().outputs(first, N);
            for (const attn::Kernels* kn : sets) {
              std::vector<float> c = ref::to_float(C0);
              kn->gemm_panels(M, N, K, a.data(), lda, static_cast<const float*>(v.data), v.first, c.data(), ldc, acc);
              for (int i = 0; i < M; ++i)
                for (int j = 0; j < ldc; ++j) {
                  const size_t at = size_t(i) * ldc + j;
                  if (j >= N) {  // padding columns untouched
                    ASSERT_EQ(c[at], float(C0[at]));
                    continue;
                  }
                  double want = acc ? C0[at] : 0.0, mag = std::fabs(want);
                  for (int k = 0; k < K; ++k) {
                    want += A[size_t(i) * lda + k] * double(wf[size_t(first + j) * K + k]);
                    mag += std::fabs(A[size_t(i) * lda + k] * wf[size_t(first + j) * K + k]);
                  }
                  ASSERT_NEAR(c[at], want, 1e-6 * mag * std::sqrt(double(K) + 1) + 1e-6)
                      << kn->name << " M" << M << " N" << N << " K" << K << " first" << first << " acc" << acc;
                }
            }
          }
}

TEST(Kernels, GemmBtSimdMatchesScalarAndDouble) {
  std::mt19937 rng(7);
  for (int M : {1, 2, 5})
    for (int N : {1, 3, 4, 5, 8, 13})
      for (int K : {1, 3, 4, 7, 64, 130}) {
        const int lda = K + 1, ldb = K + 2, ldc = N + 3;
        const auto A = ref::random_vec(rng, size_t(M) * lda), B = ref::random_vec(rng, size_t(N) * ldb);
        const auto a = ref::to_float(A), b = ref::to_float(B);
        std::vector<float> cs(size_t(M) * ldc, 7.0f), cv = cs;
        attn::scalar_kernels().gemm_bt(M, N, K, a.data(), lda, b.data(), ldb, cs.data(), ldc);
        attn::simd_kernels().gemm_bt(M, N, K, a.data(), lda, b.data(), ldb, cv.data(), ldc);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < ldc; ++j) {
            const size_t at = size_t(i) * ldc + j;
            if (j >= N) {
              ASSERT_EQ(cv[at], 7.0f);
              continue;
            }
            double want = 0, mag = 0;
            for (int k = 0; k < K; ++k) {
              want += A[size_t(i) * lda + k] * B[size_t(j) * ldb + k];
              mag += std::fabs(A[size_t(i) * lda + k] * B[size_t(j) * ldb + k]);
            }
            const double tol = 1e-6 * mag * std::sqrt(double(K)) + 1e-6;
            ASSERT_NEAR(cs[at], want, tol);
            ASSERT_NEAR(cv[at], want, tol);
          }
      }
}

// The scalar WASM build's GEMMs (Eigen) against the scalar twin and double precision.
TEST(Kernels, EigenGemmsMatchScalarAndDouble) {
  if (!attn::have_eigen_kernels()) GTEST_SKIP() << "built without Eigen";
  std::mt19937 rng(5);
  const attn::Kernels& e = attn::eigen_kernels();
  for (int M : {1, 2, 7, 33, 130})
    for (int N : {1, 5, 8, 70})
      for (int K : {0, 1, 9, 300})
        for (bool acc : {false, true}) {
          const int lda = K + 2, ldb = N + 3, ldc = N + 1;
          const auto A = ref::random_vec(rng, size_t(M) * lda), B = ref::random_vec(rng, size_t(K) * ldb);
          const auto Bt = ref::random_vec(rng, size_t(N) * lda), C0 = ref::random_vec(rng, size_t(M) * ldc);
          const auto a = ref::to_float(A), b = ref::to_float(B), bt = ref::to_float(Bt);
          std::vector<float> c = ref::to_float(C0), c_bt = c;
          e.gemm(M, N, K, a.data(), lda, b.data(), ldb, c.data(), ldc, acc);
          e.gemm_bt(M, N, K, a.data(), lda, bt.data(), lda, c_bt.data(), ldc);
          for (int i = 0; i < M; ++i)
            for (int j = 0; j < ldc; ++j) {
              const size_t at = size_t(i) * ldc + j;
              if (j >= N) {  // padding columns untouched
                ASSERT_EQ(c[at], float(C0[at]));
                ASSERT_EQ(c_bt[at], float(C0[at]));
                continue;
              }
              double want = acc ? C0[at] : 0.0, mag = std::fabs(want), want_bt = 0.0, mag_bt = 0.0;
              for (int k = 0; k < K; ++k) {
                want += A[size_t(i) * lda + k] * B[size_t(k) * ldb + j];
                mag += std::fabs(A[size_t(i) * lda + k] * B[size_t(k) * ldb + j]);
                want_bt += A[size_t(i) * lda + k] * Bt[size_t(j) * lda + k];
                mag_bt += std::fabs(A[size_t(i) * lda + k] * Bt[size_t(j) * lda + k]);
              }
              ASSERT_NEAR(c[at], want, 1e-6 * mag * std::sqrt(double(K) + 1) + 1e-6) << "gemm M" << M << " N" << N << " K" << K;
              ASSERT_NEAR(c_bt[at], want_bt, 1e-6 * mag_bt * std::sqrt(double(K) + 1) + 1e-6) << "gemm_bt M" << M << " N" << N << " K" << K;
            }
        }
}

TEST(Kernels, GemmBtOnHalvesSumsExactlyAsOnTheWidenedTable) {
  // Each twin's half-B kernel against the same twin's float kernel on B widened: the same products
  // in the same order, so equal to the bit. Halves span every finite exponent, subnormals and -0.
  std::mt19937 rng(11);
  for (const attn::Kernels* kn : {&attn::scalar_kernels(), &attn::simd_kernels()})
    for (int M : {1, 3, 6})
      for (int N : {1, 4, 5, 11})
        for (int K : {1, 4, 7, 8, 9, 160, 163}) {
          const int lda = K + 1, ldb = K + 3, ldc = N + 2;
          const auto a = ref::to_float(ref::random_vec(rng, size_t(M) * lda));
          std::vector<uint16_t> b16(size_t(N) * ldb);
          std::vector<float> bw(b16.size());
          for (size_t i = 0; i < b16.size(); ++i) {
            uint16_t h = static_cast<uint16_t>(rng());
            if ((h & 0x7c00) == 0x7c00) h &= 0xbfff;  // finite only, as loading guarantees
            b16[i] = h;
            bw[i] = attn::half_to_float(h);
          }
          std::vector<float> c16(size_t(M) * ldc, 7.0f), cw = c16;
          kn->gemm_bt_half(M, N, K, a.data(), lda, b16.data(), ldb, c16.data(), ldc);
          kn->gemm_bt(M, N, K, a.data(), lda, bw.data(), ldb, cw.data(), ldc);
          for (size_t i = 0; i < c16.size(); ++i)
            ASSERT_EQ(float_bits(c16[i]), float_bits(cw[i])) << kn->name << " M" << M << " N" << N << " K" << K << " at " << i;
        }
}

// Rows stored without padding (ldb == K: weights as models hold them) are where the one-row
// kernels also read the next four rows ahead; the sums must be those of the same rows padded, and
// nothing may be read past the matrix (the buffers end exactly at its last value).
TEST(Kernels, GemmBtOnUnpaddedRowsSumsAsOnPaddedOnes) {
  std::mt19937 rng(17);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (const attn::Kernels* kn : {&attn::scalar_kernels(), &attn::simd_kernels()})
    for (int M : {1, 2})
      for (int N : {4, 8, 9, 13, 33})
        for (int K : {8, 12, 64, 100, 576}) {
          const int pad = 3;
          std::vector<float> a(size_t(M) * K), bf(size_t(N) * K), bf_pad(size_t(N) * (K + pad));
          std::vector<uint16_t> bh(bf.size()), bh_pad(bf_pad.size());
          std::vector<attn::Bf16> bb(bf.size()), bb_pad(bf_pad.size());
          for (float& v : a) v = g(rng);
          for (size_t r = 0; r < size_t(N); ++r)
            for (size_t k = 0; k < size_t(K); ++k) {
              const float v = g(rng);
              const size_t at = r * K + k, at_pad = r * (K + pad) + k;
              bf[at] = bf_pad[at_pad] = v;
              bh[at] = bh_pad[at_pad] = attn::float_to_half(v);
              bb[at].bits = bb_pad[at_pad].bits = attn::float_to_bf16(v);
            }
          std::vector<float> c(size_t(M) * N), c_pad(c.size());
          const auto same = [&](const char* what) {
            for (size_t i = 0; i < c.size(); ++i)
              ASSERT_EQ(float_bits(c[i]), float_bits(c_pad[i])) << kn->name << " " << what << " M" << M << " N" << N << " K" << K;
          };
          kn->gemm_bt(M, N, K, a.data(), K, bf.data(), K, c.data(), N);
          kn->gemm_bt(M, N, K, a.data(), K, bf_pad.data(), K + pad, c_pad.data(), N);
          same("f32");
          kn->gemm_bt_half(M, N, K, a.data(), K, bh.data(), K, c.data(), N);
          kn->gemm_bt_half(M, N, K, a.data(), K, bh_pad.data(), K + pad, c_pad.data(), N);
          same("f16");
          kn->gemm_bt_bf16(M, N, K, a.data(), K, bb.data(), K, c.data(), N);
          kn->gemm_bt_bf16(M, N, K, a.data(), K, bb_pad.data(), K + pad, c_pad.data(), N);
          same("bf16");
        }
}

// Both twins of an in-place activation (a Kernels member) against want(x) in float64, within
// tol(x, want), at every length 1..23 (so every tail) and three magnitudes.
template <typename Want, typename Tol>
void expect_twins_near(void (*attn::Kernels::*kernel)(float*, int), unsigned seed, Want want, Tol tol) {
  std::mt19937 rng(seed);
  for (int n = 1; n <= 23; ++n)
    for (double magnitude : {0.5, 3.0, 40.0}) {
      const auto x = ref::to_float(ref::random_vec(rng, n, magnitude));
      std::vector<float> xs = x, xv = x;
      (attn::scalar_kernels().*kernel)(xs.data(), n);
      (attn::simd_kernels().*kernel)(xv.data(), n);
      for (int j = 0; j < n; ++j) {
        const double v = x[j], w = want(v), t = tol(v, w);
        ASSERT_NEAR(xs[j], w, t) << "scalar x=" << v;
        ASSERT_NEAR(xv[j], w, t) << "simd x=" << v;
      }
    }
}

TEST(Kernels, GeluErfTwinsMatchTheDoubleFormula) {
  // A&S 7.1.26's erf error (1.5e-7) times 0.5|x|, plus float rounding.
  expect_twins_near(
      &attn::Kernels::gelu_erf, 5, [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); },
      [](double v, double) { return 1e-6 * (1.0 + std::fabs(v)); });
  float extremes[] = {-1e30f, -100.0f, -0.0f, 0.0f, 100.0f, 1e30f};
  attn::simd_kernels().gelu_erf(extremes, 6);
  const float want[] = {0.0f, 0.0f, 0.0f, 0.0f, 100.0f, 1e30f};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(extremes[j], want[j]) << j;
}

// SiLU: std::exp's and exp_nonpositive's errors (a few ulp) relative to the value; exact zeros
// and identities at the ends.
TEST(Kernels, SiluTwinsMatchTheDoubleFormula) {
  expect_twins_near(
      &attn::Kernels::silu, 6, [](double v) { return v / (1.0 + std::exp(-v)); },
      [](double, double w) { return 1e-6 * std::fabs(w) + 1e-30; });
  float extremes[] = {-1e30f, -100.0f, -0.0f, 0.0f, 100.0f, 1e30f};
  attn::simd_kernels().silu(extremes, 6);
  const float want[] = {-0.0f, -0.0f, -0.0f, 0.0f, 100.0f, 1e30f};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(extremes[j], want[j]) << j;
  float nan = std::nanf("");
  attn::simd_kernels().silu(&nan, 1);
  EXPECT_TRUE(std::isnan(nan));
}

TEST(Kernels, SoftmaxTwinsAgreeIncludingMaskedAndHugeScores) {
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(2);
  for (int n = 1; n <= 37; ++n)
    for (double magnitude : {1.0, 1e3, 1e4}) {
      auto x = ref::to_float(ref::random_vec(rng, n, magnitude));
      for (int j = 0; j < n; j += 3) x[j] = -inf;  // some masked keys
      std::vector<float> xs = x, xv = x;
      attn::scalar_kernels().softmax_row(xs.data(), n);
      attn::simd_kernels().softmax_row(xv.data(), n);
      // double reference
      double mx = -inf, sum = 0;
      for (float f : x) mx = std::max(mx, double(f));
      std::vector<double> want(n, 0.0);
      if (mx != -inf) {
        for (int j = 0; j < n; ++j) sum += want[j] = x[j] == -inf ? 0 : std::exp(double(x[j]) - mx);
        for (auto& w : want) w /= sum;
      }
      double total = 0;
      for (int j = 0; j < n; ++j) {
        ASSERT_FALSE(std::isnan(xv[j]));
        ASSERT_NEAR(xs[j], want[j], 1e-6 + 1e-5 * want[j]);
        ASSERT_NEAR(xv[j], want[j], 1e-6 + 1e-5 * want[j]);
        if (x[j] == -inf) ASSERT_EQ(xv[j], 0.0f);  // exact zeros, not denormals
        total += xv[j];
      }
      if (mx != -inf) ASSERT_NEAR(total, 1.0, 1e-5);
    }
}

TEST(Kernels, VectorExpIsAccurateOverTheSoftmaxRange) {
  // x - shift spans [-100, 0]: below -87.3 the result must be exactly 0 (float32 underflow).
  std::vector<float> x;
  for (double v = -100.0; v <= 0.0; v += 0.001953125) x.push_back(float(v));
  x.push_back(-std::numeric_limits<float>::infinity());
  for (const attn::Kernels* k : {&attn::scalar_kernels(), &attn::simd_kernels()}) {
    std::vector<float> y = x;
    const float sum = k->exp_shift_sum(y.data(), int(y.size()), 0.0f);
    double worst = 0, want_sum = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = x[i] < -87.3f ? 0.0 : std::exp(double(x[i]));
      want_sum += want;
      if (x[i] < -87.3f) {
        ASSERT_EQ(y[i], 0.0f) << k->name << " x=" << x[i];
        continue;
      }
      worst = std::max(worst, std::fabs(y[i] - want) / want);
    }
    EXPECT_LT(worst, 4e-7) << k->name << ": worst relative error of exp";
    EXPECT_NEAR(sum, want_sum, 1e-5 * want_sum) << k->name;
  }
}

TEST(Kernels, SoftmaxOfAllMaskedRowIsZeroNotNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const attn::Kernels* k : {&attn::scalar_kernels(), &attn::simd_kernels()}) {
    std::vector<float> x(9, -inf);
    k->softmax_row(x.data(), 9);
    for (float f : x) EXPECT_EQ(f, 0.0f) << k->name;
  }
}

}  // namespace
