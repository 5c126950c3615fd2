// The embind layer: translates numbers and heap addresses from JavaScript into core calls.
// No logic of its own. Configs and multi-part calls cross as value_objects (plain JS objects; a
// config's fields named as in config.json), codes as enums (JS reads Module.Dtype.F16 ...). Errors
// come back as strings ("" = ok) that the TypeScript wrapper throws as JS Errors: C++ exceptions
// cannot cross into JS in this build.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

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
#include "tensors/finite.h"
#include "tensors/quantize.h"
#include "kernels/quantized_rows.h"
#include "tensors/weight_types.h"

namespace {

// Heap addresses cross as numbers.
using Address = std::uintptr_t;

template <class T>
T* at(Address address) {
  return reinterpret_cast<T*>(address);
}

// A call's masks (embind value_object "Masks"): attn::Masks with heap addresses.
struct MaskArgs {
  bool causal = false;
  Address key_padding = 0;
  attn::MaskKind kind = attn::MaskKind::None;
  Address data = 0;
  bool per_head = false;
};

attn::Masks make_masks(const MaskArgs& a) {
  attn::Masks m;
  m.causal = a.causal;
  m.key_padding = at<const std::uint8_t>(a.key_padding);
  m.attn_kind = a.kind;
  m.attn = at<const void>(a.data);
  m.attn_per_head = a.per_head;
  return m;
}

// Trace tensors in the order the seeds walk through them (embind enum "TraceSlot": the one list of
// slot names; the wrapper reads them from the module).
// The Block* and Norm* slots are a model's traced layer's block (attn::BlockTrace): the residual
// stream, the MLP's intermediates and the parameters of each norm the block applied (up to 3).
enum class TraceSlot { Q, K, V, RawScores, ScaledScores, MaskedScores, Weights, Z, Concat, Output, Input, QBeforeRotary, KBeforeRotary, QBeforeNorm, KBeforeNorm,
                       BlockInput, BlockAttention, BlockAfterAttention, BlockCross, BlockAfterCross, BlockMlpInput, BlockUp, BlockGate, BlockHidden, BlockMlp, BlockAfterMlp, BlockOutput,
                       Norm1Gain, Norm1Bias, Norm1Eps, Norm2Gain, Norm2Bias, Norm2Eps, Norm3Gain, Norm3Bias, Norm3Eps };

const attn::Buffer* attention_slot(const attn::AttentionTrace& t, TraceSlot slot) {
  switch (slot) {
    case TraceSlot::RawScores: return &t.raw_scores;
    case TraceSlot::ScaledScores: return &t.scaled_scores;
    case TraceSlot::MaskedScores: return &t.masked_scores;
    case TraceSlot::Weights: return &t.weights;
    default: return nullptr;
  }
}

const attn::Buffer* mha_slot(const attn::MhaTrace& t, TraceSlot slot) {
  switch (slot) {
    case TraceSlot::Q: return &t.q;
    case TraceSlot::K: return &t.k;
    case TraceSlot::V: return &t.v;
    case TraceSlot::Z: return &t.z;
    case TraceSlot::Concat: return &t.concat;
    case TraceSlot::Output: return &t.output;
    case TraceSlot::Input: return &t.x;
    case TraceSlot::QBeforeRotary: return &t.q_before_rotary;
    case TraceSlot::KBeforeRotary: return &t.k_before_rotary;
    case TraceSlot::QBeforeNorm: return &t.q_before_norm;
    case TraceSlot::KBeforeNorm: return &t.k_before_norm;
    default: return attention_slot(t.attention, slot);
  }
}

// A block trace's slot (null for an attention slot).
const attn::Buffer* block_slot(const attn::BlockTrace& t, TraceSlot slot) {
  switch (slot) {
    case TraceSlot::BlockInput: return &t.input;
    case TraceSlot::BlockAttention: return &t.attention;
    case TraceSlot::BlockAfterAttention: return &t.after_attention;
    case TraceSlot::BlockCross: return &t.cross;
    case TraceSlot::BlockAfterCross: return &t.after_cross;
    case TraceSlot::BlockMlpInput: return &t.mlp_input;
    case TraceSlot::BlockUp: return &t.ffn.up;
    case TraceSlot::BlockGate: return &t.ffn.gate;
    case TraceSlot::BlockHidden: return &t.ffn.hidden;
    case TraceSlot::BlockMlp: return &t.mlp;
    case TraceSlot::BlockAfterMlp: return &t.after_mlp;
    case TraceSlot::BlockOutput: return &t.output;
    default: break;
  }
  const int first = static_cast<int>(TraceSlot::Norm1Gain), i = static_cast<int>(slot) - first;
  if (i < 0 || i >= 3 * attn::BlockTrace::kMaxNorms || i / 3 >= t.norm_count) return nullptr;
  const attn::NormTrace& n = t.norms[i / 3];
  return i % 3 == 0 ? &n.gain : i % 3 == 1 ? &n.bias : &n.eps;
}

Address address_of(const attn::Buffer* b) { return b ? reinterpret_cast<Address>(b->data()) : 0; }
int size_of(const attn::Buffer* b) { return b ? static_cast<int>(b->size()) : 0; }

// MultiHeadAttention's weights (value_object "MhaWeights"); biases 0 without bias.
struct MhaWeightArgs {
  Address wq = 0, wk = 0, wv = 0, wo = 0, bq = 0, bk = 0, bv = 0, bo = 0;
};

// One MultiHeadAttention forward call (value_object "MhaCall"); scale NaN: 1/sqrt(d_k).
struct MhaCall {
  Address query = 0, key = 0, value = 0;
  int batch = 1, seq_q = 0, seq_k = 0;
  float scale = 0;
  Address output = 0, weights = 0;
  bool trace = false;
};

class MultiHeadAttentionHandle {
 public:
  std::string configure(const attn::MhaConfig& c) { return mha_.configure(c); }
  int dK() const { return mha_.config().d_k; }
  int dV() const { return mha_.config().d_v; }
  int kdim() const { return mha_.config().kdim; }
  int vdim() const { return mha_.config().vdim; }

  std::string setWeights(const MhaWeightArgs& w) {
    return mha_.set_weights({at<const float>(w.wq), at<const float>(w.wk), at<const float>(w.wv),
                             at<const float>(w.wo), at<const float>(w.bq), at<const float>(w.bk),
                             at<const float>(w.bv), at<const float>(w.bo)});
  }

  std::string forward(const MhaCall& c, const MaskArgs& masks) {
    attn::MhaInput in;
    in.query = at<const float>(c.query);
    in.key = at<const float>(c.key);
    in.value = at<const float>(c.value);
    in.batch = c.batch;
    in.seq_q = c.seq_q;
    in.seq_k = c.seq_k;
    in.masks = make_masks(masks);
    in.scale = c.scale;
    if (!c.trace) trace_ = attn::MhaTrace();  // drop a previous call's trace memory
    return mha_.forward(in, at<float>(c.output), at<float>(c.weights), c.trace ? &trace_ : nullptr);
  }

  Address traceData(TraceSlot slot) const { return address_of(mha_slot(trace_, slot)); }
  int traceSize(TraceSlot slot) const { return size_of(mha_slot(trace_, slot)); }

 private:
  attn::MultiHeadAttention mha_;
  attn::MhaTrace trace_;
};

// One standalone attention call on caller-given Q, K, V (value_object "AttentionCall").
struct AttentionCall {
  Address q = 0, k = 0, v = 0;
  int batch = 1, heads = 1, seq_q = 0, seq_k = 0, d_k = 0, d_v = 0;
  float scale = 0;
  Address output = 0, weights = 0;
  bool trace = false;
};

// Standalone scaled dot-product attention on caller-given Q, K, V; holds scratch and trace.
class AttentionHandle {
 public:
  std::string run(const AttentionCall& c, const MaskArgs& masks) {
    if (!c.trace) trace_ = attn::AttentionTrace();
    return attn::scaled_dot_product_attention(
        attn::default_kernels(), {c.batch, c.heads, c.seq_q, c.seq_k, c.d_k, c.d_v}, at<const float>(c.q),
        at<const float>(c.k), at<const float>(c.v), make_masks(masks), c.scale, at<float>(c.output),
        at<float>(c.weights), c.trace ? &trace_ : nullptr, ws_);
  }
  Address traceData(TraceSlot slot) const { return address_of(attention_slot(trace_, slot)); }
  int traceSize(TraceSlot slot) const { return size_of(attention_slot(trace_, slot)); }

 private:
  attn::AttentionWorkspace ws_;
  attn::AttentionTrace trace_;
};

// A batch of token sequences padded to one length (value_object "TokenBatch"): attn::EncoderInput
// with heap addresses (token_types, padding 0: none).
struct TokenBatch {
  Address tokens = 0, token_types = 0, padding = 0;
  int batch = 1, length = 0;
};

attn::EncoderInput encoder_input(const TokenBatch& b) {
  return {at<const std::int32_t>(b.tokens), at<const std::int32_t>(b.token_types), at<const std::uint8_t>(b.padding),
          b.batch, b.length};
}

// The encoder's output as the decoder reads it (value_object "EncoderMemory"): attn::Memory.
struct EncoderMemory {
  Address states = 0, padding = 0;
  int length = 0;
};

attn::Memory memory_of(const EncoderMemory& m) {
  return {at<const float>(m.states), at<const std::uint8_t>(m.padding), m.length};
}

// Where a BART decoder call writes (value_object "DecoderOutputs"); attention buffers 0: not wanted.
struct DecoderOutputs {
  Address logits = 0, self_attention = 0, cross_attention = 0;
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
  // dtype: the stored bytes' type (widened to float32 in the core unless kept).
  std::string setTensor(const std::string& name, Address data, int n, attn::Dtype dtype) {
    return model_.tensors().set(name, at<const void>(data), static_cast<std::size_t>(n), dtype);
  }
  // Elements [first, first + count) of a tensor of n, a part of whole stored rows (in order).
  std::string setTensorPart(const std::string& name, Address data, int n, int first, int count, attn::Dtype dtype) {
    if (n < 0 || first < 0 || count < 0) return "negative tensor part";
    return model_.tensors().set_part(name, at<const void>(data), std::size_t(n), std::size_t(first), std::size_t(count), dtype);
  }
  // Where the stored bytes of a tensor kept as stored go directly (0: stage them for setTensor).
  Address storedDestination(const std::string& name, int n, attn::Dtype dtype) {
    if (n < 0) return 0;
    return reinterpret_cast<Address>(model_.tensors().stored_destination(name, static_cast<std::size_t>(n), dtype));
  }
  // How the weights are held; after configure, before the tensors are set.
  void setWeightStorage(attn::WeightStorage storage) { model_.tensors().set_storage(storage); }
  // The type tensor i is held in, as a checkpoint names it ("Q8_0", "F16", ...; "" before it is set).
  std::string tensorHeldType(int i) {
    const attn::TensorTable& t = model_.tensors();
    return t.entry(i).held == 0 ? "" : attn::weight_type_info(t.held_type(i)).stored_name;
  }
  // Tensor i as the model holds it, to save it (held_tensor.h; the Llama family): { error } or
  // { type (as tensorHeldType), bytes: a view of this handle's copy, valid until the next call }.
  emscripten::val heldTensor(int i) {
    emscripten::val out = emscripten::val::object();
    attn::HeldTensor t;
    std::string err = model_.held_tensor(i, &t);
    if (!err.empty()) {
      out.set("error", err);
      return out;
    }
    attn::held_tensor_bytes(t, &held_);
    out.set("type", std::string(t.weight.out ? attn::weight_type_info(t.weight.type).stored_name : "F32"));
    out.set("bytes", emscripten::val(emscripten::typed_memory_view(held_.size(), held_.data())));
    return out;
  }
  // Bytes the model's parameters take as held (after loading).
  double weightBytes() { return static_cast<double>(model_.tensors().held_bytes()); }
  std::string finalize() { return model_.finalize(); }
  Address traceData(TraceSlot slot) const { return address_of(model_slot(slot)); }
  int traceSize(TraceSlot slot) const { return size_of(model_slot(slot)); }
  // One head's weights as the layer holds them, decoded (HeadWeights), as views of this handle's
  // copy (valid until the next call; the wrapper copies them): { error } or the fields.
  emscripten::val headWeights(attn::AttentionPart part, int layer, int head) {
    emscripten::val out = emscripten::val::object();
    const attn::MultiHeadAttention* a = model_.attention_layer(part, layer);
    std::string err = a ? a->head_weights(head, &head_) : "layer " + std::to_string(layer) + " out of range";
    if (!err.empty()) {
      out.set("error", err);
      return out;
    }
    const auto view = [](const std::vector<float>& v) { return emscripten::val(emscripten::typed_memory_view(v.size(), v.data())); };
    out.set("dModel", head_.d_model), out.set("kdim", head_.kdim), out.set("vdim", head_.vdim);
    out.set("dK", head_.d_k), out.set("dV", head_.d_v), out.set("kvHead", head_.kv_head);
    out.set("wQ", view(head_.w_q)), out.set("wK", view(head_.w_k)), out.set("wV", view(head_.w_v)), out.set("wO", view(head_.w_o));
    out.set("bQ", view(head_.b_q)), out.set("bK", view(head_.b_k)), out.set("bV", view(head_.b_v)), out.set("bO", view(head_.b_o));
    return out;
  }
  // Head ablation (MultiHeadAttention::set_heads_off): n flags (1 = off) for layer `layer` of
  // `part`, or n = 0 for every head on. Every later forward, decode and step reads them.
  std::string setHeadsOff(attn::AttentionPart part, int layer, Address flags, int n) {
    // The model is not const here: the const accessor's module may be written through.
    auto* a = const_cast<attn::MultiHeadAttention*>(model_.attention_layer(part, layer));
    if (!a) return "layer " + std::to_string(layer) + " out of range";
    return a->set_heads_off(at<const std::uint8_t>(flags), n);
  }
  // The boolean mask the layer's last call with weights or a trace applied: { batch, seqQ, seqK,
  // hidden (a view, 1 = hidden) }, or null before any such call.
  emscripten::val appliedMask(attn::AttentionPart part, int layer) const {
    const attn::MultiHeadAttention* a = model_.attention_layer(part, layer);
    if (!a || a->applied_mask().hidden.empty()) return emscripten::val::null();
    const attn::AppliedMask& m = a->applied_mask();
    emscripten::val out = emscripten::val::object();
    out.set("batch", m.batch), out.set("seqQ", m.seq_q), out.set("seqK", m.seq_k);
    out.set("hidden", emscripten::val(emscripten::typed_memory_view(m.hidden.size(), m.hidden.data())));
    return out;
  }

 protected:
  attn::MhaTrace* trace_for(int trace_layer) {
    trace_ = attn::MhaTrace();  // drop a previous call's trace memory
    block_ = attn::BlockTrace();
    return trace_layer >= 0 ? &trace_ : nullptr;
  }
  // The traced layer's block, beside its attention (after trace_for).
  attn::BlockTrace* block_for(int trace_layer) { return trace_layer >= 0 ? &block_ : nullptr; }
  const attn::Buffer* model_slot(TraceSlot slot) const {
    const attn::Buffer* b = block_slot(block_, slot);
    return b ? b : mha_slot(trace_, slot);
  }
  Model model_;
  attn::MhaTrace trace_;
  attn::BlockTrace block_;
  attn::HeadWeights head_;
  std::vector<unsigned char> held_;  // heldTensor's last tensor
};

// Every model handle's configure(config) takes its family's config value_object (Config: the
// core's struct, bound in EMSCRIPTEN_BINDINGS).
template <class H, class Config>
void bind_model_handle(emscripten::class_<H>& c) {
  using emscripten::optional_override;
  c.template constructor<>()
      .function("configure", optional_override([](H& h, const Config& config) { return h.configure(config); }))
      .function("tensorCount", optional_override([](H& h) { return h.tensorCount(); }))
      .function("tensorName", optional_override([](H& h, int i) { return h.tensorName(i); }))
      .function("tensorShape", optional_override([](H& h, int i) { return h.tensorShape(i); }))
      .function("tensorOptional", optional_override([](H& h, int i) { return h.tensorOptional(i); }))
      .function("setTensor", optional_override([](H& h, const std::string& name, Address data, int n, attn::Dtype dtype) {
                  return h.setTensor(name, data, n, dtype);
                }))
      .function("setTensorPart", optional_override([](H& h, const std::string& name, Address data, int n, int first,
                                                      int count, attn::Dtype dtype) {
                  return h.setTensorPart(name, data, n, first, count, dtype);
                }))
      .function("storedDestination", optional_override([](H& h, const std::string& name, int n, attn::Dtype dtype) {
                  return h.storedDestination(name, n, dtype);
                }))
      .function("setWeightStorage", optional_override([](H& h, attn::WeightStorage storage) { h.setWeightStorage(storage); }))
      .function("tensorHeldType", optional_override([](H& h, int i) { return h.tensorHeldType(i); }))
      .function("weightBytes", optional_override([](H& h) { return h.weightBytes(); }))
      .function("finalize", optional_override([](H& h) { return h.finalize(); }))
      .function("traceData", optional_override([](const H& h, TraceSlot slot) { return h.traceData(slot); }))
      .function("traceSize", optional_override([](const H& h, TraceSlot slot) { return h.traceSize(slot); }))
      .function("headWeights", optional_override([](H& h, attn::AttentionPart part, int layer, int head) {
                  return h.headWeights(part, layer, head);
                }))
      .function("setHeadsOff", optional_override([](H& h, attn::AttentionPart part, int layer, Address flags, int n) {
                  return h.setHeadsOff(part, layer, flags, n);
                }))
      .function("appliedMask", optional_override([](const H& h, attn::AttentionPart part, int layer) {
                  return h.appliedMask(part, layer);
                }));
}

// A decoder-only language model (GPT-2, the Llama family): forward, and decoding with a KV cache.
template <class Model, class Config>
class DecoderHandle : public ModelHandle<Model> {
 public:
  using ModelHandle<Model>::model_;
  std::string configure(const Config& c) { return model_.configure(c); }
  std::string forward(Address tokens, int n, Address logits, Address attention, int trace_layer, int logit_rows) {
    return model_.forward(at<const std::int32_t>(tokens), n, at<float>(logits), at<float>(attention), trace_layer,
                          this->trace_for(trace_layer), logit_rows, this->block_for(trace_layer));
  }
  std::string startDecoding(int batch, int capacity) { return model_.start_decoding(batch, capacity); }
  std::string step(Address tokens, int n, Address logits, Address attention) {
    return model_.step(at<const std::int32_t>(tokens), n, at<float>(logits), at<float>(attention));
  }
  std::string reorderCache(Address order, int new_batch) { return model_.reorder_cache(at<const int>(order), new_batch); }
  int cachedLength() const { return model_.cached_length(); }
};

template <class H, class Config>
void bind_decoder_handle(emscripten::class_<H>& c) {
  using emscripten::optional_override;
  bind_model_handle<H, Config>(c);
  c.function("forward", optional_override([](H& h, Address tokens, int n, Address logits, Address attention,
                                             int trace_layer, int logit_rows) {
     return h.forward(tokens, n, logits, attention, trace_layer, logit_rows);
   }))
      .function("startDecoding", optional_override([](H& h, int batch, int capacity) { return h.startDecoding(batch, capacity); }))
      .function("step", optional_override([](H& h, Address tokens, int n, Address logits, Address attention) {
                  return h.step(tokens, n, logits, attention);
                }))
      .function("reorderCache", optional_override([](H& h, Address order, int new_batch) { return h.reorderCache(order, new_batch); }))
      .function("cachedLength", optional_override([](const H& h) { return h.cachedLength(); }));
}

using Gpt2Handle = DecoderHandle<attn::Gpt2, attn::GptConfig>;
// The Llama family (Llama, Qwen2/3, Mistral, Phi-3, SmolLM3, Gemma 3).
using LlamaHandle = DecoderHandle<attn::Llama, attn::LlamaConfig>;

// config.json's rope_scaling (value_object "RopeScaling"): attn::RopeConfig without theta and the
// rotated width, which cross as LlamaConfig's rope_theta and rotary_dim. rope_type "" for none;
// longrope's factors as arrays of numbers.
struct RopeScaling {
  std::string rope_type;
  double factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0, attention_factor = 1.0;
  int original_max_position_embeddings = 8192;
  emscripten::val short_factor = emscripten::val::array(), long_factor = emscripten::val::array();
};
emscripten::val js_numbers(const std::vector<double>& v) {
  emscripten::val a = emscripten::val::array();
  for (double x : v) a.call<void>("push", x);
  return a;
}
std::vector<double> cpp_numbers(const emscripten::val& a) {
  return a.isArray() ? emscripten::vecFromJSArray<double>(a) : std::vector<double>();
}
double get_rope_theta(const attn::LlamaConfig& c) { return c.rope.theta; }
void set_rope_theta(attn::LlamaConfig& c, double theta) { c.rope.theta = theta; }
int get_rotary_dim(const attn::LlamaConfig& c) { return c.rope.rotary_dim; }
void set_rotary_dim(attn::LlamaConfig& c, int dim) { c.rope.rotary_dim = dim; }
RopeScaling get_rope_scaling(const attn::LlamaConfig& c) {
  return {c.rope.scaling, c.rope.factor, c.rope.low_freq_factor, c.rope.high_freq_factor, c.rope.attention_factor,
          c.rope.original_max_position_embeddings, js_numbers(c.rope.short_factor), js_numbers(c.rope.long_factor)};
}
void set_rope_scaling(attn::LlamaConfig& c, RopeScaling s) {
  c.rope.scaling = s.rope_type;
  c.rope.factor = s.factor;
  c.rope.low_freq_factor = s.low_freq_factor;
  c.rope.high_freq_factor = s.high_freq_factor;
  c.rope.attention_factor = s.attention_factor;
  c.rope.original_max_position_embeddings = s.original_max_position_embeddings;
  c.rope.short_factor = cpp_numbers(s.short_factor);
  c.rope.long_factor = cpp_numbers(s.long_factor);
}

// BART (encoder-decoder).
class BartHandle : public ModelHandle<attn::Bart> {
 public:
  std::string configure(const attn::BartConfig& c) { return model_.configure(c); }
  std::string encode(const TokenBatch& in, Address memory, Address attention, int trace_layer) {
    return model_.encode(encoder_input(in), at<float>(memory), at<float>(attention), trace_layer, trace_for(trace_layer),
                         block_for(trace_layer));
  }
  // trace_cross: the trace is the cross-attention's walk (else the decoder self-attention's).
  std::string decode(const TokenBatch& in, const EncoderMemory& memory, const DecoderOutputs& out, int trace_layer,
                     bool trace_cross) {
    attn::MhaTrace* trace = trace_for(trace_layer);
    return model_.decode(at<const std::int32_t>(in.tokens), in.batch, in.length, memory_of(memory), at<float>(out.logits),
                         at<float>(out.self_attention), at<float>(out.cross_attention), trace_layer,
                         trace_cross ? nullptr : trace, trace_cross ? trace : nullptr, block_for(trace_layer));
  }
  std::string startDecoding(const EncoderMemory& memory, int batch, int capacity) {
    return model_.start_decoding(memory_of(memory), batch, capacity);
  }
  std::string step(Address tokens, int n, const DecoderOutputs& out) {
    return model_.step(at<const std::int32_t>(tokens), n, at<float>(out.logits), at<float>(out.self_attention),
                       at<float>(out.cross_attention));
  }
  std::string reorderCache(Address order, int new_batch) { return model_.reorder_cache(at<const int>(order), new_batch); }
  int cachedLength() const { return model_.cached_length(); }
};

// BERT (encoder-only).
class BertHandle : public ModelHandle<attn::Bert> {
 public:
  std::string configure(const attn::BertConfig& c) { return model_.configure(c); }
  std::string forward(const TokenBatch& in, Address hidden, Address attention, int trace_layer) {
    return model_.forward(encoder_input(in), at<float>(hidden), at<float>(attention), trace_layer, trace_for(trace_layer),
                          block_for(trace_layer));
  }
  std::string mlmLogits(Address hidden, int rows, Address logits) {
    return model_.mlm_logits(at<const float>(hidden), rows, at<float>(logits));
  }
  std::string pooler(Address hidden, int batch, int n, Address out) {
    return model_.pooler(at<const float>(hidden), batch, n, at<float>(out));
  }
};

// Sentence embeddings from hidden states (batch x length x dim, padding as in TokenBatch).
enum class Pooling { Mean, Cls };
struct PoolArgs {
  Address hidden = 0, padding = 0;
  int batch = 1, length = 0, dim = 0;
  Address out = 0;
};

void poolHidden(const PoolArgs& a, Pooling kind, bool normalize) {
  if (kind == Pooling::Cls) attn::first_token_pool(at<const float>(a.hidden), a.batch, a.length, a.dim, at<float>(a.out));
  else attn::mean_pool(at<const float>(a.hidden), at<const std::uint8_t>(a.padding), a.batch, a.length, a.dim, at<float>(a.out));
  if (normalize) attn::l2_normalize_rows(at<float>(a.out), a.batch, a.dim);
}

// Each row's log-sum-exp (rows x cols float logits -> rows doubles), for probabilities and losses.
std::string logSumExpRows(Address logits, int rows, int cols, Address out) {
  static attn::Buffer scratch;
  if (rows < 0 || cols < 1) return "need rows >= 0 and cols >= 1";
  if (!scratch.resize(static_cast<std::size_t>(cols))) return attn::out_of_memory("log-sum-exp", cols);
  attn::log_sum_exp_rows(attn::default_kernels(), at<const float>(logits), rows, cols, scratch.data(), at<double>(out));
  return "";
}

// rows x cols values in a weight type's encoding (GGUF's blocks: the core's own encoders), and
// back: for writing GGUF files and checking what a type keeps. "" = ok, else why not.
std::string check_rows(attn::Dtype type, int rows, int cols) {
  const attn::WeightTypeInfo& t = attn::weight_type_info(type);
  if (rows < 0 || cols < 1 || cols % t.block != 0)
    return std::string("cols must be a positive multiple of ") + std::to_string(t.block) + " for " + t.stored_name + ", got " +
           std::to_string(cols) + " (rows " + std::to_string(rows) + ")";
  return "";
}
std::string encodeRows(attn::Dtype type, Address values, int rows, int cols, Address out) {
  std::string err = check_rows(type, rows, cols);
  const float* x = at<const float>(values);
  const long bad = err.empty() ? attn::first_non_finite(x, std::size_t(rows) * cols) : -1;
  if (bad >= 0) return attn::non_finite_message("values", x[bad], bad);
  const std::size_t row = attn::row_bytes(type, cols);
  for (int r = 0; r < rows && err.empty(); ++r) {
    err = attn::encode_row(type, x + std::size_t(r) * cols, cols, at<unsigned char>(out) + row * r);
    if (!err.empty()) err = "row " + std::to_string(r) + ": " + err;
  }
  return err;
}
std::string decodeRows(attn::Dtype type, Address bytes, int rows, int cols, Address out) {
  std::string err = check_rows(type, rows, cols);
  const std::size_t row = attn::row_bytes(type, cols);
  for (int r = 0; r < rows && err.empty(); ++r)
    attn::weight_type_info(type).decode(at<const unsigned char>(bytes) + row * r, cols, at<float>(out) + std::size_t(r) * cols);
  return err;
}

std::string kernelsName() { return attn::default_kernels().name; }

// The tests' view of one integer product, C (M x N) = A (M x K floats) B^T (N rows of `type`'s
// blocks), A quantized per block as the models quantize it, by the build's kernels ("default") or
// the scalar twins ("scalar"): how a browser test holds a build's SIMD kernels to their twins.
std::string quantProduct(attn::Dtype type, const std::string& kernels, Address a, int M, int K, Address b, int N, Address c) {
  std::string err = check_rows(type, N, K);
  if (!err.empty()) return err;
  if (M < 1) return "M must be at least 1, got " + std::to_string(M);
  if (kernels != "default" && kernels != "scalar") return "kernels must be \"default\" or \"scalar\", got \"" + kernels + "\"";
  const attn::Kernels& kn = kernels == "scalar" ? attn::scalar_kernels() : attn::default_kernels();
  const attn::QuantGemm gemm = kn.gemm_bt_quant[type];
  if (!gemm) return std::string("no integer product for ") + attn::weight_type_info(type).stored_name;
  attn::QuantizedRows q;
  if (!q.quantize(at<const float>(a), M, K, K)) return attn::out_of_memory("quantized rows", std::size_t(M) * K);
  gemm(M, N, K, q, at<const unsigned char>(b), at<float>(c), N);
  return "";
}

// Bytes the allocator has handed out and not taken back (dlmalloc's mallinfo().uordblks): a model
// disposed of must bring it back to where it was, while the memory itself never shrinks.
double heapBytesInUse() { return static_cast<double>(mallinfo().uordblks); }

// The codes that cross the boundary, by name (the wrapper reads them from the module: Module.Dtype.F16 ...).
void bind_enums() {
  using emscripten::enum_;
  // A checkpoint's dtypes are the weight types, by the names safetensors and GGUF give them.
  enum_<attn::Dtype> dtype("Dtype");
  for (int t = 0; t < attn::kWeightTypeCount; ++t) {
    const attn::WeightTypeInfo& info = attn::weight_type_info(static_cast<attn::WeightType>(t));
    dtype.value(info.stored_name, info.type);
  }
  enum_<attn::WeightStorage>("WeightStorage")
      .value("auto", attn::WeightStorage::kAuto)
      .value("f32", attn::WeightStorage::kF32)
      .value("f16", attn::WeightStorage::kF16)
      .value("q8", attn::WeightStorage::kQ8)
      .value("q4", attn::WeightStorage::kQ4);
  // config.json's names: "gelu" is erf GELU, "gelu_new" the tanh approximation.
  enum_<attn::Activation>("Activation")
      .value("gelu", attn::Activation::kGeluErf)
      .value("gelu_new", attn::Activation::kGeluTanh)
      .value("tanh", attn::Activation::kTanh)
      .value("silu", attn::Activation::kSilu);
  enum_<attn::MaskKind>("MaskKind").value("None", attn::MaskKind::None).value("Bool", attn::MaskKind::Bool).value("Float", attn::MaskKind::Float);
  enum_<TraceSlot>("TraceSlot")
      .value("Q", TraceSlot::Q)
      .value("K", TraceSlot::K)
      .value("V", TraceSlot::V)
      .value("RawScores", TraceSlot::RawScores)
      .value("ScaledScores", TraceSlot::ScaledScores)
      .value("MaskedScores", TraceSlot::MaskedScores)
      .value("Weights", TraceSlot::Weights)
      .value("Z", TraceSlot::Z)
      .value("Concat", TraceSlot::Concat)
      .value("Output", TraceSlot::Output)
      .value("Input", TraceSlot::Input)
      .value("QBeforeRotary", TraceSlot::QBeforeRotary)
      .value("QBeforeNorm", TraceSlot::QBeforeNorm)
      .value("KBeforeNorm", TraceSlot::KBeforeNorm)
      .value("KBeforeRotary", TraceSlot::KBeforeRotary)
      .value("BlockInput", TraceSlot::BlockInput)
      .value("BlockAttention", TraceSlot::BlockAttention)
      .value("BlockAfterAttention", TraceSlot::BlockAfterAttention)
      .value("BlockCross", TraceSlot::BlockCross)
      .value("BlockAfterCross", TraceSlot::BlockAfterCross)
      .value("BlockMlpInput", TraceSlot::BlockMlpInput)
      .value("BlockUp", TraceSlot::BlockUp)
      .value("BlockGate", TraceSlot::BlockGate)
      .value("BlockHidden", TraceSlot::BlockHidden)
      .value("BlockMlp", TraceSlot::BlockMlp)
      .value("BlockAfterMlp", TraceSlot::BlockAfterMlp)
      .value("BlockOutput", TraceSlot::BlockOutput)
      .value("Norm1Gain", TraceSlot::Norm1Gain)
      .value("Norm1Bias", TraceSlot::Norm1Bias)
      .value("Norm1Eps", TraceSlot::Norm1Eps)
      .value("Norm2Gain", TraceSlot::Norm2Gain)
      .value("Norm2Bias", TraceSlot::Norm2Bias)
      .value("Norm2Eps", TraceSlot::Norm2Eps)
      .value("Norm3Gain", TraceSlot::Norm3Gain)
      .value("Norm3Bias", TraceSlot::Norm3Bias)
      .value("Norm3Eps", TraceSlot::Norm3Eps);
  enum_<Pooling>("Pooling").value("mean", Pooling::Mean).value("cls", Pooling::Cls);
  // A layer's attention a viewer asks about: its self-attention (an encoder-decoder's encoder's),
  // the decoder's self-attention, the cross-attention.
  enum_<attn::AttentionPart>("AttentionPart")
      .value("self", attn::AttentionPart::kSelf)
      .value("decoder", attn::AttentionPart::kDecoderSelf)
      .value("cross", attn::AttentionPart::kCross);
}

// The structs that cross as plain JS objects (every field required).
void bind_value_objects() {
  using emscripten::value_object;
  value_object<MaskArgs>("Masks")
      .field("causal", &MaskArgs::causal)
      .field("key_padding", &MaskArgs::key_padding)
      .field("kind", &MaskArgs::kind)
      .field("data", &MaskArgs::data)
      .field("per_head", &MaskArgs::per_head);
  value_object<attn::MhaConfig>("MhaConfig")
      .field("d_model", &attn::MhaConfig::d_model)
      .field("num_heads", &attn::MhaConfig::num_heads)
      .field("d_k", &attn::MhaConfig::d_k)
      .field("d_v", &attn::MhaConfig::d_v)
      .field("kdim", &attn::MhaConfig::kdim)
      .field("vdim", &attn::MhaConfig::vdim)
      .field("bias", &attn::MhaConfig::bias);
  value_object<MhaWeightArgs>("MhaWeights")
      .field("wq", &MhaWeightArgs::wq)
      .field("wk", &MhaWeightArgs::wk)
      .field("wv", &MhaWeightArgs::wv)
      .field("wo", &MhaWeightArgs::wo)
      .field("bq", &MhaWeightArgs::bq)
      .field("bk", &MhaWeightArgs::bk)
      .field("bv", &MhaWeightArgs::bv)
      .field("bo", &MhaWeightArgs::bo);
  value_object<MhaCall>("MhaCall")
      .field("query", &MhaCall::query)
      .field("key", &MhaCall::key)
      .field("value", &MhaCall::value)
      .field("batch", &MhaCall::batch)
      .field("seq_q", &MhaCall::seq_q)
      .field("seq_k", &MhaCall::seq_k)
      .field("scale", &MhaCall::scale)
      .field("output", &MhaCall::output)
      .field("weights", &MhaCall::weights)
      .field("trace", &MhaCall::trace);
  value_object<AttentionCall>("AttentionCall")
      .field("q", &AttentionCall::q)
      .field("k", &AttentionCall::k)
      .field("v", &AttentionCall::v)
      .field("batch", &AttentionCall::batch)
      .field("heads", &AttentionCall::heads)
      .field("seq_q", &AttentionCall::seq_q)
      .field("seq_k", &AttentionCall::seq_k)
      .field("d_k", &AttentionCall::d_k)
      .field("d_v", &AttentionCall::d_v)
      .field("scale", &AttentionCall::scale)
      .field("output", &AttentionCall::output)
      .field("weights", &AttentionCall::weights)
      .field("trace", &AttentionCall::trace);
  value_object<TokenBatch>("TokenBatch")
      .field("tokens", &TokenBatch::tokens)
      .field("token_types", &TokenBatch::token_types)
      .field("padding", &TokenBatch::padding)
      .field("batch", &TokenBatch::batch)
      .field("length", &TokenBatch::length);
  value_object<EncoderMemory>("EncoderMemory")
      .field("states", &EncoderMemory::states)
      .field("padding", &EncoderMemory::padding)
      .field("length", &EncoderMemory::length);
  value_object<DecoderOutputs>("DecoderOutputs")
      .field("logits", &DecoderOutputs::logits)
      .field("self_attention", &DecoderOutputs::self_attention)
      .field("cross_attention", &DecoderOutputs::cross_attention);
  value_object<PoolArgs>("PoolArgs")
      .field("hidden", &PoolArgs::hidden)
      .field("padding", &PoolArgs::padding)
      .field("batch", &PoolArgs::batch)
      .field("length", &PoolArgs::length)
      .field("dim", &PoolArgs::dim)
      .field("out", &PoolArgs::out);
}

// Each family's config, under config.json's field names.
void bind_configs() {
  using emscripten::value_object;
  value_object<attn::GptConfig>("Gpt2Config")
      .field("vocab_size", &attn::GptConfig::vocab_size)
      .field("n_positions", &attn::GptConfig::n_positions)
      .field("n_embd", &attn::GptConfig::n_embd)
      .field("n_layer", &attn::GptConfig::n_layer)
      .field("n_head", &attn::GptConfig::n_head)
      .field("layer_norm_epsilon", &attn::GptConfig::layer_norm_eps);
  value_object<RopeScaling>("RopeScaling")
      .field("rope_type", &RopeScaling::rope_type)
      .field("factor", &RopeScaling::factor)
      .field("low_freq_factor", &RopeScaling::low_freq_factor)
      .field("high_freq_factor", &RopeScaling::high_freq_factor)
      .field("attention_factor", &RopeScaling::attention_factor)
      .field("original_max_position_embeddings", &RopeScaling::original_max_position_embeddings)
      .field("short_factor", &RopeScaling::short_factor)
      .field("long_factor", &RopeScaling::long_factor);
  value_object<attn::LlamaConfig>("LlamaConfig")
      .field("vocab_size", &attn::LlamaConfig::vocab_size)
      .field("max_position_embeddings", &attn::LlamaConfig::max_position_embeddings)
      .field("hidden_size", &attn::LlamaConfig::hidden_size)
      .field("intermediate_size", &attn::LlamaConfig::intermediate_size)
      .field("num_hidden_layers", &attn::LlamaConfig::num_hidden_layers)
      .field("num_attention_heads", &attn::LlamaConfig::num_attention_heads)
      .field("num_key_value_heads", &attn::LlamaConfig::num_key_value_heads)
      .field("head_dim", &attn::LlamaConfig::head_dim)
      .field("rms_norm_eps", &attn::LlamaConfig::rms_norm_eps)
      .field("rope_theta", &get_rope_theta, &set_rope_theta)
      .field("rope_scaling", &get_rope_scaling, &set_rope_scaling)
      .field("attention_bias", &attn::LlamaConfig::attention_bias)
      .field("tie_word_embeddings", &attn::LlamaConfig::tie_word_embeddings)
      .field("sliding_window", &attn::LlamaConfig::sliding_window)
      .field("qk_norm", &attn::LlamaConfig::qk_norm)
      .field("rope_layers", &attn::LlamaConfig::rope_layers)
      .field("fused_projections", &attn::LlamaConfig::fused_projections)
      .field("rotary_dim", &get_rotary_dim, &set_rotary_dim)
      .field("window_layers", &attn::LlamaConfig::window_layers)
      .field("rope_local_theta", &attn::LlamaConfig::rope_local_theta)
      .field("attention_scale", &attn::LlamaConfig::attention_scale)
      .field("final_logit_softcapping", &attn::LlamaConfig::final_logit_softcapping)
      .field("unit_offset_norms", &attn::LlamaConfig::unit_offset_norms)
      .field("sandwich_norms", &attn::LlamaConfig::sandwich_norms)
      .field("scale_embeddings", &attn::LlamaConfig::scale_embeddings)
      .field("gelu_mlp", &attn::LlamaConfig::gelu_mlp)
      .field("model_type", &attn::LlamaConfig::model_type);
  value_object<attn::BartConfig>("BartConfig")
      .field("vocab_size", &attn::BartConfig::vocab_size)
      .field("max_position_embeddings", &attn::BartConfig::max_position_embeddings)
      .field("d_model", &attn::BartConfig::d_model)
      .field("encoder_layers", &attn::BartConfig::encoder_layers)
      .field("decoder_layers", &attn::BartConfig::decoder_layers)
      .field("encoder_attention_heads", &attn::BartConfig::encoder_attention_heads)
      .field("decoder_attention_heads", &attn::BartConfig::decoder_attention_heads)
      .field("encoder_ffn_dim", &attn::BartConfig::encoder_ffn_dim)
      .field("decoder_ffn_dim", &attn::BartConfig::decoder_ffn_dim)
      .field("activation_function", &attn::BartConfig::activation)
      .field("scale_embedding", &attn::BartConfig::scale_embedding);
  // pooler / mlm_head: whether the checkpoint has pooler.dense.* / cls.predictions.*.
  value_object<attn::BertConfig>("BertConfig")
      .field("vocab_size", &attn::BertConfig::vocab_size)
      .field("max_position_embeddings", &attn::BertConfig::max_position_embeddings)
      .field("type_vocab_size", &attn::BertConfig::type_vocab_size)
      .field("hidden_size", &attn::BertConfig::hidden_size)
      .field("num_hidden_layers", &attn::BertConfig::num_hidden_layers)
      .field("num_attention_heads", &attn::BertConfig::num_attention_heads)
      .field("intermediate_size", &attn::BertConfig::intermediate_size)
      .field("layer_norm_eps", &attn::BertConfig::layer_norm_eps)
      .field("hidden_act", &attn::BertConfig::hidden_act)
      .field("pooler", &attn::BertConfig::pooler)
      .field("mlm_head", &attn::BertConfig::mlm_head);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_wasm) {
  bind_enums();
  bind_value_objects();
  bind_configs();
  emscripten::function("kernelsName", &kernelsName);
  emscripten::function("quantProduct", &quantProduct);
  emscripten::function("heapBytesInUse", &heapBytesInUse);
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
  emscripten::function("encodeRows", &encodeRows);
  emscripten::function("decodeRows", &decodeRows);
  emscripten::class_<Gpt2Handle> gpt2("Gpt2Handle");
  bind_decoder_handle<Gpt2Handle, attn::GptConfig>(gpt2);
  emscripten::class_<LlamaHandle> llama("LlamaHandle");
  bind_decoder_handle<LlamaHandle, attn::LlamaConfig>(llama);
  llama.function("heldTensor", emscripten::optional_override([](LlamaHandle& h, int i) { return h.heldTensor(i); }));
  emscripten::class_<BartHandle> bart("BartHandle");
  bind_model_handle<BartHandle, attn::BartConfig>(bart);
  bart.function("encode", &BartHandle::encode)
      .function("decode", &BartHandle::decode)
      .function("startDecoding", &BartHandle::startDecoding)
      .function("step", &BartHandle::step)
      .function("reorderCache", &BartHandle::reorderCache)
      .function("cachedLength", &BartHandle::cachedLength);
  emscripten::class_<BertHandle> bert("BertHandle");
  bind_model_handle<BertHandle, attn::BertConfig>(bert);
  bert.function("forward", &BertHandle::forward)
      .function("mlmLogits", &BertHandle::mlmLogits)
      .function("pooler", &BertHandle::pooler);
}
