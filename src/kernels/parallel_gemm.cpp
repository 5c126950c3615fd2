#include "kernels/parallel_gemm.h"

#include <algorithm>
#include <string>
#include <vector>

#include "tensors/quantize.h"
#include "kernels/quantized_rows.h"

namespace attn {

namespace {

// The kernel of a quantized W, or why there is none.
std::string quant_kernel(const Kernels& kn, const WeightView& W, QuantGemm* out) {
  *out = kn.gemm_bt_quant[W.type];
  if (*out) return "";
  return std::string("no ") + kn.name + " kernel multiplies weights held as " + weight_type_name(W.type) +
         "; load this model with dtype 'f16' or 'f32'";
}

// y = x W^T for W of a quantized type, through that type's kernel, x's rows quantized here; split
// over W's outputs (in fours: the SIMD kernels' rows) when worth it.
std::string quantized_product(const Kernels& kn, const float* x, int rows, const WeightView& W, float* y, int ldy) {
  QuantGemm kernel;
  std::string err = quant_kernel(kn, W, &kernel);
  if (!err.empty()) return err;
  thread_local QuantizedRows xq;  // (per thread: a model may run on any thread, one call at a time)
  if (!xq.quantize(x, rows, W.in, W.in)) return out_of_memory("the quantized activations", std::size_t(rows) * W.in / 2);
  const std::size_t rb = row_bytes(W.type, W.in);
  if (!split_over_threads(rows, W.out, W.in)) {
    kernel(rows, W.out, W.in, xq, W.bytes(), y, ldy);
    return "";
  }
  const QuantizedRows& q = xq;  // (the workers read the calling thread's copy)
  parallel_for(W.out, balanced_grain(W.out, 8, 4), [&](int j0, int j1, int) {
    kernel(rows, j1 - j0, W.in, q, W.bytes() + rb * j0, y + j0, ldy);
  });
  return "";
}

// Rows of x above which a 16-bit matrix goes through the tiled float GEMM: a panel of its outputs
// is widened once (and laid in x out) per call, which many rows amortize; fewer rows (a decoding
// step, beams) read the 16-bit rows directly (gemm_bt), each weight once.
constexpr int kWidenPanelMinRows = 9;
constexpr int kPanelOutputs = 64;  // outputs widened at a time: 64 x in floats per worker (e.g. 192 KiB at 768)

// y = x W^T for 16-bit W with many rows of x: W's outputs in panels, each widened into in x 64
// floats (per worker) and multiplied by the tiled GEMM.
void widened_panels_product(const Kernels& kn, const float* x, int rows, const WeightView& W, float* y, int ldy) {
  const int panels = (W.out + kPanelOutputs - 1) / kPanelOutputs;
  const auto run = [&](int p0, int p1, int) {
    thread_local std::vector<float> panel, row;
    panel.resize(std::size_t(W.in) * kPanelOutputs);
    row.resize(W.in);
    for (int p = p0; p < p1; ++p) {
      const int j0 = p * kPanelOutputs, n = std::min(kPanelOutputs, W.out - j0);
      for (int r = 0; r < n; ++r) {
        W.dequantize_output(j0 + r, row.data());
        for (int k = 0; k < W.in; ++k) panel[std::size_t(k) * n + r] = row[k];
      }
      kn.gemm(rows, n, W.in, x, W.in, panel.data(), n, y + j0, ldy, false);
    }
  };
  if (num_threads() == 1 || double(rows) * W.out * W.in < kParallelMinWork) run(0, panels, 0);
  else parallel_for(panels, 1, run);
}

// y = x W for W in panels, y holding the bias when `accumulate`. Threads take tiles of whole
// panels (and of rows, when there are many): each reads its own run of the weights, front to back.
void panels_product(const Kernels& kn, const float* x, int rows, const WeightView& W, float* y, int ldy, bool accumulate) {
  const float* P = static_cast<const float*>(W.data);
  if (!split_over_threads(rows, W.out, W.in)) {
    kn.gemm_panels(rows, W.out, W.in, x, W.in, P, W.first, y, ldy, accumulate);
    return;
  }
  // Up to 1.5 row panels stay one panel: a 64-row sliver would cost more than it balances.
  const int row_tiles = rows <= kTileRows * 3 / 2 ? 1 : (rows + kTileRows - 1) / kTileRows;
  const int rows_per = (rows + row_tiles - 1) / row_tiles;
  const int cols_per = W.out < kTileCols * 2 * num_threads() ? balanced_grain(W.out, 4, kPanel) : kTileCols;
  const int col_tiles = (W.out + cols_per - 1) / cols_per;
  parallel_for(row_tiles * col_tiles, 1, [&](int t0, int t1, int) {
    for (int t = t0; t < t1; ++t) {
      const int i0 = t / col_tiles * rows_per, j0 = t % col_tiles * cols_per;
      const int m = std::min(rows_per, rows - i0), n = std::min(cols_per, W.out - j0);
      const WeightView part = W.outputs(j0, n);
      kn.gemm_panels(m, n, W.in, x + static_cast<long>(i0) * W.in, W.in, static_cast<const float*>(part.data), part.first,
                     y + static_cast<long>(i0) * ldy + j0, ldy, accumulate);
    }
  });
}

// Outputs [j0, j1) of one part on the calling thread, as linear() computes them (xq: x quantized,
// for a quantized W): F32 panels from the bias, the other types with the bias added after.
void part_range(const Kernels& kn, const float* x, int rows, const QuantizedRows& xq, const LinearPart& p, int j0, int j1) {
  const WeightView& W = p.W;
  const int n = j1 - j0;
  float* y = p.y + j0;
  if (W.panels) {
    if (p.b)
      for (int i = 0; i < rows; ++i) std::memcpy(y + static_cast<long>(i) * p.ldy, p.b + j0, n * sizeof(float));
    const WeightView part = W.outputs(j0, n);
    kn.gemm_panels(rows, n, W.in, x, W.in, static_cast<const float*>(part.data), part.first, y, p.ldy, p.b != nullptr);
    return;
  }
  const long at = static_cast<long>(j0) * W.in;
  switch (W.type) {
    case WeightType::kF32:
      kn.gemm_bt(rows, n, W.in, x, W.in, static_cast<const float*>(W.data) + at, W.in, y, p.ldy);
      break;
    case WeightType::kF16:
      kn.gemm_bt_half(rows, n, W.in, x, W.in, static_cast<const std::uint16_t*>(W.data) + at, W.in, y, p.ldy);
      break;
    case WeightType::kBF16:
      kn.gemm_bt_bf16(rows, n, W.in, x, W.in, static_cast<const Bf16*>(W.data) + at, W.in, y, p.ldy);
      break;
    default:
      kn.gemm_bt_quant[W.type](rows, n, W.in, xq, W.bytes() + row_bytes(W.type, W.in) * j0, y, p.ldy);
  }
  if (p.b)
    for (int i = 0; i < rows; ++i)
      for (int j = j0; j < j1; ++j) p.y[static_cast<long>(i) * p.ldy + j] += p.b[j];
}

// Worth one dispatch over the parts' outputs: a few rows (a decoding step), enough weights.
bool few_rows_split(int rows, const LinearPart* parts, int count) {
  if (rows > kFewRowsMax || num_threads() == 1) return false;
  int outputs = 0;
  for (int i = 0; i < count; ++i) outputs += parts[i].W.out;
  return split_over_threads(rows, outputs, parts[0].W.in);
}

// The parts' outputs in chunks of whole 16-output runs, about 8 a thread, one dispatch.
std::string few_rows_parts(const Kernels& kn, const float* x, int rows, const LinearPart* parts, int count) {
  const int in = parts[0].W.in;
  bool quantized = false;
  int outputs = 0;
  for (int i = 0; i < count; ++i) {
    if (parts[i].W.in != in) return "the fused products' inputs differ";
    outputs += parts[i].W.out;
    if (parts[i].W.panels || !is_quantized(parts[i].W.type)) continue;
    QuantGemm kernel;
    std::string err = quant_kernel(kn, parts[i].W, &kernel);
    if (!err.empty()) return err;
    quantized = true;
  }
  thread_local QuantizedRows xq;  // (per thread: a model may run on any thread, one call at a time)
  if (quantized && !xq.quantize(x, rows, in, in)) return out_of_memory("the quantized activations", std::size_t(rows) * in);
  struct Chunk {
    int part, j0, j1;
  };
  thread_local std::vector<Chunk> chunks;
  chunks.clear();
  const int grain = balanced_grain(outputs, 8, kPanel);
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < parts[i].W.out; j += grain) chunks.push_back({i, j, std::min(j + grain, parts[i].W.out)});
  const QuantizedRows& q = xq;  // (the workers read the calling thread's copy)
  const std::vector<Chunk>& list = chunks;
  parallel_for(static_cast<int>(list.size()), 1, [&](int c0, int c1, int) {
    for (int c = c0; c < c1; ++c) part_range(kn, x, rows, q, parts[list[c].part], list[c].j0, list[c].j1);
  });
  return "";
}

}  // namespace

std::string linear_parts(const Kernels& kn, const float* x, int rows, const LinearPart* parts, int count) {
  if (rows <= 0 || count <= 0) return "";
  if (few_rows_split(rows, parts, count)) return few_rows_parts(kn, x, rows, parts, count);
  for (int i = 0; i < count; ++i) {
    std::string err = linear(kn, x, rows, parts[i].W, parts[i].b, parts[i].y, parts[i].ldy);
    if (!err.empty()) return err;
  }
  return "";
}

std::string linear(const Kernels& kn, const float* x, int rows, const WeightView& W, const float* b, float* y, int ldy) {
  if (rows <= 0) return "";
  const LinearPart one{W, b, y, ldy};
  if (few_rows_split(rows, &one, 1)) return few_rows_parts(kn, x, rows, &one, 1);
  if (W.panels) {
    if (b)
      for (int i = 0; i < rows; ++i) std::memcpy(y + static_cast<long>(i) * ldy, b, W.out * sizeof(float));
    panels_product(kn, x, rows, W, y, ldy, b != nullptr);
    return "";
  }
  switch (W.type) {
    case WeightType::kF32:
      gemm_bt_parallel(kn, rows, W.out, W.in, x, W.in, static_cast<const float*>(W.data), W.in, y, ldy);
      break;
    case WeightType::kF16:
      if (rows >= kWidenPanelMinRows) widened_panels_product(kn, x, rows, W, y, ldy);
      else gemm_bt_parallel(kn, rows, W.out, W.in, x, W.in, static_cast<const std::uint16_t*>(W.data), W.in, y, ldy);
      break;
    case WeightType::kBF16:
      if (rows >= kWidenPanelMinRows) widened_panels_product(kn, x, rows, W, y, ldy);
      else gemm_bt_parallel(kn, rows, W.out, W.in, x, W.in, static_cast<const Bf16*>(W.data), W.in, y, ldy);
      break;
    default: {  // the quantized types
      std::string err = quantized_product(kn, x, rows, W, y, ldy);
      if (!err.empty()) return err;
    }
  }
  if (b)
    for (int i = 0; i < rows; ++i) {
      float* yr = y + static_cast<long>(i) * ldy;
      for (int j = 0; j < W.out; ++j) yr[j] += b[j];
    }
  return "";
}

}  // namespace attn
