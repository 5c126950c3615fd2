// The quantized products' twins (kernels_quant_scalar.cpp, kernels_quant_simd.cpp): each a row per
// quantized weight type, for the Kernels tables of kernels_scalar.cpp, kernels_simd.cpp and
// kernels_eigen.cpp.
#pragma once

#include "kernels/kernels.h"

namespace attn {

QuantKernels scalar_quant_kernels();
// (Only where the target has 4-lane vectors: ATTN_HAVE_SIMD4.)
QuantKernels simd_quant_kernels();

}  // namespace attn
