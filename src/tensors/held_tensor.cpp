#include "tensors/held_tensor.h"

#include <cstring>

namespace attn {

void held_tensor_bytes(const HeldTensor& t, std::vector<unsigned char>* out) {
  if (t.weight.out == 0) {
    out->resize(t.count * sizeof(float));
    if (t.count) std::memcpy(out->data(), t.values, out->size());
    return;
  }
  const WeightView& w = t.weight;
  const std::size_t row = row_bytes(w.type, w.in);
  out->resize(row * static_cast<std::size_t>(w.out));
  if (!w.panels) {  // out x in rows already, one after the other
    std::memcpy(out->data(), w.bytes(), out->size());
    return;
  }
  for (int r = 0; r < w.out; ++r)  // (F32: each output's inputs gathered from its panel)
    w.dequantize_output(r, reinterpret_cast<float*>(out->data() + row * r));
}

}  // namespace attn
