// Scalar twins of the quantized products: each output row of B widened to int16 codes, float scales
// and offsets by its type's unpack (weight_types.h), then per block of 32 an exact integer dot
// product with A's quantized row, times both scales; for the types with a min, plus each run of 16's
// offset times A's block scale times the sum of A's codes over the run. One loop for every
// quantized type. (Types with no min add nothing more: the same operations as before Q4_1 came.)
#include <vector>

#include "kernels/kernels_quant.h"
#include "tensors/quantize.h"
#include "kernels/quantized_rows.h"

namespace attn {
namespace {

template <WeightType T>
void gemm_bt_quant_scalar(int M, int N, int K, const QuantizedRows& A, const unsigned char* B, float* C, int ldc) {
  const std::int16_t* Aq = A.q.data();
  const float* As = A.scale.data();
  const int blocks = K / kQuantBlock;
  const WeightTypeInfo& type = weight_type_info(T);
  std::vector<std::int16_t> w(K);
  std::vector<float> ws(blocks), wo(K / kOffsetRun);
  for (int j = 0; j < N; ++j) {
    type.unpack(B + static_cast<std::size_t>(j) * row_bytes(T, K), K, w.data(), ws.data(), wo.data());
    for (int i = 0; i < M; ++i) {
      const std::int16_t* a = Aq + static_cast<long>(i) * K;
      const float* as = As + static_cast<long>(i) * blocks;
      float acc = 0.0f;
      for (int b = 0; b < blocks; ++b) {
        std::int32_t dot = 0;
        for (int k = b * kQuantBlock; k < (b + 1) * kQuantBlock; ++k) dot += std::int32_t(a[k]) * w[k];
        acc += static_cast<float>(dot) * (as[b] * ws[b]);
        const float o0 = wo[2 * b], o1 = wo[2 * b + 1];
        if (o0 != 0.0f || o1 != 0.0f) {
          std::int32_t s0 = 0, s1 = 0;
          for (int k = b * kQuantBlock; k < b * kQuantBlock + kOffsetRun; ++k) s0 += a[k], s1 += a[k + kOffsetRun];
          acc += as[b] * (o0 * static_cast<float>(s0) + o1 * static_cast<float>(s1));
        }
      }
      C[static_cast<long>(i) * ldc + j] = acc;
    }
  }
}

}  // namespace

QuantKernels scalar_quant_kernels() {
  QuantKernels k;
  k.set(WeightType::kQ8_0, gemm_bt_quant_scalar<WeightType::kQ8_0>)
      .set(WeightType::kQ4_0, gemm_bt_quant_scalar<WeightType::kQ4_0>)
      .set(WeightType::kQ4_K, gemm_bt_quant_scalar<WeightType::kQ4_K>)
      .set(WeightType::kQ6_K, gemm_bt_quant_scalar<WeightType::kQ6_K>)
      .set(WeightType::kQ5_0, gemm_bt_quant_scalar<WeightType::kQ5_0>)
      .set(WeightType::kQ4_1, gemm_bt_quant_scalar<WeightType::kQ4_1>)
      .set(WeightType::kQ5_1, gemm_bt_quant_scalar<WeightType::kQ5_1>)
      .set(WeightType::kQ5_K, gemm_bt_quant_scalar<WeightType::kQ5_K>)
      .set(WeightType::kQ3_K, gemm_bt_quant_scalar<WeightType::kQ3_K>)
      .set(WeightType::kQ2_K, gemm_bt_quant_scalar<WeightType::kQ2_K>);
  return k;
}

}  // namespace attn
