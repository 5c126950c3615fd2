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

#include "buffer.h"

namespace attn {

// How a 2-D weight is stored in the checkpoint. The library computes y = x W + b with W as in x out.
enum class Layout {
  kAsIs,        // vectors, embedding tables, and GPT-2's Conv1D weights (in x out)
  kTransposed,  // nn.Linear weights (out x in): transposed once, on load
};

// How a checkpoint stores a tensor's values (little-endian), as safetensors names them.
enum class Dtype { kF32 = 0, kF16 = 1, kBF16 = 2 };  // (the codes the bindings pass)

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
    Buffer* dst;
    Layout layout;
    bool optional;
    HalfBuffer* half;  // non-null: F16 values are kept as stored here (dst stays empty), not widened
  };

  void clear() {
    entries_.clear();
    sealed_ = false;
  }
  // After a model's finalize(): set() refuses, since the model has taken its weights over.
  void seal() { sealed_ = true; }
  void add(std::string name, std::vector<int> shape, Buffer* dst, Layout layout = Layout::kAsIs, bool optional = false,
           HalfBuffer* half = nullptr);

  int size() const { return static_cast<int>(entries_.size()); }
  const Entry& entry(int i) const { return entries_[i]; }

  // Copies a tensor in, widening 16-bit floats to float32 (except F16 into an entry that keeps
  // halves) and transposing nn.Linear weights on the way, and checks its size and that it is
  // finite. "" = ok.
  std::string set(const std::string& name, const void* data, std::size_t n, Dtype dtype);
  std::string set(const std::string& name, const float* data, std::size_t n) { return set(name, data, n, Dtype::kF32); }
  // Where a tensor's stored bytes may be written directly when it is kept as stored (F16 into an
  // entry that keeps halves, n its element count): its own buffer, sized; set() with that pointer
  // then only checks it. Null otherwise (or out of memory): stage the bytes and set() copies.
  void* stored_destination(const std::string& name, std::size_t n, Dtype dtype);
  // "" when every required tensor has been set, else "missing tensor <name>".
  std::string check_complete() const;

 private:
  // set() of F16 values into an entry that keeps halves: copied as they are, checked finite.
  static std::string set_half(Entry& e, const void* data, std::size_t n);
  std::vector<Entry> entries_;
  bool sealed_ = false;
};

}  // namespace attn
