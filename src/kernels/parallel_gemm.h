// GEMMs split across threads in tiles (row panel x column panel) that threads take one at a time.
#pragma once

#include <cstring>

#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "tensors/weight.h"

namespace attn {

// Tile sizes. 64 columns are eight SIMD panels; a row panel of 128 rows keeps A's depth block
// (128 x 512 floats, 256 KiB) in L2 while the tile's column panels stream past. Per tile the
// kernel repacks its B panels, about 1/128 of the tile's arithmetic.
constexpr int kTileCols = 64;
constexpr int kTileRows = 128;

// A few rows of A (a decoding step) times a large B: split B's depth (its rows) into contiguous
// blocks, each thread summing its blocks' products into its own partial row, then add the
// partials. Every thread streams its own run of memory front to back. Splitting B's columns
// instead has both threads walk the same rows in short strips, and measured slower with two
// threads than with one (native, 1 x 4608 x 1536: 14-18 GB/s vs 19 with one thread; split by
// depth 24-34). Sums in a different order than one thread does (float rounding only).
void gemm_rows_split_depth(const Kernels& kn, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                           float* C, int ldc, bool accumulate);

// Few rows and at least this many weights (1 MiB of float32): split by depth across threads.
constexpr int kSplitDepthMaxRows = 8;
constexpr double kSplitDepthMinWeights = 1 << 18;

inline void gemm_parallel(const Kernels& kn, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                          float* C, int ldc, bool accumulate) {
  if (num_threads() > 1 && M <= kSplitDepthMaxRows && double(N) * K >= kSplitDepthMinWeights) {
    gemm_rows_split_depth(kn, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
    return;
  }
  if (num_threads() == 1 || double(M) * N * K < kParallelMinWork) {
    kn.gemm(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
    return;
  }
  // Up to 1.5 row panels stay one panel: a 64-row sliver would cost more in repacking than it balances.
  const int row_tiles = M <= kTileRows * 3 / 2 ? 1 : (M + kTileRows - 1) / kTileRows;
  const int rows_per = (M + row_tiles - 1) / row_tiles;
  const int cols_per = N < kTileCols * 2 * num_threads() ? balanced_grain(N, 4, 8) : kTileCols;
  const int col_tiles = (N + cols_per - 1) / cols_per;
  parallel_for(row_tiles * col_tiles, 1, [&](int t0, int t1, int) {
    for (int t = t0; t < t1; ++t) {
      const int i0 = t / col_tiles * rows_per, j0 = t % col_tiles * cols_per;
      const int m = M - i0 < rows_per ? M - i0 : rows_per, n = N - j0 < cols_per ? N - j0 : cols_per;
      kn.gemm(m, n, K, A + static_cast<long>(i0) * lda, lda, B + j0, ldb, C + static_cast<long>(i0) * ldc + j0, ldc,
              accumulate);
    }
  });
}

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
  return double(M) * N * K >= kParallelMinWork || (M <= kSplitDepthMaxRows && double(N) * K >= kSplitDepthMinWeights);
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
// b null for none. Each storage type through its kernel: F32 in x out through the tiled GEMM
// (starting from the bias); F32 rows, F16 and BF16 through gemm_bt; Q8/Q4 with x's rows quantized
// per block (QuantizedRows) through the integer products. "" = ok (else out of memory).
std::string linear(const Kernels& kn, const float* x, int rows, const WeightView& W, const float* b, float* y, int ldy);

}  // namespace attn
