// The quantizers: float32 values into Q8_0 / Q4_0 blocks (weight_types.h) and back. (The
// activations' per-block quantization for the integer products: kernels/quantized_rows.h.)
#pragma once

#include <cstdint>

#include "tensors/buffer.h"
#include "tensors/weight_types.h"

namespace attn {

// Quantizes n values (n a multiple of 32) into Q8_0 / Q4_0 blocks. Returns false if a block's
// scale does not fit an f16 (values beyond ~8e6, or Q4 beyond ~5e5).
bool quantize_q8(const float* x, int n, unsigned char* out);
bool quantize_q4(const float* x, int n, unsigned char* out);
// The f16 scale of a block for the wanted d: the nearest half at or beyond d (away from zero), its
// bits and its value. False when it does not fit a half.
bool block_scale(float d, std::uint16_t* bits, float* rounded);
// The largest |x[i]| of n values (a block's scale is this over its top code).
float max_abs(const float* x, int n);
// Blocks back to floats.
void dequantize_q8(const unsigned char* blocks, int n, float* out);
void dequantize_q4(const unsigned char* blocks, int n, float* out);

}  // namespace attn
