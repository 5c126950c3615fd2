// The one way checkpoint tensors get into a model. A model declares each tensor it reads, by the
// checkpoint's own name and shape, and where it lives; the loader (in the wrapper) looks the names
// up in a safetensors file and calls set(). Names are the checkpoint's (Hugging Face), so a missing
// or mis-shaped tensor is reported in the words a user can find in their file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "tensors/buffer.h"
#include "tensors/held_tensor.h"
#include "tensors/weight.h"

namespace attn {

// How a 2-D weight is stored in the checkpoint. The library computes y = x W + b with W as in x out.
enum class Layout {
  kAsIs,        // vectors, embedding tables, and GPT-2's Conv1D weights (in x out)
  kTransposed,  // nn.Linear weights (out x in): transposed once, on load
};

// How a checkpoint stores a tensor's values (little-endian): one of the weight types, by the name
// safetensors or GGUF gives it (weight_types.h's stored_name: F32, F16, BF16, Q8_0, Q4_K, ...). A
// GGUF's quantized blocks are ggml's, so a matrix stored as one of them is held as it is stored.
using Dtype = WeightType;

// How a model holds its weight matrices (loadModel's dtype; the codes the bindings pass). Auto:
// as the checkpoint stores them (F32, F16, BF16, a GGUF's blocks). F32 / F16: converted to that.
// Q8 / Q4: quantized (weight.h), each tensor as it is set; matrices declared not quantizable
// (position and token-type tables) then stay as stored, and under Q4 the word embeddings (the tied
// language-model head, where 4-bit errors land straight on the logits) are Q8: brown-gpt2's held-out
// perplexity is +2.6% over f32 so (with ggml's Q4_0 scales: +4.4%, and +23% with the head at 4 bits
// too). A matrix whose inputs are not whole 32-value blocks is held at F16 instead (as llama.cpp's
// quantizer falls back to a wider type): held_type() says what each tensor became.
enum class WeightStorage { kAuto = 0, kF32 = 1, kF16 = 2, kQ8 = 3, kQ4 = 4 };
const char* weight_storage_name(WeightStorage s);  // "auto", "f32", "f16", "q8", "q4"

// Checks a config's sizes: each in [1, max]. "" = ok, else "<name> must be between 1 and <max>, got <v>".
struct Dim {
  const char* name;
  int value, max;
};
std::string check_dims(std::initializer_list<Dim> dims);
// Checks token ids are in [0, limit). what: "token", "token type", ...
std::string check_ids(const char* what, const std::int32_t* ids, std::size_t n, int limit, const char* limit_name);

class TensorTable {
 public:
  struct Entry {
    std::string name;
    std::vector<int> shape;  // as stored in the checkpoint
    Buffer* dst;             // a vector or a float matrix, else null
    Layout layout;
    bool optional;
    // A weight matrix (dst null): kept in the table's storage type. Its outputs are the stored
    // rows when `embedding` (a table of rows x dim) or with Layout::kTransposed (nn.Linear), the
    // stored columns otherwise (GPT-2's Conv1D).
    Weight* weight;
    bool embedding;
    bool quantizable;  // false: Q8/Q4 storage leaves it as stored
    std::size_t held = 0;    // bytes it takes as set (0: not set)
    std::size_t filled = 0;  // elements set so far (set_part)
    Dtype part_dtype = Dtype::kF32;
    WeightType held_type = WeightType::kF32;
  };

  void clear() {
    entries_.clear();
    sealed_ = false;
  }
  // After a model's finalize(): set() refuses, since the model has taken its weights over.
  void seal() { sealed_ = true; }
  // A vector or float table, copied as stored (widened to float32).
  void add(std::string name, std::vector<int> shape, Buffer* dst, Layout layout = Layout::kAsIs, bool optional = false);
  // A weight matrix (see Entry): a linear layer's (embedding false) or a lookup table's.
  void add_weight(std::string name, std::vector<int> shape, Weight* w, Layout layout, bool embedding,
                  bool quantizable = true);
  // The storage of the weights set from now on (kept by clear()).
  void set_storage(WeightStorage s) { storage_ = s; }
  WeightStorage storage() const { return storage_; }

  int size() const { return static_cast<int>(entries_.size()); }
  const Entry& entry(int i) const { return entries_[i]; }
  // The type tensor i is held in once set (vectors: F32).
  WeightType held_type(int i) const { return entries_[i].held_type; }

  // Copies a tensor in: vectors widened to float32; weight matrices converted to their storage
  // type (F16 and BF16 kept as stored under auto, quantized under Q8/Q4) and laid out for their
  // kernels, one row at a time (a Conv1D matrix going to 16 or fewer bits is turned through one
  // float32 staging copy of itself). Checks the size and that every value is finite. "" = ok.
  std::string set(const std::string& name, const void* data, std::size_t n, Dtype dtype);
  std::string set(const std::string& name, const float* data, std::size_t n) { return set(name, data, n, Dtype::kF32); }
  // The same, a part at a time, so that a large tensor needs no staging copy of its own size:
  // elements [first, first + count) of the n stored (data points at element `first`), whole
  // stored rows (a matrix's last dimension), in order, in one dtype. The tensor counts as set once
  // its last part is in; a failing part leaves it unset.
  std::string set_part(const std::string& name, const void* data, std::size_t n, std::size_t first, std::size_t count,
                       Dtype dtype);
  // Where a tensor's stored bytes may be written directly, when its storage is its stored bytes
  // as they are (same type, same orientation; n its element count): its own buffer, sized; set()
  // with that pointer then only checks it. Null otherwise (or out of memory): stage the bytes.
  void* stored_destination(const std::string& name, std::size_t n, Dtype dtype);
  // Bytes the set tensors take in their storage (what a model's parameters cost in memory; the
  // same after finalize(), which only hands matrices over or puts them side by side).
  std::size_t held_bytes() const;
  // Tensor i where it was set, when it is still there (a model's layers did not take it over at
  // finalize(): see held_tensor.h). False when it was never set or has moved.
  bool held_in_place(int i, HeldTensor* out) const;
  // "" when every required tensor has been set, else "missing tensor <name>".
  std::string check_complete() const;

 private:
  WeightType type_for(const Entry& e, Dtype stored) const;
  std::string set_values(Entry& e, const void* data, std::size_t n, std::size_t first, std::size_t count, Dtype dtype);
  // Stored rows [r0, r1) of a weight matrix (allocated at row 0).
  std::string set_weight_rows(Entry& e, const void* data, int r0, int r1, Dtype dtype);
  std::string finish_weight(Entry& e);  // after the last part: a turned Conv1D matrix encoded
  std::vector<Entry> entries_;
  WeightStorage storage_ = WeightStorage::kAuto;
  bool sealed_ = false;
  Buffer staging_;  // a Conv1D matrix as float32, turned (only while it is set)
};

}  // namespace attn
