// The layers every model composes: embeddings, LayerNorm, linear, activations, the MLP, pooling.
// (The attention layer is MultiHeadAttention.) Each holds its own parameters (weight matrices as
// Weight, in the storage type the model was loaded with) and registers them in a model's
// TensorTable under checkpoint names.
#pragma once

#include <cstdint>
#include <string>

#include "tensors/buffer.h"
#include "kernels/kernels.h"
#include "tensors/tensor_table.h"
#include "tensors/weight.h"

namespace attn {

// A batch of sequences padded to one length n.
struct EncoderInput {
  const std::int32_t* tokens = nullptr;       // batch x n
  const std::int32_t* token_types = nullptr;  // batch x n, or null: all 0
  const std::uint8_t* padding = nullptr;      // batch x n, nonzero = padding (not attended to), or null
  int batch = 1, n = 0;
};

// y = (x - mean) / sqrt(var + eps) * weight + bias, per row (biased variance, as PyTorch).
struct LayerNorm {
  Buffer weight, bias;
  float eps = 1e-5f;
  void add_to(TensorTable& t, const std::string& prefix, int dim, const char* weight_name = "weight",
              const char* bias_name = "bias");
  // Rows are independent: split across threads. y may be x.
  void forward(const float* x, int rows, int dim, float* y) const;

 private:
  void forward_rows(const float* x, int r0, int r1, int dim, float* y) const;
};

// y = x / sqrt(mean(x^2) + eps) * weight, per row (Llama's RMSNorm: no mean, no bias). The mean
// square is taken in double, so that rows of any finite float values normalize (float32's sum
// overflows past ~1e19).
struct RmsNorm {
  Buffer weight;
  float eps = 1e-6f;
  void add_to(TensorTable& t, const std::string& name, int dim);
  // Rows split across threads. y may be x.
  void forward(const float* x, int rows, int dim, float* y) const;
};

// y = x W^T + b, W a weight matrix (out x in) in the model's storage type (weight.h).
struct Linear {
  Weight weight;
  Buffer bias;
  int in = 0, out = 0;
  // Registers "<prefix>weight" and (has_bias) "<prefix>bias"; layout says how the checkpoint stores W.
  void add_to(TensorTable& t, const std::string& prefix, int in_features, int out_features, Layout layout,
              bool has_bias = true);
  std::string forward(const Kernels& kn, const float* x, int rows, float* y) const;
};

enum class Activation {
  kGeluTanh,  // GPT-2's "gelu_new": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  kGeluErf,   // BERT's "gelu": x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))
  kTanh,      // BERT's pooler
  kSilu,      // x * sigmoid(x) (Llama's gate)
};
// In place over rows x cols, the rows split across threads when there are enough of them.
void activate(const Kernels& kn, Activation a, float* x, int rows, int cols);
// The same on n contiguous values, on the calling thread.
void activate_range(const Kernels& kn, Activation a, float* x, std::size_t n);

// A traced MLP's intermediates (rows x hidden each), for a viewer: the up projection before the
// activation, the gate projection before it (gated MLPs only; else empty), and the down
// projection's input (act(up), or act(gate) * up).
struct MlpTrace {
  Buffer up, gate, hidden;
};

// dst = src[0, n): a trace's copy of one intermediate.
std::string keep_copy(Buffer& dst, const float* src, std::size_t n);

// The position-wise feed-forward network: act(x W1 + b1) W2 + b2.
struct Mlp {
  Linear fc, proj;
  Activation act = Activation::kGeluErf;
  // y: rows x fc.in. scratch holds rows x fc.out. trace: its intermediates, when wanted.
  std::string forward(const Kernels& kn, const float* x, int rows, Buffer& scratch, float* y,
                      MlpTrace* trace = nullptr) const;
};

// The gated feed-forward network of Llama-family models (SwiGLU): down(silu(gate(x)) * up(x)),
// nn.Linear weights without biases; Gemma's GeGLU has the tanh GELU in place of silu.
struct GatedMlp {
  Linear gate, up, down;
  Activation act = Activation::kSilu;
  // Phi-3's gate_up_proj: [gate | up] stored as one matrix (2 x hidden outputs), used in place of
  // gate and up (its two halves read as views: no copy) when declared by add_fused_to.
  Linear gate_up;
  void add_to(TensorTable& t, const std::string& prefix, int dim, int hidden);
  void add_fused_to(TensorTable& t, const std::string& prefix, int dim, int hidden);
  // y: rows x down.out. scratch holds 2 x rows x hidden. trace: its intermediates, when wanted.
  std::string forward(const Kernels& kn, const float* x, int rows, Buffer& scratch, float* y,
                      MlpTrace* trace = nullptr) const;
};

// A lookup table of row vectors (tokens, positions, token types), held as a weight matrix
// (rows x dim, one output per row) in the model's storage type: a tied word embedding stored as
// F16 stays F16 (half the memory of the largest tensor, half the bytes the language-model head
// streams per token), or is quantized with the rest of the model.
struct Embedding {
  Weight table;
  int rows = 0, dim = 0;
  // quantizable: Q8/Q4 storage applies (the word embeddings); else the table stays as stored.
  void add_to(TensorTable& t, const std::string& name, int num_rows, int dim_, bool quantizable = false);
  // out[i] += table[ids[i]] for i < n; ids == nullptr means row 0 (e.g. absent token types).
  void add_rows(const std::int32_t* ids, int n, float* out) const;
  // out[i] += table[first + i]: consecutive rows, for positions.
  void add_range(int first, int n, float* out) const;
  // logits (n x rows) = x (n x dim) times the table transposed: the language-model head tied to
  // this embedding.
  std::string logits(const Kernels& kn, const float* x, int n, float* out) const;
};

// x += y, elementwise.
void add_in_place(float* x, const float* y, std::size_t n);

// log(sum_j exp(x[r][j])) of each of `rows` rows of `cols` logits: the normalizer of the softmax
// over a vocabulary, in log space (a token's probability is exp(logit - it)). Max first, then the
// kernels' exponentials into `scratch` (cols floats), summed in double.
void log_sum_exp_rows(const Kernels& kn, const float* x, int rows, int cols, float* scratch, double* out);

// Sentence embeddings from a batch x n x dim block of hidden states. padding (batch x n, nonzero =
// not a real token) may be null. Mean: average over real tokens; first: row 0 of each sequence.
void mean_pool(const float* hidden, const std::uint8_t* padding, int batch, int n, int dim, float* out);
void first_token_pool(const float* hidden, int batch, int n, int dim, float* out);
// Each row divided by its L2 norm (rows of all zeros stay zero).
void l2_normalize_rows(float* x, int rows, int dim);

}  // namespace attn
