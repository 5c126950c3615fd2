// GEMMs split across threads by column panels (each thread packs and computes its own columns).
#pragma once

#include <cstring>

#include "kernels.h"
#include "parallel.h"

namespace attn {

inline void gemm_parallel(const Kernels& kn, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                          float* C, int ldc, bool accumulate) {
  if (num_threads() == 1 || double(M) * N * K < kParallelMinWork) {
    kn.gemm(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
    return;
  }
  parallel_for(N, 8, [&](int j0, int j1, int) { kn.gemm(M, j1 - j0, K, A, lda, B + j0, ldb, C + j0, ldc, accumulate); });
}

inline void gemm_bt_parallel(const Kernels& kn, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                             float* C, int ldc) {
  if (num_threads() == 1 || double(M) * N * K < kParallelMinWork) {
    kn.gemm_bt(M, N, K, A, lda, B, ldb, C, ldc);
    return;
  }
  parallel_for(N, 4, [&](int j0, int j1, int) {
    kn.gemm_bt(M, j1 - j0, K, A, lda, B + static_cast<long>(j0) * ldb, ldb, C + j0, ldc);
  });
}

// A linear layer, y (rows x out, leading dim ldy) = x (rows x in) W (in x out, leading dim ldw) + b:
// start from the bias, then accumulate x W on top.
inline void linear(const Kernels& kn, const float* x, int rows, int in, const float* W, int ldw, const float* b,
                   int out, float* y, int ldy) {
  for (int i = 0; i < rows; ++i) std::memcpy(y + static_cast<long>(i) * ldy, b, out * sizeof(float));
  gemm_parallel(kn, rows, out, in, x, in, W, ldw, y, ldy, true);
}

}  // namespace attn
