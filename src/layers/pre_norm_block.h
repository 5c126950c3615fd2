// The body of the decoder-only models (GPT-2: LayerNorm and a GELU MLP; the Llama family: RMSNorm
// and SwiGLU), one loop for both, whole-sequence or cached. Each block:
//   x += Attn(norm_1(x));  x += FFN(norm_2(x))
// and after the last one the final norm, on the rows whose logits are wanted. Each block's normed
// inputs and the residual stream after each sublayer are checked finite (activation_check.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "attention/multi_head_attention.h"
#include "kernels/kernels.h"
#include "layers/activation_check.h"
#include "layers/block_trace.h"
#include "layers/layers.h"
#include "tensors/buffer.h"
#include "tensors/tensor_table.h"

namespace attn {

// Gemma's "sandwich": a norm on the attention's and on the FFN's output before each joins x.
template <class Norm>
struct PostNorms {
  const Norm* attention = nullptr;
  const Norm* ffn = nullptr;
};

// The four tensors a block checks, in order, as its messages name them.
enum class BlockPart { kAttentionInput, kAttentionOutput, kMlpInput, kMlpOutput };

// A model's checkpoint names for them: "<layers><l>.<part>", e.g. "model.layers." and
// {"input_layernorm", "self_attn.o_proj", "post_attention_layernorm", "mlp.down_proj"}.
struct BlockNames {
  const char* layers = "";
  const char* parts[4] = {"", "", "", ""};
  std::string describe(int layer, BlockPart part) const {
    static const char* const what[4] = {"self-attention input", "self-attention output", "MLP input", "MLP output"};
    const int i = static_cast<int>(part);
    return layer_tensor(layer, what[i], layers + std::to_string(layer) + "." + parts[i]);
  }
};

// x: rows x dim, updated in place. attend(h, out) runs the layer's attention on the normed rows h
// into out (rows x dim). h and a hold rows x dim; f is the FFN's scratch. post: the sandwich
// norms, if any (x += post(Attn(norm_1(x))), x += post(FFN(norm_2(x)))). Each normed input and x
// after each sublayer go through check(values, part): the first non-finite one ends the block.
// trace: the residual stream, the norms and the MLP's intermediates (block_trace.h), when wanted.
template <class Norm, class Ffn, class Attend, class Check>
std::string pre_norm_block(const Kernels& kn, const Norm& norm_1, const Attend& attend, const Norm& norm_2, const Ffn& ffn,
                           float* x, int rows, int dim, Buffer& h, Buffer& a, Buffer& f, const Check& check,
                           PostNorms<Norm> post = {}, BlockTrace* trace = nullptr) {
  const std::size_t n = std::size_t(rows) * dim;
  const auto keep = [&](Buffer BlockTrace::*slot, const float* values) { return keep_in(trace, slot, values, n); };
  std::string err;
  if (trace) {
    err = trace->begin(x, n);
    if (err.empty()) err = trace->keep_norm(norm_1, dim);
    if (err.empty()) err = trace->keep_norm(norm_2, dim);
    if (!err.empty()) return err;
  }
  norm_1.forward(x, rows, dim, h.data());
  err = check(h.data(), BlockPart::kAttentionInput);
  if (err.empty()) err = attend(h.data(), a.data());
  if (!err.empty()) return err;
  if (post.attention) post.attention->forward(a.data(), rows, dim, a.data());
  add_in_place(x, a.data(), n);
  err = keep(&BlockTrace::attention, a.data());
  if (err.empty()) err = keep(&BlockTrace::after_attention, x);
  if (err.empty()) err = check(x, BlockPart::kAttentionOutput);
  if (!err.empty()) return err;
  norm_2.forward(x, rows, dim, h.data());
  err = check(h.data(), BlockPart::kMlpInput);
  if (err.empty()) err = keep(&BlockTrace::mlp_input, h.data());
  if (err.empty()) err = ffn.forward(kn, h.data(), rows, f, a.data(), trace ? &trace->ffn : nullptr);
  if (!err.empty()) return err;
  if (post.ffn) post.ffn->forward(a.data(), rows, dim, a.data());
  add_in_place(x, a.data(), n);
  err = keep(&BlockTrace::mlp, a.data());
  if (err.empty()) err = keep(&BlockTrace::after_mlp, x);
  if (err.empty()) err = keep(&BlockTrace::output, x);
  return err.empty() ? check(x, BlockPart::kMlpOutput) : err;
}

// The causal self-attention of one whole sequence of n rows (batch 1), as both models run it.
inline MhaInput causal_self_attention(const float* h, int n) {
  MhaInput in;
  in.query = in.key = in.value = h;
  in.batch = 1;
  in.seq_q = in.seq_k = n;
  in.masks.causal = true;
  return in;
}

// The checks of a whole-sequence forward; logit_rows -1 becomes n (every row).
inline std::string check_decoder_forward(const std::int32_t* tokens, int n, int context, int vocab, int& logit_rows,
                                         bool traced, int trace_layer, int layers) {
  if (n < 1) return "need at least one token";
  if (n > context) return std::to_string(n) + " tokens exceed the model's context of " + std::to_string(context) + " positions";
  std::string err = check_ids("token", tokens, n, vocab, "vocabulary");
  if (!err.empty()) return err;
  if (logit_rows == -1) logit_rows = n;
  if (logit_rows < 0 || logit_rows > n)
    return "logit rows " + std::to_string(logit_rows) + " out of range [0, " + std::to_string(n) + "] (the run's tokens)";
  if (traced && (trace_layer < 0 || trace_layer >= layers))
    return "trace layer " + std::to_string(trace_layer) + " out of range (n_layer " + std::to_string(layers) + ")";
  return "";
}

// What a decoder model runs once its tokens are embedded: the blocks, the final norm, one KV cache
// per layer while decoding, and the activations reused between calls. Block has norm_1, attn,
// norm_2 and mlp (and whatever else the model keeps for loading).
template <class Block, class Norm>
struct PreNormStack {
  std::vector<Block> blocks;
  Norm final_norm;
  std::vector<KvCache> cache;
  Buffer x, h, a, f;
  // Per layer, the sandwich norms (Gemma); empty: none.
  std::vector<PostNorms<Norm>> post_norms;
  BlockNames names;  // for the activation checks' messages

  int layers() const { return static_cast<int>(blocks.size()); }
  int cached_length() const { return cache.empty() ? 0 : cache[0].positions(); }

  // x as rows x dim zeros, for the model to add its embeddings into.
  std::string begin(std::size_t rows, int dim) {
    const std::size_t nd = rows * dim;
    if (!x.resize(nd) || !h.resize(nd) || !a.resize(nd)) return out_of_memory("activations", nd * 3);
    std::memset(x.data(), 0, nd * sizeof(float));
    return "";
  }

  // A decoding step's checks (the cache, n, the ids of every sequence), then begin().
  std::string begin_step(const std::int32_t* tokens, int n, int context, int vocab, int dim) {
    std::string err = check_decoding_step(cache, n, context);
    if (err.empty()) err = check_ids("token", tokens, std::size_t(cache[0].batch) * n, vocab, "vocabulary");
    return err.empty() ? begin(std::size_t(cache[0].batch) * n, dim) : err;
  }

  // Every block over x (rows x dim), its activations checked by `check`. attend(l, attn, h, out):
  // layer l's attention module `attn` on the normed rows h, into out. trace: layer trace_layer's
  // residual stream, norms and MLP (block_trace.h), when wanted.
  template <class Attend>
  std::string run(const Kernels& kn, int rows, int dim, const ActivationCheck& check, const Attend& attend,
                  BlockTrace* trace = nullptr, int trace_layer = -1) {
    for (int l = 0; l < layers(); ++l) {
      Block& B = blocks[l];
      const auto layer_attend = [&](const float* hn, float* out) { return attend(l, B.attn, hn, out); };
      const auto layer_check = [&](const float* values, BlockPart part) {
        return check(values, std::size_t(rows), dim, [&] { return names.describe(l, part); });
      };
      const PostNorms<Norm> post = post_norms.empty() ? PostNorms<Norm>{} : post_norms[l];
      std::string err = pre_norm_block(kn, B.norm_1, layer_attend, B.norm_2, B.mlp, x.data(), rows, dim, h, a, f,
                                       layer_check, post, l == trace_layer ? trace : nullptr);
      if (!err.empty()) return err;
    }
    return "";
  }

  // The final norm of `count` rows of x (row first, first + stride, ...) into h's first `count`
  // rows, returned: the head's input. Only these rows need logits; the LM head is the largest GEMM.
  const float* final_rows(int first, int count, int stride, int dim) {
    for (int i = 0; i < count; ++i)
      final_norm.forward(x.data() + (std::size_t(first) + std::size_t(i) * stride) * dim, 1, dim,
                         h.data() + std::size_t(i) * dim);
    return h.data();
  }
};

}  // namespace attn
