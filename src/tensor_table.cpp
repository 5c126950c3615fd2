#include "tensor_table.h"

#include <cstring>

#include "attention.h"  // check_finite

namespace attn {

std::string check_dims(std::initializer_list<Dim> dims) {
  for (const Dim& d : dims)
    if (d.value < 1 || d.value > d.max)
      return std::string(d.name) + " must be between 1 and " + std::to_string(d.max) + ", got " + std::to_string(d.value);
  return "";
}

std::string check_ids(const char* what, const std::int32_t* ids, std::size_t n, int limit, const char* limit_name) {
  for (std::size_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= limit)
      return std::string(what) + " " + std::to_string(ids[i]) + " at position " + std::to_string(i) + " is outside the " +
             limit_name + " of " + std::to_string(limit);
  return "";
}

void TensorTable::add(std::string name, std::vector<int> shape, Buffer* dst, Layout layout, bool optional) {
  entries_.push_back({std::move(name), std::move(shape), dst, layout, optional});
}

std::string TensorTable::set(const std::string& name, const float* data, std::size_t n) {
  if (sealed_) return "the model is finalized: configure() again to load new weights";
  for (Entry& e : entries_) {
    if (e.name != name) continue;
    bool ok = true;
    std::size_t want = 1;
    for (int d : e.shape) want = product_or_zero({want, std::size_t(d)}, &ok);
    if (!ok) return out_of_memory(name.c_str(), kMaxFloats);
    if (n != want) return name + " has " + std::to_string(n) + " elements, expected " + std::to_string(want);
    std::string err = check_finite(name.c_str(), data, n);
    if (!err.empty()) return err;
    if (!e.dst->resize(n)) return out_of_memory(name.c_str(), n);
    if (e.layout == Layout::kTransposed) {
      // out x in -> in x out
      const int rows = e.shape[0], cols = e.shape[1];
      float* out = e.dst->data();
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) out[static_cast<long>(c) * rows + r] = data[static_cast<long>(r) * cols + c];
    } else {
      std::memcpy(e.dst->data(), data, n * sizeof(float));
    }
    return "";
  }
  return "unknown tensor " + name;
}

std::string TensorTable::check_complete() const {
  for (const Entry& e : entries_)
    if (!e.optional && e.dst->empty()) return "missing tensor " + e.name;
  return "";
}

}  // namespace attn
