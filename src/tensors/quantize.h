// The quantizers: float32 values into Q8_0 / Q4_0 blocks (weight_types.h) and back, and the
// activations' per-block quantization for the integer products.
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

// Activations for the integer products: each row of A in blocks of 32, q = round(x / d) in
// [-127, 127] with d = max|x| / 127 per block (kept as float, not rounded to f16). int16 storage,
// so that the SIMD dot products read them without widening.
struct QuantizedRows {
  BasicBuffer<std::int16_t> q;  // rows x k
  Buffer scale;                 // rows x k / 32
  int rows = 0, k = 0;
  bool quantize(const float* A, int rows_, int k_, int lda);
};

}  // namespace attn
