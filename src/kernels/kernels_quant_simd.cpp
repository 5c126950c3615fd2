// SIMD twins of the quantized products (kernels_quant_scalar.cpp), written against simd4.h.
// Each block of 32 weights meets A's int16 block in four 8-lane dot products (WebAssembly's
// i32x4.dot_i16x8_s, SSE2's pmaddwd): exact integer sums. Four rows of B go side by side, so one
// vector of four block sums takes the scales and joins four float accumulators, lane r the scalar
// twin's `acc` for row r: the same float operations in the same order, so the twins agree to the bit.
// A decoding step (one row of A) reads each weight byte once, front to back through four rows.
//
// Instructions per block and row are what bound a decoding step here (not memory), so the hot loop
// is kept short (V8 x86-64 instructions per block of one row, before -> now):
// - Q8: the bytes are widened as they are loaded (i16x8.load8x8_s: one pmovsxbw with its load),
//   not loaded and then widened (extend_high costs two instructions): 15 -> 11 for the products.
// - Q4: the 16 bytes are read as eight 16-bit lanes; a shift and a mask give each lane's four
//   nibbles straight as int16 values, so A's block is read permuted to match (even elements, then
//   +16, odd, odd +16). The stored nibbles are q + 8: the block sum takes 8 x (sum of A's block)
//   off once per block instead of subtracting 8 from every weight: 11 -> 6 for the unpacking.
// - Scales: four rows' f16 scales loaded into one vector's lanes and widened together
//   (half_high_to_float), ~2 per row instead of a scalar conversion each (~15).
// - No spills: each row's block sums are stored (store_in_order) before the next row's bytes load.
// Per block of four rows, a decoding step's loop is 102 instructions for Q8 (was ~140 with 17
// spills, plus ~60 for the scales) and 119 for Q4 (was ~144 with 31 spills, plus the scales).
#include <atomic>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/kernels_quant.h"
#include "kernels/simd4.h"
#include "tensors/half.h"
#include "tensors/quantize.h"

namespace attn {

#if ATTN_HAVE_SIMD4
namespace {
using namespace simd4;

// Where a block's codes start (after its f16 scale).
template <WeightType T>
constexpr std::size_t kCodesAt = offsetof(typename BlockOf<T>::type, qs);

// The exact integer dot product of A's block (four int16 vectors) with the block's 32 stored
// values at q, as four int32 lanes. Q4: A's block permuted (permute_for_q4) and before the - 8.
template <WeightType T>
inline i32x4 block_dot(const i32x4 a[4], const unsigned char* q) {
  if (T == WeightType::kQ8_0)
    return iadd32(iadd32(idot16(a[0], iload8_widen(q)), idot16(a[1], iload8_widen(q + 8))),
                  iadd32(idot16(a[2], iload8_widen(q + 16)), idot16(a[3], iload8_widen(q + 24))));
  // 16-bit lane i holds byte 2i (elements 2i, 2i + 16 in its nibbles) and byte 2i + 1 (2i + 1, 2i + 17).
  const i32x4 v = iload(q), nibble = isplat16(15);
  return iadd32(iadd32(idot16(a[0], iand(v, nibble)), idot16(a[1], iand(iushr16<4>(v), nibble))),
                iadd32(idot16(a[2], iand(iushr16<8>(v), nibble)), idot16(a[3], iushr16<12>(v))));
}

// Q4: each block of A's rows reordered to the nibbles' lanes (elements 0 2 .. 14, 16 18 .. 30,
// 1 3 .. 15, 17 19 .. 31), and 8 x each block's sum, what the stored q + 8 add to the dot product.
void permute_for_q4(int M, int K, const std::int16_t* Aq, std::int16_t* out, std::int32_t* sums8) {
  for (long b = 0; b < long(M) * K / kQuantBlock; ++b) {
    const std::int16_t* a = Aq + b * kQuantBlock;
    std::int16_t* o = out + b * kQuantBlock;
    std::int32_t sum = 0;
    for (int i = 0; i < 8; ++i) {
      o[i] = a[2 * i], o[8 + i] = a[2 * i + 16], o[16 + i] = a[2 * i + 1], o[24 + i] = a[2 * i + 17];
      sum += a[2 * i] + a[2 * i + 16] + a[2 * i + 1] + a[2 * i + 17];
    }
    sums8[b] = 8 * sum;
  }
}

// Where the bytes touched ahead end up, so that the compiler keeps those loads.
std::atomic<unsigned> touch_sink{0};

float scale_of(const unsigned char* block) {
  std::uint16_t h;
  std::memcpy(&h, block, 2);
  return half_to_float(h);
}

// Four rows' f16 scales of block k as floats, lane r row r (finite scales: the quantizers check them,
// and there the SIMD widening equals half_to_float's).
template <WeightType T>
inline f32x4 scales_of(const unsigned char* const b[4], int k) {
  const std::size_t at = std::size_t(k) * sizeof(typename BlockOf<T>::type);
  return half_high_to_float(load_u16_high_x4(b[0] + at, b[1] + at, b[2] + at, b[3] + at));
}

// One row of A (a: its int16 blocks, as: their scales, sums8: Q4's 8 x block sums) against rows
// b[0..3] of B: lane r is the product with row r. The scales come from `scales` ([block][row])
// when kPrepared, else from B's blocks as they are read.
template <WeightType T, bool kPrepared>
inline f32x4 four_rows(int blocks, const std::int16_t* a, const float* as, const std::int32_t* sums8,
                       const unsigned char* const b[4], const float* scales, const unsigned char* ahead,
                       unsigned& sink, i32x4* fence) {
  constexpr int kBlockBytes = sizeof(typename BlockOf<T>::type);
  f32x4 acc = splat(0.0f);
  unsigned touched = 0;
  for (int k = 0; k < blocks; ++k) {
    if (!kPrepared) {
      const unsigned char* t = ahead + std::size_t(k) * 4 * kBlockBytes;
      touched += t[0] + t[64];
      if (4 * kBlockBytes > 128) touched += t[128];
    }
    const i32x4 av[4] = {iload(a + 32 * k), iload(a + 32 * k + 8), iload(a + 32 * k + 16), iload(a + 32 * k + 24)};
    const std::size_t at = std::size_t(k) * kBlockBytes + kCodesAt<T>;
    // Each row's sums are stored as soon as they are made: V8 keeps memory operations in program
    // order but computes as late as it can, so without the stores it loads all four rows' bytes
    // first and spills (~8 stack accesses per block and row, measured in its x86 code).
    i32x4 d[4];
    for (int r = 0; r < 4; ++r) {
      d[r] = block_dot<T>(av, b[r] + at);
      store_in_order(fence + r, d[r]);
    }
    i32x4 dots = isum4(d[0], d[1], d[2], d[3]);
    if (T == WeightType::kQ4_0) dots = isub32(dots, isplat32(sums8[k]));
    const f32x4 ws = kPrepared ? load(scales + 4 * k) : scales_of<T>(b, k);
    // (as the scalar twin: the dot as float, times the product of the two scales, added)
    acc = add(acc, mul(i32_to_f32(dots), mul(splat(as[k]), ws)));
  }
  sink += touched;
  return acc;
}

template <WeightType T>
void gemm_bt_quant_simd(int M, int N, int K, const std::int16_t* Aq, const float* As, const unsigned char* B, float* C,
                        int ldc) {
  constexpr int kBlockBytes = sizeof(typename BlockOf<T>::type);
  const int blocks = K / kQuantBlock;
  const std::size_t rb = row_bytes(T, K);
  // (per thread: the workers of one product each run this on their own rows of B)
  thread_local std::vector<float> scale_block;  // four rows' block scales, interleaved: [block][row]
  thread_local std::vector<std::int16_t> a_perm;
  thread_local std::vector<std::int32_t> a_sums8;
  if (scale_block.size() < std::size_t(blocks) * 4) scale_block.resize(std::size_t(blocks) * 4);
  float* scales = scale_block.data();  // (plain pointers: no thread-local lookups in the loops)
  thread_local i32x4 fence_slots[4];
  i32x4* fence = fence_slots;
  const std::int16_t* A = Aq;
  const std::int32_t* sums8 = nullptr;
  if (T == WeightType::kQ4_0) {
    a_perm.resize(std::size_t(M) * K);
    a_sums8.resize(std::size_t(M) * blocks);
    permute_for_q4(M, K, Aq, a_perm.data(), a_sums8.data());
    A = a_perm.data(), sums8 = a_sums8.data();
  }
  unsigned sink = 0;
  int j = 0;
  for (; j + 4 <= N; j += 4) {
    const unsigned char* b[4];
    for (int r = 0; r < 4; ++r) b[r] = B + (j + r) * rb;
    if (M == 1) {
      // A decoding step: the scales widened where they are used (no pass over them first), and the
      // next four rows touched a block ahead of their use, one byte per cache line. The hardware
      // prefetcher follows each row's run but stops at the jump to the next four rows; the touches
      // keep memory busy across it (one-row 1536 x 576 Q8 products streaming 256 MB, Node:
      // 5.0 -> 14.8 GB/s by CPU time).
      const unsigned char* ahead = j + 8 <= N ? b[0] + 4 * rb : b[0];
      store(C + j, four_rows<T, false>(blocks, A, As, sums8, b, nullptr, ahead, sink, fence));
      continue;
    }
    for (int k = 0; k < blocks; ++k) store(scales + 4 * k, scales_of<T>(b, k));
    for (int i = 0; i < M; ++i)
      store(C + static_cast<long>(i) * ldc + j,
            four_rows<T, true>(blocks, A + static_cast<long>(i) * K, As + static_cast<long>(i) * blocks,
                               sums8 ? sums8 + static_cast<long>(i) * blocks : nullptr, b, scales, nullptr, sink, fence));
  }
  for (; j < N; ++j) {  // the last N % 4 rows of B, one at a time
    const unsigned char* b = B + j * rb;
    for (int i = 0; i < M; ++i) {
      const std::int16_t* a = A + static_cast<long>(i) * K;
      const float* as = As + static_cast<long>(i) * blocks;
      float acc = 0.0f;
      for (int k = 0; k < blocks; ++k) {
        const i32x4 av[4] = {iload(a + 32 * k), iload(a + 32 * k + 8), iload(a + 32 * k + 16), iload(a + 32 * k + 24)};
        int dot = ilane_sum(block_dot<T>(av, b + std::size_t(k) * kBlockBytes + kCodesAt<T>));
        if (T == WeightType::kQ4_0) dot -= sums8[static_cast<long>(i) * blocks + k];
        acc += static_cast<float>(dot) * (as[k] * scale_of(b + std::size_t(k) * kBlockBytes));
      }
      C[static_cast<long>(i) * ldc + j] = acc;
    }
  }
  touch_sink.store(sink, std::memory_order_relaxed);
}

}  // namespace

// The scalar twins' table with the types that have SIMD kernels overridden (Q8_0, Q4_0): every
// quantized type has a kernel here. SIMD kernels for the GGUF types (Q4_K, Q6_K, ...: issue 33) are
// later work; until then they run their scalar twins.
QuantKernels simd_quant_kernels() {
  QuantKernels k = scalar_quant_kernels();
  k.set(WeightType::kQ8_0, gemm_bt_quant_simd<WeightType::kQ8_0>).set(WeightType::kQ4_0, gemm_bt_quant_simd<WeightType::kQ4_0>);
  return k;
}
#endif

}  // namespace attn
