// The GGUF types of the weight-type table (issue 33: Q5_0, Q4_1, Q5_1, Q2_K .. Q6_K), against
// ggml's layouts (ggml-common.h's blocks, ggml-quants.c's dequantize_row_*): hand-made blocks whose
// values are worked out here by hand; blocks of random bytes decoded by the table and by this file's
// own reading of the spec (written as ggml's loops walk a block, not as the table's per-element
// index arithmetic), equal to the bit; unpack's contract (scale q + offset is the decoded value);
// linear() on random-byte blocks for every Kernels table against float64 on the decoded weights; and
// the SIMD kernels against their scalar twins (to the bit) and float64, on random and extreme blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/parallel_gemm.h"
#include "tensors/half.h"
#include "tensors/quantize.h"
#include "kernels/quantized_rows.h"
#include "tensors/weight.h"
#include "tensors/weight_types.h"

namespace {

using attn::WeightType;

const WeightType kGguf[] = {WeightType::kQ4_K, WeightType::kQ6_K, WeightType::kQ5_0, WeightType::kQ4_1,
                            WeightType::kQ5_1, WeightType::kQ5_K, WeightType::kQ3_K, WeightType::kQ2_K};

float half_at(const unsigned char* p) { return attn::half_to_float(attn::load_u16(p)); }
void put_half(unsigned char* p, float v) {
  const std::uint16_t h = attn::float_to_half(v);
  std::memcpy(p, &h, 2);
}

std::vector<float> decoded(WeightType t, const std::vector<unsigned char>& bytes) {
  const attn::WeightTypeInfo& info = attn::weight_type_info(t);
  const int n = int(bytes.size() / info.block_bytes) * info.block;
  std::vector<float> y(n);
  info.decode(bytes.data(), n, y.data());
  return y;
}

// --- Hand-made blocks ----------------------------------------------------------------------------

TEST(WeightTypesGguf, AQ4_KBlockMadeByHand) {
  // d = 0.5, dmin = 0.25; sub-block scales / mins 6 bits each, packed as get_scale_min_k4 reads them.
  const int sc[8] = {3, 63, 10, 0, 17, 33, 48, 62}, m[8] = {0, 5, 63, 1, 20, 47, 16, 31};
  std::vector<unsigned char> b(144, 0);
  put_half(&b[0], 0.5f), put_half(&b[2], 0.25f);
  unsigned char* s = &b[4];
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<unsigned char>(sc[j] | (sc[j + 4] >> 4) << 6);
    s[j + 4] = static_cast<unsigned char>(m[j] | (m[j + 4] >> 4) << 6);
    s[j + 8] = static_cast<unsigned char>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
  unsigned char* qs = &b[16];
  qs[0] = 0x07;        // element 0 (sub-block 0): 7
  qs[2 * 32 + 5] = 0x92;  // element 128 + 5 (sub-block 4): 2; element 128 + 32 + 5 (sub-block 5): 9
  qs[3 * 32 + 31] = 0xf0;  // element 255 (sub-block 7): 15; element 223 (sub-block 6): 0
  const std::vector<float> y = decoded(WeightType::kQ4_K, b);
  EXPECT_EQ(y[0], 0.5f * 3 * 7 - 0.0f);
  EXPECT_EQ(y[0], 10.5f);
  EXPECT_EQ(y[1], 0.0f);                      // sub-block 0, code 0, min 0
  EXPECT_EQ(y[32], -0.25f * 5);               // sub-block 1, code 0
  EXPECT_EQ(y[133], 0.5f * 17 * 2 - 0.25f * 20);  // 12
  EXPECT_EQ(y[165], 0.5f * 33 * 9 - 0.25f * 47);  // 136.75
  EXPECT_EQ(y[165], 136.75f);
  EXPECT_EQ(y[223], -0.25f * 16);
  EXPECT_EQ(y[255], 0.5f * 62 * 15 - 0.25f * 31);  // 457.25
  EXPECT_EQ(y[255], 457.25f);
}

TEST(WeightTypesGguf, AQ6_KBlockMadeByHand) {
  std::vector<unsigned char> b(210, 0);
  unsigned char *ql = &b[0], *qh = &b[128];
  signed char* sc = reinterpret_cast<signed char*>(&b[192]);
  put_half(&b[208], 0.125f);
  for (int j = 0; j < 16; ++j) sc[j] = static_cast<signed char>(j * 9 - 70);  // -70 .. 65
  // Element 0: low nibble of ql[0] and bits 0-1 of qh[0]: code 0x3f - 32 = 31, scale sc[0] = -70.
  ql[0] = 0x0f, qh[0] = 0x03;
  // Element 128 + 64 + 17 (second half, third run, sub-block 8 + 4 + 1): high nibble of ql[64 + 17],
  // bits 4-5 of qh[32 + 17]; code (0x1 << 4 | 0x5) - 32 = -11, scale sc[13] = 47.
  ql[64 + 17] = 0x50, qh[32 + 17] = 0x10;
  // Element 128 + 32 + 3 (sub-block 10): low nibble of ql[64 + 32 + 3], bits 2-3 of qh[32 + 3]:
  // code (2 << 4 | 0) - 32 = 0.
  qh[32 + 3] = 0x08;
  const std::vector<float> y = decoded(WeightType::kQ6_K, b);
  EXPECT_EQ(y[0], 0.125f * -70 * 31);  // -271.25
  EXPECT_EQ(y[0], -271.25f);
  EXPECT_EQ(y[209], 0.125f * 47 * -11);  // -64.625
  EXPECT_EQ(y[209], -64.625f);
  EXPECT_EQ(y[163], 0.0f);
  EXPECT_EQ(y[1], 0.125f * -70 * -32);  // all-zero bits: code -32
}

TEST(WeightTypesGguf, Q5_0Q4_1Q5_1AndQ3_KQ2_KBlocksMadeByHand) {
  {  // Q5_0: d = 2; element 3: nibble 5, 5th bit set: 21 - 16 = 5; element 20: nibble 1, no bit: -15.
    std::vector<unsigned char> b(22, 0);
    put_half(&b[0], 2.0f);
    b[2] = 0x08;             // qh bit 3
    b[6 + 3] = 0x05;         // qs[3] low nibble: element 3
    b[6 + 4] = 0x10;         // qs[4] high nibble: element 20
    const std::vector<float> y = decoded(WeightType::kQ5_0, b);
    EXPECT_EQ(y[3], 10.0f);
    EXPECT_EQ(y[20], -30.0f);
    EXPECT_EQ(y[0], -32.0f);
  }
  {  // Q4_1: d = 0.5, m = -3; element 17 (high nibble of qs[1]) 12: 3.
    std::vector<unsigned char> b(20, 0);
    put_half(&b[0], 0.5f), put_half(&b[2], -3.0f);
    b[4 + 1] = 0xc0;
    const std::vector<float> y = decoded(WeightType::kQ4_1, b);
    EXPECT_EQ(y[17], 3.0f);
    EXPECT_EQ(y[1], -3.0f);
  }
  {  // Q5_1: d = 0.25, m = 1; element 31: nibble 15 with the 5th bit (qh bit 31): 31 -> 8.75.
    std::vector<unsigned char> b(24, 0);
    put_half(&b[0], 0.25f), put_half(&b[2], 1.0f);
    b[4 + 3] = 0x80;
    b[8 + 15] = 0xf0;
    const std::vector<float> y = decoded(WeightType::kQ5_1, b);
    EXPECT_EQ(y[31], 8.75f);
    EXPECT_EQ(y[15], 1.0f);
  }
  {  // Q3_K: d = 1. Scale of sub-block 9 (stored 6 bits: low nibble in the high half of byte 1, high
     // bits at bits 4-5 of byte 8 + 1): 0b10'0111 = 39 -> 7. Element 9 * 16 + 2 = 146 (half 1, shift
     // 0, second run: qs[32 + 16 + 2], hmask[16 + 2] bit 4): low 2 bits 1, hmask set: code 1 -> 7.
    std::vector<unsigned char> b(110, 0);
    unsigned char *hm = &b[0], *qs = &b[32], *s = &b[96];
    put_half(&b[108], 1.0f);
    s[1] = 0x70, s[8 + 1] = 0x20;
    qs[32 + 16 + 2] = 0x01, hm[16 + 2] = 0x10;
    // Sub-block 0: stored 0 -> -32; element 0: bits 0, hmask clear: code -4 -> 128.
    const std::vector<float> y = decoded(WeightType::kQ3_K, b);
    EXPECT_EQ(y[146], 7.0f);
    EXPECT_EQ(y[147], 7.0f * -4);
    EXPECT_EQ(y[0], 128.0f);
  }
  {  // Q2_K: d = 0.5, dmin = 2; sub-block 5 (scales[5] = min 3 << 4 | scale 6); element 5 * 16 + 4 = 84
     // (half 0, shift 4 (j = 2), second run: qs[16 + 4] bits 4-5): 3 -> 0.5 * 6 * 3 - 2 * 3 = 3.
    std::vector<unsigned char> b(84, 0);
    b[5] = 0x36;
    b[16 + 16 + 4] = 0x30;
    put_half(&b[80], 0.5f), put_half(&b[82], 2.0f);
    const std::vector<float> y = decoded(WeightType::kQ2_K, b);
    EXPECT_EQ(y[84], 3.0f);
    EXPECT_EQ(y[85], -6.0f);
    EXPECT_EQ(y[4], 0.0f);
  }
}

// --- Random blocks, decoded by ggml's loops -------------------------------------------------------

std::uint32_t u32_at(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void k4_scale_min(int j, const unsigned char* q, int* d, int* m) {
  if (j < 4) {
    *d = q[j] & 63, *m = q[j + 4] & 63;
  } else {
    *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// One block of type t at b, as ggml's dequantize_row_* walks it.
void spec_decode(WeightType t, const unsigned char* b, float* y) {
  switch (t) {
    case WeightType::kQ5_0:
    case WeightType::kQ5_1: {
      const bool q51 = t == WeightType::kQ5_1;
      const float d = half_at(b), m = q51 ? half_at(b + 2) : 0.0f;
      const unsigned char* p = b + (q51 ? 4 : 2);
      const std::uint32_t qh = u32_at(p);
      const unsigned char* qs = p + 4;
      for (int j = 0; j < 16; ++j) {
        const int x0 = (qs[j] & 15) | ((qh >> j) & 1) << 4, x1 = (qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4;
        if (q51) y[j] = x0 * d + m, y[j + 16] = x1 * d + m;
        else y[j] = (x0 - 16) * d, y[j + 16] = (x1 - 16) * d;
      }
      return;
    }
    case WeightType::kQ4_1: {
      const float d = half_at(b), m = half_at(b + 2);
      for (int j = 0; j < 16; ++j) y[j] = (b[4 + j] & 15) * d + m, y[j + 16] = (b[4 + j] >> 4) * d + m;
      return;
    }
    case WeightType::kQ2_K: {
      const unsigned char *scales = b, *q = b + 16;
      const float d = half_at(b + 80), dmin = half_at(b + 82);
      int is = 0;
      for (int n = 0; n < 256; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2)
          for (int run = 0; run < 2; ++run) {
            const int sc = scales[is++];
            const float dl = d * (sc & 15), ml = dmin * (sc >> 4);
            for (int l = 0; l < 16; ++l) *y++ = dl * ((q[l + 16 * run] >> shift) & 3) - ml;
          }
      return;
    }
    case WeightType::kQ3_K: {
      const unsigned char *hm = b, *q = b + 32;
      const float d = half_at(b + 108);
      // The 16 scales from the three 32-bit words, four bytes (scales) at a time.
      std::uint32_t w[3] = {u32_at(b + 96), u32_at(b + 100), u32_at(b + 104)}, a[4];
      const std::uint32_t lo4 = 0x0f0f0f0f, lo2 = 0x03030303;
      a[0] = (w[0] & lo4) | ((w[2] >> 0) & lo2) << 4;
      a[1] = (w[1] & lo4) | ((w[2] >> 2) & lo2) << 4;
      a[2] = ((w[0] >> 4) & lo4) | ((w[2] >> 4) & lo2) << 4;
      a[3] = ((w[1] >> 4) & lo4) | ((w[2] >> 6) & lo2) << 4;
      signed char scales[16];
      std::memcpy(scales, a, 16);
      int is = 0, mask = 1;
      for (int n = 0; n < 256; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2, mask <<= 1)
          for (int run = 0; run < 2; ++run) {
            const float dl = d * (scales[is++] - 32);
            for (int l = 0; l < 16; ++l) {
              const int k = l + 16 * run;
              *y++ = dl * (((q[k] >> shift) & 3) - ((hm[k] & mask) ? 0 : 4));
            }
          }
      return;
    }
    case WeightType::kQ4_K:
    case WeightType::kQ5_K: {
      const bool q5 = t == WeightType::kQ5_K;
      const float d = half_at(b), dmin = half_at(b + 2);
      const unsigned char *scales = b + 4, *qh = b + 16, *ql = b + (q5 ? 48 : 16);
      int u1 = 1, u2 = 2;
      for (int j = 0, is = 0; j < 256; j += 64, ql += 32, is += 2, u1 <<= 2, u2 <<= 2) {
        int sc, m;
        k4_scale_min(is, scales, &sc, &m);
        const float d1 = d * sc, m1 = dmin * m;
        k4_scale_min(is + 1, scales, &sc, &m);
        const float d2 = d * sc, m2 = dmin * m;
        for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 15) + (q5 && (qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (q5 && (qh[l] & u2) ? 16 : 0)) - m2;
      }
      return;
    }
    case WeightType::kQ6_K: {
      const unsigned char *ql = b, *qh = b + 128;
      const signed char* sc = reinterpret_cast<const signed char*>(b + 192);
      const float d = half_at(b + 208);
      for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; ++l) {
          const int is = l / 16;
          const int q1 = ((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4) - 32, q2 = ((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4) - 32;
          const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32, q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
          y[l] = d * sc[is] * q1, y[l + 32] = d * sc[is + 2] * q2, y[l + 64] = d * sc[is + 4] * q3, y[l + 96] = d * sc[is + 6] * q4;
        }
      return;
    }
    default: FAIL() << "not a GGUF type";
  }
}

// Where each type keeps its f16 halves (d, and dmin or m), to make them finite in random blocks.
std::vector<int> halves_of(WeightType t) {
  switch (t) {
    case WeightType::kQ5_0: return {0};
    case WeightType::kQ4_1: case WeightType::kQ5_1: case WeightType::kQ4_K: case WeightType::kQ5_K: return {0, 2};
    case WeightType::kQ2_K: return {80, 82};
    case WeightType::kQ3_K: return {108};
    case WeightType::kQ6_K: return {208};
    default: return {};
  }
}

// `blocks` blocks of random bytes with random finite halves in [-0.02, 0.02).
std::vector<unsigned char> random_blocks(WeightType t, int blocks, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> half(-0.02f, 0.02f);
  const int bb = attn::weight_type_info(t).block_bytes;
  std::vector<unsigned char> bytes(std::size_t(bb) * blocks);
  for (unsigned char& c : bytes) c = static_cast<unsigned char>(byte(rng));
  for (int k = 0; k < blocks; ++k)
    for (int at : halves_of(t)) put_half(&bytes[std::size_t(k) * bb + at], half(rng));
  return bytes;
}

TEST(WeightTypesGguf, RandomBlocksDecodeAsGgmlsLoopsToTheBit) {
  for (WeightType t : kGguf) {
    const attn::WeightTypeInfo& info = attn::weight_type_info(t);
    const int blocks = 16;
    const std::vector<unsigned char> bytes = random_blocks(t, blocks, 7 + int(t));
    const std::vector<float> y = decoded(t, bytes);
    std::vector<float> want(y.size());
    for (int k = 0; k < blocks; ++k) spec_decode(t, bytes.data() + std::size_t(k) * info.block_bytes, want.data() + std::size_t(k) * info.block);
    for (std::size_t i = 0; i < y.size(); ++i) {
      std::uint32_t a, b;
      std::memcpy(&a, &y[i], 4), std::memcpy(&b, &want[i], 4);
      ASSERT_EQ(a, b) << info.name << " at " << i << ": " << y[i] << " vs " << want[i];
    }
  }
}

// unpack's contract (weight_types.h): scale[k / 32] q[k] + offset[k / 16] is the decoded value, up to
// float rounding (decode multiplies d sc first); offsets 0 for the types without a min.
TEST(WeightTypesGguf, UnpackedCodesScalesAndOffsetsGiveTheDecodedValues) {
  for (WeightType t : kGguf) {
    const attn::WeightTypeInfo& info = attn::weight_type_info(t);
    const int blocks = 8;
    const std::vector<unsigned char> bytes = random_blocks(t, blocks, 70 + int(t));
    const std::vector<float> y = decoded(t, bytes);
    const int n = int(y.size());
    std::vector<std::int16_t> q(n);
    std::vector<float> scale(n / attn::kQuantBlock), offset(n / attn::kOffsetRun);
    info.unpack(bytes.data(), n, q.data(), scale.data(), offset.data());
    const bool has_min = t == WeightType::kQ4_1 || t == WeightType::kQ5_1 || t == WeightType::kQ2_K ||
                         t == WeightType::kQ4_K || t == WeightType::kQ5_K;
    for (int k = 0; k < n; ++k) {
      const double part = double(scale[k / 32]) * q[k], off = offset[k / 16];
      if (!has_min) ASSERT_EQ(off, 0.0) << info.name;
      ASSERT_NEAR(part + off, y[k], (std::fabs(part) + std::fabs(off)) * 0x1p-22) << info.name << " at " << k;
    }
  }
}

// A row's weights decoded and unpacked (weight_types.h: scale q + offset), for the float64 products.
struct Unpacked {
  std::vector<float> w, scale, offset;
  std::vector<std::int16_t> q;
};
Unpacked unpack_all(WeightType t, const std::vector<unsigned char>& bytes) {
  Unpacked u;
  u.w = decoded(t, bytes);
  u.q.resize(u.w.size()), u.scale.resize(u.w.size() / 32), u.offset.resize(u.w.size() / 16);
  attn::weight_type_info(t).unpack(bytes.data(), int(u.w.size()), u.q.data(), u.scale.data(), u.offset.data());
  return u;
}

// x (in values) times weight row j in float64, and the bound on a quantized product's distance from
// it: the activations' per-block quantization (da / 2 per value, da = max |x_block| / 127) plus float32
// rounding, over |scale q| + |offset| per weight (the two parts may cancel in w; the kernels' sums
// are relative to them).
double float64_product(const Unpacked& u, const float* x, int in, int j, double* bound) {
  double exact = 0, mag = 0, act = 0;
  for (int b = 0; b < in; b += 32) {
    double m = 0, sw = 0;
    for (int k = b; k < b + 32; ++k) {
      const std::size_t at = std::size_t(j) * in + k;
      const double part = std::fabs(double(u.scale[at / 32]) * u.q[at]) + std::fabs(u.offset[at / 16]);
      exact += double(x[k]) * u.w[at];
      mag += std::fabs(x[k]) * part, sw += part;
      m = std::max(m, double(std::fabs(x[k])));
    }
    act += m / 127.0 / 2.0 * sw;
  }
  *bound = act + (in + 2) * 0x1p-24 * (mag + act) + 1e-30;
  return exact;
}

// linear() on random-byte weights (every code, scale and min, negative sub-block scales included) for
// every Kernels table, against float64 on the decoded weights (float64_product's bound).
TEST(WeightTypesGguf, LinearOnRandomBlocksEqualsFloat64ForEveryKernelsTable) {
  for (const attn::Kernels* kn : {&attn::scalar_kernels(), &attn::simd_kernels(), &attn::eigen_kernels()})
    for (WeightType t : kGguf) {
      const attn::WeightTypeInfo& info = attn::weight_type_info(t);
      const int in = 2 * attn::kSuperBlock, out = 13;
      const std::vector<unsigned char> bytes = random_blocks(t, out * in / info.block, 300 + int(t));
      const Unpacked u = unpack_all(t, bytes);
      for (int rows : {1, 5}) {
        std::mt19937 rng(rows);
        std::normal_distribution<float> g(0.0f, 1.0f);
        std::vector<float> x(std::size_t(rows) * in), y(std::size_t(rows) * out);
        for (float& v : x) v = g(rng);
        const attn::WeightView W{t, false, bytes.data(), out, in, 0};
        ASSERT_EQ(attn::linear(*kn, x.data(), rows, W, nullptr, y.data(), out), "") << kn->name << " " << info.name;
        for (int i = 0; i < rows; ++i)
          for (int j = 0; j < out; ++j) {
            double bound;
            const double exact = float64_product(u, x.data() + std::size_t(i) * in, in, j, &bound);
            ASSERT_LE(std::fabs(y[std::size_t(i) * out + j] - exact), bound) << kn->name << " " << info.name << " rows " << rows;
          }
      }
    }
}

// Blocks whose integer sums are the largest the kernels meet: Q2_K, Q4_K, Q5_K all bits set (codes
// 3, 15 or 31, sub-block scales and mins 15 or 63); Q6_K codes 0 (q - 32 = -32) under scales -128;
// Q3_K all bits clear (q - 4 = -4 under scales 0 - 32); the others all bits set. Finite halves of 0.01.
std::vector<unsigned char> extreme_blocks(WeightType t, int blocks) {
  const attn::WeightTypeInfo& info = attn::weight_type_info(t);
  std::vector<unsigned char> bytes(std::size_t(info.block_bytes) * blocks, 0xff);
  for (int k = 0; k < blocks; ++k) {
    unsigned char* b = bytes.data() + std::size_t(k) * info.block_bytes;
    if (t == WeightType::kQ6_K) std::memset(b, 0, 192), std::memset(b + 192, 0x80, 16);
    if (t == WeightType::kQ3_K) std::memset(b, 0, info.block_bytes);
    for (int at : halves_of(t)) put_half(b + at, 0.01f);
  }
  return bytes;
}

// The SIMD kernels of every GGUF type, called as linear() calls them, on random and on extreme blocks, with random and with extreme
// activations (every code +-127): equal to the scalar twins to the bit (tolerance 0: the same exact
// integer block sums, then the same float operations in the same order, kernels_quant_simd.cpp), and
// within float64_product's bound of float64. Shapes: one row of A (a decoding step) and a few;
// outputs not a multiple of four (the last rows' copies); K of one and of three super-blocks; C with
// a leading dimension past N, whose gaps stay untouched.
TEST(WeightTypesGguf, SimdKernelsEqualTheirScalarTwinsToTheBitAndFloat64) {
  const float kUntouched = -7.0f;
  for (WeightType t : kGguf)
    for (bool extreme : {false, true})
      for (int K : {attn::kSuperBlock, 3 * attn::kSuperBlock})
        for (int N : {1, 3, 4, 5, 8, 13}) {
          const attn::WeightTypeInfo& info = attn::weight_type_info(t);
          ASSERT_NE(attn::simd_kernels().gemm_bt_quant[t], nullptr) << info.name;
          const std::vector<unsigned char> bytes =
              extreme ? extreme_blocks(t, N * K / info.block) : random_blocks(t, N * K / info.block, 500 + N + K + int(t));
          const Unpacked u = unpack_all(t, bytes);
          for (int M : {1, 2, 5}) {
            std::mt19937 rng(M + N);
            std::normal_distribution<float> g(0.0f, 1.0f);
            std::vector<float> x(std::size_t(M) * K);
            for (std::size_t k = 0; k < x.size(); ++k) x[k] = extreme ? (k % 3 == 2 && M > 1 ? -1.0f : 1.0f) : g(rng);
            attn::QuantizedRows xq;
            ASSERT_TRUE(xq.quantize(x.data(), M, K, K));
            const int ldc = N + 2;
            std::vector<float> cs(std::size_t(M) * ldc, kUntouched), cv = cs;
            attn::scalar_kernels().gemm_bt_quant[t](M, N, K, xq, bytes.data(), cs.data(), ldc);
            attn::simd_kernels().gemm_bt_quant[t](M, N, K, xq, bytes.data(), cv.data(), ldc);
            for (int i = 0; i < M; ++i)
              for (int j = 0; j < ldc; ++j) {
                const std::size_t at = std::size_t(i) * ldc + j;
                std::uint32_t bs, bv;
                std::memcpy(&bs, &cs[at], 4), std::memcpy(&bv, &cv[at], 4);
                ASSERT_EQ(bs, bv) << info.name << (extreme ? " extreme" : "") << " M" << M << " N" << N << " K" << K
                                  << " at " << i << "," << j << ": " << cs[at] << " vs " << cv[at];
                if (j >= N) {
                  ASSERT_EQ(cv[at], kUntouched);
                  continue;
                }
                double bound;
                const double exact = float64_product(u, x.data() + std::size_t(i) * K, K, j, &bound);
                ASSERT_LE(std::fabs(cv[at] - exact), bound) << info.name << " M" << M << " N" << N << " K" << K;
              }
          }
        }
}

// Our encoder at the edges: a block of zeros decodes to zeros; constant, all-positive, all-negative
// and tiny (subnormal f16 scales) blocks stay within the step bound of weight_types_test.cpp's
// round trip (here: half the block's range over the type's levels, doubled for the K-quants' scale
// rounding, plus f16 rounding of the value); values beyond the f16 scales' range are refused by name.
TEST(WeightTypesGguf, EncoderEdges) {
  const int n = attn::kSuperBlock;
  for (WeightType t : kGguf) {
    const attn::WeightTypeInfo& info = attn::weight_type_info(t);
    const double levels = t == WeightType::kQ2_K || t == WeightType::kQ3_K ? 3
                          : t == WeightType::kQ4_K || t == WeightType::kQ4_1 ? 15
                          : t == WeightType::kQ6_K ? 31 : t == WeightType::kQ5_0 ? 15 : 31;
    std::vector<unsigned char> bytes(attn::row_bytes(t, n));
    std::vector<float> y(n);
    const auto cases = [&](int c, int i) -> float {
      switch (c) {
        case 0: return 0.0f;
        case 1: return 0.3f;
        case 2: return 1.0f + 0.01f * i;
        case 3: return -1.0f - 0.01f * (i % 37);
        default: return 1e-6f * float((i * 7919) % 23 - 11);
      }
    };
    for (int c = 0; c < 5; ++c) {
      std::vector<float> x(n);
      for (int i = 0; i < n; ++i) x[i] = cases(c, i);
      ASSERT_EQ(info.encode(x.data(), n, bytes.data()), "") << info.name << " case " << c;
      info.decode(bytes.data(), n, y.data());
      for (int b = 0; b < n; b += info.block) {
        double M = 0, lo = x[b], hi = x[b];
        for (int i = b; i < b + info.block; ++i)
          M = std::max(M, double(std::fabs(x[i]))), lo = std::min(lo, double(x[i])), hi = std::max(hi, double(x[i]));
        const double span = std::max(hi - std::min(lo, 0.0), M);
        const double tol = span / levels * (info.block == attn::kSuperBlock ? 1.0 : 0.51) + M * 0x1p-10;
        for (int i = b; i < b + info.block; ++i) {
          if (c == 0) ASSERT_EQ(y[i], 0.0f) << info.name;
          ASSERT_LE(std::fabs(double(y[i]) - x[i]), tol) << info.name << " case " << c << " at " << i;
        }
      }
    }
    std::vector<float> big(n, 1e9f);
    big[3] = -1e9f;
    const std::string err = info.encode(big.data(), n, bytes.data());
    EXPECT_NE(err.find(info.name), std::string::npos) << info.name << ": " << err;
  }
}

}  // namespace
