// The weight types' table (weight_types.h): each type's encoding, decoding and widening, and its row.
#include "tensors/weight_types.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "tensors/half.h"
#include "tensors/quantize.h"

namespace attn {

namespace {

std::string show(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// --- F32, F16, BF16: one value at a time -----------------------------------------------------

std::string encode_f32(const float* x, int n, unsigned char* out) {
  std::memcpy(out, x, std::size_t(n) * sizeof(float));
  return "";
}
void decode_f32(const unsigned char* row, int n, float* out) { std::memcpy(out, row, std::size_t(n) * sizeof(float)); }

// A 16-bit format: its rounding and its all-ones exponent (what a value past its range becomes).
template <std::uint16_t (*kRound)(float), std::uint16_t kExponent>
std::string encode_16(const float* x, int n, unsigned char* out, const char* name) {
  for (int i = 0; i < n; ++i) {
    const std::uint16_t h = kRound(x[i]);
    if ((h & kExponent) == kExponent)
      return "value " + show(x[i]) + " at column " + std::to_string(i) + " is too large for " + name;
    std::memcpy(out + 2 * i, &h, 2);
  }
  return "";
}
std::string encode_f16(const float* x, int n, unsigned char* out) { return encode_16<float_to_half, 0x7c00u>(x, n, out, "f16"); }
std::string encode_bf16(const float* x, int n, unsigned char* out) {
  return encode_16<float_to_bf16, 0x7f80u>(x, n, out, "bf16");
}
void decode_f16(const unsigned char* row, int n, float* out) {
  for (int k = 0; k < n; ++k) out[k] = half_to_float(load_u16(row + 2 * k));
}
void decode_bf16(const unsigned char* row, int n, float* out) {
  for (int k = 0; k < n; ++k) out[k] = bf16_to_float(load_u16(row + 2 * k));
}

// --- Q8_0, Q4_0: blocks of 32 -----------------------------------------------------------------

std::string scale_error(const char* name, const float* x, int n) {
  return "values up to " + show(max_abs(x, n)) + " are too large for " + name + "'s f16 block scales";
}
std::string encode_q8_0(const float* x, int n, unsigned char* out) {
  return quantize_q8(x, n, out) ? "" : scale_error("q8", x, n);
}
std::string encode_q4_0(const float* x, int n, unsigned char* out) {
  return quantize_q4(x, n, out) ? "" : scale_error("q4", x, n);
}

void unpack_q8_0(const unsigned char* row, int n, std::int16_t* q, float* scale, float* offset) {
  const BlockQ8_0* blocks = reinterpret_cast<const BlockQ8_0*>(row);
  for (int i = 0; i < n / kOffsetRun; ++i) offset[i] = 0.0f;
  for (int b = 0; b < n / kQuantBlock; ++b) {
    scale[b] = half_to_float(blocks[b].d);
    for (int i = 0; i < kQuantBlock; ++i) q[b * kQuantBlock + i] = blocks[b].qs[i];
  }
}
void unpack_q4_0(const unsigned char* row, int n, std::int16_t* q, float* scale, float* offset) {
  const BlockQ4_0* blocks = reinterpret_cast<const BlockQ4_0*>(row);
  for (int i = 0; i < n / kOffsetRun; ++i) offset[i] = 0.0f;
  for (int b = 0; b < n / kQuantBlock; ++b) {
    scale[b] = half_to_float(blocks[b].d);
    std::int16_t* o = q + b * kQuantBlock;
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      o[j] = static_cast<std::int16_t>((blocks[b].qs[j] & 15) - 8);
      o[j + 16] = static_cast<std::int16_t>((blocks[b].qs[j] >> 4) - 8);
    }
  }
}

// --- The GGUF types: Q5_0, Q4_1, Q5_1 (blocks of 32) and the K-quants (blocks of 256) -----------
//
// Each type is described by where its bits are (a Format: a block's codes, sub-block scales and
// mins read out into an Expanded block, and written back from one) and by the shape of its numbers
// (a Spec: code range, sub-block size, scale range, min or not). decode, unpack and encode are
// written once over those.

// A block read out: value i = (d * sc[i / sub]) * q[i] + off[i / sub] (off only with a min).
struct Expanded {
  float d = 0;
  int sc[16] = {};     // sub-block scales (1 for the blocks of 32)
  float off[16] = {};  // sub-block offsets: m (Q4_1, Q5_1) or -(dmin * m) (K-quants); else 0
  int q[kSuperBlock] = {};  // codes, zero point removed
};

// A block to write: the halves, the stored (unsigned) codes, scales and mins.
struct Chosen {
  std::uint16_t d = 0, dm = 0;  // d, and dmin (K-quants) or m (Q4_1, Q5_1)
  int u[kSuperBlock] = {};      // codes as stored (q + zero point)
  int sc[16] = {}, m[16] = {};  // sub-block scale and min as stored
};

struct Spec {
  int block, sub;   // values per block and per sub-block (sub == block: no sub-block scales)
  int qlo, qhi;     // the codes' range, zero point removed
  int smax;         // the largest sub-block scale (and min) code; 0: no sub-block scales
  bool min;         // value has an offset (a min)
};

float h2f(std::uint16_t h) { return half_to_float(h); }

// Q4_K's and Q5_K's 6-bit scales and mins, 12 bytes (ggml's get_scale_min_k4).
void get_k4(const std::uint8_t* s, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63, *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
    *m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}
void set_k4(std::uint8_t* s, const int* sc, const int* m) {
  std::memset(s, 0, 12);
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<std::uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    s[j + 4] = static_cast<std::uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
    s[j + 8] = static_cast<std::uint8_t>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
}
// Q3_K's 16 6-bit scales (stored + 32), 12 bytes: byte k < 8 holds the low nibbles of scales k (low)
// and k + 8 (high); byte 8 + k the high 2 bits of scales k, k + 4, k + 8, k + 12.
int get_q3_scale(const std::uint8_t* s, int j) {
  const int low = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
  return low | ((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4;
}
void set_q3_scales(std::uint8_t* s, const int* u) {
  std::memset(s, 0, 12);
  for (int j = 0; j < 16; ++j) {
    s[j % 8] |= static_cast<std::uint8_t>((u[j] & 15) << (j < 8 ? 0 : 4));
    s[8 + j % 4] |= static_cast<std::uint8_t>((u[j] >> 4) << (2 * (j / 4)));
  }
}

// The legacy blocks' nibbles: element i < 16 in the low nibble of qs[i], i >= 16 the high of qs[i - 16].
int nibble32(const std::uint8_t* qs, int i) { return i < 16 ? qs[i] & 15 : qs[i - 16] >> 4; }
void set_nibble32(std::uint8_t* qs, int i, int u) { qs[i % 16] |= static_cast<std::uint8_t>((u & 15) << (i < 16 ? 0 : 4)); }
int bit_of(const std::uint8_t* bits, int i) { return bits[i / 8] >> (i % 8) & 1; }
// Q2_K's and Q3_K's 2-bit fields: element i at bits 2 ((i % 128) / 32) of qs[32 (i / 128) + i % 32].
int crumb(const std::uint8_t* qs, int i) { return qs[32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32)) & 3; }
void set_crumb(std::uint8_t* qs, int i, int u) { qs[32 * (i / 128) + i % 32] |= static_cast<std::uint8_t>((u & 3) << (2 * (i % 128 / 32))); }
// Q4_K's and Q5_K's nibbles: element i in qs[32 (i / 64) + i % 32], high when i % 64 >= 32.
int nibble_k(const std::uint8_t* qs, int i) { return qs[32 * (i / 64) + i % 32] >> (i % 64 >= 32 ? 4 : 0) & 15; }
void set_nibble_k(std::uint8_t* qs, int i, int u) { qs[32 * (i / 64) + i % 32] |= static_cast<std::uint8_t>((u & 15) << (i % 64 >= 32 ? 4 : 0)); }
// Q6_K's 6-bit codes: see BlockQ6_K.
int q6_code(const BlockQ6_K& b, int i) {
  const int h = i / 128, t = i % 128;
  const int low = b.ql[64 * h + 32 * (t / 32 % 2) + t % 32] >> (t >= 64 ? 4 : 0) & 15;
  return low | (b.qh[32 * h + t % 32] >> (2 * (t / 32)) & 3) << 4;
}
void set_q6_code(BlockQ6_K& b, int i, int u) {
  const int h = i / 128, t = i % 128;
  b.ql[64 * h + 32 * (t / 32 % 2) + t % 32] |= static_cast<std::uint8_t>((u & 15) << (t >= 64 ? 4 : 0));
  b.qh[32 * h + t % 32] |= static_cast<std::uint8_t>((u >> 4) << (2 * (t / 32)));
}

// Per type: its Spec, and its block read out (expand) and written (pack).
template <WeightType T>
struct Format;

template <>
struct Format<WeightType::kQ5_0> {
  static constexpr Spec spec{32, 32, -16, 15, 0, false};
  static void expand(const BlockQ5_0& b, Expanded& e) {
    e.d = h2f(b.d), e.sc[0] = 1;
    for (int i = 0; i < 32; ++i) e.q[i] = (nibble32(b.qs, i) | bit_of(b.qh, i) << 4) - 16;
  }
  static void pack(const Chosen& c, BlockQ5_0& b) {
    b.d = c.d;
    for (int i = 0; i < 32; ++i) set_nibble32(b.qs, i, c.u[i]), b.qh[i / 8] |= static_cast<std::uint8_t>((c.u[i] >> 4) << (i % 8));
  }
};
template <>
struct Format<WeightType::kQ4_1> {
  static constexpr Spec spec{32, 32, 0, 15, 0, true};
  static void expand(const BlockQ4_1& b, Expanded& e) {
    e.d = h2f(b.d), e.sc[0] = 1, e.off[0] = h2f(b.m);
    for (int i = 0; i < 32; ++i) e.q[i] = nibble32(b.qs, i);
  }
  static void pack(const Chosen& c, BlockQ4_1& b) {
    b.d = c.d, b.m = c.dm;
    for (int i = 0; i < 32; ++i) set_nibble32(b.qs, i, c.u[i]);
  }
};
template <>
struct Format<WeightType::kQ5_1> {
  static constexpr Spec spec{32, 32, 0, 31, 0, true};
  static void expand(const BlockQ5_1& b, Expanded& e) {
    e.d = h2f(b.d), e.sc[0] = 1, e.off[0] = h2f(b.m);
    for (int i = 0; i < 32; ++i) e.q[i] = nibble32(b.qs, i) | bit_of(b.qh, i) << 4;
  }
  static void pack(const Chosen& c, BlockQ5_1& b) {
    b.d = c.d, b.m = c.dm;
    for (int i = 0; i < 32; ++i) set_nibble32(b.qs, i, c.u[i]), b.qh[i / 8] |= static_cast<std::uint8_t>((c.u[i] >> 4) << (i % 8));
  }
};
template <>
struct Format<WeightType::kQ2_K> {
  static constexpr Spec spec{256, 16, 0, 3, 15, true};
  static void expand(const BlockQ2_K& b, Expanded& e) {
    e.d = h2f(b.d);
    const float dmin = h2f(b.dmin);
    for (int j = 0; j < 16; ++j) e.sc[j] = b.scales[j] & 15, e.off[j] = -(dmin * float(b.scales[j] >> 4));
    for (int i = 0; i < 256; ++i) e.q[i] = crumb(b.qs, i);
  }
  static void pack(const Chosen& c, BlockQ2_K& b) {
    b.d = c.d, b.dmin = c.dm;
    for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<std::uint8_t>(c.sc[j] | c.m[j] << 4);
    for (int i = 0; i < 256; ++i) set_crumb(b.qs, i, c.u[i]);
  }
};
template <>
struct Format<WeightType::kQ3_K> {
  static constexpr Spec spec{256, 16, -4, 3, 31, false};
  static void expand(const BlockQ3_K& b, Expanded& e) {
    e.d = h2f(b.d);
    for (int j = 0; j < 16; ++j) e.sc[j] = get_q3_scale(b.scales, j) - 32;
    for (int i = 0; i < 256; ++i) e.q[i] = (crumb(b.qs, i) | (b.hmask[i % 32] >> (i / 32) & 1) << 2) - 4;
  }
  static void pack(const Chosen& c, BlockQ3_K& b) {
    b.d = c.d;
    int u[16];
    for (int j = 0; j < 16; ++j) u[j] = c.sc[j] + 32;
    set_q3_scales(b.scales, u);
    for (int i = 0; i < 256; ++i)
      set_crumb(b.qs, i, c.u[i]), b.hmask[i % 32] |= static_cast<std::uint8_t>((c.u[i] >> 2) << (i / 32));
  }
};
// Q4_K's and Q5_K's d, and each sub-block's 6-bit scale and min (as -dmin * m).
template <class Block>
void expand_k4_scales(const Block& b, Expanded& e) {
  e.d = h2f(b.d);
  const float dmin = h2f(b.dmin);
  for (int j = 0; j < 8; ++j) {
    int m;
    get_k4(b.scales, j, &e.sc[j], &m);
    e.off[j] = -(dmin * float(m));
  }
}
template <>
struct Format<WeightType::kQ4_K> {
  static constexpr Spec spec{256, 32, 0, 15, 63, true};
  static void expand(const BlockQ4_K& b, Expanded& e) {
    expand_k4_scales(b, e);
    for (int i = 0; i < 256; ++i) e.q[i] = nibble_k(b.qs, i);
  }
  static void pack(const Chosen& c, BlockQ4_K& b) {
    b.d = c.d, b.dmin = c.dm;
    set_k4(b.scales, c.sc, c.m);
    for (int i = 0; i < 256; ++i) set_nibble_k(b.qs, i, c.u[i]);
  }
};
template <>
struct Format<WeightType::kQ5_K> {
  static constexpr Spec spec{256, 32, 0, 31, 63, true};
  static void expand(const BlockQ5_K& b, Expanded& e) {
    expand_k4_scales(b, e);
    for (int i = 0; i < 256; ++i) e.q[i] = nibble_k(b.qs, i) | (b.qh[i % 32] >> (i / 32) & 1) << 4;
  }
  static void pack(const Chosen& c, BlockQ5_K& b) {
    b.d = c.d, b.dmin = c.dm;
    set_k4(b.scales, c.sc, c.m);
    for (int i = 0; i < 256; ++i)
      set_nibble_k(b.qs, i, c.u[i]), b.qh[i % 32] |= static_cast<std::uint8_t>((c.u[i] >> 4) << (i / 32));
  }
};
template <>
struct Format<WeightType::kQ6_K> {
  static constexpr Spec spec{256, 16, -32, 31, 127, false};
  static void expand(const BlockQ6_K& b, Expanded& e) {
    e.d = h2f(b.d);
    for (int j = 0; j < 16; ++j) e.sc[j] = b.scales[j];
    for (int i = 0; i < 256; ++i) e.q[i] = q6_code(b, i) - 32;
  }
  static void pack(const Chosen& c, BlockQ6_K& b) {
    b.d = c.d;
    for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<std::int8_t>(c.sc[j]);
    for (int i = 0; i < 256; ++i) set_q6_code(b, i, c.u[i]);
  }
};

template <WeightType T>
void decode_gguf(const unsigned char* row, int n, float* out) {
  using F = Format<T>;
  using B = typename BlockOf<T>::type;
  const B* blocks = reinterpret_cast<const B*>(row);
  for (int b = 0; b < n / F::spec.block; ++b, out += F::spec.block) {
    Expanded e;
    F::expand(blocks[b], e);
    for (int i = 0; i < F::spec.block; ++i) {
      const int j = i / F::spec.sub;
      const float v = (e.d * float(e.sc[j])) * float(e.q[i]);
      out[i] = F::spec.min ? v + e.off[j] : v;
    }
  }
}

template <WeightType T>
void unpack_gguf(const unsigned char* row, int n, std::int16_t* q, float* scale, float* offset) {
  using F = Format<T>;
  using B = typename BlockOf<T>::type;
  const B* blocks = reinterpret_cast<const B*>(row);
  constexpr int kBlock = F::spec.block;
  for (int b = 0; b < n / kBlock; ++b) {
    Expanded e;
    F::expand(blocks[b], e);
    for (int i = 0; i < kBlock; ++i) q[b * kBlock + i] = static_cast<std::int16_t>(e.q[i] * e.sc[i / F::spec.sub]);
    for (int k = 0; k < kBlock / kQuantBlock; ++k) scale[b * (kBlock / kQuantBlock) + k] = e.d;
    for (int k = 0; k < kBlock / kOffsetRun; ++k)
      offset[b * (kBlock / kOffsetRun) + k] = F::spec.min ? e.off[k * kOffsetRun / F::spec.sub] : 0.0f;
  }
}

float ceil_code(float v, int top) { return std::fmin(float(top), std::ceil(v)); }

// Our encoder (not ggml's search): each sub-block's step and offset cover its range, rounded so that
// no value lies outside the codes (the scale codes rounded up, the f16 halves away from zero), and
// each value's code the nearest. Error per value: half its sub-block's step (d * sc), plus the f16
// rounding of Q4_1's / Q5_1's m; the bounds are derived in weight_types_test.cpp.
template <WeightType T>
std::string encode_gguf(const float* x, int n, unsigned char* out, const char* name) {
  using F = Format<T>;
  using B = typename BlockOf<T>::type;
  constexpr Spec s = F::spec;
  constexpr int kSubs = s.block / s.sub;
  for (int b = 0; b < n; b += s.block, out += sizeof(B)) {
    const float* v = x + b;
    Chosen c;
    float d = 0, off[kSubs] = {};
    int sc[kSubs];
    float lo[kSubs], hi[kSubs];
    for (int j = 0; j < kSubs; ++j) {
      lo[j] = hi[j] = v[j * s.sub];
      for (int i = j * s.sub; i < (j + 1) * s.sub; ++i) lo[j] = std::fmin(lo[j], v[i]), hi[j] = std::fmax(hi[j], v[i]);
    }
    bool ok = true;
    if (s.smax == 0) {  // Q5_0, Q4_1, Q5_1: one scale (and min)
      sc[0] = 1;
      if (s.min) {
        c.dm = float_to_half(lo[0]);
        off[0] = half_to_float(c.dm);
        ok = std::isfinite(off[0]) && block_scale(std::fmax(0.0f, hi[0] - off[0]) / s.qhi, &c.d, &d);
      } else {
        ok = block_scale(std::fmax(std::fabs(lo[0]), std::fabs(hi[0])) / s.qhi, &c.d, &d);
      }
    } else {
      float want[kSubs], top = 0;  // each sub-block's step
      if (s.min) {  // Q2_K, Q4_K, Q5_K: the mins first (ggml's are >= 0: a sub-block's offset <= 0)
        float deepest = 0, dmin = 0;
        for (int j = 0; j < kSubs; ++j) deepest = std::fmax(deepest, -lo[j]);
        ok = block_scale(deepest / s.smax, &c.dm, &dmin);
        for (int j = 0; j < kSubs; ++j) {
          c.m[j] = dmin > 0 && lo[j] < 0 ? int(ceil_code(-lo[j] / dmin, s.smax)) : 0;
          off[j] = -(dmin * float(c.m[j]));
          want[j] = std::fmax(0.0f, hi[j] - off[j]) / s.qhi;
        }
      } else {  // Q3_K, Q6_K: symmetric
        for (int j = 0; j < kSubs; ++j) want[j] = std::fmax(std::fabs(lo[j]), std::fabs(hi[j])) / s.qhi;
      }
      for (int j = 0; j < kSubs; ++j) top = std::fmax(top, want[j]);
      ok = ok && block_scale(top / s.smax, &c.d, &d);
      for (int j = 0; j < kSubs; ++j) c.sc[j] = sc[j] = d > 0 ? int(ceil_code(want[j] / d, s.smax)) : 0;
    }
    if (!ok) return scale_error(name, x, n);
    for (int i = 0; i < s.block; ++i) {
      const int j = i / s.sub;
      const float step = d * float(sc[j]);
      float q = step > 0 ? std::nearbyint((v[i] - off[j]) / step) : 0.0f;
      q = std::fmax(float(s.qlo), std::fmin(float(s.qhi), q));
      c.u[i] = int(q) - (s.min ? 0 : s.qlo);
    }
    B block;
    std::memset(&block, 0, sizeof block);
    F::pack(c, block);
    std::memcpy(out, &block, sizeof block);
  }
  return "";
}

std::string encode_q4_k(const float* x, int n, unsigned char* out) { return encode_gguf<WeightType::kQ4_K>(x, n, out, "q4_k"); }
std::string encode_q6_k(const float* x, int n, unsigned char* out) { return encode_gguf<WeightType::kQ6_K>(x, n, out, "q6_k"); }
std::string encode_q5_0(const float* x, int n, unsigned char* out) { return encode_gguf<WeightType::kQ5_0>(x, n, out, "q5_0"); }
std::string encode_q4_1(const float* x, int n, unsigned char* out) { return encode_gguf<WeightType::kQ4_1>(x, n, out, "q4_1"); }
std::string encode_q5_1(const float* x, int n, unsigned char* out) { return encode_gguf<WeightType::kQ5_1>(x, n, out, "q5_1"); }
std::string encode_q5_k(const float* x, int n, unsigned char* out) { return encode_gguf<WeightType::kQ5_K>(x, n, out, "q5_k"); }
std::string encode_q3_k(const float* x, int n, unsigned char* out) { return encode_gguf<WeightType::kQ3_K>(x, n, out, "q3_k"); }
std::string encode_q2_k(const float* x, int n, unsigned char* out) { return encode_gguf<WeightType::kQ2_K>(x, n, out, "q2_k"); }

// --- The table: one row per type, in WeightType's order -----------------------------------------

constexpr WeightTypeInfo kWeightTypes[] = {
    {WeightType::kF32, "f32", "F32", 1, 4, encode_f32, decode_f32, nullptr},
    {WeightType::kF16, "f16", "F16", 1, 2, encode_f16, decode_f16, nullptr},
    {WeightType::kBF16, "bf16", "BF16", 1, 2, encode_bf16, decode_bf16, nullptr},
    {WeightType::kQ8_0, "q8", "Q8_0", kQuantBlock, sizeof(BlockQ8_0), encode_q8_0, dequantize_q8, unpack_q8_0},
    {WeightType::kQ4_0, "q4", "Q4_0", kQuantBlock, sizeof(BlockQ4_0), encode_q4_0, dequantize_q4, unpack_q4_0},
    {WeightType::kQ4_K, "q4_k", "Q4_K", kSuperBlock, sizeof(BlockQ4_K), encode_q4_k, decode_gguf<WeightType::kQ4_K>,
     unpack_gguf<WeightType::kQ4_K>},
    {WeightType::kQ6_K, "q6_k", "Q6_K", kSuperBlock, sizeof(BlockQ6_K), encode_q6_k, decode_gguf<WeightType::kQ6_K>,
     unpack_gguf<WeightType::kQ6_K>},
    {WeightType::kQ5_0, "q5_0", "Q5_0", kQuantBlock, sizeof(BlockQ5_0), encode_q5_0, decode_gguf<WeightType::kQ5_0>,
     unpack_gguf<WeightType::kQ5_0>},
    {WeightType::kQ4_1, "q4_1", "Q4_1", kQuantBlock, sizeof(BlockQ4_1), encode_q4_1, decode_gguf<WeightType::kQ4_1>,
     unpack_gguf<WeightType::kQ4_1>},
    {WeightType::kQ5_1, "q5_1", "Q5_1", kQuantBlock, sizeof(BlockQ5_1), encode_q5_1, decode_gguf<WeightType::kQ5_1>,
     unpack_gguf<WeightType::kQ5_1>},
    {WeightType::kQ5_K, "q5_k", "Q5_K", kSuperBlock, sizeof(BlockQ5_K), encode_q5_k, decode_gguf<WeightType::kQ5_K>,
     unpack_gguf<WeightType::kQ5_K>},
    {WeightType::kQ3_K, "q3_k", "Q3_K", kSuperBlock, sizeof(BlockQ3_K), encode_q3_k, decode_gguf<WeightType::kQ3_K>,
     unpack_gguf<WeightType::kQ3_K>},
    {WeightType::kQ2_K, "q2_k", "Q2_K", kSuperBlock, sizeof(BlockQ2_K), encode_q2_k, decode_gguf<WeightType::kQ2_K>,
     unpack_gguf<WeightType::kQ2_K>},
};
static_assert(sizeof kWeightTypes / sizeof kWeightTypes[0] == kWeightTypeCount, "one row per WeightType");

constexpr bool rows_in_order() {
  for (int i = 0; i < kWeightTypeCount; ++i)
    if (static_cast<int>(kWeightTypes[i].type) != i) return false;
  return true;
}
static_assert(rows_in_order(), "kWeightTypes' rows follow WeightType's order");

}  // namespace

const WeightTypeInfo& weight_type_info(WeightType t) { return kWeightTypes[static_cast<int>(t)]; }

}  // namespace attn
