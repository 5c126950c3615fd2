// SIMD twins of the quantized products (kernels_quant_scalar.cpp), written against simd4.h.
// Each block of 32 weights meets A's int16 block in four 8-lane dot products (WebAssembly's
// i32x4.dot_i16x8_s, SSE2's pmaddwd): exact integer sums. Four rows of B go side by side, so one
// vector of four block sums takes the scales and joins four float accumulators, lane r the scalar
// twin's `acc` for row r: the same float operations in the same order, so the twins agree to the bit.
// A decoding step (one row of A) reads each weight byte once, front to back through four rows.
// The K-quants (Q2_K .. Q6_K) have their own kernel below, on the same plan.
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
#include <utility>
#include <vector>

#include "kernels/kernels_quant.h"
#include "kernels/simd4.h"
#include "tensors/half.h"
#include "tensors/quantize.h"
#include "kernels/quantized_rows.h"

namespace attn {

#if ATTN_HAVE_SIMD4
namespace {
using namespace simd4;

// One row of A's view for the kernels (QuantizedRows, made once per quantize()): codes (permuted,
// for the packed types, or as they are), block scales, and each run of 16's sum of codes as float
// (the mins' term) and as int32 (times the type's zero point: the stored codes are q + z, so the
// dot product takes z x the sum off once per run instead of z off every weight), each at the row's
// first block.
struct ARow {
  const std::int16_t* a;
  const float* as;
  const float* runs;
  const std::int32_t* sums;
};
inline ARow a_row(const QuantizedRows& A, bool permuted, int K, int i) {
  const long at = long(i) * K;
  return {(permuted ? A.permuted.data() : A.q.data()) + at, A.scale.data() + at / kQuantBlock,
          A.run_sums_f.data() + at / kOffsetRun, A.run_sums.data() + at / kOffsetRun};
}

// Codes of up to 8 bits from a 16-bit lane holding two (bytes: elements 2i, 2i + 1) dotted with A's
// permuted block: u0 holds elements 0 .. 15, u1 16 .. 31. Returns the two runs of 16's sums.
inline void two_code_dot(const i32x4 a[4], i32x4 u0, i32x4 u1, i32x4* run0, i32x4* run1) {
  const i32x4 low = isplat16(0xff);
  *run0 = iadd32(idot16(a[0], iand(u0, low)), idot16(a[2], iushr16<8>(u0)));
  *run1 = iadd32(idot16(a[1], iand(u1, low)), idot16(a[3], iushr16<8>(u1)));
}

// --- The blocks of 32: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 ----------------------------------------------

// The stored codes' zero point (value code = stored - z), and whether the type has a min (m, at
// offset 2 of its blocks).
template <WeightType T>
constexpr int kZeroPoint = T == WeightType::kQ4_0 ? 8 : T == WeightType::kQ5_0 ? 16 : 0;
template <WeightType T>
constexpr bool kHasMin = T == WeightType::kQ4_1 || T == WeightType::kQ5_1;

// The exact integer dot product of A's block (four int16 vectors) with the stored codes of the
// block at blk (before the zero point), as four int32 lanes; A's block permuted for the packed codes.
template <WeightType T>
inline i32x4 block_dot(const i32x4 a[4], const unsigned char* blk) {
  using Block = typename BlockOf<T>::type;
  const unsigned char* q = blk + offsetof(Block, qs);
  if constexpr (T == WeightType::kQ8_0) {
    return iadd32(iadd32(idot16(a[0], iload8_widen(q)), idot16(a[1], iload8_widen(q + 8))),
                  iadd32(idot16(a[2], iload8_widen(q + 16)), idot16(a[3], iload8_widen(q + 24))));
  } else if constexpr (T == WeightType::kQ4_0 || T == WeightType::kQ4_1) {
    // 16-bit lane i holds byte 2i (elements 2i, 2i + 16 in its nibbles) and byte 2i + 1 (2i + 1, 2i + 17).
    const i32x4 v = iload(q), nibble = isplat16(15);
    return iadd32(iadd32(idot16(a[0], iand(v, nibble)), idot16(a[1], iand(iushr16<4>(v), nibble))),
                  iadd32(idot16(a[2], iand(iushr16<8>(v), nibble)), idot16(a[3], iushr16<12>(v))));
  } else {
    // Q5_0, Q5_1: the 5th bits spread to bytes (bit j of qh: byte j of e0, j >= 16 of e1), masked
    // to bit 4 and ORed with the nibbles: byte j of u0 is element j's code, of u1 element j + 16's.
    i32x4 e0, e1;
    ibits_to_bytes(blk + offsetof(Block, qh), e0, e1);
    const i32x4 v = iload(q), nib = isplat16(0x0f0f), bit = isplat16(0x1010);
    i32x4 r0, r1;
    two_code_dot(a, ior(iand(v, nib), iand(e0, bit)), ior(iand(iushr16<4>(v), nib), iand(e1, bit)), &r0, &r1);
    return iadd32(r0, r1);
  }
}

// Where the bytes touched ahead end up, so that the compiler keeps those loads.
std::atomic<unsigned> touch_sink{0};

// Four rows' f16 at byte `at` of their blocks (b[r] + at), as floats (finite: the quantizers check
// them, and there the SIMD widening equals half_to_float's).
inline f32x4 halves_at(const unsigned char* const b[4], std::size_t at) {
  return half_high_to_float(load_u16_high_x4(b[0] + at, b[1] + at, b[2] + at, b[3] + at));
}

// One row of A against rows b[0..3] of B: lane r is the product with row r. The scales (and mins)
// come from `scales` (`mins`) ([block][row]) when kPrepared, else from B's blocks as they are read.
template <WeightType T, bool kPrepared>
inline f32x4 four_rows(int blocks, const ARow& A, const unsigned char* const b[4], const float* scales,
                       const float* mins, const unsigned char* ahead, unsigned& sink, i32x4* fence) {
  constexpr int kBlockBytes = sizeof(typename BlockOf<T>::type);
  f32x4 acc = splat(0.0f);
  unsigned touched = 0;
  for (int k = 0; k < blocks; ++k) {
    if (ahead) {
      const unsigned char* t = ahead + std::size_t(k) * 4 * kBlockBytes;
      touched += t[0] + t[64];
      if (4 * kBlockBytes > 128) touched += t[128];
    }
    const std::int16_t* a = A.a + 32 * k;
    const i32x4 av[4] = {iload(a), iload(a + 8), iload(a + 16), iload(a + 24)};
    const std::size_t at = std::size_t(k) * kBlockBytes;
    // Each row's sums are stored as soon as they are made: V8 keeps memory operations in program
    // order but computes as late as it can, so without the stores it loads all four rows' bytes
    // first and spills (~8 stack accesses per block and row, measured in its x86 code).
    i32x4 d[4];
    for (int r = 0; r < 4; ++r) {
      d[r] = block_dot<T>(av, b[r] + at);
      store_in_order(fence + r, d[r]);
    }
    i32x4 dots = isum4(d[0], d[1], d[2], d[3]);
    if (kZeroPoint<T>) dots = isub32(dots, isplat32(kZeroPoint<T> * (A.sums[2 * k] + A.sums[2 * k + 1])));
    const f32x4 ws = kPrepared ? load(scales + 4 * k) : halves_at(b, at);
    // (as the scalar twin: the dot as float, times the product of the two scales, added; then the
    // mins times the runs' sums, added even when 0: see the K-quants' note below)
    acc = add(acc, mul(i32_to_f32(dots), mul(splat(A.as[k]), ws)));
    if constexpr (kHasMin<T>) {
      const f32x4 m = kPrepared ? load(mins + 4 * k) : halves_at(b, at + offsetof(typename BlockOf<T>::type, m));
      acc = add(acc, mul(splat(A.as[k]), add(mul(m, splat(A.runs[2 * k])), mul(m, splat(A.runs[2 * k + 1])))));
    }
  }
  sink += touched;
  return acc;
}

// C's lanes for rows j .. j + n - 1 of B (n <= 4).
inline void store_rows(float* c, f32x4 v, int n) {
  if (n == 4) return store(c, v);
  alignas(16) float t[4];
  store(t, v);
  for (int r = 0; r < n; ++r) c[r] = t[r];
}

template <WeightType T>
void gemm_bt_quant_simd(int M, int N, int K, const QuantizedRows& Aq, const unsigned char* B, float* C, int ldc) {
  using Block = typename BlockOf<T>::type;
  const int blocks = K / kQuantBlock;
  const std::size_t rb = row_bytes(T, K);
  // (per thread: the workers of one product each run this on their own rows of B)
  thread_local std::vector<float> scale_block, min_block;  // four rows' block scales / mins: [block][row]
  thread_local i32x4 fence_slots[4];
  if (scale_block.size() < std::size_t(blocks) * 4) scale_block.resize(std::size_t(blocks) * 4), min_block.resize(std::size_t(blocks) * 4);
  float *scales = scale_block.data(), *mins = min_block.data();  // (plain pointers: no thread-local lookups in the loops)
  i32x4* fence = fence_slots;
  unsigned sink = 0;
  for (int j = 0; j < N; j += 4) {
    // (the last N % 4 rows with copies of row N - 1 beside them, whose lanes are not stored)
    const unsigned char* b[4];
    for (int r = 0; r < 4; ++r) b[r] = B + std::size_t(j + r < N ? j + r : N - 1) * rb;
    const int n = N - j < 4 ? N - j : 4;
    if (M == 1) {
      // A decoding step: the scales widened where they are used (no pass over them first), and the
      // next four rows touched a block ahead of their use, one byte per cache line. The hardware
      // prefetcher follows each row's run but stops at the jump to the next four rows; the touches
      // keep memory busy across it (one-row 1536 x 576 Q8 products streaming 256 MB, Node:
      // 5.0 -> 14.8 GB/s by CPU time).
      const unsigned char* ahead = j + 8 <= N ? b[0] + 4 * rb : nullptr;
      const ARow A = a_row(Aq, T != WeightType::kQ8_0, K, 0);
      store_rows(C + j, four_rows<T, false>(blocks, A, b, nullptr, nullptr, ahead, sink, fence), n);
      continue;
    }
    for (int k = 0; k < blocks; ++k) {
      const std::size_t at = std::size_t(k) * sizeof(Block);
      store(scales + 4 * k, halves_at(b, at));
      if constexpr (kHasMin<T>) store(mins + 4 * k, halves_at(b, at + offsetof(Block, m)));
    }
    for (int i = 0; i < M; ++i) {
      const ARow A = a_row(Aq, T != WeightType::kQ8_0, K, i);
      store_rows(C + long(i) * ldc + j, four_rows<T, true>(blocks, A, b, scales, mins, nullptr, sink, fence), n);
    }
  }
  touch_sink.store(sink, std::memory_order_relaxed);
}


// --- K-quants (Q2_K .. Q6_K): super-blocks of 256 ------------------------------------------------
// The scalar twin's sums per block of 32 (weight_types.h, unpack): the exact integer
// dot = sum a (q sc) (Q2_K, Q3_K, Q6_K: sc per run of 16; Q3_K's q with its zero point -4, Q6_K's
// -32), then
//   acc += float(dot) * (as * d);  acc += as * (o0 * float(s0) + o1 * float(s1))   (the mins)
// with o = -(dmin m) of the runs' sub-blocks (Q2_K, Q4_K, Q5_K) and s0, s1 the sums of A's codes over
// the block's two runs of 16. Here four rows of B go side by side as in four_rows: each row's block
// gives sum a q in int32 lanes (the codes without sc, so they stay small: 16-bit lanes of at most 6
// bits), four rows' sums meet in one vector, and sc (a float vector of the four rows' sub-block
// scales) is applied to the sum as a float: sums and products are integers below 2^24 (32 x 127 x
// 31 x 63 for Q5_K; per run 16 x 127 x 32 x 128, two runs 16646144 for Q6_K), so float(sum) * sc is
// exactly float(dot), and the float operations after it are the scalar twin's, in its order: the
// twins agree to the bit. The mins' term is added even where both offsets are 0 (the scalar twin
// skips it): it is then +-0, and acc, which starts at +0 and is never -0 (x + -x is +0), is
// unchanged by it.
//
// Per super-block and four rows, the scales and mins are widened once, in lanes: a 16-byte load per
// row from the scales, a 4 x 4 transpose, and shifts and masks (no scalar work per row).

// Four rows' super-block factors, lane r row r: d, the sub-block scales as floats (Q4_K, Q5_K: 8
// of 32 values; Q2_K, Q3_K, Q6_K: 16 of 16), and the offsets -(dmin m) per sub-block (Q2_K, Q4_K, Q5_K).
struct KScales {
  f32x4 d;
  f32x4 sc[16];
  f32x4 off[16];
};

// Sub-blocks of 16 (each run of a block of 32 its own scale), the codes' zero point, and a min.
template <WeightType T>
constexpr bool kRunScales = T == WeightType::kQ2_K || T == WeightType::kQ3_K || T == WeightType::kQ6_K;
template <WeightType T>
constexpr int kKZeroPoint = T == WeightType::kQ6_K ? 32 : T == WeightType::kQ3_K ? 4 : 0;
template <WeightType T>
constexpr bool kKHasMin = T == WeightType::kQ2_K || T == WeightType::kQ4_K || T == WeightType::kQ5_K;

// 16 bytes at b[r] + at of the four rows, transposed: w[k] lane r is row r's bytes 4k .. 4k + 3.
inline void words_at(const unsigned char* const b[4], std::size_t at, i32x4 w[4]) {
  w[0] = iload(b[0] + at), w[1] = iload(b[1] + at), w[2] = iload(b[2] + at), w[3] = iload(b[3] + at);
  itranspose4(w[0], w[1], w[2], w[3]);
}

// Q4_K, Q5_K: get_scale_min_k4 in lanes. Scale bytes s[0..12) are words w0, w1, w2: sub-block j < 4
// has sc = s[j] & 63, m = s[j + 4] & 63; j + 4 has sc = (s[j + 8] & 15) | (s[j] >> 6) << 4 and
// m = (s[j + 8] >> 4) | (s[j + 4] >> 6) << 4. Each word shifted down a byte per j.
template <WeightType T>
inline void k4_scales(const unsigned char* const b[4], std::size_t at, KScales& s) {
  using Block = typename BlockOf<T>::type;
  s.d = halves_at(b, at + offsetof(Block, d));
  const f32x4 neg_dmin = mul(splat(-1.0f), halves_at(b, at + offsetof(Block, dmin)));
  i32x4 w[4];
  words_at(b, at + offsetof(Block, scales), w);
  const i32x4 six = isplat32(63), four = isplat32(15), top2 = isplat32(0x30);
  for (int j = 0; j < 4; ++j) {
    s.sc[j] = i32_to_f32(iand(w[0], six));
    s.off[j] = mul(neg_dmin, i32_to_f32(iand(w[1], six)));
    s.sc[j + 4] = i32_to_f32(ior(iand(w[2], four), iand(iushr32<2>(w[0]), top2)));
    s.off[j + 4] = mul(neg_dmin, i32_to_f32(ior(iand(iushr32<4>(w[2]), four), iand(iushr32<2>(w[1]), top2))));
    w[0] = iushr32<8>(w[0]), w[1] = iushr32<8>(w[1]), w[2] = iushr32<8>(w[2]);
  }
}

// Q6_K: the 16 int8 scales, byte p of word k sign-extended (shifted to the top, then down with the sign).
inline void q6k_scales(const unsigned char* const b[4], std::size_t at, KScales& s) {
  s.d = halves_at(b, at + offsetof(BlockQ6_K, d));
  i32x4 w[4];
  words_at(b, at + offsetof(BlockQ6_K, scales), w);
  for (int k = 0; k < 4; ++k)
    for (int p = 0; p < 4; ++p) {
      s.sc[4 * k + p] = i32_to_f32(isra32<24>(ishl32<24>(w[k])));
      w[k] = iushr32<8>(w[k]);
    }
}

// Q2_K: scales[j] holds sub-block j's scale (low nibble) and min (high nibble).
inline void q2k_scales(const unsigned char* const b[4], std::size_t at, KScales& s) {
  s.d = halves_at(b, at + offsetof(BlockQ2_K, d));
  const f32x4 neg_dmin = mul(splat(-1.0f), halves_at(b, at + offsetof(BlockQ2_K, dmin)));
  i32x4 w[4];
  words_at(b, at + offsetof(BlockQ2_K, scales), w);
  const i32x4 four = isplat32(15);
  for (int k = 0; k < 4; ++k)
    for (int p = 0; p < 4; ++p) {
      s.sc[4 * k + p] = i32_to_f32(iand(w[k], four));
      s.off[4 * k + p] = mul(neg_dmin, i32_to_f32(iand(iushr32<4>(w[k]), four)));
      w[k] = iushr32<8>(w[k]);
    }
}

// Q3_K: get_q3_scale in lanes, less the 32. With the scale bytes as words lo = s[0..4), hi = s[4..8),
// top = s[8..12), scale p < 4 is (s[p] & 15) | (bits 0-1 of s[8 + p]) << 4; 4 + p the same from
// s[4 + p] and bits 2-3; 8 + p from s[p] >> 4 and bits 4-5; 12 + p from s[4 + p] >> 4 and bits 6-7.
inline void q3k_scales(const unsigned char* const b[4], std::size_t at, KScales& s) {
  s.d = halves_at(b, at + offsetof(BlockQ3_K, d));
  i32x4 w[4];
  // (the 16 bytes that end with the scales: the block ends 2 bytes after them)
  words_at(b, at + offsetof(BlockQ3_K, scales) - 4, w);
  i32x4 lo = w[1], hi = w[2], top = w[3];
  const i32x4 four = isplat32(15), two = isplat32(0x30), bias = isplat32(32);
  for (int p = 0; p < 4; ++p) {
    s.sc[p] = i32_to_f32(isub32(ior(iand(lo, four), iand(ishl32<4>(top), two)), bias));
    s.sc[4 + p] = i32_to_f32(isub32(ior(iand(hi, four), iand(ishl32<2>(top), two)), bias));
    s.sc[8 + p] = i32_to_f32(isub32(ior(iand(iushr32<4>(lo), four), iand(top, two)), bias));
    s.sc[12 + p] = i32_to_f32(isub32(ior(iand(iushr32<4>(hi), four), iand(iushr32<2>(top), two)), bias));
    lo = iushr32<8>(lo), hi = iushr32<8>(hi), top = iushr32<8>(top);
  }
}

// Each 16-bit lane shifted left by n (right by -n when n < 0).
template <int n>
inline i32x4 ishift16(i32x4 a) {
  if constexpr (n >= 0) return ishl16<n>(a);
  else return iushr16<-n>(a);
}

// Q4_K: one row's sum a q over sub-block J of the super-block at blk, four int32 lanes, with A's
// block permuted. Sub-blocks 2c and 2c + 1 are the low and high nibbles of qs[32c .. 32c + 32), so a
// 16-bit lane of qs holds elements 2i, 2i + 1 (nibbles 0 and 2, or 1 and 3): Q4_0's shifts.
template <int J>
inline i32x4 q4k_dot(const i32x4 a[4], const unsigned char* blk) {
  const unsigned char* q = blk + offsetof(BlockQ4_K, qs) + 32 * (J / 2);
  constexpr int lo = J % 2 ? 4 : 0;
  const i32x4 v0 = iload(q), v1 = iload(q + 16), m = isplat16(15);
  return iadd32(iadd32(idot16(a[0], iand(iushr16<lo>(v0), m)), idot16(a[1], iand(iushr16<lo>(v1), m))),
                iadd32(idot16(a[2], iand(iushr16<lo + 8>(v0), m)), idot16(a[3], iand(iushr16<lo + 8>(v1), m))));
}

// Q5_K: Q4_K's nibbles with bit J of qh[l] as element l's 5th bit, shifted to bit 4 of each byte.
template <int J>
inline i32x4 q5k_dot(const i32x4 a[4], const unsigned char* blk) {
  const unsigned char* q = blk + offsetof(BlockQ5_K, qs) + 32 * (J / 2);
  const unsigned char* h = blk + offsetof(BlockQ5_K, qh);
  constexpr int lo = J % 2 ? 4 : 0;
  const i32x4 nib = isplat16(0x0f0f), bit = isplat16(0x1010);
  const i32x4 u0 = ior(iand(iushr16<lo>(iload(q)), nib), iand(ishift16<4 - J>(iload(h)), bit));
  const i32x4 u1 = ior(iand(iushr16<lo>(iload(q + 16)), nib), iand(ishift16<4 - J>(iload(h + 16)), bit));
  i32x4 r0, r1;
  two_code_dot(a, u0, u1, &r0, &r1);
  return iadd32(r0, r1);
}

// Q6_K: block J of 32 is half h = J / 4, run t = J % 4 of it: low 4 bits from ql[64h + 32 (t % 2) + l]
// (high nibble for t >= 2), bits 4-5 from bits 2t, 2t + 1 of qh[32h + l]. Codes without the -32.
template <int J>
inline void q6k_dot(const i32x4 a[4], const unsigned char* blk, i32x4* run0, i32x4* run1) {
  constexpr int h = J / 4, t = J % 4, lo = t >= 2 ? 4 : 0;
  const unsigned char* ql = blk + offsetof(BlockQ6_K, ql) + 64 * h + 32 * (t % 2);
  const unsigned char* qh = blk + offsetof(BlockQ6_K, qh) + 32 * h;
  const i32x4 nib = isplat16(0x0f0f), bits = isplat16(0x3030);
  const i32x4 u0 = ior(iand(iushr16<lo>(iload(ql)), nib), iand(ishift16<4 - 2 * t>(iload(qh)), bits));
  const i32x4 u1 = ior(iand(iushr16<lo>(iload(ql + 16)), nib), iand(ishift16<4 - 2 * t>(iload(qh + 16)), bits));
  two_code_dot(a, u0, u1, run0, run1);
}

// Q2_K, Q3_K: block J of 32 is half h = J / 4, run t = J % 4 of it: element l's low 2 bits are bits
// 2t, 2t + 1 of qs[32h + l]; Q3_K's third bit is bit J of hmask[l]. Codes without Q3_K's -4.
template <WeightType T, int J>
inline void q23k_dot(const i32x4 a[4], const unsigned char* blk, i32x4* run0, i32x4* run1) {
  constexpr int t = J % 4;
  const unsigned char* q = blk + offsetof(typename BlockOf<T>::type, qs) + 32 * (J / 4);
  const i32x4 crumb = isplat16(0x0303);
  i32x4 u0 = iand(iushr16<2 * t>(iload(q)), crumb), u1 = iand(iushr16<2 * t>(iload(q + 16)), crumb);
  if constexpr (T == WeightType::kQ3_K) {
    const unsigned char* hm = blk + offsetof(BlockQ3_K, hmask);
    const i32x4 bit = isplat16(0x0404);
    u0 = ior(u0, iand(ishift16<2 - J>(iload(hm)), bit)), u1 = ior(u1, iand(ishift16<2 - J>(iload(hm + 16)), bit));
  }
  two_code_dot(a, u0, u1, run0, run1);
}

// One activation row's block J of the super-block (A at the super-block's first block) against four
// rows' blocks at b[r] + at: acc as the scalar twin's, lane r row r. Each block touches its eighth of
// the next four rows' super-block (ahead, when not null), one byte per cache line: spread over the
// blocks, not all at the super-block's start (decode_step natively, ms per step: Q5_K 31.3 -> 17.5,
// Q6_K 19.6 -> 14.3, Q4_K 18.0 -> 15.9).
template <WeightType T, int J>
inline f32x4 k_block(f32x4 acc, const ARow& A, const unsigned char* const b[4], std::size_t at, const KScales& s,
                     const unsigned char* ahead, unsigned& sink, i32x4* fence) {
  constexpr int kSpan = 4 * int(sizeof(typename BlockOf<T>::type)), kAt = J * kSpan / 8;
  if (ahead) {
    sink += ahead[kAt];
    if constexpr (kAt + 64 < kSpan) sink += ahead[kAt + 64];
  }
  const std::int16_t* a = A.a + 32 * J;
  const float as = A.as[J], *runs = A.runs + 2 * J;
  const i32x4 av[4] = {iload(a), iload(a + 8), iload(a + 16), iload(a + 24)};
  f32x4 dot;
  if constexpr (kRunScales<T>) {
    // Two rows' run sums folded (ipair_sum) and stored before the next two rows' are made: eight
    // vectors of run sums live at once would not fit the registers with A's block beside them.
    i32x4 p0[2], p1[2];
    for (int h = 0; h < 2; ++h) {
      i32x4 x0, x1, y0, y1;
      if constexpr (T == WeightType::kQ6_K) {
        q6k_dot<J>(av, b[2 * h] + at, &x0, &x1), q6k_dot<J>(av, b[2 * h + 1] + at, &y0, &y1);
      } else {
        q23k_dot<T, J>(av, b[2 * h] + at, &x0, &x1), q23k_dot<T, J>(av, b[2 * h + 1] + at, &y0, &y1);
      }
      p0[h] = ipair_sum(x0, y0), p1[h] = ipair_sum(x1, y1);
      store_in_order(fence + 2 * h, p0[h]), store_in_order(fence + 2 * h + 1, p1[h]);
    }
    i32x4 sum0 = ipairs_sum(p0[0], p0[1]), sum1 = ipairs_sum(p1[0], p1[1]);
    if constexpr (kKZeroPoint<T> != 0)
      sum0 = isub32(sum0, isplat32(kKZeroPoint<T> * A.sums[2 * J])), sum1 = isub32(sum1, isplat32(kKZeroPoint<T> * A.sums[2 * J + 1]));
    const f32x4 run0 = i32_to_f32(sum0), run1 = i32_to_f32(sum1);
    dot = add(mul(run0, s.sc[2 * J]), mul(run1, s.sc[2 * J + 1]));  // (integers below 2^24: exact)
  } else {
    i32x4 d[4];
    for (int r = 0; r < 4; ++r) {
      d[r] = T == WeightType::kQ4_K ? q4k_dot<J>(av, b[r] + at) : q5k_dot<J>(av, b[r] + at);
      store_in_order(fence + r, d[r]);
    }
    dot = mul(i32_to_f32(isum4(d[0], d[1], d[2], d[3])), s.sc[J]);  // (exact, as above)
  }
  acc = add(acc, mul(dot, mul(splat(as), s.d)));
  if constexpr (!kKHasMin<T>) {
    return acc;
  } else {
    const f32x4 o0 = s.off[kRunScales<T> ? 2 * J : J], o1 = s.off[kRunScales<T> ? 2 * J + 1 : J];
    return add(acc, mul(splat(as), add(mul(o0, splat(runs[0])), mul(o1, splat(runs[1])))));
  }
}

template <WeightType T, int... J>
inline f32x4 k_super_block(f32x4 acc, const ARow& A, const unsigned char* const b[4], std::size_t at, const KScales& s,
                           const unsigned char* ahead, unsigned& sink, i32x4* fence, std::integer_sequence<int, J...>) {
  ((acc = k_block<T, J>(acc, A, b, at, s, ahead, sink, fence)), ...);
  return acc;
}

// C = A B^T for B's rows of a K-quant: four rows of B at a time (the last N % 4 as copies
// of row N - 1, whose lanes are not stored), each super-block's scales widened once for all of A's
// rows, which meet it while it is in cache; a decoding step (M = 1) reads each weight byte once,
// touching the next four rows a super-block ahead (k_block).
template <WeightType T>
void gemm_bt_kquant_simd(int M, int N, int K, const QuantizedRows& Aq, const unsigned char* B, float* C, int ldc) {
  constexpr int kBlockBytes = sizeof(typename BlockOf<T>::type);
  constexpr int kPerSuper = kSuperBlock / kQuantBlock;
  const int supers = K / kSuperBlock;
  const std::size_t rb = row_bytes(T, K);
  thread_local std::vector<float> acc_rows;  // [row of A][4 rows of B]
  thread_local i32x4 fence_slots[8];
  acc_rows.resize(std::size_t(M) * 4);
  float* accs = acc_rows.data();
  i32x4* fence = fence_slots;
  unsigned sink = 0;
  for (int j = 0; j < N; j += 4) {
    const unsigned char* b[4];
    for (int r = 0; r < 4; ++r) b[r] = B + std::size_t(j + r < N ? j + r : N - 1) * rb;
    const unsigned char* ahead = j + 8 <= N ? b[0] + 4 * rb : nullptr;  // (the next four rows, when whole)
    for (int i = 0; i < 4 * M; ++i) accs[i] = 0.0f;
    for (int sb = 0; sb < supers; ++sb) {
      const std::size_t at = std::size_t(sb) * kBlockBytes;
      KScales s;
      if constexpr (T == WeightType::kQ6_K) q6k_scales(b, at, s);
      else if constexpr (T == WeightType::kQ3_K) q3k_scales(b, at, s);
      else if constexpr (T == WeightType::kQ2_K) q2k_scales(b, at, s);
      else k4_scales<T>(b, at, s);
      for (int i = 0; i < M; ++i) {
        ARow A = a_row(Aq, true, K, i);
        A.a += sb * kSuperBlock, A.as += sb * kPerSuper, A.runs += sb * 2 * kPerSuper, A.sums += sb * 2 * kPerSuper;
        const f32x4 acc = k_super_block<T>(load(accs + 4 * i), A, b, at, s, ahead && i == 0 ? ahead + 4 * at : nullptr, sink,
                                           fence, std::make_integer_sequence<int, kPerSuper>());
        store(accs + 4 * i, acc);
      }
    }
    for (int i = 0; i < M; ++i) store_rows(C + long(i) * ldc + j, load(accs + 4 * i), N - j < 4 ? N - j : 4);
  }
  touch_sink.store(sink, std::memory_order_relaxed);
}

}  // namespace

// The scalar twins' table with every quantized type's SIMD kernel in its place.
QuantKernels simd_quant_kernels() {
  QuantKernels k = scalar_quant_kernels();
  k.set(WeightType::kQ8_0, gemm_bt_quant_simd<WeightType::kQ8_0>)
      .set(WeightType::kQ4_0, gemm_bt_quant_simd<WeightType::kQ4_0>)
      .set(WeightType::kQ4_1, gemm_bt_quant_simd<WeightType::kQ4_1>)
      .set(WeightType::kQ5_0, gemm_bt_quant_simd<WeightType::kQ5_0>)
      .set(WeightType::kQ5_1, gemm_bt_quant_simd<WeightType::kQ5_1>)
      .set(WeightType::kQ4_K, gemm_bt_kquant_simd<WeightType::kQ4_K>)
      .set(WeightType::kQ5_K, gemm_bt_kquant_simd<WeightType::kQ5_K>)
      .set(WeightType::kQ6_K, gemm_bt_kquant_simd<WeightType::kQ6_K>)
      .set(WeightType::kQ3_K, gemm_bt_kquant_simd<WeightType::kQ3_K>)
      .set(WeightType::kQ2_K, gemm_bt_kquant_simd<WeightType::kQ2_K>);
  return k;
}
#endif

}  // namespace attn
