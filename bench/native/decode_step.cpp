// One decoding step's weight products (M = 1) of a GPT-2-small-shaped model, natively, at each
// storage type (issue 22): per layer c_attn (768 -> 2304), c_proj (768 -> 768), mlp.c_fc
// (768 -> 3072) and mlp.c_proj (3072 -> 768) through attn::linear(), 12 layers, so each step
// reads 85M weights from memory (none of it fits a cache). Prints ms per step and the GB/s of
// weight bytes read, beside a memcpy's copy rate on the same machine.
//   decode_step [threads] [steps] [f32|f16|bf16|q8|q4|q4_k|q6_k|q5_k|q5_0|q4_1|q5_1|q3_k|q2_k]
// Also builds for WebAssembly as it is (em++ -O3 -msimd128 -Isrc src/*.cpp bench/native/decode_step.cpp,
// run with node --no-experimental-fetch), single-threaded.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "kernels/parallel_gemm.h"
#include "tensors/weight.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

constexpr int kLayers = 12, kD = 768;
struct Shape {
  int in, out;
};
constexpr Shape kMatrices[] = {{kD, 3 * kD}, {kD, kD}, {kD, 4 * kD}, {4 * kD, kD}};

// A matrix of N(0, 0.02) weights held as type t (F32 in panels, as models hold it).
attn::Weight make_weight(attn::WeightType t, Shape s, std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, 0.02f);
  attn::Weight w;
  if (!w.allocate(t, t == attn::WeightType::kF32, s.out, s.in)) std::exit(1);
  std::vector<float> row(s.in);
  for (int r = 0; r < s.out; ++r) {
    for (float& v : row) v = g(rng);
    if (t == attn::WeightType::kF32) {
      w.set_output(r, row.data());
    } else if (!attn::encode_row(t, row.data(), s.in, w.bytes() + attn::row_bytes(t, s.in) * r).empty()) {
      std::exit(1);
    }
  }
  return w;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// memcpy of 256 MiB, best of 5: the machine's copy rate (bytes read per second, the figure decoding is held to).
[[maybe_unused]] double copy_gbps() {
  const std::size_t n = std::size_t(256) << 20;
  std::vector<char> a(n, 1), b(n, 2);
  std::vector<double> t;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), n);
    t.push_back(ms_since(t0));
  }
  if (b[n / 2] != 1) std::exit(1);
  return n / *std::min_element(t.begin(), t.end()) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 15;
  const std::string only = argc > 3 ? argv[3] : "";  // one type's name, or all
  const int used = attn::set_num_threads(threads);
  const attn::Kernels& kn = attn::default_kernels();
  std::printf("decode step, GPT-2 small shape (12 x 4 matrices, 85M weights), M = 1, %d thread(s), kernels %s\n", used,
              kn.name);
#ifndef __EMSCRIPTEN__  // (its clock is too coarse for one copy; the JS bench measures it there)
  std::printf("memcpy (best of 5): %.1f GB/s\n", copy_gbps());
#endif
  std::vector<float> x(4 * kD, 0.5f), y(4 * kD);
  for (attn::WeightType t : {attn::WeightType::kF32, attn::WeightType::kF16, attn::WeightType::kBF16,
                             attn::WeightType::kQ8_0, attn::WeightType::kQ4_0, attn::WeightType::kQ4_K,
                             attn::WeightType::kQ6_K, attn::WeightType::kQ5_K, attn::WeightType::kQ5_0,
                             attn::WeightType::kQ4_1, attn::WeightType::kQ5_1, attn::WeightType::kQ3_K,
                             attn::WeightType::kQ2_K}) {
    if (!only.empty() && only != attn::weight_type_name(t)) continue;
    std::mt19937 rng(1);
    std::vector<attn::Weight> weights;
    std::vector<float> bias(4 * kD, 0.0f);
    double bytes = 0;
    for (int l = 0; l < kLayers; ++l)
      for (Shape s : kMatrices) {
        weights.push_back(make_weight(t, s, rng));
        bytes += double(weights.back().byte_size());
      }
    std::vector<double> ms;
    for (int step = 0; step < steps + 2; ++step) {
      const auto t0 = Clock::now();
      for (const attn::Weight& w : weights) {
        const std::string err = attn::linear(kn, x.data(), 1, w.view(), bias.data(), y.data(), w.out);
        if (!err.empty()) std::exit(1);
      }
      if (step >= 2) ms.push_back(ms_since(t0));  // (two warm-up steps)
    }
    // Median and best: on a shared machine the best step shows what the code can do.
    const double m = median(ms), best = *std::min_element(ms.begin(), ms.end());
    std::printf("%-4s %7.1f MB  median %7.2f ms/step %6.1f GB/s   best %7.2f ms %6.1f GB/s  (y[0] %.4f)\n",
                attn::weight_type_name(t), bytes / 1e6, m, bytes / m / 1e6, best, bytes / best / 1e6, y[0]);
  }
  return 0;
}
