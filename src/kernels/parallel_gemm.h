// GEMMs split across threads in tiles (row panel x column panel) that threads take one at a time.
#pragma once

#include <cstring>

#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "tensors/weight.h"

namespace attn {

// Tile sizes for a float32 linear layer's product over threads. 64 columns are four panels; a
// row panel of 128 rows keeps A's depth block (128 x 512 floats, 256 KiB) in L2 while the tile's
// panels stream past.
constexpr int kTileCols = 64;
constexpr int kTileRows = 128;

// A decoding step's few rows, and at least this many weights (1 MiB of float32): worth a second
// thread, whose own run of the weights adds memory bandwidth.
constexpr int kFewRowsMax = 8;
constexpr double kFewRowsMinWeights = 1 << 18;

// B's rows as floats or as IEEE halves (a tied embedding kept as stored).
inline void gemm_bt_any(const Kernels& kn, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                        float* C, int ldc) {
  kn.gemm_bt(M, N, K, A, lda, B, ldb, C, ldc);
}
inline void gemm_bt_any(const Kernels& kn, int M, int N, int K, const float* A, int lda, const std::uint16_t* B,
                        int ldb, float* C, int ldc) {
  kn.gemm_bt_half(M, N, K, A, lda, B, ldb, C, ldc);
}

inline void gemm_bt_any(const Kernels& kn, int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb,
                        float* C, int ldc) {
  kn.gemm_bt_bf16(M, N, K, A, lda, B, ldb, C, ldc);
}

// Worth other threads: enough multiply-adds, or (a decoding step's few rows) enough weights that
// reading them is the cost and a second thread adds memory bandwidth.
inline bool split_over_threads(int M, int N, int K) {
  if (num_threads() == 1) return false;
  return double(M) * N * K >= kParallelMinWork || (M <= kFewRowsMax && double(N) * K >= kFewRowsMinWeights);
}

template <typename TB>
void gemm_bt_parallel(const Kernels& kn, int M, int N, int K, const float* A, int lda, const TB* B, int ldb, float* C,
                      int ldc) {
  if (M <= 0) return;  // (the kernels prepare B's rows before looping over A's: no rows, no work)
  if (!split_over_threads(M, N, K)) {
    gemm_bt_any(kn, M, N, K, A, lda, B, ldb, C, ldc);
    return;
  }
  parallel_for(N, balanced_grain(N, 8, 4), [&](int j0, int j1, int) {
    gemm_bt_any(kn, M, j1 - j0, K, A, lda, B + static_cast<long>(j0) * ldb, ldb, C + j0, ldc);
  });
}

// A linear layer: y (rows x W.out, leading dim ldy) = x (rows x W.in, rows contiguous) W^T + b,
// b null for none. Each storage type through its kernel: F32 panels through gemm_panels (starting
// from the bias); F32 rows, F16 and BF16 through gemm_bt; quantized types with x's rows quantized
// per block (QuantizedRows) through their type's integer product. "" = ok, else out of memory or
// no kernel for W's type (named).
std::string linear(const Kernels& kn, const float* x, int rows, const WeightView& W, const float* b, float* y, int ldy);

// One of several products of the same rows x: y (rows x W.out, leading dim ldy) = x W^T + b.
struct LinearPart {
  WeightView W;
  const float* b;  // null: none
  float* y;
  int ldy;
};
// linear() for each part (all with W.in inputs), as one parallel dispatch when the rows are few
// and the weights worth a second thread (a decoding step's gate and up products): x quantized once
// for every quantized part, the outputs of all parts handed out in chunks of whole 16-output runs
// (a panel; 64 bytes of y, so no two threads write one cache line). Each output is the same sum as
// linear() makes on one thread, whatever the split. More rows go part by part through linear().
std::string linear_parts(const Kernels& kn, const float* x, int rows, const LinearPart* parts, int count);

}  // namespace attn
