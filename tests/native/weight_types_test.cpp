// The weight-type table (weight_types.h) and the dispatch that reads it: every row is consistent
// (order, block sizes against the block structs, encode then decode), every quantized type has
// its own kernel in every Kernels table and every float format none, a product through linear()
// on weights of each type equals the float64 product on that type's decoded weights (so no type
// reaches another type's kernel: the test fails when two kernels are swapped, checked below), and
// a type without a kernel is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/parallel_gemm.h"
#include "tensors/weight.h"
#include "tensors/weight_types.h"

namespace {

using attn::WeightType;

std::vector<WeightType> all_types() {
  std::vector<WeightType> t;
  for (int i = 0; i < attn::kWeightTypeCount; ++i) t.push_back(static_cast<WeightType>(i));
  return t;
}

std::vector<const attn::Kernels*> all_kernels() {
  return {&attn::scalar_kernels(), &attn::simd_kernels(), &attn::eigen_kernels()};
}

TEST(WeightTypes, RowsAreInOrderWithTheirBlockStructsSizes) {
  std::vector<std::string> names;
  for (WeightType t : all_types()) {
    const attn::WeightTypeInfo& info = attn::weight_type_info(t);
    EXPECT_EQ(info.type, t);
    for (const std::string& n : names) EXPECT_NE(n, info.name);
    names.push_back(info.name);
    EXPECT_EQ(attn::row_bytes(t, 512), std::size_t(512 / info.block * info.block_bytes));
    EXPECT_EQ(attn::is_quantized(t), info.block > 1) << info.name;
  }
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ8_0).block_bytes, int(sizeof(attn::BlockQ8_0)));
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ4_0).block_bytes, int(sizeof(attn::BlockQ4_0)));
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ4_1).block_bytes, 20);
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ5_0).block_bytes, 22);
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ5_1).block_bytes, 24);
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ2_K).block_bytes, 84);
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ3_K).block_bytes, 110);
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ4_K).block_bytes, 144);
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ5_K).block_bytes, 176);
  EXPECT_EQ(attn::weight_type_info(WeightType::kQ6_K).block_bytes, 210);
}

// Encoding then decoding a row is within the type's step: half an ulp for the float formats, half
// a block's step (the largest |x| / 127 for Q8_0, / 7 for Q4_0, whose search may clip a little more:
// one step) for the quantized ones. The GGUF types' bounds follow from encode_gguf's choices
// (weight_types.cpp), with M = max |x| of the block, lo / hi its least / largest value, and the
// factor 1.002 the f16 scales' rounding up (2^-10 each, at most two):
// - Q5_0: step M / 15, error half of it.
// - Q4_1, Q5_1: step (hi - m) / L (L = 15, 31) with m = lo rounded to f16 (|m - lo| <= |lo| 2^-11);
//   error half a step plus |m - lo| (values below m clip to it).
// - Q6_K, Q3_K (symmetric, sub-blocks of 16): a sub-block's step d * sc <= M_j / L + d with
//   d <= (M / L) / smax (L = 31, 3; smax = 127, 31): error <= (M / L) (1 + 1 / smax) / 2.
// - Q4_K, Q5_K, Q2_K (with mins): dmin <= D / smax for D = -min(0, lo), each sub-block's offset
//   within dmin below its own min (or 0), so its step <= (R + D / smax) / L (1 + 1 / smax) where R
//   is the largest sub-block range hi_j - min(0, lo_j) (L = 15, 31, 3; smax = 63, 63, 15); error
//   half of it.
double gguf_bound(WeightType t, const float* x, int n) {
  double M = 0, lo = x[0], hi = x[0];
  for (int i = 0; i < n; ++i) M = std::max(M, double(std::fabs(x[i]))), lo = std::min(lo, double(x[i])), hi = std::max(hi, double(x[i]));
  const auto with_mins = [&](int sub, double L, double smax) {
    double R = 0, D = 0;
    for (int j = 0; j < n; j += sub) {
      double l = 0, h = x[j];
      for (int i = j; i < j + sub; ++i) l = std::min(l, double(x[i])), h = std::max(h, double(x[i]));
      R = std::max(R, h - l), D = std::max(D, -l);
    }
    return (R + D / smax * 1.002) / L * (1 + 1 / smax) * 1.002 / 2;
  };
  switch (t) {
    case WeightType::kQ5_0: return M / 15 * 1.002 / 2;
    case WeightType::kQ4_1: return (hi - lo) / 15 * 1.002 / 2 + std::fabs(lo) * 0x1p-10;
    case WeightType::kQ5_1: return (hi - lo) / 31 * 1.002 / 2 + std::fabs(lo) * 0x1p-10;
    case WeightType::kQ6_K: return M / 31 * (1 + 1 / 127.0) * 1.002 / 2;
    case WeightType::kQ3_K: return M / 3 * (1 + 1 / 31.0) * 1.002 / 2;
    case WeightType::kQ4_K: return with_mins(32, 15, 63);
    case WeightType::kQ5_K: return with_mins(32, 31, 63);
    case WeightType::kQ2_K: return with_mins(16, 3, 15);
    default: return -1;
  }
}

TEST(WeightTypes, EncodeThenDecodeIsWithinEachTypesStep) {
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const int n = 512;
  std::vector<float> x(n), y(n);
  for (float& v : x) v = g(rng);
  for (int i = 256; i < 320; ++i) x[i] = std::fabs(x[i]) + 0.5f;  // a run of positive values (mins of 0)
  for (int i = 320; i < 352; ++i) x[i] = -std::fabs(x[i]) - 2.0f;  // and of negative ones
  for (WeightType t : all_types()) {
    const attn::WeightTypeInfo& info = attn::weight_type_info(t);
    std::vector<unsigned char> bytes(attn::row_bytes(t, n));
    ASSERT_EQ(info.encode(x.data(), n, bytes.data()), "") << info.name;
    info.decode(bytes.data(), n, y.data());
    for (int b = 0; b < n; b += info.block) {
      float m = 0;
      for (int i = b; i < b + info.block; ++i) m = std::max(m, std::fabs(x[i]));
      const double gguf = gguf_bound(t, x.data() + b, info.block) + m * 1e-6;  // (+ decode's float rounding)
      for (int i = b; i < b + info.block; ++i) {
        const double tol = t == WeightType::kF32    ? 0.0
                           : t == WeightType::kF16  ? std::fabs(x[i]) * 0x1p-11 + 0x1p-25
                           : t == WeightType::kBF16 ? std::fabs(x[i]) * 0x1p-8
                           : t == WeightType::kQ8_0 ? m / 127.0 * 0.51
                           : t == WeightType::kQ4_0 ? m / 7.0
                                                    : gguf;
        ASSERT_LE(std::fabs(double(y[i]) - x[i]), tol) << info.name << " at " << i;
      }
    }
  }
}

TEST(WeightTypes, EveryQuantizedTypeHasItsKernelInEveryTableAndNoFloatFormatHasOne) {
  for (const attn::Kernels* kn : all_kernels())
    for (WeightType t : all_types())
      EXPECT_EQ(kn->gemm_bt_quant[t] != nullptr, attn::is_quantized(t)) << kn->name << " " << attn::weight_type_name(t);
}

struct Product {
  int rows, out, in;
  std::vector<float> x, w;  // x rows x in; w out x in as decoded from its type
  std::vector<unsigned char> bytes;
};

Product make_product(WeightType t, int rows, int out, int in, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  Product p{rows, out, in, std::vector<float>(std::size_t(rows) * in), std::vector<float>(std::size_t(out) * in), {}};
  for (float& v : p.x) v = g(rng);
  std::vector<float> values(std::size_t(out) * in);
  for (float& v : values) v = g(rng) * 0.1f;
  const std::size_t rb = attn::row_bytes(t, in);
  p.bytes.resize(rb * out);
  for (int r = 0; r < out; ++r) {
    EXPECT_EQ(attn::encode_row(t, values.data() + std::size_t(r) * in, in, p.bytes.data() + rb * r), "");
    attn::weight_type_info(t).decode(p.bytes.data() + rb * r, in, p.w.data() + std::size_t(r) * in);
  }
  return p;
}

// The largest distance from float64 (on the decoded weights) over its bound: at most 1 when the
// product read the weights as their own type. Bound: the float formats, float32 rounding of the sum
// (in + 2) 2^-24 sum |x w|; the quantized ones, the activations' per-block quantization
// (|x - qa da| <= da / 2, da = max|x_block| / 127) plus that rounding, over magnitudes that count
// each weight's two parts (unpack: |scale q| + |offset|, which may cancel in w; the kernel's sums
// and decode's rounding are relative to them).
double worst_over_bound(const attn::Kernels& kn, WeightType t, const Product& p, std::string* err) {
  const attn::WeightView W{t, false, p.bytes.data(), p.out, p.in, 0};
  std::vector<float> y(std::size_t(p.rows) * p.out);
  *err = attn::linear(kn, p.x.data(), p.rows, W, nullptr, y.data(), p.out);
  if (!err->empty()) return 0;
  std::vector<double> parts(p.w.size());  // |scale q| + |offset| of each weight (|w| for the float formats)
  for (std::size_t k = 0; k < parts.size(); ++k) parts[k] = std::fabs(p.w[k]);
  if (attn::is_quantized(t)) {
    std::vector<std::int16_t> q(p.in);
    std::vector<float> sc(p.in / attn::kQuantBlock), off(p.in / attn::kOffsetRun);
    const std::size_t rb = attn::row_bytes(t, p.in);
    for (int j = 0; j < p.out; ++j) {
      attn::weight_type_info(t).unpack(p.bytes.data() + rb * j, p.in, q.data(), sc.data(), off.data());
      for (int k = 0; k < p.in; ++k)
        parts[std::size_t(j) * p.in + k] = std::fabs(double(sc[k / attn::kQuantBlock]) * q[k]) + std::fabs(off[k / attn::kOffsetRun]);
    }
  }
  double worst = 0;
  for (int i = 0; i < p.rows; ++i) {
    const float* x = p.x.data() + std::size_t(i) * p.in;
    for (int j = 0; j < p.out; ++j) {
      const float* w = p.w.data() + std::size_t(j) * p.in;
      const double* wp = parts.data() + std::size_t(j) * p.in;
      double exact = 0, mag = 0, act = 0;
      for (int k = 0; k < p.in; ++k) {
        exact += double(x[k]) * w[k];
        mag += std::fabs(double(x[k])) * wp[k];
      }
      if (attn::is_quantized(t))
        for (int b = 0; b < p.in; b += attn::kQuantBlock) {
          double m = 0, sw = 0;
          for (int k = b; k < b + attn::kQuantBlock; ++k) m = std::max(m, double(std::fabs(x[k]))), sw += wp[k];
          act += m / 127.0 / 2.0 * sw;
        }
      const double bound = act + (p.in + 2) * 0x1p-24 * (mag + act) + 1e-30;
      worst = std::max(worst, std::fabs(y[std::size_t(i) * p.out + j] - exact) / bound);
    }
  }
  return worst;
}

TEST(WeightTypes, LinearOnEachTypeEqualsFloat64OnItsDecodedWeights) {
  for (const attn::Kernels* kn : all_kernels())
    for (WeightType t : all_types())
      for (int rows : {1, 3, 12}) {  // (12: the 16-bit types' widened-panel path)
        const int in = attn::weight_type_info(t).block == attn::kSuperBlock ? 2 * attn::kSuperBlock : 96;
        const Product p = make_product(t, rows, 37, in, 40 + rows);
        std::string err;
        EXPECT_LE(worst_over_bound(*kn, t, p, &err), 1.0) << kn->name << " " << attn::weight_type_name(t) << " rows " << rows;
        EXPECT_EQ(err, "");
      }
}

// The check above fails when a type reaches another type's kernel: swap Q8_0's and Q4_0's.
TEST(WeightTypes, TheDispatchCheckCatchesSwappedKernels) {
  attn::Kernels swapped = attn::scalar_kernels();
  const attn::QuantGemm q8 = swapped.gemm_bt_quant[WeightType::kQ8_0];
  swapped.gemm_bt_quant.set(WeightType::kQ8_0, swapped.gemm_bt_quant[WeightType::kQ4_0]).set(WeightType::kQ4_0, q8);
  for (WeightType t : {WeightType::kQ8_0, WeightType::kQ4_0}) {
    std::string err;
    EXPECT_GT(worst_over_bound(swapped, t, make_product(t, 1, 37, 96, 3), &err), 1.0) << attn::weight_type_name(t);
  }
}

TEST(WeightTypes, ATypeWithoutAKernelIsRefusedByName) {
  attn::Kernels missing = attn::simd_kernels();
  missing.gemm_bt_quant.set(WeightType::kQ4_0, nullptr);
  std::string err;
  worst_over_bound(missing, WeightType::kQ4_0, make_product(WeightType::kQ4_0, 1, 8, 64, 9), &err);
  EXPECT_NE(err.find("held as q4"), std::string::npos) << err;
  // Q8_0 still runs through the same table.
  worst_over_bound(missing, WeightType::kQ8_0, make_product(WeightType::kQ8_0, 1, 8, 64, 9), &err);
  EXPECT_EQ(err, "");
}

}  // namespace
