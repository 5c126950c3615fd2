// The hot loops of attention, each in two twins: a plain scalar one and a SIMD one.
// Tests hold the twins to each other; default_kernels() is the single place that picks one.
#pragma once

#include <cstdint>

#include "tensors/weight_types.h"

namespace attn {

struct QuantizedRows;  // (kernels/quantized_rows.h)

// bfloat16 values as stored (their bits): a type of its own, so that kernels overload on it.
struct Bf16 {
  std::uint16_t bits;
};

// The integer products (Kernels::gemm_bt_quant) by weight type: the kernels' row of the weight-type
// table. Rows are set by name (set), so a type without a kernel here stays null and is refused.
using QuantGemm = void (*)(int M, int N, int K, const QuantizedRows& A, const unsigned char* B, float* C, int ldc);
struct QuantKernels {
  QuantGemm by_type[kWeightTypeCount] = {};
  QuantGemm operator[](WeightType t) const { return by_type[static_cast<int>(t)]; }
  QuantKernels& set(WeightType t, QuantGemm f) {
    by_type[static_cast<int>(t)] = f;
    return *this;
  }
};

struct Kernels {
  const char* name;
  // C[M x N] = A[M x K] * B[K x N] (+ C when accumulate). Row-major with leading dimensions,
  // so a head's column block inside a wider matrix is used in place.
  void (*gemm)(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
               int ldc, bool accumulate);
  // C[M x N] = A[M x K] * W (+ C when accumulate) for W's outputs held in panels (weight.h: kPanel
  // outputs a panel, each panel K x kPanel floats, one after the other): outputs first..first+N-1
  // of the panel at P and those after it. A float32 linear layer's product.
  void (*gemm_panels)(int M, int N, int K, const float* A, int lda, const float* P, int first, float* C, int ldc,
                      bool accumulate);
  // C[M x N] = A[M x K] * B[N x K]^T: rows of A dotted with rows of B (e.g. hidden states
  // times a tied embedding matrix, without materializing its transpose).
  void (*gemm_bt)(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                  int ldc);
  // gemm_bt with B's values as IEEE halves (a tied embedding kept as the checkpoint stored it;
  // finite, as loading checks): the same sums in the same order as gemm_bt on B widened.
  void (*gemm_bt_half)(int M, int N, int K, const float* A, int lda, const std::uint16_t* B, int ldb,
                       float* C, int ldc);
  // gemm_bt with B's values as bfloat16: the same sums as gemm_bt on B widened.
  void (*gemm_bt_bf16)(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb, float* C, int ldc);
  // C[M x N] = A * B^T for B's N rows of a quantized weight type's blocks (weight_types.h), K a
  // multiple of 32, with A's rows quantized per block too (QuantizedRows: codes M x K, M x K/32
  // scales, and the forms the SIMD kernels read, made once per quantize()): each block's dot product in exact integers, times both scales, summed in float; for
  // the types with a min (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K), plus each min times the activations' sum
  // over its values (the contract of WeightTypeInfo::unpack). K a multiple of the type's block
  // (256 for the K-quants). One kernel per type, found by the type; none (null) for the float
  // formats.
  QuantKernels gemm_bt_quant;
  // In place: x[j] <- exp(x[j] - shift) for shift >= max(x); returns the sum. Entries with
  // x[j] - shift < -87.3 (denormal territory, and -inf from masks) become exact zeros. The exponentials of softmax and of the online (flash) softmax.
  float (*exp_shift_sum)(float* x, int n, float shift);
  // In place: x <- softmax(x) over n entries. -inf entries become exact zeros; a row that is
  // all -inf becomes all zeros (a query with nothing to attend to attends to nothing).
  void (*softmax_row)(float* x, int n);
  // In place: x <- GELU(x) = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), BERT's activation. The SIMD
  // twin uses Abramowitz & Stegun 7.1.26 for erf (|error| < 1.5e-7), the scalar one std::erf.
  void (*gelu_erf)(float* x, int n);
  // In place: x <- SiLU(x) = x / (1 + e^-x), the gate activation of Llama's MLP. The SIMD twin
  // takes e^-|x| from exp_nonpositive (to ~2 ulp), the scalar one std::exp: a decoding step makes
  // intermediate_size of them a layer, and std::exp in WebAssembly costs 12-18 ns each.
  void (*silu)(float* x, int n);
};

const Kernels& scalar_kernels();
// SIMD twins exist when the target has 4-lane float vectors (WASM SIMD128, or SSE2 natively).
bool have_simd_kernels();
const Kernels& simd_kernels();
// Scalar kernels with Eigen's blocked GEMMs, where the build has Eigen (ATTN_HAVE_EIGEN); else
// the scalar twins.
bool have_eigen_kernels();
const Kernels& eigen_kernels();
// What the library uses: SIMD when compiled in; else Eigen's GEMMs when compiled in; else scalar.
const Kernels& default_kernels();

}  // namespace attn
