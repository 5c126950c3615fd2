// The activations' int8 form for the integer products (QuantizedRows), made once per step by the
// kernels that read it: each block of 32 quantized, permuted to the packed codes' lane order, and
// its runs summed, in a scalar loop and its four-lane twin (simd4.h).
#pragma once

#include <cstdint>

#include "tensors/buffer.h"
#include "tensors/weight_types.h"

namespace attn {

// Activations for the integer products: each row of A in blocks of 32, q = round(x / d) in
// [-127, 127] with d = max|x| / 127 per block (kept as float, not rounded to f16). int16 storage,
// so that the SIMD dot products read them without widening. Also, made here once for every
// product that reads these rows (a decoding step's fused products, each thread's share of them),
// not by each kernel call: the codes in the lane order the SIMD kernels of packed weight codes
// read (permute_block) and each run of 16 codes' sum (the zero points' and the mins' term).
struct QuantizedRows {
  BasicBuffer<std::int16_t> q;         // rows x k
  Buffer scale;                        // rows x k / 32
  BasicBuffer<std::int16_t> permuted;  // rows x k: each block of 32 as permute_block orders it
  BasicBuffer<std::int32_t> run_sums;  // rows x k / 16: sum of q over each run of 16
  Buffer run_sums_f;                   // the same as floats (exact: |sum| <= 2032)
  int rows = 0, k = 0;
  // `simd`: each block in four-lane vectors (simd4.h) where the build has them, else (and when
  // false) the scalar loop, its twin: the same codes, scales and sums to the bit (tests hold them
  // to each other). A prompt's rows are quantized for every product, so this is on its path.
  bool quantize(const float* A, int rows_, int k_, int lda, bool simd = true);
};

// A block of 32 codes reordered to the lanes that 16-bit loads of packed codes give (a lane holds
// bytes 2i and 2i + 1: Q4_0's elements 2i, 2i + 16, 2i + 1, 2i + 17; the K-quants' 2i, 2i + 1):
// elements 0 2 .. 14, 16 18 .. 30, 1 3 .. 15, 17 19 .. 31.
inline void permute_block(const std::int16_t* a, std::int16_t* o) {
  for (int i = 0; i < 8; ++i) o[i] = a[2 * i], o[8 + i] = a[2 * i + 16], o[16 + i] = a[2 * i + 1], o[24 + i] = a[2 * i + 17];
}

}  // namespace attn
