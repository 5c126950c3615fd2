// GEMMs split across threads by column panels (each thread packs and computes its own columns).
#pragma once

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

}  // namespace attn
