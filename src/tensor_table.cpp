#include "tensor_table.h"

#include <cstring>
#include <vector>

#include "attention.h"  // first_non_finite, non_finite_message
#include "half.h"

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

void TensorTable::add(std::string name, std::vector<int> shape, Buffer* dst, Layout layout, bool optional,
                      HalfBuffer* half) {
  entries_.push_back({std::move(name), std::move(shape), dst, layout, optional, layout == Layout::kAsIs ? half : nullptr});
}

namespace {

// Values [i0, i0 + n) of a stored tensor as float32. Read as bytes: the caller's buffer need not
// be aligned.
void widen(const void* data, Dtype dtype, std::size_t i0, std::size_t n, float* out) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  if (dtype == Dtype::kF32) {
    std::memcpy(out, bytes + 4 * i0, n * sizeof(float));
    return;
  }
  bytes += 2 * i0;
  const auto u16 = [bytes](std::size_t i) {
    std::uint16_t v;  // (memcpy: an unaligned little-endian load)
    std::memcpy(&v, bytes + 2 * i, sizeof v);
    return v;
  };
  if (dtype == Dtype::kF16)
    for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(u16(i));
  else
    for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_float(u16(i));
}

}  // namespace

std::string TensorTable::set(const std::string& name, const void* data, std::size_t n, Dtype dtype) {
  if (sealed_) return "the model is finalized: configure() again to load new weights";
  for (Entry& e : entries_) {
    if (e.name != name) continue;
    bool ok = true;
    std::size_t want = 1;
    for (int d : e.shape) want = product_or_zero({want, std::size_t(d)}, &ok);
    if (!ok) return out_of_memory(name.c_str(), kMaxFloats);
    if (n != want) return name + " has " + std::to_string(n) + " elements, expected " + std::to_string(want);
    if (e.half && dtype == Dtype::kF16) return set_half(e, data, n);
    if (e.half) *e.half = HalfBuffer();  // (widened into dst instead)
    if (!e.dst->resize(n)) return out_of_memory(name.c_str(), n);
    float* out = e.dst->data();
    long bad = -1;  // the first value that is not finite, as an index into the stored tensor
    float bad_value = 0;
    if (e.layout == Layout::kTransposed) {
      // out x in -> in x out, one stored row at a time
      const int rows = e.shape[0], cols = e.shape[1];
      std::vector<float> row(cols);
      for (int r = 0; r < rows && bad < 0; ++r) {
        widen(data, dtype, static_cast<std::size_t>(r) * cols, cols, row.data());
        const long i = first_non_finite(row.data(), cols);
        if (i >= 0) bad = static_cast<long>(r) * cols + i, bad_value = row[i];
        for (int c = 0; c < cols; ++c) out[static_cast<long>(c) * rows + r] = row[c];
      }
    } else {
      widen(data, dtype, 0, n, out);
      bad = first_non_finite(out, n);
      if (bad >= 0) bad_value = out[bad];
    }
    if (bad < 0) return "";
    *e.dst = Buffer();  // not set
    return non_finite_message(name, bad_value, bad);
  }
  return "unknown tensor " + name;
}

void* TensorTable::stored_destination(const std::string& name, std::size_t n, Dtype dtype) {
  if (sealed_ || dtype != Dtype::kF16) return nullptr;
  for (Entry& e : entries_)
    if (e.name == name) return e.half && e.half->resize(n) ? e.half->data() : nullptr;
  return nullptr;
}

std::string TensorTable::set_half(Entry& e, const void* data, std::size_t n) {
  *e.dst = Buffer();
  if (!e.half->resize(n)) return out_of_memory(e.name.c_str(), n);
  std::uint16_t* h = e.half->data();
  if (data != h) std::memcpy(h, data, n * sizeof *h);  // (else written in place: stored_destination)
  for (std::size_t i = 0; i < n; ++i) {
    if ((h[i] & 0x7c00u) != 0x7c00u) continue;  // the all-ones exponent: infinity or NaN
    const float value = half_to_float(h[i]);
    *e.half = HalfBuffer();  // not set
    return non_finite_message(e.name, value, static_cast<long>(i));
  }
  return "";
}

std::string TensorTable::check_complete() const {
  for (const Entry& e : entries_)
    if (!e.optional && e.dst->empty() && !(e.half && !e.half->empty())) return "missing tensor " + e.name;
  return "";
}

}  // namespace attn
