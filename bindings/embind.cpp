// The embind layer: translates numbers and heap addresses from JavaScript into core calls.
// No logic of its own. Errors come back as strings ("" = ok) that the TypeScript wrapper throws
// as JS Errors: C++ exceptions cannot cross into JS in this build.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>

#include "attention/attention.h"
#include "attention/multi_head_attention.h"
#include "kernels/parallel.h"
#include "models/bart.h"
#include "models/bert.h"
#include "models/gpt2.h"
#include "models/llama.h"
#include "layers/layers.h"

namespace {

template <class T>
T* at(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

attn::Masks make_masks(bool causal, std::uintptr_t key_padding, int mask_kind, std::uintptr_t mask,
                       bool mask_per_head) {
  attn::Masks m;
  m.causal = causal;
  m.key_padding = at<const std::uint8_t>(key_padding);
  m.attn_kind = mask_kind == 1 ? attn::MaskKind::Bool
              : mask_kind == 2 ? attn::MaskKind::Float
                               : attn::MaskKind::None;
  m.attn = at<const void>(mask);
  m.attn_per_head = mask_per_head;
  return m;
}

// Trace tensors in the order the seeds walk through them; the wrapper names them.
enum TraceSlot { kQ, kK, kV, kRaw, kScaled, kMasked, kWeights, kZ, kConcat, kOutput, kInput, kQBeforeRotary, kKBeforeRotary, kSlots };

const attn::Buffer* attention_slot(const attn::AttentionTrace& t, int slot) {
  switch (slot) {
    case kRaw: return &t.raw_scores;
    case kScaled: return &t.scaled_scores;
    case kMasked: return &t.masked_scores;
    case kWeights: return &t.weights;
    default: return nullptr;
  }
}

const attn::Buffer* mha_slot(const attn::MhaTrace& t, int slot) {
  switch (slot) {
    case kQ: return &t.q;
    case kK: return &t.k;
    case kV: return &t.v;
    case kZ: return &t.z;
    case kConcat: return &t.concat;
    case kOutput: return &t.output;
    case kInput: return &t.x;
    case kQBeforeRotary: return &t.q_before_rotary;
    case kKBeforeRotary: return &t.k_before_rotary;
    default: return attention_slot(t.attention, slot);
  }
}

std::uintptr_t address_of(const attn::Buffer* b) { return b ? reinterpret_cast<std::uintptr_t>(b->data()) : 0; }
int size_of(const attn::Buffer* b) { return b ? static_cast<int>(b->size()) : 0; }

class MultiHeadAttentionHandle {
 public:
  std::string configure(int d_model, int num_heads, int d_k, int d_v, int kdim, int vdim, bool bias) {
    return mha_.configure({d_model, num_heads, d_k, d_v, kdim, vdim, bias});
  }
  int dK() const { return mha_.config().d_k; }
  int dV() const { return mha_.config().d_v; }
  int kdim() const { return mha_.config().kdim; }
  int vdim() const { return mha_.config().vdim; }

  std::string setWeights(std::uintptr_t wq, std::uintptr_t wk, std::uintptr_t wv, std::uintptr_t wo,
                         std::uintptr_t bq, std::uintptr_t bk, std::uintptr_t bv, std::uintptr_t bo) {
    return mha_.set_weights({at<const float>(wq), at<const float>(wk), at<const float>(wv),
                             at<const float>(wo), at<const float>(bq), at<const float>(bk),
                             at<const float>(bv), at<const float>(bo)});
  }

  std::string forward(std::uintptr_t query, std::uintptr_t key, std::uintptr_t value, int batch,
                      int seq_q, int seq_k, bool causal, std::uintptr_t key_padding, int mask_kind,
                      std::uintptr_t mask, bool mask_per_head, float scale, std::uintptr_t output,
                      std::uintptr_t weights, bool trace) {
    attn::MhaInput in;
    in.query = at<const float>(query);
    in.key = at<const float>(key);
    in.value = at<const float>(value);
    in.batch = batch;
    in.seq_q = seq_q;
    in.seq_k = seq_k;
    in.masks = make_masks(causal, key_padding, mask_kind, mask, mask_per_head);
    in.scale = scale;
    if (!trace) trace_ = attn::MhaTrace();  // drop a previous call's trace memory
    return mha_.forward(in, at<float>(output), at<float>(weights), trace ? &trace_ : nullptr);
  }

  std::uintptr_t traceData(int slot) const { return address_of(mha_slot(trace_, slot)); }
  int traceSize(int slot) const { return size_of(mha_slot(trace_, slot)); }

 private:
  attn::MultiHeadAttention mha_;
  attn::MhaTrace trace_;
};

// Standalone scaled dot-product attention on caller-given Q, K, V; holds scratch and trace.
class AttentionHandle {
 public:
  std::string run(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, int batch, int heads,
                  int seq_q, int seq_k, int d_k, int d_v, bool causal, std::uintptr_t key_padding,
                  int mask_kind, std::uintptr_t mask, bool mask_per_head, float scale,
                  std::uintptr_t output, std::uintptr_t weights, bool trace) {
    if (!trace) trace_ = attn::AttentionTrace();
    return attn::scaled_dot_product_attention(
        attn::default_kernels(), {batch, heads, seq_q, seq_k, d_k, d_v}, at<const float>(q),
        at<const float>(k), at<const float>(v),
        make_masks(causal, key_padding, mask_kind, mask, mask_per_head), scale, at<float>(output),
        at<float>(weights), trace ? &trace_ : nullptr, ws_);
  }
  std::uintptr_t traceData(int slot) const { return address_of(attention_slot(trace_, slot)); }
  int traceSize(int slot) const { return size_of(attention_slot(trace_, slot)); }

 private:
  attn::AttentionWorkspace ws_;
  attn::AttentionTrace trace_;
};

// What every model handle shares: the checkpoint's tensor list (names and shapes as stored),
// setTensor by name, finalize, and the trace of the last forward call.
template <class Model>
class ModelHandle {
 public:
  int tensorCount() { return model_.tensors().size(); }
  std::string tensorName(int i) { return model_.tensors().entry(i).name; }
  emscripten::val tensorShape(int i) {
    emscripten::val shape = emscripten::val::array();
    for (int d : model_.tensors().entry(i).shape) shape.call<void>("push", d);
    return shape;
  }
  bool tensorOptional(int i) { return model_.tensors().entry(i).optional; }
  // dtype: 0 F32, 1 F16, 2 BF16 (the stored bytes, widened to float32 in the core unless kept).
  std::string setTensor(const std::string& name, std::uintptr_t data, int n, int dtype) {
    if (dtype < 0 || dtype > 2) return "unknown dtype code " + std::to_string(dtype);
    return model_.tensors().set(name, at<const void>(data), static_cast<std::size_t>(n), static_cast<attn::Dtype>(dtype));
  }
  // Elements [first, first + count) of a tensor of n, a part of whole stored rows (in order).
  std::string setTensorPart(const std::string& name, std::uintptr_t data, int n, int first, int count, int dtype) {
    if (dtype < 0 || dtype > 2) return "unknown dtype code " + std::to_string(dtype);
    if (n < 0 || first < 0 || count < 0) return "negative tensor part";
    return model_.tensors().set_part(name, at<const void>(data), std::size_t(n), std::size_t(first), std::size_t(count),
                                     static_cast<attn::Dtype>(dtype));
  }
  // Where the stored bytes of a tensor kept as stored go directly (0: stage them for setTensor).
  std::uintptr_t storedDestination(const std::string& name, int n, int dtype) {
    if (dtype < 0 || dtype > 2 || n < 0) return 0;
    return reinterpret_cast<std::uintptr_t>(model_.tensors().stored_destination(name, static_cast<std::size_t>(n), static_cast<attn::Dtype>(dtype)));
  }
  // How the weights are held (tensor_table.h's WeightStorage: 0 auto, 1 f32, 2 f16, 3 q8, 4 q4);
  // after configure, before the tensors are set.
  std::string setWeightStorage(int storage) {
    if (storage < 0 || storage > 4) return "unknown weight storage code " + std::to_string(storage);
    return model_.tensors().set_storage(static_cast<attn::WeightStorage>(storage));
  }
  // Bytes the model's parameters take as held (after loading).
  double weightBytes() { return static_cast<double>(model_.tensors().held_bytes()); }
  std::string finalize() { return model_.finalize(); }
  std::uintptr_t traceData(int slot) const { return address_of(mha_slot(trace_, slot)); }
  int traceSize(int slot) const { return size_of(mha_slot(trace_, slot)); }

 protected:
  attn::MhaTrace* trace_for(int trace_layer) {
    trace_ = attn::MhaTrace();  // drop a previous call's trace memory
    return trace_layer >= 0 ? &trace_ : nullptr;
  }
  Model model_;
  attn::MhaTrace trace_;
};

template <class H>
void bind_model_handle(emscripten::class_<H>& c) {
  using emscripten::optional_override;
  c.template constructor<>()
      .function("tensorCount", optional_override([](H& h) { return h.tensorCount(); }))
      .function("tensorName", optional_override([](H& h, int i) { return h.tensorName(i); }))
      .function("tensorShape", optional_override([](H& h, int i) { return h.tensorShape(i); }))
      .function("tensorOptional", optional_override([](H& h, int i) { return h.tensorOptional(i); }))
      .function("setTensor", optional_override([](H& h, const std::string& name, std::uintptr_t data, int n, int dtype) {
                  return h.setTensor(name, data, n, dtype);
                }))
      .function("setTensorPart", optional_override([](H& h, const std::string& name, std::uintptr_t data, int n, int first,
                                                      int count, int dtype) {
                  return h.setTensorPart(name, data, n, first, count, dtype);
                }))
      .function("storedDestination", optional_override([](H& h, const std::string& name, int n, int dtype) {
                  return h.storedDestination(name, n, dtype);
                }))
      .function("setWeightStorage", optional_override([](H& h, int storage) { return h.setWeightStorage(storage); }))
      .function("weightBytes", optional_override([](H& h) { return h.weightBytes(); }))
      .function("finalize", optional_override([](H& h) { return h.finalize(); }))
      .function("traceData", optional_override([](const H& h, int slot) { return h.traceData(slot); }))
      .function("traceSize", optional_override([](const H& h, int slot) { return h.traceSize(slot); }));
}

// A decoder-only language model (GPT-2, the Llama family): forward, and decoding with a KV cache.
template <class Model>
class DecoderHandle : public ModelHandle<Model> {
 public:
  using ModelHandle<Model>::model_;
  std::string forward(std::uintptr_t tokens, int n, std::uintptr_t logits, std::uintptr_t attention, int trace_layer,
                      int logit_rows) {
    return model_.forward(at<const std::int32_t>(tokens), n, at<float>(logits), at<float>(attention), trace_layer,
                          this->trace_for(trace_layer), logit_rows);
  }
  std::string startDecoding(int batch, int capacity) { return model_.start_decoding(batch, capacity); }
  std::string step(std::uintptr_t tokens, int n, std::uintptr_t logits, std::uintptr_t attention) {
    return model_.step(at<const std::int32_t>(tokens), n, at<float>(logits), at<float>(attention));
  }
  std::string reorderCache(std::uintptr_t order, int new_batch) { return model_.reorder_cache(at<const int>(order), new_batch); }
  int cachedLength() const { return model_.cached_length(); }
};

template <class H>
void bind_decoder_handle(emscripten::class_<H>& c) {
  using emscripten::optional_override;
  bind_model_handle(c);
  c.function("forward", optional_override([](H& h, std::uintptr_t tokens, int n, std::uintptr_t logits, std::uintptr_t attention,
                                             int trace_layer, int logit_rows) {
     return h.forward(tokens, n, logits, attention, trace_layer, logit_rows);
   }))
      .function("startDecoding", optional_override([](H& h, int batch, int capacity) { return h.startDecoding(batch, capacity); }))
      .function("step", optional_override([](H& h, std::uintptr_t tokens, int n, std::uintptr_t logits, std::uintptr_t attention) {
                  return h.step(tokens, n, logits, attention);
                }))
      .function("reorderCache", optional_override([](H& h, std::uintptr_t order, int new_batch) { return h.reorderCache(order, new_batch); }))
      .function("cachedLength", optional_override([](const H& h) { return h.cachedLength(); }));
}

// GPT-2 (decoder-only).
class Gpt2Handle : public DecoderHandle<attn::Gpt2> {
 public:
  std::string configure(int vocab_size, int n_positions, int n_embd, int n_layer, int n_head, float eps) {
    return model_.configure({vocab_size, n_positions, n_embd, n_layer, n_head, eps});
  }
};

// The Llama family (Llama, Qwen2, Mistral): config.json's fields in order; rope_scaling's type ""
// for none.
class LlamaHandle : public DecoderHandle<attn::Llama> {
 public:
  std::string configure(int vocab_size, int max_positions, int hidden, int intermediate, int layers, int heads,
                        int kv_heads, int head_dim, float eps, double theta, const std::string& scaling, double factor,
                        double low_freq_factor, double high_freq_factor, int original_max_positions, bool attention_bias,
                        bool tie_word_embeddings, int sliding_window) {
    attn::LlamaConfig c;
    c.vocab_size = vocab_size;
    c.max_position_embeddings = max_positions;
    c.hidden_size = hidden;
    c.intermediate_size = intermediate;
    c.num_hidden_layers = layers;
    c.num_attention_heads = heads;
    c.num_key_value_heads = kv_heads;
    c.head_dim = head_dim;
    c.rms_norm_eps = eps;
    c.rope.theta = theta;
    c.rope.scaling = scaling;
    c.rope.factor = factor;
    c.rope.low_freq_factor = low_freq_factor;
    c.rope.high_freq_factor = high_freq_factor;
    c.rope.original_max_position_embeddings = original_max_positions;
    c.attention_bias = attention_bias;
    c.tie_word_embeddings = tie_word_embeddings;
    c.sliding_window = sliding_window;
    return model_.configure(c);
  }
};

// BART (encoder-decoder). Activation: 0 = erf GELU, 1 = tanh GELU.
class BartHandle : public ModelHandle<attn::Bart> {
 public:
  std::string configure(int vocab_size, int max_positions, int d_model, int encoder_layers, int decoder_layers,
                        int encoder_heads, int decoder_heads, int encoder_ffn, int decoder_ffn, int activation,
                        bool scale_embedding) {
    attn::BartConfig c;
    c.vocab_size = vocab_size;
    c.max_position_embeddings = max_positions;
    c.d_model = d_model;
    c.encoder_layers = encoder_layers;
    c.decoder_layers = decoder_layers;
    c.encoder_attention_heads = encoder_heads;
    c.decoder_attention_heads = decoder_heads;
    c.encoder_ffn_dim = encoder_ffn;
    c.decoder_ffn_dim = decoder_ffn;
    c.activation = activation == 1 ? attn::Activation::kGeluTanh : attn::Activation::kGeluErf;
    c.scale_embedding = scale_embedding;
    return model_.configure(c);
  }
  std::string encode(std::uintptr_t tokens, std::uintptr_t padding, int batch, int n, std::uintptr_t memory,
                     std::uintptr_t attention, int trace_layer) {
    return model_.encode({at<const std::int32_t>(tokens), nullptr, at<const std::uint8_t>(padding), batch, n},
                         at<float>(memory), at<float>(attention), trace_layer, trace_for(trace_layer));
  }
  // trace_cross: the trace is the cross-attention's walk (else the decoder self-attention's).
  std::string decode(std::uintptr_t tokens, int batch, int T, std::uintptr_t memory, std::uintptr_t padding, int S,
                     std::uintptr_t logits, std::uintptr_t self_attention, std::uintptr_t cross_attention, int trace_layer,
                     bool trace_cross) {
    attn::MhaTrace* trace = trace_for(trace_layer);
    return model_.decode(at<const std::int32_t>(tokens), batch, T, {at<const float>(memory), at<const std::uint8_t>(padding), S},
                         at<float>(logits), at<float>(self_attention), at<float>(cross_attention), trace_layer,
                         trace_cross ? nullptr : trace, trace_cross ? trace : nullptr);
  }
  std::string startDecoding(std::uintptr_t memory, std::uintptr_t padding, int batch, int S, int capacity) {
    return model_.start_decoding({at<const float>(memory), at<const std::uint8_t>(padding), S}, batch, capacity);
  }
  std::string step(std::uintptr_t tokens, int n, std::uintptr_t logits, std::uintptr_t self_attention,
                   std::uintptr_t cross_attention) {
    return model_.step(at<const std::int32_t>(tokens), n, at<float>(logits), at<float>(self_attention),
                       at<float>(cross_attention));
  }
  std::string reorderCache(std::uintptr_t order, int new_batch) { return model_.reorder_cache(at<const int>(order), new_batch); }
  int cachedLength() const { return model_.cached_length(); }
};

// BERT (encoder-only). Activation: 0 = erf GELU, 1 = tanh GELU.
class BertHandle : public ModelHandle<attn::Bert> {
 public:
  std::string configure(int vocab_size, int max_positions, int type_vocab_size, int hidden, int layers, int heads,
                        int intermediate, float eps, int activation, bool pooler, bool mlm_head) {
    attn::BertConfig c;
    c.vocab_size = vocab_size;
    c.max_position_embeddings = max_positions;
    c.type_vocab_size = type_vocab_size;
    c.hidden_size = hidden;
    c.num_hidden_layers = layers;
    c.num_attention_heads = heads;
    c.intermediate_size = intermediate;
    c.layer_norm_eps = eps;
    c.hidden_act = activation == 1 ? attn::Activation::kGeluTanh : attn::Activation::kGeluErf;
    c.pooler = pooler;
    c.mlm_head = mlm_head;
    return model_.configure(c);
  }
  std::string forward(std::uintptr_t tokens, std::uintptr_t token_types, std::uintptr_t padding, int batch, int n,
                      std::uintptr_t hidden, std::uintptr_t attention, int trace_layer) {
    return model_.forward({at<const std::int32_t>(tokens), at<const std::int32_t>(token_types),
                           at<const std::uint8_t>(padding), batch, n},
                          at<float>(hidden), at<float>(attention), trace_layer, trace_for(trace_layer));
  }
  std::string mlmLogits(std::uintptr_t hidden, int rows, std::uintptr_t logits) {
    return model_.mlm_logits(at<const float>(hidden), rows, at<float>(logits));
  }
  std::string pooler(std::uintptr_t hidden, int batch, int n, std::uintptr_t out) {
    return model_.pooler(at<const float>(hidden), batch, n, at<float>(out));
  }
};

// Sentence embeddings from hidden states: 0 = mean over real tokens, 1 = first token ([CLS]).
void poolHidden(std::uintptr_t hidden, std::uintptr_t padding, int batch, int n, int dim, int kind, bool normalize,
                std::uintptr_t out) {
  if (kind == 1) attn::first_token_pool(at<const float>(hidden), batch, n, dim, at<float>(out));
  else attn::mean_pool(at<const float>(hidden), at<const std::uint8_t>(padding), batch, n, dim, at<float>(out));
  if (normalize) attn::l2_normalize_rows(at<float>(out), batch, dim);
}

// Each row's log-sum-exp (rows x cols float logits -> rows doubles), for probabilities and losses.
std::string logSumExpRows(std::uintptr_t logits, int rows, int cols, std::uintptr_t out) {
  static attn::Buffer scratch;
  if (rows < 0 || cols < 1) return "need rows >= 0 and cols >= 1";
  if (!scratch.resize(static_cast<std::size_t>(cols))) return attn::out_of_memory("log-sum-exp", cols);
  attn::log_sum_exp_rows(attn::default_kernels(), at<const float>(logits), rows, cols, scratch.data(), at<double>(out));
  return "";
}

std::string kernelsName() { return attn::default_kernels().name; }

}  // namespace

EMSCRIPTEN_BINDINGS(attention_wasm) {
  emscripten::function("kernelsName", &kernelsName);
  emscripten::function("setNumThreads", &attn::set_num_threads);
  emscripten::class_<MultiHeadAttentionHandle>("MultiHeadAttentionHandle")
      .constructor<>()
      .function("configure", &MultiHeadAttentionHandle::configure)
      .function("dK", &MultiHeadAttentionHandle::dK)
      .function("dV", &MultiHeadAttentionHandle::dV)
      .function("kdim", &MultiHeadAttentionHandle::kdim)
      .function("vdim", &MultiHeadAttentionHandle::vdim)
      .function("setWeights", &MultiHeadAttentionHandle::setWeights)
      .function("forward", &MultiHeadAttentionHandle::forward)
      .function("traceData", &MultiHeadAttentionHandle::traceData)
      .function("traceSize", &MultiHeadAttentionHandle::traceSize);
  emscripten::class_<AttentionHandle>("AttentionHandle")
      .constructor<>()
      .function("run", &AttentionHandle::run)
      .function("traceData", &AttentionHandle::traceData)
      .function("traceSize", &AttentionHandle::traceSize);
  emscripten::function("poolHidden", &poolHidden);
  emscripten::function("logSumExpRows", &logSumExpRows);
  emscripten::class_<Gpt2Handle> gpt2("Gpt2Handle");
  bind_decoder_handle(gpt2);
  gpt2.function("configure", &Gpt2Handle::configure);
  emscripten::class_<LlamaHandle> llama("LlamaHandle");
  bind_decoder_handle(llama);
  llama.function("configure", &LlamaHandle::configure);
  emscripten::class_<BartHandle> bart("BartHandle");
  bind_model_handle(bart);
  bart.function("configure", &BartHandle::configure)
      .function("encode", &BartHandle::encode)
      .function("decode", &BartHandle::decode)
      .function("startDecoding", &BartHandle::startDecoding)
      .function("step", &BartHandle::step)
      .function("reorderCache", &BartHandle::reorderCache)
      .function("cachedLength", &BartHandle::cachedLength);
  emscripten::class_<BertHandle> bert("BertHandle");
  bind_model_handle(bert);
  bert.function("configure", &BertHandle::configure)
      .function("forward", &BertHandle::forward)
      .function("mlmLogits", &BertHandle::mlmLogits)
      .function("pooler", &BertHandle::pooler);
}
