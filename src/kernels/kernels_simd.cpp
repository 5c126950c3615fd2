// SIMD twins of kernels_scalar.cpp, written once against simd4.h (WASM SIMD128 or SSE2).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "tensors/half.h"
#include "kernels/kernels.h"
#include "kernels/kernels_quant.h"
#include "kernels/simd4.h"
#include "tensors/weight.h"

namespace attn {

#if ATTN_HAVE_SIMD4
namespace {
using namespace simd4;

constexpr int kPanelCols = 8;    // two f32x4 columns per micro-tile
constexpr int kDepthBlock = 512; // rows of B packed at once: 512 x 8 floats = 16 KiB, stays in L1; K = 384 in one pass (256: 5-10% slower on the encoder bench)
constexpr int kPackMinRows = 16; // with at most this many rows of A, B is read in place

// C[MR x 8] (+)= A[MR x kc] * P[kc x 8], P a panel of B with rows ldp apart (packed: 8). MR
// accumulators x 2 vectors live in registers for the whole depth loop; that reuse is where the
// speed comes from.
template <int MR>
inline void tile_8(int kc, const float* A, int lda, const float* P, int ldp, float* C, int ldc,
                   bool accumulate) {
  f32x4 c0[MR], c1[MR];
  for (int r = 0; r < MR; ++r) {
    c0[r] = accumulate ? load(C + r * ldc) : splat(0.0f);
    c1[r] = accumulate ? load(C + r * ldc + 4) : splat(0.0f);
  }
  for (int k = 0; k < kc; ++k) {
    const f32x4 b0 = load(P + k * ldp);
    const f32x4 b1 = load(P + k * ldp + 4);
    for (int r = 0; r < MR; ++r) {
      const f32x4 a = load_splat(A + r * lda + k);
      c0[r] = madd(a, b0, c0[r]);
      c1[r] = madd(a, b1, c1[r]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    store(C + r * ldc, c0[r]);
    store(C + r * ldc + 4, c1[r]);
  }
}

// The columns left after the 8-wide panels (N % 8), straight from B: at most 7 of them.
void columns_tail(int M, int n0, int N, int kc, const float* A, int lda, const float* B, int ldb,
                  float* C, int ldc, bool accumulate) {
  for (int i = 0; i < M; ++i)
    for (int j = n0; j < N; ++j) {
      float acc = accumulate ? C[static_cast<long>(i) * ldc + j] : 0.0f;
      for (int k = 0; k < kc; ++k) acc += A[static_cast<long>(i) * lda + k] * B[static_cast<long>(k) * ldb + j];
      C[static_cast<long>(i) * ldc + j] = acc;
    }
}

// A few rows of A (a decoding step: one row per sequence or beam), C = A B: stream B row by row,
// four rows at a time, adding into each row of C. Every row of B is read once, front to back, so
// the hardware prefetcher keeps up; walking 8-column panels down B instead jumps a page per row
// and waits on memory. The MR rows of C (N floats each) stay in L1. Returns the first column not
// done (the scalar tail).
template <int MR>
int rows_times_b(int N, int kc, const float* A, int lda, const float* B, int ldb, float* C, int ldc, bool accumulate) {
  const int n4 = N / 4 * 4;
  if (!accumulate)
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < n4; j += 4) store(C + r * ldc + j, splat(0.0f));
  int k = 0;
  for (; k + 4 <= kc; k += 4) {
    const float* b0 = B + static_cast<long>(k) * ldb;
    const float *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
    f32x4 a[MR][4];
    for (int r = 0; r < MR; ++r)
      for (int t = 0; t < 4; ++t) a[r][t] = splat(A[r * lda + k + t]);
    for (int j = 0; j < n4; j += 4) {
      const f32x4 v0 = load(b0 + j), v1 = load(b1 + j), v2 = load(b2 + j), v3 = load(b3 + j);
      for (int r = 0; r < MR; ++r) {
        float* c = C + r * ldc + j;
        f32x4 acc = madd(a[r][0], v0, load(c));
        acc = madd(a[r][1], v1, acc);
        acc = madd(a[r][2], v2, acc);
        store(c, madd(a[r][3], v3, acc));
      }
    }
  }
  for (; k < kc; ++k) {
    const float* b = B + static_cast<long>(k) * ldb;
    for (int r = 0; r < MR; ++r) {
      const f32x4 ak = splat(A[r * lda + k]);
      float* c = C + r * ldc;
      for (int j = 0; j < n4; j += 4) store(c + j, madd(ak, load(b + j), load(c + j)));
    }
  }
  return n4;
}

// Up to kStreamMaxRows rows: rows_times_b on blocks of at most four rows.
constexpr int kStreamMaxRows = 8;
void stream_rows(int M, int N, int kc, const float* A, int lda, const float* B, int ldb, float* C, int ldc, bool acc) {
  for (int i = 0; i < M;) {
    const float* a = A + static_cast<long>(i) * lda;
    float* c = C + static_cast<long>(i) * ldc;
    const int rows = M - i >= 4 ? 4 : M - i;
    int done = 0;
    switch (rows) {
      case 4: done = rows_times_b<4>(N, kc, a, lda, B, ldb, c, ldc, acc); break;
      case 3: done = rows_times_b<3>(N, kc, a, lda, B, ldb, c, ldc, acc); break;
      case 2: done = rows_times_b<2>(N, kc, a, lda, B, ldb, c, ldc, acc); break;
      default: done = rows_times_b<1>(N, kc, a, lda, B, ldb, c, ldc, acc); break;
    }
    if (done < N) columns_tail(rows, done, N, kc, a, lda, B, ldb, c, ldc, acc);
    i += rows;
  }
}

void gemm_simd(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
               int ldc, bool accumulate) {
  if (K == 0) {
    if (!accumulate)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) C[static_cast<long>(i) * ldc + j] = 0.0f;
    return;
  }
  alignas(16) float panel[kDepthBlock * kPanelCols];
  const int n_panels = N / kPanelCols * kPanelCols;
  for (int k0 = 0; k0 < K; k0 += kDepthBlock) {
    const int kc = K - k0 < kDepthBlock ? K - k0 : kDepthBlock;
    const bool acc = accumulate || k0 > 0;
    const float* Ak = A + k0;
    const float* Bk = B + static_cast<long>(k0) * ldb;
    if (M <= kStreamMaxRows) {
      stream_rows(M, N, kc, Ak, lda, Bk, ldb, C, ldc, acc);
      continue;
    }
    for (int j = 0; j < n_panels; j += kPanelCols) {
      // Pack B[k0:k0+kc, j:j+8] contiguously: one stream for the micro-kernel, reused by all row
      // tiles. With few rows there is little reuse, and the copy would cost more than it saves.
      const float* P = Bk + j;
      int ldp = ldb;
      if (M > kPackMinRows) {
        for (int k = 0; k < kc; ++k) {
          const float* b = Bk + static_cast<long>(k) * ldb + j;
          store(panel + k * kPanelCols, load(b));
          store(panel + k * kPanelCols + 4, load(b + 4));
        }
        P = panel;
        ldp = kPanelCols;
      }
      int i = 0;
      for (; i + 4 <= M; i += 4)
        tile_8<4>(kc, Ak + static_cast<long>(i) * lda, lda, P, ldp, C + static_cast<long>(i) * ldc + j, ldc, acc);
      switch (M - i) {
        case 3: tile_8<3>(kc, Ak + static_cast<long>(i) * lda, lda, P, ldp, C + static_cast<long>(i) * ldc + j, ldc, acc); break;
        case 2: tile_8<2>(kc, Ak + static_cast<long>(i) * lda, lda, P, ldp, C + static_cast<long>(i) * ldc + j, ldc, acc); break;
        case 1: tile_8<1>(kc, Ak + static_cast<long>(i) * lda, lda, P, ldp, C + static_cast<long>(i) * ldc + j, ldc, acc); break;
        default: break;
      }
    }
    if (n_panels < N) columns_tail(M, n_panels, N, kc, Ak, lda, Bk, ldb, C, ldc, acc);
  }
}

// One or two rows of A (a decoding step) times W in panels: each panel is read once, front to
// back, the whole matrix one stream, with its kPanel sums per row in registers over the depth.
// A panel only partly ours (a slice's ends) runs whole, its sums passing through `part`.
template <int MR>
void rows_times_panels(int N, int K, const float* A, int lda, const float* P, int first, float* C, int ldc,
                       bool accumulate) {
  for (int j0 = 0; j0 < N;) {
    const PanelRun pp = panel_run(P, first, K, j0, N - j0);
    const bool whole = pp.n == kPanel;
    alignas(16) float part[MR][kPanel];
    f32x4 acc[MR][4];
    for (int r = 0; r < MR; ++r) {
      float* c = C + static_cast<long>(r) * ldc + j0;
      if (accumulate && !whole) {
        for (float& v : part[r]) v = 0.0f;
        for (int j = 0; j < pp.n; ++j) part[r][pp.lane + j] = c[j];
      }
      for (int t = 0; t < 4; ++t)
        acc[r][t] = !accumulate ? splat(0.0f) : whole ? load(c + 4 * t) : load(part[r] + 4 * t);
    }
    const float* w = pp.panel;
    for (int k = 0; k < K; ++k, w += kPanel) {
      const f32x4 w0 = load(w), w1 = load(w + 4), w2 = load(w + 8), w3 = load(w + 12);
      for (int r = 0; r < MR; ++r) {
        const f32x4 a = load_splat(A + static_cast<long>(r) * lda + k);
        acc[r][0] = madd(a, w0, acc[r][0]);
        acc[r][1] = madd(a, w1, acc[r][1]);
        acc[r][2] = madd(a, w2, acc[r][2]);
        acc[r][3] = madd(a, w3, acc[r][3]);
      }
    }
    for (int r = 0; r < MR; ++r) {
      float* c = C + static_cast<long>(r) * ldc + j0;
      for (int t = 0; t < 4; ++t) store(whole ? c + 4 * t : part[r] + 4 * t, acc[r][t]);
      if (!whole)
        for (int j = 0; j < pp.n; ++j) c[j] = part[r][pp.lane + j];
    }
    j0 += pp.n;
  }
}

// Lanes [lo, hi) of a panel's depth block, for rows of A: the lanes no 8-wide tile covers.
void panel_lanes(int M, int kc, const float* A, int lda, const float* panel, int lo, int hi, float* C, int ldc,
                 bool accumulate) {
  for (int i = 0; i < M; ++i)
    for (int l = lo; l < hi; ++l) {
      float acc = accumulate ? C[static_cast<long>(i) * ldc + l - lo] : 0.0f;
      for (int k = 0; k < kc; ++k) acc += A[static_cast<long>(i) * lda + k] * panel[static_cast<std::size_t>(k) * kPanel + l];
      C[static_cast<long>(i) * ldc + l - lo] = acc;
    }
}

// Rows of A above which the register-tiled path wins: it reuses each weight across four rows.
constexpr int kPanelStreamMaxRows = 2;

void gemm_panels_simd(int M, int N, int K, const float* A, int lda, const float* P, int first, float* C, int ldc,
                      bool accumulate) {
  if (K == 0 || M <= kPanelStreamMaxRows) {
    for (int i = 0; i + 2 <= M; i += 2)
      rows_times_panels<2>(N, K, A + static_cast<long>(i) * lda, lda, P, first, C + static_cast<long>(i) * ldc, ldc, accumulate);
    if (M % 2) rows_times_panels<1>(N, K, A + static_cast<long>(M - 1) * lda, lda, P, first, C + static_cast<long>(M - 1) * ldc, ldc, accumulate);
    return;
  }
  // Many rows: tile_8 on each half of a panel, in place (a panel is already the packed B it wants).
  for (int k0 = 0; k0 < K; k0 += kDepthBlock) {
    const int kc = K - k0 < kDepthBlock ? K - k0 : kDepthBlock;
    const bool acc = accumulate || k0 > 0;
    const float* Ak = A + k0;
    for (int j0 = 0; j0 < N;) {
      const PanelRun pp = panel_run(P, first, K, j0, N - j0);
      const float* block = pp.panel + static_cast<std::size_t>(k0) * kPanel;
      int lane = pp.lane;
      while (lane < pp.lane + pp.n) {
        float* c = C + j0 + (lane - pp.lane);
        if (lane % kPanelCols == 0 && lane + kPanelCols <= pp.lane + pp.n) {
          int i = 0;
          for (; i + 4 <= M; i += 4)
            tile_8<4>(kc, Ak + static_cast<long>(i) * lda, lda, block + lane, kPanel, c + static_cast<long>(i) * ldc, ldc, acc);
          const float* a = Ak + static_cast<long>(i) * lda;
          float* ci = c + static_cast<long>(i) * ldc;
          switch (M - i) {
            case 3: tile_8<3>(kc, a, lda, block + lane, kPanel, ci, ldc, acc); break;
            case 2: tile_8<2>(kc, a, lda, block + lane, kPanel, ci, ldc, acc); break;
            case 1: tile_8<1>(kc, a, lda, block + lane, kPanel, ci, ldc, acc); break;
            default: break;
          }
          lane += kPanelCols;
        } else {  // up to the next 8-lane boundary, or the part's end
          const int hi = std::min(pp.lane + pp.n, (lane / kPanelCols + 1) * kPanelCols);
          panel_lanes(M, kc, Ak, lda, block, lane, hi, c, ldc, acc);
          lane = hi;
        }
      }
      j0 += pp.n;
    }
  }
}

// Four dot products at once share each load of A's row; the k tail runs scalar.
// Rows j0..j0+count-1 of B as floats: B itself, or (halves) widened once into `scratch`, so that a
// block of B costs one conversion however many rows of A it meets.
inline const float* rows_of(const float* B, int j0, int, int, int ldb, std::vector<float>&, int& ld) {
  ld = ldb;
  return B + static_cast<long>(j0) * ldb;
}
inline const float* rows_of(const std::uint16_t* B, int j0, int count, int K, int ldb, std::vector<float>& scratch, int& ld) {
  const int k4 = K / 4 * 4;
  ld = k4 + 4;
  if (scratch.size() < static_cast<std::size_t>(count) * ld) scratch.resize(static_cast<std::size_t>(count) * ld);
  for (int r = 0; r < count; ++r) {
    const std::uint16_t* b = B + static_cast<long>(j0 + r) * ldb;
    float* out = scratch.data() + static_cast<long>(r) * ld;
    int k = 0;
    for (; k < k4; k += 4) store(out + k, load_half(b + k));
    for (; k < K; ++k) out[k] = half_to_float(b[k]);
  }
  return scratch.data();
}

inline const float* rows_of(const Bf16* B, int j0, int count, int K, int ldb, std::vector<float>& scratch, int& ld) {
  const int k4 = K / 4 * 4;
  ld = k4 + 4;
  if (scratch.size() < static_cast<std::size_t>(count) * ld) scratch.resize(static_cast<std::size_t>(count) * ld);
  for (int r = 0; r < count; ++r) {
    const std::uint16_t* b = &B[static_cast<long>(j0 + r) * ldb].bits;
    float* out = scratch.data() + static_cast<long>(r) * ld;
    int k = 0;
    // A bfloat16 is the top half of a float32: shifting its bits up 16 is the whole widening.
    for (; k < k4; k += 4) store(out + k, i32_shl<16>(load_u16x4(b + k)));
    for (; k < K; ++k) out[k] = bf16_to_float(b[k]);
  }
  return scratch.data();
}

// Four values of a row of B at k as floats: floats read as they are, halves and bfloat16 widened
// in registers (exactly: the same values rows_of() writes).
inline f32x4 load_b(const float* p) { return load(p); }
inline f32x4 load_b(const std::uint16_t* p) { return load_half(p); }
inline f32x4 load_b(const Bf16* p) { return i32_shl<16>(load_u16x4(&p->bits)); }
// Eight values at once (what the main loop reads): 16-bit ones from one load, unpacked.
inline void load_b8(const float* p, f32x4& lo, f32x4& hi) { lo = load(p), hi = load(p + 4); }
inline void load_b8(const std::uint16_t* p, f32x4& lo, f32x4& hi) {
  load_u16x8_high(p, lo, hi);
  lo = half_high_to_float(lo), hi = half_high_to_float(hi);
}
inline void load_b8(const Bf16* p, f32x4& lo, f32x4& hi) { load_u16x8_high(&p->bits, lo, hi); }
inline float value_b(const float* p) { return *p; }
inline float value_b(const std::uint16_t* p) { return half_to_float(*p); }
inline float value_b(const Bf16* p) { return bf16_to_float(p->bits); }

// Where the bytes touched ahead end up, so that the compiler keeps those loads.
std::atomic<unsigned> touch_sink{0};

// C[i][0..3] = A's row i dotted with rows b0..b3 of B, for every row i of A. `ahead`: the next
// four rows' bytes (4 x K values) to touch while these are read, one byte per cache line, or null.
// The hardware prefetcher follows each of the four rows but stops at the jump to the next four;
// the touches keep memory busy across it.
template <typename TB>
void dot_four_rows(int M, int K, const float* A, int lda, const TB* b0, const TB* b1, const TB* b2, const TB* b3,
                   float* C, int ldc, const unsigned char* ahead = nullptr) {
  const int k4 = K / 4 * 4;
  unsigned touched = 0;
  for (int i = 0; i < M; ++i) {
    const float* a = A + static_cast<long>(i) * lda;
    // Two accumulators per row: eight independent mul+add chains hide their latency (with
    // four, a long row such as a vocabulary's embedding waits on them, not on memory).
    f32x4 s0 = splat(0.0f), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
    int k = 0;
    for (; k + 8 <= k4; k += 8) {
      if (ahead && i == 0) {  // 32 values of the next four rows per step: 128 (f32) or 64 bytes
        const unsigned char* t = ahead + std::size_t(k) * 4 * sizeof(TB);
        touched += t[0];
        if (sizeof(TB) == 4) touched += t[64];
      }
      const f32x4 av = load(a + k), aw = load(a + k + 4);
      f32x4 lo, hi;
      load_b8(b0 + k, lo, hi);
      s0 = madd(av, lo, s0), t0 = madd(aw, hi, t0);
      load_b8(b1 + k, lo, hi);
      s1 = madd(av, lo, s1), t1 = madd(aw, hi, t1);
      load_b8(b2 + k, lo, hi);
      s2 = madd(av, lo, s2), t2 = madd(aw, hi, t2);
      load_b8(b3 + k, lo, hi);
      s3 = madd(av, lo, s3), t3 = madd(aw, hi, t3);
    }
    for (; k < k4; k += 4) {
      const f32x4 av = load(a + k);
      s0 = madd(av, load_b(b0 + k), s0);
      s1 = madd(av, load_b(b1 + k), s1);
      s2 = madd(av, load_b(b2 + k), s2);
      s3 = madd(av, load_b(b3 + k), s3);
    }
    float r0 = hsum(add(s0, t0)), r1 = hsum(add(s1, t1)), r2 = hsum(add(s2, t2)), r3 = hsum(add(s3, t3));
    for (int k = k4; k < K; ++k) {
      r0 += a[k] * value_b(b0 + k);
      r1 += a[k] * value_b(b1 + k);
      r2 += a[k] * value_b(b2 + k);
      r3 += a[k] * value_b(b3 + k);
    }
    float* c = C + static_cast<long>(i) * ldc;
    c[0] = r0, c[1] = r1, c[2] = r2, c[3] = r3;
  }
  if (ahead) touch_sink.store(touched, std::memory_order_relaxed);
}

// C[i][0] = A's row i dotted with row b of B.
template <typename TB>
void dot_one_row(int M, int K, const float* A, int lda, const TB* b, float* C, int ldc) {
  const int k4 = K / 4 * 4;
  for (int i = 0; i < M; ++i) {
    const float* a = A + static_cast<long>(i) * lda;
    f32x4 s = splat(0.0f);
    for (int k = 0; k < k4; k += 4) s = madd(load(a + k), load_b(b + k), s);
    float r = hsum(s);
    for (int k = k4; k < K; ++k) r += a[k] * value_b(b + k);
    C[static_cast<long>(i) * ldc] = r;
  }
}

// With this many rows of A or fewer (a decoding step), 16-bit rows of B are widened in registers
// as they are read, each once; with more, a block of four rows is widened once into scratch and
// read from there by every row of A. The sums are the same either way.
constexpr int kWidenInRegistersMaxRows = 2;

// Block of four rows of B at a time (outer), every row of A against it (inner): B streams through
// once, however many rows A has (a language-model head's 14336 x 160 table once per call, not once
// per token).
template <typename TB>
void gemm_bt_simd_t(int M, int N, int K, const float* A, int lda, const TB* B, int ldb, float* C, int ldc) {
  thread_local std::vector<float> scratch;  // (16-bit B, many rows of A) a block of B widened
  const bool in_place = M <= kWidenInRegistersMaxRows;
  int j = 0;
  for (; j + 4 <= N; j += 4) {
    if (in_place) {
      const TB* b0 = B + static_cast<long>(j) * ldb;
      // (the next four rows, when they exist and lie right after these: rows without padding)
      const bool touch = ldb == K && j + 8 <= N;
      dot_four_rows(M, K, A, lda, b0, b0 + ldb, b0 + 2 * ldb, b0 + 3 * ldb, C + j, ldc,
                    touch ? reinterpret_cast<const unsigned char*>(b0 + 4 * ldb) : nullptr);
    } else {
      int ld;
      const float* b0 = rows_of(B, j, 4, K, ldb, scratch, ld);
      dot_four_rows(M, K, A, lda, b0, b0 + ld, b0 + 2 * ld, b0 + 3 * ld, C + j, ldc);
    }
  }
  for (; j < N; ++j) {
    if (in_place) {
      dot_one_row(M, K, A, lda, B + static_cast<long>(j) * ldb, C + j, ldc);
    } else {
      int ld;
      dot_one_row(M, K, A, lda, rows_of(B, j, 1, K, ldb, scratch, ld), C + j, ldc);
    }
  }
}

void gemm_bt_simd(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
  gemm_bt_simd_t(M, N, K, A, lda, B, ldb, C, ldc);
}

void gemm_bt_half_simd(int M, int N, int K, const float* A, int lda, const std::uint16_t* B, int ldb, float* C,
                       int ldc) {
  gemm_bt_simd_t(M, N, K, A, lda, B, ldb, C, ldc);
}

void gemm_bt_bf16_simd(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb, float* C, int ldc) {
  gemm_bt_simd_t(M, N, K, A, lda, B, ldb, C, ldc);
}

float exp_shift_sum_simd(float* x, int n, float shift) {
  const f32x4 vshift = splat(shift);
  f32x4 vsum = splat(0.0f);
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const f32x4 e = exp_nonpositive(sub(load(x + j), vshift));
    store(x + j, e);
    vsum = add(vsum, e);
  }
  float sum = hsum(vsum);
  // The tail goes through the same vector code so every entry gets identical rounding.
  if (j < n) {
    alignas(16) float tail[4] = {-87.5f, -87.5f, -87.5f, -87.5f};  // exp() of these is exactly 0
    for (int t = 0; j + t < n; ++t) tail[t] = x[j + t] - shift;
    store(tail, exp_nonpositive(load(tail)));
    for (int t = 0; j + t < n; ++t) {
      x[j + t] = tail[t];
      sum += tail[t];
    }
  }
  return sum;
}

void softmax_row_simd(float* x, int n) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  int j = 0;
  f32x4 vmax = splat(neg_inf);
  for (; j + 4 <= n; j += 4) vmax = max(vmax, load(x + j));
  float mx = hmax(vmax);
  for (; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  if (mx == neg_inf) {
    for (j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  const float sum = exp_shift_sum_simd(x, n, mx);
  const f32x4 inv = splat(1.0f / sum);
  for (j = 0; j + 4 <= n; j += 4) store(x + j, mul(load(x + j), inv));
  const float inv_s = 1.0f / sum;
  for (; j < n; ++j) x[j] *= inv_s;
}

// x[j] <- f(x[j]) four at a time; the last n % 4 through a zero-padded vector.
template <typename F>
void map_in_place(float* x, int n, F f) {
  int j = 0;
  for (; j + 4 <= n; j += 4) store(x + j, f(load(x + j)));
  if (j < n) {
    alignas(16) float tail[4] = {0, 0, 0, 0};
    for (int i = j; i < n; ++i) tail[i - j] = x[i];
    store(tail, f(load(tail)));
    for (int i = j; i < n; ++i) x[i] = tail[i - j];
  }
}

// GELU(x) = 0.5 x + 0.5 |x| erf(|x| / sqrt 2): erf is odd, so only z >= 0 is needed, where
// erf(z) = 1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^(-z^2), t = 1 / (1 + p z).
void gelu_erf_simd(float* x, int n) {
  const auto gelu4 = [](f32x4 v) {
    const f32x4 half = splat(0.5f);
    const f32x4 z = mul(abs(v), splat(0.70710678118654752f));
    const f32x4 t = div(splat(1.0f), madd(z, splat(0.3275911f), splat(1.0f)));
    f32x4 p = splat(1.061405429f);
    p = madd(p, t, splat(-1.453152027f));
    p = madd(p, t, splat(1.421413741f));
    p = madd(p, t, splat(-0.284496736f));
    p = madd(p, t, splat(0.254829592f));
    const f32x4 erf = sub(splat(1.0f), mul(mul(p, t), exp_nonpositive(sub(splat(0.0f), mul(z, z)))));
    return madd(mul(half, abs(v)), erf, mul(half, v));
  };
  map_in_place(x, n, gelu4);
}

// SiLU(x) = x sigmoid(x) with t = e^-|x| <= 1 (no overflow for either sign): sigmoid is 1 / (1 + t)
// for x >= 0 and t / (1 + t) below. A NaN fails both comparisons and stays NaN (x times 0).
void silu_simd(float* x, int n) {
  const auto silu4 = [](f32x4 v) {
    const f32x4 zero = splat(0.0f), one = splat(1.0f);
    const f32x4 t = exp_nonpositive(sub(zero, abs(v)));
    const f32x4 num = add(keep_if_ge(one, v, zero), keep_if_ge(t, zero, v));
    return mul(v, div(num, add(one, t)));
  };
  map_in_place(x, n, silu4);
}

}  // namespace

bool have_simd_kernels() { return true; }
const Kernels& simd_kernels() {
  static const Kernels k{"simd", gemm_simd, gemm_panels_simd, gemm_bt_simd, gemm_bt_half_simd, gemm_bt_bf16_simd, simd_quant_kernels(),
                         exp_shift_sum_simd, softmax_row_simd, gelu_erf_simd, silu_simd};
  return k;
}
// Weak: the relaxed-SIMD build links kernels_quant_relaxed.cpp, whose default_kernels() takes its place.
__attribute__((weak)) const Kernels& default_kernels() { return simd_kernels(); }

#else  // no 4-lane vectors on this target: the scalar build

bool have_simd_kernels() { return false; }
const Kernels& simd_kernels() { return scalar_kernels(); }
const Kernels& default_kernels() { return have_eigen_kernels() ? eigen_kernels() : scalar_kernels(); }

#endif

}  // namespace attn
