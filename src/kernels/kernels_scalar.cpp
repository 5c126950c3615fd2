// Scalar twins: the plainest correct loops, the reference the SIMD kernels are tested against
// and the kernels of the scalar WASM build (for engines without SIMD).
#include <cmath>
#include <limits>
#include <vector>

#include "tensors/half.h"
#include "kernels/kernels.h"
#include "kernels/kernels_quant.h"
#include "tensors/weight.h"

namespace attn {
namespace {

void gemm_scalar(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                 int ldc, bool accumulate) {
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<long>(i) * ldc;
    if (!accumulate)
      for (int j = 0; j < N; ++j) c[j] = 0.0f;
    // i-k-j order: the inner loop walks rows of B and C contiguously.
    for (int k = 0; k < K; ++k) {
      const float a = A[static_cast<long>(i) * lda + k];
      const float* b = B + static_cast<long>(k) * ldb;
      for (int j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}

// Output j of W sits in panel (first + j) / kPanel at lane (first + j) % kPanel; the same i-k-j
// order as gemm_scalar, a panel at a time.
void gemm_panels_scalar(int M, int N, int K, const float* A, int lda, const float* P, int first, float* C, int ldc,
                        bool accumulate) {
  for (int j0 = 0; j0 < N;) {
    const PanelRun run = panel_run(P, first, K, j0, N - j0);
    const int n = run.n;
    const float* panel = run.panel + run.lane;
    for (int i = 0; i < M; ++i) {
      float* c = C + static_cast<long>(i) * ldc + j0;
      if (!accumulate)
        for (int j = 0; j < n; ++j) c[j] = 0.0f;
      for (int k = 0; k < K; ++k) {
        const float a = A[static_cast<long>(i) * lda + k];
        for (int j = 0; j < n; ++j) c[j] += a * panel[static_cast<std::size_t>(k) * kPanel + j];
      }
    }
    j0 += n;
  }
}

// Row j of B as floats: B itself, or (halves) widened once into `row`.
inline const float* row_of(const float* B, int j, int, int ldb, std::vector<float>&) { return B + static_cast<long>(j) * ldb; }
inline const float* row_of(const std::uint16_t* B, int j, int K, int ldb, std::vector<float>& row) {
  row.resize(K);
  for (int k = 0; k < K; ++k) row[k] = half_to_float(B[static_cast<long>(j) * ldb + k]);
  return row.data();
}
inline const float* row_of(const Bf16* B, int j, int K, int ldb, std::vector<float>& row) {
  row.resize(K);
  for (int k = 0; k < K; ++k) row[k] = bf16_to_float(B[static_cast<long>(j) * ldb + k].bits);
  return row.data();
}

// B's rows as floats or as halves; one body, so both sum in the same order.
template <typename TB>
void gemm_bt_scalar_t(int M, int N, int K, const float* A, int lda, const TB* B, int ldb, float* C, int ldc) {
  std::vector<float> row;
  for (int j = 0; j < N; ++j) {
    const float* b = row_of(B, j, K, ldb, row);
    for (int i = 0; i < M; ++i) {
      const float* a = A + static_cast<long>(i) * lda;
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += a[k] * b[k];
      C[static_cast<long>(i) * ldc + j] = acc;
    }
  }
}

void gemm_bt_scalar(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
  gemm_bt_scalar_t(M, N, K, A, lda, B, ldb, C, ldc);
}

void gemm_bt_half_scalar(int M, int N, int K, const float* A, int lda, const std::uint16_t* B, int ldb, float* C,
                         int ldc) {
  gemm_bt_scalar_t(M, N, K, A, lda, B, ldb, C, ldc);
}

void gemm_bt_bf16_scalar(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb, float* C, int ldc) {
  gemm_bt_scalar_t(M, N, K, A, lda, B, ldb, C, ldc);
}

float exp_shift_sum_scalar(float* x, int n, float shift) {
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) {
    // Below -87.3 e^x is denormal (slow arithmetic, no visible weight): flush to an exact 0,
    // as the SIMD twin does. This also covers -inf from masks.
    const float d = x[j] - shift;
    const float e = d < -87.3f ? 0.0f : std::exp(d);
    x[j] = e;
    sum += e;
  }
  return sum;
}

void softmax_row_scalar(float* x, int n) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  float mx = neg_inf;
  for (int j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  if (mx == neg_inf) {  // every key masked
    for (int j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  // Subtracting the row max keeps exp() <= 1, so scores of 1e3 cannot overflow.
  const float sum = exp_shift_sum_scalar(x, n, mx);
  const float inv = 1.0f / sum;  // sum >= 1: the max entry contributes exp(0)
  for (int j = 0; j < n; ++j) x[j] *= inv;
}

void gelu_erf_scalar(float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}

void silu_scalar(float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

}  // namespace

const Kernels& scalar_kernels() {
  static const Kernels k{"scalar", gemm_scalar, gemm_panels_scalar, gemm_bt_scalar, gemm_bt_half_scalar, gemm_bt_bf16_scalar,
                                 scalar_quant_kernels(), exp_shift_sum_scalar, softmax_row_scalar, gelu_erf_scalar, silu_scalar};
  return k;
}

}  // namespace attn
