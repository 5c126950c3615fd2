// Scalar twins of the quantized products: each output row of B widened to int16 values and float
// scales by its type's unpack (weight_types.h), then per block an exact integer dot product with
// A's quantized row. One loop for every quantized type.
#include <vector>

#include "kernels/kernels_quant.h"

namespace attn {
namespace {

template <WeightType T>
void gemm_bt_quant_scalar(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                          int ldc) {
  const int blocks = K / kQuantBlock;
  const WeightTypeInfo& type = weight_type_info(T);
  std::vector<std::int16_t> w(K);
  std::vector<float> ws(blocks);
  for (int j = 0; j < N; ++j) {
    type.unpack(B + static_cast<std::size_t>(j) * row_bytes(T, K), K, w.data(), ws.data());
    for (int i = 0; i < M; ++i) {
      const std::int16_t* a = Aq + static_cast<long>(i) * K;
      const float* as = As + static_cast<long>(i) * blocks;
      float acc = 0.0f;
      for (int b = 0; b < blocks; ++b) {
        std::int32_t dot = 0;
        for (int k = b * kQuantBlock; k < (b + 1) * kQuantBlock; ++k) dot += std::int32_t(a[k]) * w[k];
        acc += static_cast<float>(dot) * (as[b] * ws[b]);
      }
      C[static_cast<long>(i) * ldc + j] = acc;
    }
  }
}

}  // namespace

QuantKernels scalar_quant_kernels() {
  return QuantKernels()
      .set(WeightType::kQ8_0, gemm_bt_quant_scalar<WeightType::kQ8_0>)
      .set(WeightType::kQ4_0, gemm_bt_quant_scalar<WeightType::kQ4_0>);
}

}  // namespace attn
