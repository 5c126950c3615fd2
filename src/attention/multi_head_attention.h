// Multi-head attention (seeds 000, 001, 004):
//   head_i = Attention(X_q W_i^Q + b_i^Q, X_k W_i^K + b_i^K, X_v W_i^V + b_i^V)
//   MHA    = Concat(head_1 .. head_h) W^O + b^O
// Weight layout (the paper's row-vector form), all row-major:
//   W^Q: d_model x (h*d_k), W^K: kdim x (h*d_k), W^V: vdim x (h*d_v), W^O: (h*d_v) x d_model,
//   head i owns column block i of W^Q, W^K, W^V and row block i of W^O.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "tensors/buffer.h"
#include "kernels/kernels.h"
#include "attention/rotary.h"
#include "tensors/weight.h"

namespace attn {

struct MhaConfig {
  int d_model = 0;
  int num_heads = 0;
  int d_k = 0;   // 0: d_model / num_heads
  int d_v = 0;   // 0: d_k
  int kdim = 0;  // feature size of the key input, 0: d_model (cross-attention may differ)
  int vdim = 0;  // feature size of the value input, 0: d_model
  bool bias = true;
  // Grouped-query attention: num_heads query heads share num_kv_heads key/value heads (0: one each),
  // query head h reading K/V head h / (num_heads / num_kv_heads). K and V are projected, cached and
  // traced per K/V head. Fewer K/V heads than query heads need the stored (fused) weights.
  int num_kv_heads = 0;
  // Rotary position embeddings applied to Q and K after projection (null: none). Not owned.
  const RotaryEmbedding* rotary = nullptr;
  // Causal attention sees only the latest `window` positions (Mistral's sliding_window); 0: all.
  int window = 0;
  // RMSNorm over each head's d_k values of Q and of K (Qwen3's q_norm / k_norm: d_k gains each,
  // not owned), after the projection and before the rotation. Null: none.
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  float qk_norm_eps = 1e-6f;
  // The scores' scale; 0: 1/sqrt(d_k). (Gemma 3: query_pre_attn_scalar^-1/2.)
  float scale = 0.0f;
  // The inputs are a model's own activations, which the model checks where they are made
  // (layers/activation_check.h): forward, forward_cached and fill_cache then skip their scan for
  // NaN and infinities, whose message ("query contains NaN") would blame the caller's input for
  // what the weights made. Off for the attention layer called on a user's tensors.
  bool model_activations = false;
};

struct MhaWeightsView {
  const float* w_q = nullptr;
  const float* w_k = nullptr;
  const float* w_v = nullptr;
  const float* w_o = nullptr;
  const float* b_q = nullptr;  // biases are read only when the config has bias
  const float* b_k = nullptr;
  const float* b_v = nullptr;
  const float* b_o = nullptr;
};

// Weights a model already holds in its storage type (weight.h), handed over: the input
// projections (h*d_k, kv*d_k and kv*d_v outputs with kv the K/V heads, over d_model inputs; so
// kdim = vdim = d_model) and the output projection (d_model outputs over h*d_v inputs). Q, K and V
// held alike become one matrix [Q | K | V]; held in different types (a GGUF Q4_K_M file keeps V at
// Q6_K in some layers) they stay three, still projected side by side. A checkpoint that stores
// them fused (GPT-2's c_attn) hands over `qkv` instead. A null bias (with bias on) counts as zeros:
// Qwen2 has Q/K/V biases, no O bias.
struct MhaStoredWeights {
  Weight qkv, o;  // qkv: [Q | K | V] as stored, or empty
  Weight q, k, v;
  const float* b_q = nullptr;  // biases (copied) are read only when the config has bias
  const float* b_k = nullptr;
  const float* b_v = nullptr;
  const float* b_o = nullptr;
};

struct MhaInput {
  const float* query = nullptr;  // batch x seq_q x d_model
  const float* key = nullptr;    // batch x seq_k x kdim   (self-attention: the query again)
  const float* value = nullptr;  // batch x seq_k x vdim
  int batch = 1, seq_q = 1, seq_k = 1;
  Masks masks;
  float scale = std::numeric_limits<float>::quiet_NaN();  // NaN: 1/sqrt(d_k)
};

// The seeds' step-by-step walk for one call. Per-head tensors are batch x heads x rows x cols.
struct MhaTrace {
  Buffer x;         // batch x seq_q x d_model: the query input X the walk starts from
  Buffer q, k, v;   // batch x heads x seq x d_k (d_v for v); k and v per K/V head; after rotation
  Buffer q_before_rotary, k_before_rotary;  // q and k as projected (filled with a rotary embedding only)
  Buffer q_before_norm, k_before_norm;      // q and k before their per-head norm (filled with q/k norms only)
  AttentionTrace attention;
  Buffer z;         // batch x heads x seq_q x d_v
  Buffer concat;    // batch x seq_q x (heads*d_v)
  Buffer output;    // batch x seq_q x d_model: concat W^O + b^O
};

// Keys and values already projected, for incremental decoding: batch x capacity x (heads*d_k)
// (values heads*d_v), rows [0, length) filled, the same for every sequence of the batch. A
// self-attention cache grows by each step's rows; a cross-attention cache is filled once from
// the encoder output. A sliding-window layer's cache rolls: a query sees only the latest `window`
// positions, itself included, so before a step the rows older than the window's last window - 1
// are dropped (row r then holds position dropped + r) and its memory stays O(window).
struct KvCache {
  Buffer k, v, scratch;
  int batch = 0, capacity = 0, length = 0, hk = 0, hv = 0;
  int window = 0;   // rolling when > 0
  int dropped = 0;  // positions dropped from the front (rolling)
  int limit = 0;    // the most positions a run may reach
  // Positions seen so far (the next row's position).
  int positions() const { return dropped + length; }
  // Empties the cache for batch sequences of up to `limit` positions: rows for all of them, or
  // for 2 x window with a window (rolling).
  std::string reset(int batch, int limit, int hk, int hv, int window = 0);
  // Room for n more rows: a rolling cache drops its oldest rows (keeping window - 1) and grows when
  // one step alone needs more.
  std::string make_room(int n);
  // Sequence b becomes the old sequence order[b], b < new_batch (beam search); new_batch may
  // differ from batch (e.g. one encoder output spread over the beams) within capacity's memory.
  std::string reorder(const int* order, int new_batch);

 private:
  // Keeps rows [first, length) of every sequence as rows [0, length - first) of a cache of
  // new_capacity rows per sequence and order[b]'s rows as sequence b (order null: b's own).
  std::string keep_rows(int first, int new_capacity, const int* order, int new_batch);
};

// One head's weights as a layer holds them (any storage type), decoded to float32, in the seeds'
// row-vector layout (seed 001: head i owns column block i of W^Q, W^K, W^V and row block i of W^O):
// W_i^Q d_model x d_k, W_i^K kdim x d_k and W_i^V vdim x d_v (its K/V head's, under grouped-query
// attention), W_i^O d_v x d_model; biases d_k, d_k, d_v and W^O's d_model (empty without bias).
struct HeadWeights {
  int d_model = 0, kdim = 0, vdim = 0, d_k = 0, d_v = 0, kv_head = 0;
  std::vector<float> w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;
};

// The boolean masks a call applied (hides(), attention.h): batch x seq_q x seq_k, 1 = key j hidden
// from query i (head 0's, for a per-head mask). Filled by calls that return weights or a trace.
struct AppliedMask {
  BasicBuffer<std::uint8_t> hidden;
  int batch = 0, seq_q = 0, seq_k = 0;
  std::string fill(const Masks& m, int batch_, int heads, int seq_q_, int seq_k_);
};

class MultiHeadAttention;

// One of a layer's projections, for reading its weights back as held (MultiHeadAttention::held):
// Q, K, V, O, or [Q | K | V] as one matrix (a checkpoint that stores them fused: Phi-3's qkv_proj).
enum class MhaProjection { kQ, kK, kV, kO, kQkv };

// Which attention of a layer a model is asked for: its self-attention (an encoder-decoder's
// encoder), an encoder-decoder's decoder self-attention, or its cross-attention.
enum class AttentionPart { kSelf = 0, kDecoderSelf = 1, kCross = 2 };

// The attention module get(block) of block l, or null when l is out of range.
template <class Blocks, class Get>
const MultiHeadAttention* layer_attention(const Blocks& blocks, int l, const Get& get) {
  return l >= 0 && l < static_cast<int>(blocks.size()) ? &get(blocks[l]) : nullptr;
}

// A decoder's KV caches, one per layer (GPT-2, the Llama family). Starting them empties them and
// makes each layer's for batch x capacity rows; attn(l) is layer l's attention. They are left
// empty if one fails.
template <class AttnOf>
std::string start_layer_caches(std::vector<KvCache>& caches, int layers, const AttnOf& attn, int batch, int capacity);
// Beam search: every layer's cache reordered alike (KvCache::reorder).
std::string reorder_layer_caches(std::vector<KvCache>& caches, const int* order, int new_batch);
// "" when a step of n new positions per sequence fits the started caches, else why not.
std::string check_decoding_step(const std::vector<KvCache>& caches, int n, int context);

class MultiHeadAttention {
 public:
  explicit MultiHeadAttention(const Kernels& kernels = default_kernels()) : kn_(&kernels) {}

  // Validates the config and fills in its defaults. "" = ok.
  std::string configure(const MhaConfig& config);
  const MhaConfig& config() const { return cfg_; }

  // Copies the weights in (rejecting NaN/Inf), as float32. Sizes follow the layout above.
  std::string set_weights(const MhaWeightsView& w);
  // Takes a model's weights over (checked finite when they were loaded).
  std::string set_weights(MhaStoredWeights&& w);
  bool has_weights() const { return has_weights_; }

  // output: batch x seq_q x d_model. weights (optional): batch x heads x seq_q x seq_k.
  std::string forward(const MhaInput& in, float* output, float* weights, MhaTrace* trace);

  // Head ablation: the query heads flagged in `off` (n = num_heads flags, 1 = off) have their
  // outputs set to zero before W^O in every later forward and forward_cached call, so W^O's bias
  // and the other heads alone make the layer's output (the causal test of what a head does). n = 0
  // switches every head back on. "" = ok.
  std::string set_heads_off(const std::uint8_t* off, int n);
  bool any_head_off() const { return !heads_off_.empty(); }

  // Head `head`'s weights (HeadWeights), decoded from their storage. "" = ok.
  std::string head_weights(int head, HeadWeights* out) const;
  // Projection p as the layer holds it: a view of its weights in their storage (out x in, F32 in
  // panels) and its bias (out values; null when the config has none). kQkv fails when Q, K and V
  // are held apart (different types). "" = ok.
  std::string held(MhaProjection p, WeightView* w, const float** bias) const;
  // The masks of the last call that returned weights or a trace (forward or forward_cached).
  const AppliedMask& applied_mask() const { return mask_; }

  // Incremental decoding. Makes `cache` hold this layer's K and V for a batch x capacity block.
  std::string start_cache(KvCache& cache, int batch, int capacity) const;
  // Cross-attention: projects K and V of `memory` (batch x seq x kdim, value input the same) into
  // the cache, replacing what it held.
  std::string fill_cache(const float* memory, int batch, int seq, KvCache& cache);
  // Attention of batch x seq_q new query rows (batch x seq_q x d_model) against the cache. With
  // `append` (self-attention) their own K and V join the cache first. Causal puts new query i at
  // position length - seq_q + i. key_padding: batch x length or null. output: batch x seq_q x
  // d_model; weights (optional): batch x heads x seq_q x positions (after appending; a rolled
  // cache's dropped positions get weight 0).
  std::string forward_cached(const float* query, int seq_q, KvCache& cache, bool append, bool causal,
                             const std::uint8_t* key_padding, float* output, float* weights);

 private:
  // One input projection: its outputs of the stored matrices, and its bias.
  struct Projection {
    WeightView w;
    const float* b;
  };
  // y (rows x p.w.out, leading dim ldy) = x (rows x p.w.in) W^T + b
  std::string project(const float* x, int rows, const Projection& p, float* y, int ldy) const;
  // y (rows x [Q | K | V]) from self-attention's input: one product over the fused matrix, or
  // three into their columns when Q, K and V are held in different types.
  std::string project_qkv(const float* x, int rows, float* y) const;
  // Q's (heads = num_heads, norm q_norm) or K's (num_kv_heads, k_norm) rows normalized per head.
  void norm_heads(float* x, long ld, long rows, int heads, const float* gain) const;
  // Points the projections into w_in_ (and the separate matrices), after the weights change.
  void set_projections();
  std::string copy_biases(const float* b_q, const float* b_k, const float* b_v, const float* b_o);
  // Zeroes the switched-off heads' column blocks of `rows` concatenated head outputs (set_heads_off).
  void zero_heads_off(float* concat, std::size_t rows) const;
  // Widths of the projections: Q (heads x d_k), K (K/V heads x d_k), V (K/V heads x d_v), and the
  // concatenated head outputs (heads x d_v); the query heads per K/V head.
  int q_width() const { return cfg_.num_heads * cfg_.d_k; }
  int k_width() const { return cfg_.num_kv_heads * cfg_.d_k; }
  int v_width() const { return cfg_.num_kv_heads * cfg_.d_v; }
  int z_width() const { return cfg_.num_heads * cfg_.d_v; }
  int group() const { return cfg_.num_heads / cfg_.num_kv_heads; }

  const Kernels* kn_;
  MhaConfig cfg_;
  bool configured_ = false, has_weights_ = false;
  // [W^Q | W^K | W^V] as one matrix (outputs 2*h*d_k + h*d_v) when kdim = vdim = d_model, so
  // self-attention projects Q, K and V in one pass over X; else W^Q alone and two more matrices
  // (fused_ then says whether self-attention's Q, K and V still lie side by side).
  Weight w_in_, w_k_sep_, w_v_sep_, w_o_;
  Buffer b_in_, b_k_sep_, b_v_sep_, b_o_;
  Projection proj_all_{}, proj_q_{}, proj_k_{}, proj_v_{}, proj_o_{};
  bool fused_ = false;
  Buffer qkv_, k_, v_, concat_;  // per-call scratch, kept to avoid re-allocating
  std::vector<std::uint8_t> heads_off_;  // num_heads flags (1 = off), or empty: every head on
  Buffer rolled_weights_;        // forward_cached's weights over a rolled cache's rows
  AppliedMask mask_;
  AttentionWorkspace ws_;
};

template <class AttnOf>
std::string start_layer_caches(std::vector<KvCache>& caches, int layers, const AttnOf& attn, int batch, int capacity) {
  caches.resize(layers);
  for (int l = 0; l < layers; ++l) {
    std::string err = attn(l).start_cache(caches[l], batch, capacity);
    if (!err.empty()) {
      caches.clear();
      return err;
    }
  }
  return "";
}

}  // namespace attn
