#include "tensors/tensor_table.h"

#include <cstring>
#include <vector>

#include "tensors/finite.h"
#include "tensors/half.h"

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

const char* weight_storage_name(WeightStorage s) {
  switch (s) {
    case WeightStorage::kF32: return "f32";
    case WeightStorage::kF16: return "f16";
    case WeightStorage::kQ8: return "q8";
    case WeightStorage::kQ4: return "q4";
    default: return "auto";
  }
}

void TensorTable::add(std::string name, std::vector<int> shape, Buffer* dst, Layout layout, bool optional) {
  entries_.push_back({std::move(name), std::move(shape), dst, layout, optional, nullptr, false, false});
}

void TensorTable::add_weight(std::string name, std::vector<int> shape, Weight* w, Layout layout, bool embedding,
                             bool quantizable) {
  entries_.push_back({std::move(name), std::move(shape), nullptr, layout, false, w, embedding, quantizable});
}

namespace {

// Values [i0, i0 + n) of a stored tensor as float32 (quantized: i0 and n whole blocks). Read as
// bytes: the caller's buffer need not be aligned.
void widen(const void* data, Dtype dtype, std::size_t i0, std::size_t n, float* out) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  const WeightTypeInfo& t = weight_type_info(dtype);
  if (dtype == Dtype::kF32) {
    std::memcpy(out, bytes + 4 * i0, n * sizeof(float));
    return;
  }
  if (is_quantized(dtype)) {
    t.decode(bytes + i0 / t.block * t.block_bytes, static_cast<int>(n), out);
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

// A weight entry's stored rows are its outputs (nn.Linear, tables), or its columns (Conv1D).
bool stored_by_output(const TensorTable::Entry& e) { return e.embedding || e.layout == Layout::kTransposed; }
int outputs_of(const TensorTable::Entry& e) { return stored_by_output(e) ? e.shape[0] : e.shape[1]; }
int inputs_of(const TensorTable::Entry& e) { return stored_by_output(e) ? e.shape[1] : e.shape[0]; }

// Weight t (in panels or not) holds the stored bytes of entry e as they are: rows by output.
bool holds_as_stored(const TensorTable::Entry& e, Dtype d, WeightType t, bool panels) {
  return !panels && t == d && stored_by_output(e);
}

// F32 linear weights are held in panels (weight.h), and so are F32 word embeddings (the tables
// declared quantizable): they are also the LM heads, a decoding step's largest product, while a
// lookup reads one row (strided in panels: one token's dim values). Position tables and the other
// types are held by output.
bool held_in_panels(const TensorTable::Entry& e, WeightType t) {
  return t == WeightType::kF32 && (!e.embedding || e.quantizable);
}

// The first value of n stored values of type t that is not finite, or -1 (16-bit: the all-ones
// exponent; quantized: decoded a block at a time, since a non-finite f16 scale makes its block so).
long first_non_finite_stored(const void* data, std::size_t n, WeightType t) {
  if (t == WeightType::kF32) return first_non_finite(static_cast<const float*>(data), n);
  if (is_quantized(t)) {
    const WeightTypeInfo& info = weight_type_info(t);
    std::vector<float> block(info.block);
    for (std::size_t b = 0; b < n / info.block; ++b) {
      info.decode(static_cast<const unsigned char*>(data) + b * info.block_bytes, info.block, block.data());
      const long i = first_non_finite(block.data(), info.block);
      if (i >= 0) return static_cast<long>(b * info.block) + i;
    }
    return -1;
  }
  const std::uint16_t* h = static_cast<const std::uint16_t*>(data);
  const std::uint16_t exponent = t == WeightType::kF16 ? 0x7c00u : 0x7f80u;
  for (std::size_t i = 0; i < n; ++i)
    if ((h[i] & exponent) == exponent) return static_cast<long>(i);
  return -1;
}

float stored_value(const void* data, std::size_t i, Dtype d) {
  const int block = weight_type_info(d).block;
  std::vector<float> v(block);
  widen(data, d, i / block * block, block, v.data());
  return v[i % block];
}

}  // namespace

std::string TensorTable::set(const std::string& name, const void* data, std::size_t n, Dtype dtype) {
  return set_part(name, data, n, 0, n, dtype);
}

std::string TensorTable::set_part(const std::string& name, const void* data, std::size_t n, std::size_t first,
                                  std::size_t count, Dtype dtype) {
  if (sealed_) return "the model is finalized: configure() again to load new weights";
  for (Entry& e : entries_) {
    if (e.name != name) continue;
    bool ok = true;
    std::size_t want = 1;
    for (int d : e.shape) want = product_or_zero({want, std::size_t(d)}, &ok);
    if (!ok) return out_of_memory(name.c_str(), kMaxFloats);
    if (n != want) return name + " has " + std::to_string(n) + " elements, expected " + std::to_string(want);
    // Parts are whole stored rows (a vector's are single values), in order.
    const std::size_t row = e.weight ? std::size_t(e.shape[1]) : 1;
    if (count == 0 || first > n || count > n - first || first % row != 0 || count % row != 0)
      return name + ": elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
             ") are not whole rows of its " + std::to_string(n);
    // A quantized dtype comes in whole blocks: a matrix's rows, a vector's parts.
    const WeightTypeInfo& stored = weight_type_info(dtype);
    if ((e.weight ? row : count) % stored.block != 0 || first % stored.block != 0)
      return name + ": stored as " + stored.stored_name + " in blocks of " + std::to_string(stored.block) +
             " values, but its " + (e.weight ? "rows have " + std::to_string(row) : "part has " + std::to_string(count)) +
             " values";
    if (first != 0 && (first != e.filled || dtype != e.part_dtype))
      return name + ": its parts must come in order, in one dtype (expected element " + std::to_string(e.filled) + ")";
    if (first == 0) {
      e.held = e.filled = 0;
      e.part_dtype = dtype;
    }
    std::string err = e.weight ? set_weight_rows(e, data, first / row, (first + count) / row, dtype)
                               : set_values(e, data, n, first, count, dtype);
    if (err.empty()) e.filled = first + count;
    if (err.empty() && e.filled == n) {
      if (e.weight) err = finish_weight(e);
      e.held = e.weight ? e.weight->byte_size() : n * sizeof(float);
    }
    if (err.empty()) return "";
    if (e.weight) *e.weight = Weight();  // not set
    else *e.dst = Buffer();
    e.filled = e.held = 0;
    staging_ = Buffer();
    return err;
  }
  return "unknown tensor " + name;
}

std::string TensorTable::set_values(Entry& e, const void* data, std::size_t n, std::size_t first, std::size_t count,
                                    Dtype dtype) {
  if (first == 0 && !e.dst->resize(n)) return out_of_memory(e.name.c_str(), n);
  float* out = e.dst->data() + first;
  widen(data, dtype, 0, count, out);
  const long bad = first_non_finite(out, count);
  return bad < 0 ? "" : non_finite_message(e.name, out[bad], static_cast<long>(first) + bad);
}

WeightType TensorTable::type_for(const Entry& e, Dtype stored) const {
  switch (storage_) {
    case WeightStorage::kF32: return WeightType::kF32;
    case WeightStorage::kF16: return WeightType::kF16;
    // (Q8_0 and Q4_0 take blocks of 32 inputs: a matrix with other widths falls back to F16.)
    case WeightStorage::kQ8: return !e.quantizable ? stored : inputs_of(e) % kQuantBlock ? WeightType::kF16 : WeightType::kQ8_0;
    case WeightStorage::kQ4:
      if (!e.quantizable) return stored;
      if (inputs_of(e) % kQuantBlock) return WeightType::kF16;
      return e.embedding ? WeightType::kQ8_0 : WeightType::kQ4_0;
    default: return stored;
  }
}

std::string TensorTable::set_weight_rows(Entry& e, const void* data, int r0, int r1, Dtype dtype) {
  const int out = outputs_of(e), in = inputs_of(e), cols = e.shape[1];  // cols: a stored row's values
  Weight& w = *e.weight;
  if (r0 == 0) {
    const WeightType t = type_for(e, dtype);
    const bool panels = held_in_panels(e, t);
    e.held_type = t;
    // (Sized as before when the bytes were written in place: the block, and so `data`, stays.)
    if (!w.allocate(t, panels, out, in)) return out_of_memory(e.name.c_str(), row_bytes(t, in) * out / 4);
    const bool turned = !panels && !holds_as_stored(e, dtype, t, panels) && !stored_by_output(e);
    if (turned && !staging_.resize(std::size_t(out) * in)) return out_of_memory(e.name.c_str(), std::size_t(out) * in);
  }
  const std::size_t values = std::size_t(r1 - r0) * cols;
  long bad = -1;  // the first value that is not finite, as an index into this part
  if (w.panels) {
    // One stored row at a time (an output's inputs, or Conv1D's: an input's outputs): widened,
    // checked, then placed in its panels.
    std::vector<float> row(cols);
    for (int r = r0; r < r1 && bad < 0; ++r) {
      widen(data, dtype, std::size_t(r - r0) * cols, cols, row.data());
      const long i = first_non_finite(row.data(), cols);
      if (i >= 0) bad = static_cast<long>(r - r0) * cols + i;
      else if (stored_by_output(e)) w.set_output(r, row.data());
      else w.set_input(r, row.data(), 0, cols);
    }
  } else if (holds_as_stored(e, dtype, w.type, w.panels)) {
    // Stored rows are the storage's rows: copied (or written in place) or widened, then checked.
    if (w.type != WeightType::kF32) {
      unsigned char* at = w.bytes() + row_bytes(w.type, cols) * r0;
      if (data != at) std::memcpy(at, data, row_bytes(w.type, cols) * (r1 - r0));
      bad = first_non_finite_stored(at, values, w.type);
    } else {
      float* at = w.storage.data() + std::size_t(r0) * cols;
      if (data != at) widen(data, dtype, 0, values, at);
      bad = first_non_finite(at, values);
    }
  } else if (stored_by_output(e)) {
    // One stored row (an output's inputs) at a time: widened, checked, then stored.
    std::vector<float> row(in);
    for (int r = r0; r < r1 && bad < 0; ++r) {
      widen(data, dtype, std::size_t(r - r0) * in, in, row.data());
      const long i = first_non_finite(row.data(), in);
      if (i >= 0) bad = static_cast<long>(r - r0) * in + i;
      else if (std::string err = encode_row(w.type, row.data(), in, w.bytes() + row_bytes(w.type, in) * r); !err.empty())
        return e.name + ": output " + std::to_string(r) + ": " + err + "; load this model with dtype 'f32'";
    }
  } else {
    // Conv1D (in x out) into out x in rows: turned through a float32 copy of this one tensor,
    // stored once its last part is in (finish_weight).
    std::vector<float> row(out);
    for (int r = r0; r < r1 && bad < 0; ++r) {
      widen(data, dtype, std::size_t(r - r0) * out, out, row.data());
      const long i = first_non_finite(row.data(), out);
      if (i >= 0) bad = static_cast<long>(r - r0) * out + i;
      for (int c = 0; c < out; ++c) staging_.data()[static_cast<long>(c) * in + r] = row[c];
    }
  }
  if (bad < 0) return "";
  return non_finite_message(e.name, stored_value(data, bad, dtype), static_cast<long>(r0) * cols + bad);
}

std::string TensorTable::finish_weight(Entry& e) {
  Weight& w = *e.weight;
  if (staging_.empty()) return "";
  for (int c = 0; c < w.out; ++c)
    if (std::string err = encode_row(w.type, staging_.data() + static_cast<long>(c) * w.in, w.in, w.bytes() + row_bytes(w.type, w.in) * c);
        !err.empty())
      return e.name + ": output " + std::to_string(c) + ": " + err + "; load this model with dtype 'f32'";
  staging_ = Buffer();
  return "";
}

void* TensorTable::stored_destination(const std::string& name, std::size_t n, Dtype dtype) {
  if (sealed_) return nullptr;
  for (Entry& e : entries_) {
    if (e.name != name) continue;
    if (!e.weight || std::size_t(outputs_of(e)) * inputs_of(e) != n) return nullptr;
    const WeightType t = type_for(e, dtype);
    const bool panels = held_in_panels(e, t);
    if (!holds_as_stored(e, dtype, t, panels) || !e.weight->allocate(t, panels, outputs_of(e), inputs_of(e)))
      return nullptr;
    return e.weight->bytes();
  }
  return nullptr;
}

std::size_t TensorTable::held_bytes() const {
  std::size_t sum = 0;
  for (const Entry& e : entries_) sum += e.held;
  return sum;
}

bool TensorTable::held_in_place(int i, HeldTensor* out) const {
  const Entry& e = entries_[i];
  *out = HeldTensor();
  if (e.held == 0) return false;
  if (e.weight) {
    if (e.weight->empty()) return false;
    out->weight = e.weight->view();
  } else {
    if (e.dst->empty()) return false;
    out->values = e.dst->data(), out->count = e.dst->size();
  }
  return true;
}

std::string TensorTable::check_complete() const {
  for (const Entry& e : entries_)
    if (!e.optional && e.held == 0) return "missing tensor " + e.name;  // (or only some of its parts)
  return "";
}

}  // namespace attn
