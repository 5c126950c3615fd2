#include "tensors/weight.h"

#include <cstring>
#include <vector>

namespace attn {

WeightView WeightView::outputs(int first, int count) const {
  WeightView v = *this;
  v.out = count;
  if (panels) {
    const int at = this->first + first;
    v.data = static_cast<const float*>(data) + static_cast<std::size_t>(at / kPanel) * kPanel * in;
    v.first = at % kPanel;
  } else {
    v.data = bytes() + static_cast<std::size_t>(first) * row_bytes(type, in);
  }
  return v;
}

void WeightView::dequantize_output(int r, float* out_row) const {
  if (panels) {
    const float* w = static_cast<const float*>(data);
    for (int k = 0; k < in; ++k) out_row[k] = w[panel_index(in, first + r, k)];
    return;
  }
  weight_type_info(type).decode(bytes() + static_cast<std::size_t>(r) * row_bytes(type, in), in, out_row);
}

namespace {
int held_outputs(bool panels, int out) { return panels ? (out + kPanel - 1) / kPanel * kPanel : out; }
}  // namespace

bool Weight::allocate(WeightType t, bool panels_, int out_, int in_) {
  type = t, panels = panels_ && t == WeightType::kF32, out = out_, in = in_;
  // Bounded in bytes by kMaxFloats floats' worth (product_or_zero bounds a count of floats: a
  // matrix of over 512 MiB, e.g. a 128256 x 2048 F16 embedding, was refused on wasm32).
  const std::size_t rows = std::size_t(held_outputs(panels, out_)), row = row_bytes(t, in_);
  if (rows != 0 && row > kMaxFloats / rows * sizeof(float)) return false;
  const std::size_t bytes = row * rows;
  if (!storage.resize((bytes + 3) / 4)) return false;
  if (panels && bytes) std::memset(storage.data(), 0, bytes);  // (the last panel's padding)
  return true;
}

std::size_t Weight::byte_size() const { return row_bytes(type, in) * static_cast<std::size_t>(held_outputs(panels, out)); }

void Weight::set_output(int r, const float* values) {
  for (int k = 0; k < in; ++k) storage.data()[panel_index(in, r, k)] = values[k];
}

void Weight::set_input(int k, const float* values, int first, int n) {
  for (int j = 0; j < n; ++j) storage.data()[panel_index(in, first + j, k)] = values[j];
}

WeightView Weight::view() const { return {type, panels, storage.data(), out, in, 0}; }

std::string concat_outputs(Weight* const* parts, int count, Weight* out) {
  const Weight& first = *parts[0];
  int total = 0;
  for (int p = 0; p < count; ++p) {
    if (parts[p]->type != first.type || parts[p]->panels != first.panels || parts[p]->in != first.in)
      return "the parts of a fused projection differ in storage or inputs";
    total += parts[p]->out;
  }
  Weight w;
  if (!w.allocate(first.type, first.panels, total, first.in))
    return "out of memory: a fused projection needs " + std::to_string(row_bytes(first.type, first.in) * total >> 20) + " MiB";
  int at = 0;
  std::vector<float> row(first.panels ? first.in : 0);
  for (int p = 0; p < count; ++p) {
    const Weight& part = *parts[p];
    if (first.panels) {  // output by output: a part's outputs need not fill whole panels
      for (int r = 0; r < part.out; ++r) {
        part.view().dequantize_output(r, row.data());
        w.set_output(at + r, row.data());
      }
    } else {  // out x in rows: one after the other
      std::memcpy(w.bytes() + row_bytes(first.type, first.in) * at, part.storage.data(), part.byte_size());
    }
    at += part.out;
  }
  for (int p = 0; p < count; ++p) *parts[p] = Weight();
  *out = std::move(w);
  return "";
}

}  // namespace attn
