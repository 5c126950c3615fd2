#include "parallel_gemm.h"

#include <vector>

namespace attn {

void gemm_rows_split_depth(const Kernels& kn, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                           float* C, int ldc, bool accumulate) {
  const int threads = num_threads();
  // One partial M x N block per worker; parallel_for is not reentrant, so one set serves every call.
  static std::vector<float> partial;
  static std::vector<char> used;
  partial.resize(static_cast<std::size_t>(threads) * M * N);
  used.assign(threads, 0);
  // ~8 blocks per thread: a late thread takes fewer; each block is still hundreds of KiB of B.
  parallel_for(K, balanced_grain(K, 8, 4), [&](int k0, int k1, int w) {
    float* P = partial.data() + static_cast<std::size_t>(w) * M * N;
    kn.gemm(M, N, k1 - k0, A + k0, lda, B + static_cast<long>(k0) * ldb, ldb, P, N, used[w] != 0);
    used[w] = 1;
  });
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<long>(i) * ldc;
    if (!accumulate)
      for (int j = 0; j < N; ++j) c[j] = 0.0f;
    for (int w = 0; w < threads; ++w) {
      if (!used[w]) continue;
      const float* p = partial.data() + (static_cast<std::size_t>(w) * M + i) * N;
      for (int j = 0; j < N; ++j) c[j] += p[j];
    }
  }
}

}  // namespace attn
