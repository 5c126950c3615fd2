// Storage types of weights (weight.h, half.h) and the products that read them (issue 22):
// quantize/dequantize round trips, float -> half/bfloat16 rounding on known bit patterns, each
// gemm_bt_* against float64 on the dequantized weights, and the SIMD twins against the scalar ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tensors/half.h"
#include "kernels/kernels.h"
#include "tensors/quantize.h"
#include "kernels/quantized_rows.h"
#include "tensors/weight.h"

namespace {

using attn::WeightType;

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Blocks of values of very different sizes (a block's scale follows its own largest value).
std::vector<float> block_values(std::mt19937& rng, int n) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n);
  for (int b = 0; b < n; b += attn::kQuantBlock) {
    const float mag = std::ldexp(1.0f, int(rng() % 24) - 16);
    for (int i = b; i < b + attn::kQuantBlock; ++i) x[i] = g(rng) * mag;
  }
  return x;
}

float block_scale(const unsigned char* block) {
  std::uint16_t h;
  std::memcpy(&h, block, 2);
  return attn::half_to_float(h);
}

// 64 blocks of values quantized to type t (Q8 or Q4) and back.
struct RoundTrip {
  std::vector<float> x, y;
  std::vector<unsigned char> q;
};
RoundTrip round_trip(WeightType t, unsigned seed) {
  std::mt19937 rng(seed);
  const int n = 32 * 64;
  RoundTrip r{block_values(rng, n), std::vector<float>(n), std::vector<unsigned char>(attn::row_bytes(t, n))};
  EXPECT_TRUE(t == WeightType::kQ8_0 ? attn::quantize_q8(r.x.data(), n, r.q.data()) : attn::quantize_q4(r.x.data(), n, r.q.data()));
  if (t == WeightType::kQ8_0) attn::dequantize_q8(r.q.data(), n, r.y.data());
  else attn::dequantize_q4(r.q.data(), n, r.y.data());
  return r;
}

TEST(Weight, Q8RoundTripIsWithinHalfAScale) {
  const RoundTrip r = round_trip(WeightType::kQ8_0, 7);
  const std::vector<float>&x = r.x, &y = r.y;
  const std::vector<unsigned char>& q = r.q;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float d = block_scale(q.data() + i / 32 * sizeof(attn::BlockQ8_0));
    // |x - q d| <= d / 2; the bound's slack is the float rounding of x / d and of q * d.
    ASSERT_LE(std::fabs(x[i] - y[i]), d * 0.5f * (1 + 1e-5f)) << i;
  }
}

// ggml's Q4_0 of one block (d = extreme / -8, codes round(x / d) + 8 clipped): the reference the
// scale search must not do worse than.
double ggml_q4_squared_error(const float* x) {
  float extreme = 0.0f;
  for (int i = 0; i < 32; ++i)
    if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
  const float d = attn::half_to_float(attn::float_to_half(extreme / -8.0f));
  double err = 0;
  for (int i = 0; i < 32; ++i) {
    const float q = d != 0.0f ? std::fmin(std::fmax(std::nearbyint(x[i] / d), -8.0f), 7.0f) : 0.0f;
    err += (x[i] - q * d) * (x[i] - q * d);
  }
  return err;
}

TEST(Weight, Q4RoundTripIsWithinHalfAScaleInsideItsRangeAndBeatsGgmlsScale) {
  const RoundTrip r = round_trip(WeightType::kQ4_0, 8);
  const std::vector<float>&x = r.x, &y = r.y;
  const std::vector<unsigned char>& q = r.q;
  for (int b = 0; b < int(x.size()); b += 32) {
    const float d = block_scale(q.data() + b / 32 * sizeof(attn::BlockQ4_0));
    // Codes -8..7 cover [lo, hi]; inside, every value is within |d| / 2; outside it clips to the end.
    const float lo = std::fmin(-8 * d, 7 * d), hi = std::fmax(-8 * d, 7 * d);
    double err = 0;
    for (int i = b; i < b + 32; ++i) {
      const float outside = x[i] < lo ? lo - x[i] : x[i] > hi ? x[i] - hi : 0.0f;
      ASSERT_LE(std::fabs(x[i] - y[i]), std::fmax(std::fabs(d) * 0.5f, outside) * (1 + 1e-5f)) << i;
      err += double(x[i] - y[i]) * (x[i] - y[i]);
    }
    // The scale search keeps ggml's scale among its candidates (up to the f16 rounding of both).
    EXPECT_LE(err, ggml_q4_squared_error(x.data() + b) * 1.01 + 1e-30) << "block " << b / 32;
  }
}

TEST(Weight, ZeroBlocksAndTooLargeScales) {
  std::vector<float> zeros(32, 0.0f), y(32, 1.0f);
  std::vector<unsigned char> q(sizeof(attn::BlockQ8_0));
  ASSERT_TRUE(attn::quantize_q8(zeros.data(), 32, q.data()));
  attn::dequantize_q8(q.data(), 32, y.data());
  for (float v : y) EXPECT_EQ(v, 0.0f);
  ASSERT_TRUE(attn::quantize_q4(zeros.data(), 32, q.data()));
  attn::dequantize_q4(q.data(), 32, y.data());
  for (float v : y) EXPECT_EQ(v, 0.0f);
  // A scale beyond the half range (65504) cannot be stored: refused, not infinity.
  std::vector<float> huge(32, 1e7f);
  EXPECT_FALSE(attn::quantize_q8(huge.data(), 32, q.data()));
  std::vector<float> big4(32, 6e5f);
  EXPECT_FALSE(attn::quantize_q4(big4.data(), 32, q.data()));
}

TEST(Weight, FloatToHalfKnownPatterns) {
  const struct {
    float f;
    std::uint16_t h;
  } cases[] = {
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {65504.0f, 0x7bff},                          // largest half
      {65519.0f, 0x7bff},                          // below the midpoint to 65536: stays
      {65520.0f, 0x7c00},                          // the midpoint rounds to even: infinity
      {1e6f, 0x7c00},                              // overflow
      {-1e6f, 0xfc00},
      {1.0f + 0x1p-11f, 0x3c00},                   // halfway between 1 and its successor: even (down)
      {1.0f + 3 * 0x1p-11f, 0x3c02},               // halfway between 0x3c01 and 0x3c02: even (up)
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},        // just above halfway: up
      {0x1p-14f, 0x0400},                          // smallest normal
      {0x1p-14f - 0x1p-24f, 0x03ff},               // largest subnormal
      {0x1p-24f, 0x0001},                          // smallest subnormal
      {0x1p-25f, 0x0000},                          // halfway to the smallest subnormal: even (zero)
      {3 * 0x1p-25f, 0x0002},                      // halfway between 1 and 2 subnormal steps: even
      {0x1p-25f + 0x1p-35f, 0x0001},               // just above halfway
      {std::numeric_limits<float>::infinity(), 0x7c00},
      {-std::numeric_limits<float>::infinity(), 0xfc00},
  };
  for (const auto& c : cases) EXPECT_EQ(attn::float_to_half(c.f), c.h) << c.f;
  const std::uint16_t nan = attn::float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
}

TEST(Weight, EveryFiniteHalfAndBf16SurvivesTheRoundTrip) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;  // infinity, NaN
    ASSERT_EQ(attn::float_to_half(attn::half_to_float(std::uint16_t(h))), h) << h;
    if ((h & 0x7f80) == 0x7f80) continue;
    ASSERT_EQ(attn::float_to_bf16(attn::bf16_to_float(std::uint16_t(h))), h) << h;
  }
}

TEST(Weight, FloatToBf16KnownPatterns) {
  EXPECT_EQ(attn::float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(attn::float_to_bf16(1.0f + 0x1p-8f), 0x3f80);           // halfway: even (down)
  EXPECT_EQ(attn::float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);       // halfway: even (up)
  EXPECT_EQ(attn::float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(attn::float_to_bf16(from_bits(0x00000001u)), 0x0000);   // the smallest subnormal: down
  EXPECT_EQ(attn::float_to_bf16(from_bits(0x00018000u)), 0x0002);   // subnormal halfway: even
  EXPECT_EQ(attn::float_to_bf16(from_bits(0x7f7fffffu)), 0x7f80);   // largest float: rounds to infinity
  EXPECT_EQ(attn::float_to_bf16(-3.0f), 0xc040);
}

// ---- products -------------------------------------------------------------------------------

struct Operands {
  int M, N, K;
  std::vector<float> a;            // M x K
  std::vector<unsigned char> b;    // N rows as stored
  std::vector<float> b_dequant;    // N x K, what those rows mean
};

Operands make_operands(std::mt19937& rng, WeightType t, int M, int N, int K) {
  Operands o{M, N, K, {}, {}, {}};
  std::normal_distribution<float> g(0.0f, 1.0f);
  o.a.resize(std::size_t(M) * K);
  for (float& v : o.a) v = g(rng);
  const std::vector<float> w = block_values(rng, N * K);
  const std::size_t rb = attn::row_bytes(t, K);
  o.b.resize(rb * N);
  o.b_dequant.resize(std::size_t(N) * K);
  for (int j = 0; j < N; ++j) {
    const float* src = w.data() + std::size_t(j) * K;
    unsigned char* dst = o.b.data() + rb * j;
    if (t == WeightType::kQ8_0) EXPECT_TRUE(attn::quantize_q8(src, K, dst));
    if (t == WeightType::kQ4_0) EXPECT_TRUE(attn::quantize_q4(src, K, dst));
    for (int k = 0; k < K && (t == WeightType::kBF16 || t == WeightType::kF16); ++k) {
      const std::uint16_t h = t == WeightType::kBF16 ? attn::float_to_bf16(src[k]) : attn::float_to_half(src[k]);
      std::memcpy(dst + 2 * k, &h, 2);
    }
    attn::WeightView v{t, false, o.b.data(), N, K, 0};
    v.dequantize_output(j, o.b_dequant.data() + std::size_t(j) * K);
  }
  return o;
}

// The integer products: C = A B^T with A's rows quantized per block. Against float64 over the
// dequantized weights and the exact activations, the only error beyond float32 rounding is the
// activations' quantization: |a - qa da| <= da / 2 per value, so per output
//   |C - C64| <= sum_blocks (da_b / 2) sum_{k in b} |w_k|  +  float32 rounding.
// The rounding (the f32 product of the scales, one multiply and one add per block) is bounded by
// (blocks + 2) * 2^-24 * sum |qa da w|.
void check_quant_product(const attn::Kernels& kn, WeightType t, const Operands& o, std::vector<float>* out) {
  attn::QuantizedRows aq;
  ASSERT_TRUE(aq.quantize(o.a.data(), o.M, o.K, o.K));
  std::vector<float> c(std::size_t(o.M) * o.N + 3, -7.0f);
  const int ldc = o.N;
  kn.gemm_bt_quant[t](o.M, o.N, o.K, aq, o.b.data(), c.data(), ldc);
  const int blocks = o.K / attn::kQuantBlock;
  for (int i = 0; i < o.M; ++i)
    for (int j = 0; j < o.N; ++j) {
      double exact = 0, act_bound = 0, mag = 0;
      for (int k = 0; k < o.K; ++k) {
        const double w = o.b_dequant[std::size_t(j) * o.K + k];
        const double da = aq.scale.data()[std::size_t(i) * blocks + k / 32];
        exact += o.a[std::size_t(i) * o.K + k] * w;
        act_bound += da / 2 * std::fabs(w);
        mag += std::fabs(aq.q.data()[std::size_t(i) * o.K + k] * da * w);
      }
      const double bound = act_bound + (blocks + 2) * 0x1p-24 * mag + 1e-30;
      ASSERT_LE(std::fabs(c[std::size_t(i) * ldc + j] - exact), bound) << kn.name << " " << i << "," << j;
    }
  for (int e = 0; e < 3; ++e) ASSERT_EQ(c[std::size_t(o.M) * o.N + e], -7.0f);  // nothing written past C
  *out = c;
}

TEST(WeightProducts, QuantizedTwinsAgreeWithFloat64AndWithEachOtherToTheBit) {
  std::mt19937 rng(11);
  for (WeightType t : {WeightType::kQ8_0, WeightType::kQ4_0})
    for (int M : {1, 2, 3, 5, 8, 17})
      for (int N : {1, 3, 4, 5, 8, 13, 33})
        for (int K : {32, 64, 96, 256, 800}) {
          const Operands o = make_operands(rng, t, M, N, K);
          std::vector<float> cs, cv;
          check_quant_product(attn::scalar_kernels(), t, o, &cs);
          check_quant_product(attn::simd_kernels(), t, o, &cv);
          if (HasFatalFailure()) return;
          // Same integer block sums, the same float operations in the same order per output.
          for (std::size_t e = 0; e < cs.size(); ++e)
            ASSERT_EQ(cs[e], cv[e]) << attn::weight_type_name(t) << " M" << M << " N" << N << " K" << K << " at " << e;
        }
}

TEST(WeightProducts, Bf16TwinsSumExactlyAsOnTheWidenedTableAndMatchFloat64) {
  std::mt19937 rng(12);
  for (const attn::Kernels* kn : {&attn::scalar_kernels(), &attn::simd_kernels()})
    for (int M : {1, 2, 5, 9})
      for (int N : {1, 4, 7, 16, 21})
        for (int K : {1, 3, 8, 31, 64, 100, 513}) {
          const int pad = 3, lda = K + pad, ldb = K + pad, ldc = N + pad;
          std::normal_distribution<float> g(0.0f, 1.0f);
          std::vector<float> a(std::size_t(M) * lda), bw(std::size_t(N) * ldb);
          std::vector<attn::Bf16> b16(std::size_t(N) * ldb);
          for (float& v : a) v = g(rng);
          for (std::size_t i = 0; i < b16.size(); ++i) {
            b16[i].bits = attn::float_to_bf16(g(rng));
            bw[i] = attn::bf16_to_float(b16[i].bits);
          }
          std::vector<float> c16(std::size_t(M) * ldc, -1.0f), cf = c16;
          kn->gemm_bt_bf16(M, N, K, a.data(), lda, b16.data(), ldb, c16.data(), ldc);
          kn->gemm_bt(M, N, K, a.data(), lda, bw.data(), ldb, cf.data(), ldc);
          for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
              const std::size_t at = std::size_t(i) * ldc + j;
              ASSERT_EQ(c16[at], cf[at]) << kn->name;
              double want = 0, mag = 0;
              for (int k = 0; k < K; ++k) {
                want += double(a[std::size_t(i) * lda + k]) * bw[std::size_t(j) * ldb + k];
                mag += std::fabs(double(a[std::size_t(i) * lda + k]) * bw[std::size_t(j) * ldb + k]);
              }
              ASSERT_NEAR(c16[at], want, (K + 2) * 0x1p-24 * mag + 1e-30) << kn->name;
            }
        }
}

TEST(WeightProducts, QuantizedRowsBoundEachValueByHalfItsBlockScale) {
  std::mt19937 rng(13);
  const int rows = 3, k = 96, lda = 100;
  std::vector<float> a(std::size_t(rows) * lda);
  std::normal_distribution<float> g(0.0f, 3.0f);
  for (float& v : a) v = g(rng);
  attn::QuantizedRows q;
  ASSERT_TRUE(q.quantize(a.data(), rows, k, lda));
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < k; ++i) {
      const float d = q.scale.data()[std::size_t(r) * (k / 32) + i / 32];
      const int v = q.q.data()[std::size_t(r) * k + i];
      ASSERT_LE(std::abs(v), 127);
      ASSERT_LE(std::fabs(a[std::size_t(r) * lda + i] - v * d), d * 0.5f * (1 + 1e-5f));
    }
}

}  // namespace
