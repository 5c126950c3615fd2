// Scalar twins of the quantized products: each output row of B widened to int16 values and float
// scales (unpack_quant_row), then per block an exact integer dot product with A's quantized row.
#include <vector>

#include "kernels/kernels_quant.h"
#include "tensors/weight.h"

namespace attn {
namespace {

void gemm_bt_quant_scalar(WeightType t, int M, int N, int K, const std::int16_t* Aq, const float* As,
                          const unsigned char* B, float* C, int ldc) {
  const int blocks = K / kQuantBlock;
  std::vector<std::int16_t> w(K);
  std::vector<float> ws(blocks);
  for (int j = 0; j < N; ++j) {
    unpack_quant_row(t, B + static_cast<std::size_t>(j) * row_bytes(t, K), K, w.data(), ws.data());
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

void gemm_bt_q8_scalar(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                       int ldc) {
  gemm_bt_quant_scalar(WeightType::kQ8, M, N, K, Aq, As, B, C, ldc);
}

void gemm_bt_q4_scalar(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                       int ldc) {
  gemm_bt_quant_scalar(WeightType::kQ4, M, N, K, Aq, As, B, C, ldc);
}

}  // namespace attn
