#include "tensors/weight.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tensors/half.h"

namespace attn {

const char* weight_type_name(WeightType t) {
  switch (t) {
    case WeightType::kF32: return "f32";
    case WeightType::kF16: return "f16";
    case WeightType::kBF16: return "bf16";
    case WeightType::kQ8: return "q8";
    default: return "q4";
  }
}

std::size_t row_bytes(WeightType t, int cols) {
  const std::size_t n = static_cast<std::size_t>(cols);
  switch (t) {
    case WeightType::kF32: return 4 * n;
    case WeightType::kF16:
    case WeightType::kBF16: return 2 * n;
    case WeightType::kQ8: return n / kQuantBlock * kQ8BlockBytes;
    default: return n / kQuantBlock * kQ4BlockBytes;
  }
}

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

namespace {
std::uint16_t u16_at(const unsigned char* p) {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace

void WeightView::dequantize_output(int r, float* out_row) const {
  if (panels) {
    const float* w = static_cast<const float*>(data);
    for (int k = 0; k < in; ++k) out_row[k] = w[panel_index(in, first + r, k)];
    return;
  }
  const unsigned char* row = bytes() + static_cast<std::size_t>(r) * row_bytes(type, in);
  switch (type) {
    case WeightType::kF32: std::memcpy(out_row, row, in * sizeof(float)); break;
    case WeightType::kF16:
      for (int k = 0; k < in; ++k) out_row[k] = half_to_float(u16_at(row + 2 * k));
      break;
    case WeightType::kBF16:
      for (int k = 0; k < in; ++k) out_row[k] = bf16_to_float(u16_at(row + 2 * k));
      break;
    case WeightType::kQ8: dequantize_q8(row, in, out_row); break;
    case WeightType::kQ4: dequantize_q4(row, in, out_row); break;
  }
}

namespace {
int held_outputs(bool panels, int out) { return panels ? (out + kPanel - 1) / kPanel * kPanel : out; }
}  // namespace

bool Weight::allocate(WeightType t, bool panels_, int out_, int in_) {
  type = t, panels = panels_ && t == WeightType::kF32, out = out_, in = in_;
  bool ok = true;
  const std::size_t bytes = product_or_zero({row_bytes(t, in_), std::size_t(held_outputs(panels, out_))}, &ok);
  if (!ok || !storage.resize((bytes + 3) / 4)) return false;
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

namespace {

// The f16 scale of a block, or false when it does not fit a half. Rounded away from zero, never
// toward it: a smaller scale would push the block's largest value past the top code and clip it
// (by far more than half a step when the scale is a subnormal half, for blocks of tiny values).
bool block_scale(float d, std::uint16_t* bits, float* rounded) {
  *bits = float_to_half(d);
  if (std::fabs(half_to_float(*bits)) < std::fabs(d)) ++*bits;  // the next half away from zero
  *rounded = half_to_float(*bits);
  return std::isfinite(*rounded);
}

std::string show(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

float max_abs(const float* x, int n) {
  float m = 0.0f;
  for (int i = 0; i < n; ++i) m = std::fabs(x[i]) > m ? std::fabs(x[i]) : m;
  return m;
}

}  // namespace

// Scales are rounded to f16 (upward in magnitude) before the values are divided by them, so that
// q * d (with the d the kernels read) is within d / 2 of each value, and |q| <= 127.
bool quantize_q8(const float* x, int n, unsigned char* out) {
  for (int b = 0; b < n; b += kQuantBlock, out += kQ8BlockBytes) {
    std::uint16_t bits;
    float d;
    if (!block_scale(max_abs(x + b, kQuantBlock) / 127.0f, &bits, &d)) return false;
    std::memcpy(out, &bits, 2);
    const float inv = d > 0.0f ? 1.0f / d : 0.0f;
    for (int i = 0; i < kQuantBlock; ++i) {
      const float q = std::nearbyint(x[b + i] * inv);
      out[2 + i] = static_cast<unsigned char>(static_cast<std::int8_t>(q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q));
    }
  }
  return true;
}

// Q4_0's codes for one block at scale d (nibble = round(x / d) + 8, clipped to [0, 15]).
void q4_codes(const float* x, float d, unsigned char* nibbles) {
  const float inv = d != 0.0f ? 1.0f / d : 0.0f;
  const auto code = [&](int i) {
    const float q = std::nearbyint(x[i] * inv) + 8.0f;
    return static_cast<unsigned char>(q < 0.0f ? 0.0f : q > 15.0f ? 15.0f : q);
  };
  for (int j = 0; j < kQuantBlock / 2; ++j) nibbles[j] = static_cast<unsigned char>(code(j) | code(j + 16) << 4);
}

// Q4_0's scale for one block: ggml's d = extreme / -8 (the value of largest magnitude exactly at
// code 0) leaves the other 15 codes a step of |extreme| / 8, so most values sit far from one. As
// llama.cpp's make_qx_quants, try codes from scales around it, give each set of codes its
// least-squares scale (sum x q / sum q^2), and keep the pair with the smallest squared error: a
// few values then clip, for a finer step everywhere else (brown-gpt2 held-out perplexity at q4,
// its head at q8: +2.6% over f32 with this scale, +4.4% with ggml's).
float q4_scale(const float* x) {
  float extreme = 0.0f;
  for (int i = 0; i < kQuantBlock; ++i)
    if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
  if (extreme == 0.0f) return 0.0f;
  // Nine candidates, 7.2 to 8.8 steps across the extreme (19 in steps of 0.1: brown-gpt2's q4
  // perplexity 333.52 instead of 333.67, for about three times the GPT-2-small load time).
  float best_d = extreme / -8.0f, best_fit = -1.0f;
  for (int t = -4; t <= 4; ++t) {
    const float inv = -(8.0f + 0.2f * t) / extreme;
    float xq = 0, qq = 0;
    for (int i = 0; i < kQuantBlock; ++i) {
      float q = std::nearbyint(x[i] * inv);
      q = q < -8.0f ? -8.0f : q > 7.0f ? 7.0f : q;
      xq += x[i] * q, qq += q * q;
    }
    // The squared error with the least-squares scale is sum x^2 - (sum x q)^2 / sum q^2.
    if (qq > 0 && xq * xq / qq > best_fit) best_fit = xq * xq / qq, best_d = xq / qq;
  }
  return best_d;
}

bool quantize_q4(const float* x, int n, unsigned char* out) {
  for (int b = 0; b < n; b += kQuantBlock, out += kQ4BlockBytes) {
    std::uint16_t bits;
    float d;
    if (!block_scale(q4_scale(x + b), &bits, &d)) return false;
    std::memcpy(out, &bits, 2);
    q4_codes(x + b, d, out + 2);  // (with the scale as stored)
  }
  return true;
}

std::string encode_row(WeightType t, const float* x, int n, unsigned char* out) {
  switch (t) {
    case WeightType::kF32: std::memcpy(out, x, std::size_t(n) * sizeof(float)); return "";
    case WeightType::kBF16:
    case WeightType::kF16:
      for (int i = 0; i < n; ++i) {
        const std::uint16_t h = t == WeightType::kF16 ? float_to_half(x[i]) : float_to_bf16(x[i]);
        if ((t == WeightType::kF16 ? h & 0x7c00u : h & 0x7f80u) == (t == WeightType::kF16 ? 0x7c00u : 0x7f80u))
          return "value " + show(x[i]) + " at column " + std::to_string(i) + " is too large for " +
                 weight_type_name(t);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return "";
    case WeightType::kQ8:
    case WeightType::kQ4:
      if (t == WeightType::kQ8 ? quantize_q8(x, n, out) : quantize_q4(x, n, out)) return "";
      return "values up to " + show(max_abs(x, n)) + " are too large for " +
             weight_type_name(t) + "'s f16 block scales";
  }
  return "";
}

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

void dequantize_q8(const unsigned char* blocks, int n, float* out) {
  for (int b = 0; b < n; b += kQuantBlock, blocks += kQ8BlockBytes) {
    const float d = half_to_float(u16_at(blocks));
    for (int i = 0; i < kQuantBlock; ++i) out[b + i] = static_cast<std::int8_t>(blocks[2 + i]) * d;
  }
}

void dequantize_q4(const unsigned char* blocks, int n, float* out) {
  for (int b = 0; b < n; b += kQuantBlock, blocks += kQ4BlockBytes) {
    const float d = half_to_float(u16_at(blocks));
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      out[b + j] = ((blocks[2 + j] & 15) - 8) * d;
      out[b + j + 16] = ((blocks[2 + j] >> 4) - 8) * d;
    }
  }
}

bool QuantizedRows::quantize(const float* A, int rows_, int k_, int lda) {
  rows = rows_, k = k_;
  const std::size_t blocks = std::size_t(rows_) * (k_ / kQuantBlock);
  if (!q.resize(std::size_t(rows_) * k_) || !scale.resize(blocks)) return false;
  for (int r = 0; r < rows_; ++r) {
    const float* a = A + static_cast<long>(r) * lda;
    std::int16_t* qr = q.data() + static_cast<long>(r) * k_;
    float* sr = scale.data() + static_cast<long>(r) * (k_ / kQuantBlock);
    for (int b = 0; b < k_; b += kQuantBlock) {
      const float d = max_abs(a + b, kQuantBlock) / 127.0f;
      const float inv = d > 0.0f ? 127.0f / max_abs(a + b, kQuantBlock) : 0.0f;
      sr[b / kQuantBlock] = d;
      for (int i = b; i < b + kQuantBlock; ++i) qr[i] = static_cast<std::int16_t>(std::nearbyint(a[i] * inv));
    }
  }
  return true;
}

void unpack_quant_row(WeightType t, const unsigned char* row, int k, std::int16_t* q, float* scale) {
  const int bytes = t == WeightType::kQ8 ? kQ8BlockBytes : kQ4BlockBytes;
  for (int b = 0; b < k; b += kQuantBlock, row += bytes) {
    scale[b / kQuantBlock] = half_to_float(u16_at(row));
    if (t == WeightType::kQ8) {
      for (int i = 0; i < kQuantBlock; ++i) q[b + i] = static_cast<std::int8_t>(row[2 + i]);
    } else {
      for (int j = 0; j < kQuantBlock / 2; ++j) {
        q[b + j] = static_cast<std::int16_t>((row[2 + j] & 15) - 8);
        q[b + j + 16] = static_cast<std::int16_t>((row[2 + j] >> 4) - 8);
      }
    }
  }
}

}  // namespace attn
