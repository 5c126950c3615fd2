#include "models/bert.h"

#include <cmath>
#include <cstring>

#include "kernels/parallel_gemm.h"

namespace attn {
namespace {

constexpr const char* kModel = "BERT model";  // how activation checks name it

}  // namespace

std::string Bert::configure(const BertConfig& c) {
  configured_ = ready_ = false;
  std::string err = check_dims({{"vocab_size", c.vocab_size, 1 << 20},
                                {"max_position_embeddings", c.max_position_embeddings, 1 << 16},
                                {"type_vocab_size", c.type_vocab_size, 1 << 10},
                                {"hidden_size", c.hidden_size, 1 << 14},
                                {"num_hidden_layers", c.num_hidden_layers, 1024},
                                {"num_attention_heads", c.num_attention_heads, 1024},
                                {"intermediate_size", c.intermediate_size, 1 << 16}});
  if (!err.empty()) return err;
  if (c.hidden_size % c.num_attention_heads != 0)
    return "hidden_size (" + std::to_string(c.hidden_size) + ") is not divisible by num_attention_heads (" +
           std::to_string(c.num_attention_heads) + ")";
  if (!(c.layer_norm_eps > 0.0f) || !std::isfinite(c.layer_norm_eps)) return "layer_norm_eps must be a positive number";
  bool ok = true;
  product_or_zero({std::size_t(c.vocab_size), std::size_t(c.hidden_size)}, &ok);
  product_or_zero({std::size_t(c.max_position_embeddings), std::size_t(c.intermediate_size)}, &ok);
  product_or_zero({std::size_t(c.hidden_size), std::size_t(c.intermediate_size)}, &ok);
  if (!ok) return "model too large: its tensors exceed the memory limit";
  cfg_ = c;
  const int D = c.hidden_size, I = c.intermediate_size;
  const float eps = c.layer_norm_eps;
  tensors_.clear();
  blocks_.clear();
  blocks_.resize(c.num_hidden_layers);
  word_.add_to(tensors_, "embeddings.word_embeddings.weight", c.vocab_size, D, /*quantizable=*/true);
  position_.add_to(tensors_, "embeddings.position_embeddings.weight", c.max_position_embeddings, D);
  token_type_.add_to(tensors_, "embeddings.token_type_embeddings.weight", c.type_vocab_size, D);
  emb_ln_.eps = eps;
  emb_ln_.add_to(tensors_, "embeddings.LayerNorm.", D);
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    PostLnBlock& B = blocks_[l];
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    B.self.add_to(tensors_, {p + "attention.self.query.", p + "attention.self.key.", p + "attention.self.value.",
                             p + "attention.output.dense.", p + "attention.output.LayerNorm."}, D, eps);
    B.mlp.act = c.hidden_act;
    B.mlp.fc.add_to(tensors_, p + "intermediate.dense.", D, I, Layout::kTransposed);
    B.mlp.proj.add_to(tensors_, p + "output.dense.", I, D, Layout::kTransposed);
    B.out_ln.eps = eps;
    B.out_ln.add_to(tensors_, p + "output.LayerNorm.", D);
    B.layer = l;
    B.out_ln_name = p + "output.LayerNorm";
  }
  if (c.pooler) pooler_.add_to(tensors_, "pooler.dense.", D, D, Layout::kTransposed);
  if (c.mlm_head) {
    mlm_dense_.add_to(tensors_, "cls.predictions.transform.dense.", D, D, Layout::kTransposed);
    mlm_ln_.eps = eps;
    mlm_ln_.add_to(tensors_, "cls.predictions.transform.LayerNorm.", D);
    tensors_.add("cls.predictions.bias", {c.vocab_size}, &mlm_bias_);
  }
  configured_ = true;
  return "";
}

std::string Bert::finalize() {
  if (!configured_) return "not configured";
  if (ready_) return "";
  std::string err = tensors_.check_complete();
  if (!err.empty()) return err;
  for (PostLnBlock& B : blocks_) {
    err = B.finalize(cfg_.hidden_size, cfg_.num_attention_heads);
    if (!err.empty()) return err;
  }
  tensors_.seal();
  ready_ = true;
  return "";
}

std::string Bert::forward(const EncoderInput& in, float* hidden, float* attention, int trace_layer, MhaTrace* trace,
                          BlockTrace* block) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  if (in.batch < 1 || in.n < 1) return "need at least one sequence of at least one token";
  if (in.n > cfg_.max_position_embeddings)
    return std::to_string(in.n) + " tokens exceed the model's " + std::to_string(cfg_.max_position_embeddings) +
           " positions (max_position_embeddings)";
  bool ok = true;
  const std::size_t rows = product_or_zero({std::size_t(in.batch), std::size_t(in.n)}, &ok);
  const std::size_t nd = product_or_zero({rows, std::size_t(cfg_.hidden_size)}, &ok);
  product_or_zero({rows, std::size_t(cfg_.intermediate_size)}, &ok);
  if (!ok) return "input too large: batch * tokens * features exceeds the memory limit";
  std::string err = check_ids("token", in.tokens, rows, cfg_.vocab_size, "vocabulary");
  if (err.empty() && in.token_types) err = check_ids("token type", in.token_types, rows, cfg_.type_vocab_size, "type_vocab_size");
  if (!err.empty()) return err;
  if (trace && (trace_layer < 0 || trace_layer >= cfg_.num_hidden_layers))
    return "trace layer " + std::to_string(trace_layer) + " out of range (num_hidden_layers " +
           std::to_string(cfg_.num_hidden_layers) + ")";
  const int D = cfg_.hidden_size, H = cfg_.num_attention_heads, n = in.n, R = static_cast<int>(rows);

  // Embeddings, written straight into `hidden`, which then carries the residual stream.
  float* x = hidden;
  std::memset(x, 0, nd * sizeof(float));
  word_.add_rows(in.tokens, R, x);
  token_type_.add_rows(in.token_types, R, x);
  for (int b = 0; b < in.batch; ++b) position_.add_range(0, n, x + std::size_t(b) * n * D);
  emb_ln_.forward(x, R, D, x);
  const ActivationCheck check(kModel, {n, 0});
  err = check(x, rows, D, [] { return std::string("the embeddings (embeddings.LayerNorm)"); });
  if (!err.empty()) return err;

  Masks masks;
  masks.key_padding = in.padding;
  for (int l = 0; l < cfg_.num_hidden_layers; ++l) {
    float* layer_attention = attention ? attention + std::size_t(l) * in.batch * H * n * n : nullptr;
    err = blocks_[l].forward(*kn_, x, in.batch, n, masks, nullptr, layer_attention, nullptr,
                             trace && l == trace_layer ? trace : nullptr, nullptr, check, l == trace_layer ? block : nullptr);
    if (!err.empty()) return err;
  }
  return "";
}

std::string Bert::mlm_logits(const float* hidden, int rows, float* logits) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  if (!cfg_.mlm_head) return "this checkpoint has no masked-LM head (cls.predictions.*)";
  const int D = cfg_.hidden_size, V = cfg_.vocab_size;
  const std::size_t nd = std::size_t(rows) * D;
  if (!t_.resize(nd)) return out_of_memory("the MLM head", nd);
  std::string err = mlm_dense_.forward(*kn_, hidden, rows, t_.data());
  if (!err.empty()) return err;
  activate(*kn_, cfg_.hidden_act, t_.data(), rows, D);
  mlm_ln_.forward(t_.data(), rows, D, t_.data());
  // The decoder is the word embedding matrix (tied): logits = t E^T + bias.
  err = word_.logits(*kn_, t_.data(), rows, logits);
  if (!err.empty()) return err;
  for (int r = 0; r < rows; ++r) add_in_place(logits + static_cast<long>(r) * V, mlm_bias_.data(), V);
  // (rows of hidden states, not necessarily one sequence's positions)
  return ActivationCheck(kModel, {}, "token")(logits, rows, V, [] {
    return std::string("the masked-LM logits (cls.predictions, decoder tied to embeddings.word_embeddings)");
  });
}

std::string Bert::pooler(const float* hidden, int batch, int n, float* out) {
  if (!ready_) return "the model is not loaded: set every tensor, then finalize()";
  if (!cfg_.pooler) return "this checkpoint has no pooler (pooler.dense.*)";
  const int D = cfg_.hidden_size;
  if (!t_.resize(std::size_t(batch) * D)) return out_of_memory("the pooler", std::size_t(batch) * D);
  first_token_pool(hidden, batch, n, D, t_.data());
  std::string err = pooler_.forward(*kn_, t_.data(), batch, out);
  if (!err.empty()) return err;
  activate(*kn_, Activation::kTanh, out, batch, D);
  return ActivationCheck(kModel, {1, 0})(out, batch, D, [] { return std::string("the pooler output (pooler.dense)"); });
}

}  // namespace attn
