// The shared layers against their formulas in double, and the tensor table's checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>
#include <algorithm>

#include "tensors/half.h"
#include "layers/layers.h"
#include "tensors/tensor_table.h"

namespace {

TEST(Layers, ActivationsMatchTheirDefinitions) {
  std::vector<float> x = {-3.0f, -0.5f, 0.0f, 0.7f, 2.5f};
  auto erf_ = x, tanh_ = x, th = x;
  const auto& kn = attn::scalar_kernels();
  attn::activate(kn, attn::Activation::kGeluErf, erf_.data(), 1, int(x.size()));
  attn::activate(kn, attn::Activation::kGeluTanh, tanh_.data(), 1, int(x.size()));
  attn::activate(kn, attn::Activation::kTanh, th.data(), 1, int(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    EXPECT_NEAR(erf_[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-6);
    EXPECT_NEAR(tanh_[i], 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))), 1e-6);
    EXPECT_NEAR(th[i], std::tanh(v), 1e-6);
  }
  // The two GELUs differ (by up to ~1e-3 around |x| = 2): a model must use its own.
  EXPECT_GT(std::fabs(erf_[4] - tanh_[4]), 1e-5);
}

TEST(Layers, TransposedCheckpointWeightsComputeXWTransposed) {
  attn::TensorTable t;
  attn::Linear lin;
  lin.add_to(t, "dense.", 3, 2, attn::Layout::kTransposed);  // nn.Linear(3, 2): weight is 2 x 3
  EXPECT_EQ(t.entry(0).shape, (std::vector<int>{2, 3}));
  const float w[] = {1, 2, 3, 4, 5, 6}, b[] = {0.5f, -1};
  ASSERT_EQ(t.set("dense.weight", w, 6), "");
  ASSERT_EQ(t.set("dense.bias", b, 2), "");
  EXPECT_EQ(t.check_complete(), "");
  const float x[] = {1, 0, -1, 2, 1, 0};
  float y[4];
  lin.forward(attn::default_kernels(), x, 2, y);
  EXPECT_FLOAT_EQ(y[0], 1 - 3 + 0.5f);
  EXPECT_FLOAT_EQ(y[1], 4 - 6 - 1);
  EXPECT_FLOAT_EQ(y[2], 2 + 2 + 0.5f);
  EXPECT_FLOAT_EQ(y[3], 8 + 5 - 1);
  t.seal();
  EXPECT_EQ(t.set("dense.bias", b, 2), "the model is finalized: configure() again to load new weights");
}

// binary16 by its definition, in double: (-1)^s * 2^(e - 15) * (1 + m / 1024), subnormals 2^-14 * m / 1024.
double half_reference(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  const double sign = s ? -1.0 : 1.0;
  if (e == 31) return m ? NAN : sign * INFINITY;
  return e ? sign * std::ldexp(1.0 + m / 1024.0, e - 15) : sign * std::ldexp(m / 1024.0, -14);
}

TEST(Layers, EveryHalfPrecisionValueWidensExactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float got = attn::half_to_float(static_cast<uint16_t>(h));
    const double want = half_reference(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << "half 0x" << std::hex << h;
      ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << h;  // -0 stays -0
    }
  }
  // bfloat16 is a float32's top half.
  EXPECT_EQ(attn::bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(attn::bf16_to_float(0xc040), -3.0f);
  EXPECT_EQ(attn::bf16_to_float(0x0001), std::ldexp(1.0f, -133));
}

TEST(Layers, SixteenBitCheckpointTensorsLoadAsTheirFloats) {
  // The same nn.Linear(3, 2) weight stored as F32, F16 (at an odd address) and BF16: one result.
  const float w[] = {1, -2, 0.5f, 4, 0.25f, -6};
  const uint16_t f16[] = {0x3c00, 0xc000, 0x3800, 0x4400, 0x3400, 0xc600};
  const uint16_t bf16[] = {0x3f80, 0xc000, 0x3f00, 0x4080, 0x3e80, 0xc0c0};
  unsigned char odd[1 + sizeof f16];
  std::memcpy(odd + 1, f16, sizeof f16);
  const struct { const void* data; attn::Dtype dtype; } stored[] = {
      {w, attn::Dtype::kF32}, {odd + 1, attn::Dtype::kF16}, {bf16, attn::Dtype::kBF16}};
  for (const auto& s : stored) {
    attn::TensorTable t;
    attn::Linear lin;
    lin.add_to(t, "dense.", 3, 2, attn::Layout::kTransposed);
    ASSERT_EQ(t.set("dense.weight", s.data, 6, s.dtype), "");
    // Kept as stored (the default storage, 'auto'); F32 held in panels for the float GEMM.
    EXPECT_EQ(int(lin.weight.type), int(s.dtype));
    EXPECT_EQ(lin.weight.panels, s.dtype == attn::Dtype::kF32);
    for (int r = 0; r < 2; ++r) {
      float got[3];
      lin.weight.view().dequantize_output(r, got);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i], w[r * 3 + i]) << int(s.dtype) << " " << r << "," << i;
    }
  }
  // A half infinity is reported at its index in the stored tensor, and the tensor stays unset.
  const uint16_t inf[] = {0x3c00, 0x3c00, 0x3c00, 0x3c00, 0xfc00, 0x3c00};
  attn::TensorTable t;
  attn::Linear lin;
  lin.add_to(t, "dense.", 3, 2, attn::Layout::kTransposed);
  EXPECT_EQ(t.set("dense.weight", inf, 6, attn::Dtype::kF16), "dense.weight contains -Infinity at index 4");
  EXPECT_TRUE(lin.weight.empty());
}

TEST(Layers, ATiedEmbeddingKeepsF16AsStoredAndComputesAsWidened) {
  // A 5 x 4 embedding given as F16 stays halves (no float copy); given as F32 (the same values) it
  // is floats, in panels (it is also the head). Rows added are equal to the bit either way, tied
  // logits to float rounding (the F32 head sums in the panel kernel's order).
  const uint16_t h[20] = {0x3c00, 0xbc00, 0x3555, 0x0001, 0x8000, 0x7bff, 0xfbff, 0x2e66, 0x4500, 0x0400,
                          0xc123, 0x1234, 0x3800, 0xb800, 0x5640, 0x03ff, 0x3f00, 0xa000, 0x4248, 0x0000};
  float w[20];
  for (int i = 0; i < 20; ++i) w[i] = attn::half_to_float(h[i]);
  attn::TensorTable t16, t32;
  attn::Embedding e16, e32;
  e16.add_to(t16, "wte.weight", 5, 4, true);
  e32.add_to(t32, "wte.weight", 5, 4, true);
  ASSERT_EQ(t16.set("wte.weight", h, 20, attn::Dtype::kF16), "");
  ASSERT_EQ(t32.set("wte.weight", w, 20), "");
  EXPECT_EQ(e16.table.type, attn::WeightType::kF16);
  EXPECT_EQ(e16.table.byte_size(), 40u);
  EXPECT_EQ(e32.table.type, attn::WeightType::kF32);
  EXPECT_EQ(t16.check_complete(), "");
  const int32_t ids[] = {4, 0, 2};
  float x16[12] = {}, x32[12] = {};
  e16.add_rows(ids, 3, x16);
  e32.add_rows(ids, 3, x32);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(x16[i], x32[i]) << i;
  EXPECT_EQ(x16[0], w[16]);
  float l16[15], l32[15];
  e16.logits(attn::default_kernels(), x16, 3, l16);
  e32.logits(attn::default_kernels(), x32, 3, l32);
  for (int i = 0; i < 15; ++i) EXPECT_NEAR(l16[i], l32[i], 1e-6 * (1 + std::fabs(l32[i]))) << i;
  EXPECT_TRUE(e32.table.panels);
  // Written in place (what the wrapper does) when held as stored: the table's own buffer, then
  // set() only checks it. Panels are not the stored layout: no place to write into.
  EXPECT_EQ(t32.stored_destination("wte.weight", 20, attn::Dtype::kF32), nullptr);
  void* in_place = t16.stored_destination("wte.weight", 20, attn::Dtype::kF16);
  ASSERT_EQ(in_place, static_cast<void*>(e16.table.bytes()));
  std::memcpy(in_place, h, sizeof h);
  ASSERT_EQ(t16.set("wte.weight", in_place, 20, attn::Dtype::kF16), "");
  EXPECT_EQ(std::memcmp(e16.table.bytes(), h, sizeof h), 0);
  // A half NaN is reported at its index, and the embedding stays unset.
  uint16_t bad[20];
  std::memcpy(bad, h, sizeof bad);
  bad[13] = 0x7e00;
  EXPECT_EQ(t16.set("wte.weight", bad, 20, attn::Dtype::kF16), "wte.weight contains NaN at index 13");
  EXPECT_TRUE(e16.table.empty());
  EXPECT_EQ(t16.check_complete(), "missing tensor wte.weight");
}

TEST(Layers, LogSumExpRowsMatchesDoubleForBothKernelTwins) {
  // Rows of 1..37 and a vocabulary-sized row, logits spread over +-30 (and one of 1e4: the max is
  // subtracted first): within a few float32 ulps of the float64 formula, for each kernel twin.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-30.0f, 30.0f);
  for (const attn::Kernels* kn : {&attn::scalar_kernels(), &attn::simd_kernels()})
    for (int cols : {1, 2, 3, 4, 5, 8, 37, 14336}) {
      const int rows = 3;
      std::vector<float> x(size_t(rows) * cols), scratch(cols);
      for (float& v : x) v = u(rng);
      x[cols / 2] = 1e4f;
      std::vector<double> got(rows);
      attn::log_sum_exp_rows(*kn, x.data(), rows, cols, scratch.data(), got.data());
      for (int r = 0; r < rows; ++r) {
        double max = -1e300, sum = 0;
        for (int j = 0; j < cols; ++j) max = std::max(max, double(x[size_t(r) * cols + j]));
        for (int j = 0; j < cols; ++j) sum += std::exp(double(x[size_t(r) * cols + j]) - max);
        const double want = max + std::log(sum);
        EXPECT_NEAR(got[r], want, 4e-7 * std::max(1.0, std::fabs(max))) << kn->name << " cols " << cols << " row " << r;
      }
    }
}

TEST(Layers, PoolingSkipsPaddingAndNormalizes) {
  // batch 2 x n 3 x dim 2; sequence 1 has one padded position.
  const float h[] = {1, 2, 3, 4, 5, 6, 10, 0, 20, 0, 99, 99};
  const uint8_t pad[] = {0, 0, 0, 0, 0, 1};
  float mean[4], first[4];
  attn::mean_pool(h, pad, 2, 3, 2, mean);
  attn::first_token_pool(h, 2, 3, 2, first);
  EXPECT_FLOAT_EQ(mean[0], 3);
  EXPECT_FLOAT_EQ(mean[1], 4);
  EXPECT_FLOAT_EQ(mean[2], 15);
  EXPECT_FLOAT_EQ(mean[3], 0);
  EXPECT_FLOAT_EQ(first[2], 10);
  float v[] = {3, 4, 0, 0};
  attn::l2_normalize_rows(v, 2, 2);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], 0.8f);
  EXPECT_EQ(v[2], 0.0f);
}

// Rows of every scale a float holds: ordinary values, values near float's largest (whose squares
// overflow float32: the mean square is taken in double), and values so small that eps decides.
TEST(Layers, RmsNormMatchesItsFormulaForAnyFiniteRow) {
  const int dim = 8;
  attn::RmsNorm norm;
  norm.eps = 1e-6f;
  attn::TensorTable t;
  norm.add_to(t, "norm.weight", dim);
  const float g[dim] = {1, 0.5f, 2, 1, 1.5f, 0.25f, 1, 3};
  ASSERT_EQ(t.set("norm.weight", g, dim), "");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const double scale : {1.0, 1e19, 1e36, 3e38, 1e-30}) {
    std::vector<float> x(2 * dim), y(2 * dim);
    for (float& v : x) v = static_cast<float>(u(rng) * scale);
    x[3] = static_cast<float>(scale);  // (3e38: one value at float's edge)
    norm.forward(x.data(), 2, dim, y.data());
    for (int r = 0; r < 2; ++r) {
      double ss = 0;
      for (int i = 0; i < dim; ++i) ss += double(x[r * dim + i]) * x[r * dim + i];
      const double inv = 1.0 / std::sqrt(ss / dim + 1e-6);
      for (int i = 0; i < dim; ++i) {
        const double want = x[r * dim + i] * inv * g[i];
        EXPECT_NEAR(y[r * dim + i], want, 1e-6 * 3 + 1e-6 * std::fabs(want)) << "scale " << scale << " row " << r << " value " << i;
      }
    }
  }
}

TEST(Layers, LayerNormMatchesItsFormula) {
  attn::LayerNorm ln;
  ln.eps = 1e-5f;
  attn::TensorTable t;
  ln.add_to(t, "ln.", 4, "gamma", "beta");
  const float g[] = {1, 2, 0.5f, 1}, b[] = {0, 1, 0, -1};
  ASSERT_EQ(t.set("ln.gamma", g, 4), "");
  ASSERT_EQ(t.set("ln.beta", b, 4), "");
  float x[] = {1, 2, 3, 6};
  ln.forward(x, 1, 4, x);  // in place, as BERT uses it
  const double mean = 3, sd = std::sqrt((4 + 1 + 0 + 9) / 4.0 + 1e-5);
  const double want[] = {(1 - mean) / sd, (2 - mean) / sd * 2 + 1, 0.0, (6 - mean) / sd - 1};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(x[i], want[i], 1e-5);
}

}  // namespace
