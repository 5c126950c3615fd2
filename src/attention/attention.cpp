#include "attention/attention.h"

#include "kernels/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attn {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Applies the additive mask M of one (batch, head) to a block of its scaled scores: rows
// [i0, i0+rows) and columns [j0, j0+cols), stored with leading dimension ld.
void apply_masks(const AttentionShape& s, const Masks& m, int b, int h, int i0, int rows, int j0,
                 int cols, float* scores, int ld) {
  const long plane = static_cast<long>(s.seq_q) * s.seq_k;
  const long mask_offset = m.attn_per_head ? (static_cast<long>(b) * s.heads + h) * plane : 0;
  for (int r = 0; r < rows; ++r) {
    const int i = i0 + r;
    float* row = scores + static_cast<long>(r) * ld;
    const long mrow = mask_offset + static_cast<long>(i) * s.seq_k;
    for (int c = 0; c < cols; ++c) {
      const int j = j0 + c;
      if (m.attn_kind == MaskKind::Float) row[c] += static_cast<const float*>(m.attn)[mrow + j];
      if (hides(m, s.seq_q, s.seq_k, s.heads, b, h, i, j)) row[c] = kNegInf;
    }
  }
}

bool any_mask(const Masks& m) { return m.causal || m.window > 0 || m.key_padding || m.attn_kind != MaskKind::None; }

// K^T of one head (d_k x seq_k), so that Q K^T runs through the GEMM kernel.
void transpose_keys(const AttentionShape& s, const float* kb, long row_stride, float* kt) {
  for (int j = 0; j < s.seq_k; ++j)
    for (int c = 0; c < s.d_k; ++c) kt[static_cast<long>(c) * s.seq_k + j] = kb[j * row_stride + c];
}

// Block sizes of the tiled path: a 32 x 128 score block (16 KiB) and a 32 x d_v accumulator
// stay in L1 while keys and values stream past.
constexpr int kQueryBlock = 32;
constexpr int kKeyBlock = 128;

// Up to this many queries (a decoding step, a few beams) the scores are dot products with K's rows
// as the cache holds them: transposing K for them copied every cached key of every head on every
// step (at SmolLM2's shape, 9 heads x 30 layers x the context x 64 strided copies per token: 9 % of
// a q8 step at 64-128 positions, and growing with the context).
constexpr int kFewQueries = 8;

// One block of queries [i0, i0 + kQueryBlock) of one head without materializing the score
// matrix: FlashAttention's online softmax. For each query row we keep the running max m, the
// running sum l and the unnormalized output O; a new block of scores with max m' rescales them by
// exp(m - m'). Causal blocks above the diagonal are never computed. Memory: one block of scores
// plus O, whatever seq_k is. Blocks are independent: threads take them one at a time.
// Keys: K^T (d_k x seq_k, `keys_transposed`) or K's rows as stored (row stride k_stride).
void attend_query_block(const Kernels& kn, const AttentionShape& s, const Masks& m, int b, int h, int i0,
                        float scale, const float* q, long q_stride, const float* keys, bool keys_transposed,
                        long k_stride, const float* v, long v_stride, float* z, long z_stride, HeadScratch& ws) {
  float* S = ws.scores.data();
  float* O = ws.out_block.data();
  float* row_max = ws.row_stats.data();
  float* row_sum = row_max + kQueryBlock;
  const bool masked = any_mask(m);
  const int br = s.seq_q - i0 < kQueryBlock ? s.seq_q - i0 : kQueryBlock;
  for (int r = 0; r < br; ++r) row_max[r] = kNegInf, row_sum[r] = 0.0f;
  for (long i = 0; i < static_cast<long>(br) * s.d_v; ++i) O[i] = 0.0f;
  // Causal: the block's last query sees keys up to i0 + br - 1 + offset; later ones are all masked.
  const long visible = static_cast<long>(i0) + br + m.causal_offset;
  const int j_end = m.causal && visible < s.seq_k ? static_cast<int>(visible < 0 ? 0 : visible) : s.seq_k;
  // Sliding window: keys before the block's first query's window are never computed either.
  const long first_seen = static_cast<long>(i0) + m.causal_offset - m.window + 1;
  const int j_begin = m.window > 0 && first_seen > 0 ? static_cast<int>(first_seen < j_end ? first_seen : j_end) : 0;
  for (int j0 = j_begin; j0 < j_end; j0 += kKeyBlock) {
    const int bc = j_end - j0 < kKeyBlock ? j_end - j0 : kKeyBlock;
    if (keys_transposed)
      kn.gemm(br, bc, s.d_k, q + i0 * q_stride, static_cast<int>(q_stride), keys + j0, s.seq_k, S, bc, false);
    else
      kn.gemm_bt(br, bc, s.d_k, q + i0 * q_stride, static_cast<int>(q_stride), keys + j0 * k_stride,
                 static_cast<int>(k_stride), S, bc);
    for (long i = 0; i < static_cast<long>(br) * bc; ++i) S[i] *= scale;
    if (masked) apply_masks(s, m, b, h, i0, br, j0, bc, S, bc);
    for (int r = 0; r < br; ++r) {
      float* row = S + static_cast<long>(r) * bc;
      float block_max = kNegInf;
      for (int c = 0; c < bc; ++c) block_max = row[c] > block_max ? row[c] : block_max;
      const float new_max = block_max > row_max[r] ? block_max : row_max[r];
      if (new_max == kNegInf) {  // nothing visible yet in this row
        for (int c = 0; c < bc; ++c) row[c] = 0.0f;
        continue;
      }
      const float correction = row_max[r] == kNegInf ? 0.0f : std::exp(row_max[r] - new_max);
      row_sum[r] = row_sum[r] * correction + kn.exp_shift_sum(row, bc, new_max);
      row_max[r] = new_max;
      if (correction != 1.0f)
        for (int c = 0; c < s.d_v; ++c) O[static_cast<long>(r) * s.d_v + c] *= correction;
    }
    kn.gemm(br, s.d_v, bc, S, bc, v + j0 * v_stride, static_cast<int>(v_stride), O, s.d_v, true);
  }
  for (int r = 0; r < br; ++r) {
    // l = 0 means every key was masked: a zero row, as in the materializing path.
    const float inv = row_sum[r] > 0.0f ? 1.0f / row_sum[r] : 0.0f;
    float* zr = z + (i0 + r) * z_stride;
    for (int c = 0; c < s.d_v; ++c) zr[c] = O[static_cast<long>(r) * s.d_v + c] * inv;
  }
}

void copy_plane(float* dst, const float* src, long n) { std::memcpy(dst, src, n * sizeof(float)); }

}  // namespace

std::string validate_masks(const AttentionShape& s, const Masks& m) {
  if (m.attn_kind != MaskKind::None && !m.attn) return "attn_mask kind given without data";
  if (m.causal_offset < 0) return "causal_offset must be >= 0";
  if (m.window < 0) return "window must be >= 0";
  if (m.attn_kind == MaskKind::Float) {
    const long n = static_cast<long>(s.seq_q) * s.seq_k * (m.attn_per_head ? static_cast<long>(s.batch) * s.heads : 1);
    const float* f = static_cast<const float*>(m.attn);
    for (long i = 0; i < n; ++i)
      if (std::isnan(f[i]) || f[i] == std::numeric_limits<float>::infinity())
        return "attn_mask contains " + std::string(std::isnan(f[i]) ? "NaN" : "+Infinity") +
               " at index " + std::to_string(i) + " (only finite values and -Infinity are allowed)";
  }
  return "";
}

std::string attention(const Kernels& kn, const AttentionShape& s, const Strided& q,
                      const Strided& k, const Strided& v, const StridedOut& z, const Masks& m,
                      float scale, float* weights, AttentionTrace* trace,
                      AttentionWorkspace& ws) {
  // Weights or a trace need every score: materialize. Otherwise the tiled path, linear in memory.
  const bool materialize = weights || trace;
  const bool few_queries = !materialize && s.seq_q <= kFewQueries;  // (K read as stored: no K^T)
  bool ok = true;
  const std::size_t kt = product_or_zero({std::size_t(s.d_k), std::size_t(s.seq_k)}, &ok);
  const std::size_t plane = materialize ? product_or_zero({std::size_t(s.seq_q), std::size_t(s.seq_k)}, &ok) : 0;
  const std::size_t all_planes =
      materialize ? product_or_zero({plane, std::size_t(s.batch), std::size_t(s.heads)}, &ok) : 0;
  if (!ok) return "attention is too large: batch*heads*seqQ*seqK exceeds the memory limit (request no weights or trace: the tiled path needs no score matrix)";
  const std::size_t score_floats = materialize ? plane : std::size_t(kQueryBlock) * kKeyBlock;
  // Heads are independent: each (batch, head) pair writes only its own slices of z, weights and
  // trace. Small problems stay on the calling thread: waking workers costs more than they save.
  const double work = double(s.batch) * s.heads * s.seq_q * s.seq_k * (s.d_k + s.d_v);
  const bool serial = work < kParallelMinWork || num_threads() == 1 || s.batch * s.heads == 1;
  // Allocate the scratch of every thread that will run up front: an allocation failure inside
  // the parallel loop could not be reported cleanly.
  const int threads = serial ? 1 : num_threads();
  if (static_cast<int>(ws.per_thread.size()) < threads) ws.per_thread.resize(threads);
  for (int t = 0; t < threads; ++t) {
    HeadScratch& hs = ws.per_thread[t];
    if (!hs.scores.resize(score_floats)) return out_of_memory("the score matrix", score_floats * threads);
    if ((serial || materialize) && !few_queries && !hs.k_t.resize(kt)) return out_of_memory("the transposed keys", kt * threads);
    if (!materialize && (!hs.out_block.resize(std::size_t(kQueryBlock) * s.d_v) || !hs.row_stats.resize(2 * kQueryBlock)))
      return out_of_memory("the output block", std::size_t(kQueryBlock) * s.d_v);
  }
  if (!serial && !materialize && !few_queries && !ws.keys_t.resize(kt * s.batch * s.heads))
    return out_of_memory("the transposed keys", kt * s.batch * s.heads);
  if (trace) {
    for (Buffer* t : {&trace->raw_scores, &trace->scaled_scores, &trace->masked_scores, &trace->weights})
      if (!t->resize(all_planes)) return out_of_memory("the attention trace", all_planes * 4);
  }

  const ChunkFn heads = [&](int p0, int p1, int worker) {
    HeadScratch& hs = ws.per_thread[worker];
    float* S = hs.scores.data();
    float* Kt = hs.k_t.data();
    for (int p = p0; p < p1; ++p) {
      const int b = p / s.heads, h = p % s.heads;
      if (!materialize) {
        if (!few_queries) transpose_keys(s, k.at(b, h), k.row_stride, Kt);
        for (int i0 = 0; i0 < s.seq_q; i0 += kQueryBlock)
          attend_query_block(kn, s, m, b, h, i0, scale, q.at(b, h), q.row_stride, few_queries ? k.at(b, h) : Kt,
                             !few_queries, k.row_stride, v.at(b, h), v.row_stride, z.at(b, h), z.row_stride, hs);
        continue;
      }
      transpose_keys(s, k.at(b, h), k.row_stride, Kt);
      const long at = static_cast<long>(p) * static_cast<long>(plane);
      kn.gemm(s.seq_q, s.seq_k, s.d_k, q.at(b, h), static_cast<int>(q.row_stride), Kt, s.seq_k, S,
              s.seq_k, false);
      if (trace) copy_plane(trace->raw_scores.data() + at, S, plane);

      // Divide by sqrt(d_k) so the softmax does not saturate as d_k grows.
      for (std::size_t i = 0; i < plane; ++i) S[i] *= scale;
      if (trace) copy_plane(trace->scaled_scores.data() + at, S, plane);

      if (any_mask(m)) apply_masks(s, m, b, h, 0, s.seq_q, 0, s.seq_k, S, s.seq_k);
      if (trace) copy_plane(trace->masked_scores.data() + at, S, plane);

      for (int i = 0; i < s.seq_q; ++i) kn.softmax_row(S + static_cast<long>(i) * s.seq_k, s.seq_k);
      if (trace) copy_plane(trace->weights.data() + at, S, plane);
      if (weights) copy_plane(weights + at, S, plane);

      // Z = softmax(...) V, written straight into this head's slot of the output.
      kn.gemm(s.seq_q, s.d_v, s.seq_k, S, s.seq_k, v.at(b, h), static_cast<int>(v.row_stride),
              z.at(b, h), static_cast<int>(z.row_stride), false);
    }
  };
  const int bh = s.batch * s.heads;
  if (serial) {
    heads(0, bh, 0);
  } else if (materialize) {
    parallel_for(bh, 1, heads);
  } else {
    // Tiles of (batch, head, query block), handed out dynamically: with causal masks the last
    // query blocks cost the most, so they go first and the cheap ones fill in at the end. The
    // keys of every head are transposed up front (for more than kFewQueries queries), since several
    // threads read each head's K^T.
    const long kt_floats = static_cast<long>(kt);
    float* keys_t = ws.keys_t.data();
    if (!few_queries)
      parallel_for(bh, 1, [&](int p0, int p1, int) {
        for (int p = p0; p < p1; ++p) transpose_keys(s, k.at(p / s.heads, p % s.heads), k.row_stride, keys_t + p * kt_floats);
      });
    const int blocks = (s.seq_q + kQueryBlock - 1) / kQueryBlock;
    parallel_for(bh * blocks, 1, [&](int t0, int t1, int worker) {
      for (int t = t0; t < t1; ++t) {
        const int p = t % bh, i0 = (blocks - 1 - t / bh) * kQueryBlock;
        const int b = p / s.heads, h = p % s.heads;
        attend_query_block(kn, s, m, b, h, i0, scale, q.at(b, h), q.row_stride,
                           few_queries ? k.at(b, h) : keys_t + p * kt_floats, !few_queries, k.row_stride, v.at(b, h),
                           v.row_stride, z.at(b, h), z.row_stride, ws.per_thread[worker]);
      }
    });
  }
  // Keep scratch for the next call unless it is unusually large (as the JS staging does).
  constexpr std::size_t kKeepFloats = std::size_t{1} << 24;  // 64 MiB
  if (score_floats > kKeepFloats)
    for (int t = 0; t < threads; ++t) ws.per_thread[t].scores = Buffer();
  if (ws.keys_t.size() > kKeepFloats) ws.keys_t = Buffer();
  return "";
}

}  // namespace attn

namespace attn {

std::string check_finite(const char* name, const float* x, std::size_t n) {
  const long i = first_non_finite(x, n);
  return i < 0 ? "" : non_finite_message(name, x[i], i);
}

std::string validate_shape(const AttentionShape& s) {
  const struct { const char* name; int value; } dims[] = {
      {"batch", s.batch}, {"heads", s.heads}, {"seqQ", s.seq_q},
      {"seqK", s.seq_k},  {"dK", s.d_k},      {"dV", s.d_v}};
  for (const auto& d : dims)
    if (d.value < 1) return std::string(d.name) + " must be >= 1, got " + std::to_string(d.value);
  // The score matrix is checked where it is needed: only the materializing path holds it.
  bool ok = true;
  product_or_zero({std::size_t(s.batch), std::size_t(s.heads), std::size_t(s.seq_k), std::size_t(s.d_k > s.d_v ? s.d_k : s.d_v)}, &ok);
  product_or_zero({std::size_t(s.batch), std::size_t(s.heads), std::size_t(s.seq_q), std::size_t(s.d_k > s.d_v ? s.d_k : s.d_v)}, &ok);
  if (!ok) return "shape is too large: the tensors would exceed the memory limit";
  return "";
}

std::string resolve_scale(float requested, int d_k, float* scale) {
  if (std::isnan(requested)) {
    *scale = 1.0f / std::sqrt(static_cast<float>(d_k));
    return "";
  }
  if (!std::isfinite(requested)) return "scale must be a finite number";
  *scale = requested;
  return "";
}

std::string scaled_dot_product_attention(const Kernels& kn, const AttentionShape& s,
                                         const float* q, const float* k, const float* v,
                                         const Masks& m, float scale, float* out, float* weights,
                                         AttentionTrace* trace, AttentionWorkspace& ws) {
  std::string err = validate_shape(s);
  if (err.empty()) err = resolve_scale(scale, s.d_k, &scale);
  if (err.empty()) err = validate_masks(s, m);
  const long bh = static_cast<long>(s.batch) * s.heads;
  if (err.empty()) err = check_finite("q", q, bh * s.seq_q * s.d_k);
  if (err.empty()) err = check_finite("k", k, bh * s.seq_k * s.d_k);
  if (err.empty()) err = check_finite("v", v, bh * s.seq_k * s.d_v);
  if (!err.empty()) return err;
  const long sq = s.seq_q, sk = s.seq_k;
  const Strided qs{q, s.heads * sq * s.d_k, sq * s.d_k, s.d_k};
  const Strided ks{k, s.heads * sk * s.d_k, sk * s.d_k, s.d_k};
  const Strided vs{v, s.heads * sk * s.d_v, sk * s.d_v, s.d_v};
  const StridedOut zs{out, s.heads * sq * s.d_v, sq * s.d_v, s.d_v};
  return attention(kn, s, qs, ks, vs, zs, m, scale, weights, trace, ws);
}

}  // namespace attn
