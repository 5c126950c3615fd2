// GEMMs through Eigen's blocked, register-tiled product, for the scalar WASM build: without SIMD
// the hand-written scalar twin's i-k-j loop spends most of its time loading and storing C, while
// Eigen keeps a block of C in registers over the depth (measured: see kernels.h eigen_kernels()).
// The remaining kernels (softmax, exp, GELU) are the scalar twins.
#include "kernels/kernels.h"

#include <cstddef>

#include "tensors/weight.h"

#if defined(ATTN_HAVE_EIGEN)
// One thread: the library's own pool splits the work. No exceptions in the WASM builds.
#define EIGEN_DONT_PARALLELIZE
#define EIGEN_NO_DEBUG
#include <Eigen/Core>

namespace attn {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstView = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using View = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

void gemm_eigen(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                bool accumulate) {
  View c(C, M, N, Eigen::OuterStride<>(ldc));
  if (K == 0) {
    if (!accumulate) c.setZero();
    return;
  }
  const ConstView a(A, M, K, Eigen::OuterStride<>(lda));
  const ConstView b(B, K, N, Eigen::OuterStride<>(ldb));
  if (accumulate) c.noalias() += a * b;
  else c.noalias() = a * b;
}

void gemm_bt_eigen(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
  View c(C, M, N, Eigen::OuterStride<>(ldc));
  if (K == 0) {
    c.setZero();
    return;
  }
  const ConstView a(A, M, K, Eigen::OuterStride<>(lda));
  const ConstView b(B, N, K, Eigen::OuterStride<>(ldb));
  c.noalias() = a * b.transpose();
}

// W's panels one at a time, each a K x kPanel row-major block: its lanes [lane, lane + n) are
// columns of an ordinary matrix to Eigen.
void gemm_panels_eigen(int M, int N, int K, const float* A, int lda, const float* P, int first, float* C, int ldc,
                       bool accumulate) {
  for (int j0 = 0; j0 < N;) {
    const PanelRun run = panel_run(P, first, K, j0, N - j0);
    gemm_eigen(M, run.n, K, A, lda, run.panel + run.lane, kPanel, C + j0, ldc, accumulate);
    j0 += run.n;
  }
}

}  // namespace

bool have_eigen_kernels() { return true; }
const Kernels& eigen_kernels() {
  const Kernels& s = scalar_kernels();
  static const Kernels k{"eigen", gemm_eigen, gemm_panels_eigen, gemm_bt_eigen, s.gemm_bt_half, s.gemm_bt_bf16, s.gemm_bt_quant, s.exp_shift_sum, s.softmax_row, s.gelu_erf, s.silu};
  return k;
}

}  // namespace attn

#else

namespace attn {
bool have_eigen_kernels() { return false; }
const Kernels& eigen_kernels() { return scalar_kernels(); }
}  // namespace attn

#endif
