#include "layers/layers.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "tensors/half.h"
#include "kernels/parallel.h"
#include "kernels/parallel_gemm.h"

namespace attn {

void LayerNorm::add_to(TensorTable& t, const std::string& prefix, int dim, const char* weight_name,
                       const char* bias_name) {
  t.add(prefix + weight_name, {dim}, &weight);
  t.add(prefix + bias_name, {dim}, &bias);
}

namespace {

// Elementwise passes are worth spreading over threads only in bulk (waking a thread costs ~10 us).
constexpr double kParallelMinElements = 1 << 16;

// fn(r0, r1) over [0, rows), in parallel chunks when the pass is large enough.
template <class Fn>
void for_rows(int rows, int cols, const Fn& fn) {
  if (num_threads() == 1 || double(rows) * cols < kParallelMinElements) fn(0, rows);
  else parallel_for(rows, balanced_grain(rows, 4), [&](int r0, int r1, int) { fn(r0, r1); });
}

}  // namespace

void LayerNorm::forward(const float* x, int rows, int dim, float* y) const {
  for_rows(rows, dim, [&](int r0, int r1) { forward_rows(x, r0, r1, dim, y); });
}

void LayerNorm::forward_rows(const float* x, int r0, int r1, int dim, float* y) const {
  const float* g = weight.data();
  const float* b = bias.data();
  for (int r = r0; r < r1; ++r) {
    const float* xr = x + static_cast<long>(r) * dim;
    float* yr = y + static_cast<long>(r) * dim;
    float mean = 0.0f;
    for (int i = 0; i < dim; ++i) mean += xr[i];
    mean /= dim;
    float var = 0.0f;
    for (int i = 0; i < dim; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const float inv = 1.0f / std::sqrt(var / dim + eps);
    for (int i = 0; i < dim; ++i) yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
  }
}

void Linear::add_to(TensorTable& t, const std::string& prefix, int in_features, int out_features, Layout layout,
                    bool has_bias) {
  in = in_features;
  out = out_features;
  if (layout == Layout::kTransposed) t.add_weight(prefix + "weight", {out, in}, &weight, layout, false);
  else t.add_weight(prefix + "weight", {in, out}, &weight, layout, false);
  if (has_bias) t.add(prefix + "bias", {out}, &bias);
}

void RmsNorm::add_to(TensorTable& t, const std::string& name, int dim) { t.add(name, {dim}, &weight); }

void RmsNorm::forward(const float* x, int rows, int dim, float* y) const {
  const float* g = weight.data();
  for_rows(rows, dim, [&](int r0, int r1) {
    for (int r = r0; r < r1; ++r) {
      const float* xr = x + static_cast<long>(r) * dim;
      float* yr = y + static_cast<long>(r) * dim;
      // The squares summed in double: in float32 the sum overflows once a row's values pass about
      // 1.8e19 / sqrt(dim) (a bf16 checkpoint's 1e38 weights get there), and x / sqrt(Infinity) is
      // 0, a finite wrong row no activation check sees. In double no float row can overflow it.
      double sum = 0.0;
      for (int i = 0; i < dim; ++i) sum += double(xr[i]) * xr[i];
      const double inv = 1.0 / std::sqrt(sum / dim + eps);  // (may be below float's normal range)
      for (int i = 0; i < dim; ++i) yr[i] = static_cast<float>(xr[i] * inv * g[i]);  // (one rounding)
    }
  });
}

void GatedMlp::add_to(TensorTable& t, const std::string& prefix, int dim, int hidden) {
  gate.add_to(t, prefix + "gate_proj.", dim, hidden, Layout::kTransposed, false);
  up.add_to(t, prefix + "up_proj.", dim, hidden, Layout::kTransposed, false);
  down.add_to(t, prefix + "down_proj.", hidden, dim, Layout::kTransposed, false);
}

void GatedMlp::add_fused_to(TensorTable& t, const std::string& prefix, int dim, int hidden) {
  gate_up.add_to(t, prefix + "gate_up_proj.", dim, 2 * hidden, Layout::kTransposed, false);
  down.add_to(t, prefix + "down_proj.", hidden, dim, Layout::kTransposed, false);
}

std::string keep_copy(Buffer& dst, const float* src, std::size_t n) {
  if (!dst.resize(n)) return out_of_memory("the trace", n);
  if (n) std::memcpy(dst.data(), src, n * sizeof(float));
  return "";
}

std::string GatedMlp::forward(const Kernels& kn, const float* x, int rows, Buffer& scratch, float* y,
                              MlpTrace* trace) const {
  const bool fused = gate_up.out > 0;
  const int F = fused ? gate_up.out / 2 : gate.out;
  const std::size_t hidden = std::size_t(rows) * F;
  if (!scratch.resize(2 * hidden)) return out_of_memory("the MLP activations", 2 * hidden);
  float* g = scratch.data();
  float* u = g + hidden;
  const WeightView gw = fused ? gate_up.weight.view().outputs(0, F) : gate.weight.view();
  const WeightView uw = fused ? gate_up.weight.view().outputs(F, F) : up.weight.view();
  // (gate and up in one dispatch: a decoding step waits for its threads once, not twice)
  const LinearPart parts[] = {{gw, nullptr, g, F}, {uw, nullptr, u, F}};
  std::string err = linear_parts(kn, x, rows, parts, 2);
  if (!err.empty()) return err;
  if (trace) err = keep_copy(trace->gate, g, hidden);
  if (trace && err.empty()) err = keep_copy(trace->up, u, hidden);
  if (!err.empty()) return err;
  activate(kn, act, g, rows, F);
  for (std::size_t i = 0; i < hidden; ++i) g[i] *= u[i];
  if (trace) err = keep_copy(trace->hidden, g, hidden);
  return err.empty() ? down.forward(kn, g, rows, y) : err;
}

std::string Linear::forward(const Kernels& kn, const float* x, int rows, float* y) const {
  return linear(kn, x, rows, weight.view(), bias.data(), y, out);
}

void activate(const Kernels& kn, Activation a, float* x, int rows, int cols) {
  for_rows(rows, cols, [&](int r0, int r1) {
    activate_range(kn, a, x + static_cast<long>(r0) * cols, std::size_t(r1 - r0) * cols);
  });
}

void activate_range(const Kernels& kn, Activation a, float* x, std::size_t n) {
  switch (a) {
    case Activation::kGeluTanh: {
      const float c = std::sqrt(2.0f / 3.14159265358979f);
      for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i];
        x[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
      }
      break;
    }
    case Activation::kGeluErf:
      kn.gelu_erf(x, static_cast<int>(n));
      break;
    case Activation::kTanh:
      for (std::size_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
      break;
    case Activation::kSilu:
      kn.silu(x, static_cast<int>(n));
      break;
  }
}

std::string Mlp::forward(const Kernels& kn, const float* x, int rows, Buffer& scratch, float* y,
                         MlpTrace* trace) const {
  const std::size_t hidden = std::size_t(rows) * fc.out;
  if (!scratch.resize(hidden)) return out_of_memory("the MLP activations", hidden);
  std::string err = fc.forward(kn, x, rows, scratch.data());
  if (err.empty() && trace) {
    err = keep_copy(trace->up, scratch.data(), hidden);
    trace->gate.resize(0);
  }
  if (!err.empty()) return err;
  activate(kn, act, scratch.data(), rows, fc.out);
  if (trace) err = keep_copy(trace->hidden, scratch.data(), hidden);
  return err.empty() ? proj.forward(kn, scratch.data(), rows, y) : err;
}

void Embedding::add_to(TensorTable& t, const std::string& name, int num_rows, int dim_, bool quantizable) {
  rows = num_rows;
  dim = dim_;
  t.add_weight(name, {num_rows, dim_}, &table, Layout::kAsIs, /*embedding=*/true, quantizable);
}

namespace {
// out[c] += row r of the table, whichever way it is stored.
void add_row(const Embedding& e, int r, float* out) {
  const WeightView v = e.table.view();
  if (v.type == WeightType::kF32 && !v.panels) {
    add_in_place(out, static_cast<const float*>(v.data) + static_cast<long>(r) * e.dim, e.dim);
    return;
  }
  thread_local std::vector<float> row;
  row.resize(e.dim);
  v.dequantize_output(r, row.data());
  add_in_place(out, row.data(), e.dim);
}
}  // namespace

void Embedding::add_rows(const std::int32_t* ids, int n, float* out) const {
  for (int i = 0; i < n; ++i) add_row(*this, ids ? ids[i] : 0, out + static_cast<long>(i) * dim);
}

void Embedding::add_range(int first, int n, float* out) const {
  for (int i = 0; i < n; ++i) add_row(*this, first + i, out + static_cast<long>(i) * dim);
}

std::string Embedding::logits(const Kernels& kn, const float* x, int n, float* out) const {
  return linear(kn, x, n, table.view(), nullptr, out, rows);
}

void add_in_place(float* x, const float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

void log_sum_exp_rows(const Kernels& kn, const float* x, int rows, int cols, float* scratch, double* out) {
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<long>(r) * cols;
    float max = row[0];
    for (int j = 1; j < cols; ++j) max = row[j] > max ? row[j] : max;
    std::memcpy(scratch, row, cols * sizeof(float));
    kn.exp_shift_sum(scratch, cols, max);
    double sum = 0;
    for (int j = 0; j < cols; ++j) sum += scratch[j];
    out[r] = max + std::log(sum);
  }
}

void mean_pool(const float* hidden, const std::uint8_t* padding, int batch, int n, int dim, float* out) {
  for (int b = 0; b < batch; ++b) {
    float* o = out + static_cast<long>(b) * dim;
    std::memset(o, 0, dim * sizeof(float));
    int count = 0;
    for (int i = 0; i < n; ++i) {
      if (padding && padding[static_cast<long>(b) * n + i]) continue;
      add_in_place(o, hidden + (static_cast<long>(b) * n + i) * dim, dim);
      ++count;
    }
    // sentence-transformers divides by max(count, 1e-9): a sequence of only padding stays zero.
    if (count > 0)
      for (int c = 0; c < dim; ++c) o[c] /= count;
  }
}

void first_token_pool(const float* hidden, int batch, int n, int dim, float* out) {
  for (int b = 0; b < batch; ++b)
    std::memcpy(out + static_cast<long>(b) * dim, hidden + static_cast<long>(b) * n * dim, dim * sizeof(float));
}

void l2_normalize_rows(float* x, int rows, int dim) {
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<long>(r) * dim;
    double sum = 0.0;
    for (int c = 0; c < dim; ++c) sum += double(row[c]) * row[c];
    // torch.nn.functional.normalize: x / max(||x||, 1e-12)
    const float inv = 1.0f / static_cast<float>(std::max(std::sqrt(sum), 1e-12));
    for (int c = 0; c < dim; ++c) row[c] *= inv;
  }
}

}  // namespace attn
