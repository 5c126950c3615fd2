// Scaled dot-product attention over a batch of heads:
//   Z = softmax(Q K^T * scale + M) V,   scale = 1/sqrt(d_k) unless overridden,
// where M combines a causal mask, a key-padding mask and a user attn_mask (seeds 000-004).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensors/buffer.h"
#include "tensors/finite.h"  // first_non_finite, non_finite_message
#include "kernels/kernels.h"

namespace attn {

struct AttentionShape {
  int batch = 1, heads = 1, seq_q = 1, seq_k = 1, d_k = 1, d_v = 1;
};

enum class MaskKind { None, Bool, Float };

// All masks are optional and combine: a key is excluded if any boolean mask excludes it,
// float masks are added to the scaled scores.
struct Masks {
  // Query i may not see key j > i + causal_offset. Offset 0 is top-left aligned when
  // seq_q != seq_k (like torch.triu(1)); a KV cache passes the number of earlier positions, so
  // new query i sits at position causal_offset + i.
  bool causal = false;
  int causal_offset = 0;
  // Causal sliding window (Mistral): query i also may not see key j <= i + causal_offset - window,
  // so it sees the `window` latest positions, itself included. 0: no window.
  int window = 0;
  // batch x seq_k, nonzero = ignore this key (PyTorch's key_padding_mask convention).
  const std::uint8_t* key_padding = nullptr;
  // seq_q x seq_k, or batch x heads x seq_q x seq_k when attn_per_head.
  // Bool: nonzero = masked. Float: added to the scaled scores (may hold -inf, never NaN/+inf).
  MaskKind attn_kind = MaskKind::None;
  const void* attn = nullptr;
  bool attn_per_head = false;
};

// Whether the boolean masks hide key j from query i of sequence b, head h (causal, sliding window,
// key padding, a boolean attn mask): the cells the scores get -inf in. Float masks are added, not
// decided here.
inline bool hides(const Masks& m, int seq_q, int seq_k, int heads, int b, int h, int i, int j) {
  if ((m.causal && j > i + m.causal_offset) || (m.window > 0 && j <= i + m.causal_offset - m.window)) return true;
  if (m.key_padding && m.key_padding[static_cast<long>(b) * seq_k + j]) return true;
  if (m.attn_kind != MaskKind::Bool) return false;
  const long plane = static_cast<long>(seq_q) * seq_k;
  const long at = (m.attn_per_head ? (static_cast<long>(b) * heads + h) * plane : 0) + static_cast<long>(i) * seq_k + j;
  return static_cast<const std::uint8_t*>(m.attn)[at] != 0;
}

// A read-only tensor addressed as [batch][head][row][col] with arbitrary strides, so both
// B x H x S x d inputs and the B x S x (H*d) projection outputs are used in place.
// group: consecutive heads that read one stored head (grouped-query attention: query head h reads
// key/value head h / group, so each K/V head is stored and projected once for its whole group).
struct Strided {
  const float* data;
  long batch_stride, head_stride, row_stride;
  int group = 1;
  const float* at(int b, int h) const { return data + b * batch_stride + (h / group) * head_stride; }
};
struct StridedOut {
  float* data;
  long batch_stride, head_stride, row_stride;
  float* at(int b, int h) const { return data + b * batch_stride + h * head_stride; }
};

// Every intermediate of the seeds' step-by-step walk, filled when a Trace is passed.
// Attention tensors are batch x heads x seq_q x seq_k; masked_scores holds -inf where masked.
struct AttentionTrace {
  Buffer raw_scores, scaled_scores, masked_scores, weights;
};

// One thread's scratch for one head at a time.
struct HeadScratch {
  Buffer scores;     // seq_q x seq_k when materializing, one score block when tiled
  Buffer k_t;        // d_k x seq_k: K transposed so Q K^T is a plain GEMM
  Buffer out_block;  // tiled path: the unnormalized output of one query block
  Buffer row_stats;  // tiled path: running max and sum per query row of the block
};

// Scratch reused across calls so a steady stream of same-shaped calls does not allocate; one
// HeadScratch per thread, as heads run in parallel in threaded builds.
struct AttentionWorkspace {
  std::vector<HeadScratch> per_thread;
  Buffer keys_t;  // threaded tiled path: K^T of every (batch, head), shared by the query blocks
};

// Checks masks' consistency with the shape (float masks: no NaN or +inf). Empty string = ok.
std::string validate_masks(const AttentionShape& s, const Masks& m);

// Computes Z (batch x heads x seq_q x d_v through `z`). `weights`, when not null, receives the
// attention weights batch x heads x seq_q x seq_k. Without weights or trace it runs tiled with an
// online softmax (memory linear in seq_k, causal blocks skipped); with them it materializes the
// score matrix, which is also the reference the tiled path is tested against. A query row whose keys are all masked gets
// zero weights and a zero output row (PyTorch gives NaN there). Returns an error message or "".
std::string attention(const Kernels& kn, const AttentionShape& s, const Strided& q,
                      const Strided& k, const Strided& v, const StridedOut& z, const Masks& m,
                      float scale, float* weights, AttentionTrace* trace,
                      AttentionWorkspace& ws);

}  // namespace attn

namespace attn {

// Checks an AttentionShape: every size >= 1 and the tensors addressable. "" = ok.
std::string validate_shape(const AttentionShape& s);

// The standalone form on caller-given, contiguous tensors: q is batch x heads x seq_q x d_k,
// k is batch x heads x seq_k x d_k, v is batch x heads x seq_k x d_v, out batch x heads x seq_q
// x d_v. Validates shapes, masks and finiteness first. scale NaN = 1/sqrt(d_k).
std::string scaled_dot_product_attention(const Kernels& kn, const AttentionShape& s,
                                         const float* q, const float* k, const float* v,
                                         const Masks& m, float scale, float* out, float* weights,
                                         AttentionTrace* trace, AttentionWorkspace& ws);

// Resolves the scale argument: NaN means the paper's 1/sqrt(d_k). "" = ok.
std::string resolve_scale(float requested, int d_k, float* scale);

// "name contains NaN at index i" style message for the first non-finite value, or "".
std::string check_finite(const char* name, const float* x, std::size_t n);

}  // namespace attn
