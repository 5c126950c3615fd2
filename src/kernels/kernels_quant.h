// The quantized products' twins (kernels_quant_scalar.cpp, kernels_quant_simd.cpp), for the
// Kernels tables of kernels_scalar.cpp, kernels_simd.cpp and kernels_eigen.cpp.
#pragma once

#include <cstdint>

namespace attn {

void gemm_bt_q8_scalar(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                       int ldc);
void gemm_bt_q4_scalar(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                       int ldc);
// (Only where the target has 4-lane vectors: ATTN_HAVE_SIMD4.)
void gemm_bt_q8_simd(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                     int ldc);
void gemm_bt_q4_simd(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                     int ldc);

}  // namespace attn
