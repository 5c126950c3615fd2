// One-row products (a decoding step's M = 1) per storage type, two ways:
//  hot:    one small matrix (fits L2) multiplied over and over: the kernel's arithmetic cost,
//          printed as nanoseconds per 32-weight block of one output row;
//  stream: copies of the matrix totalling 256 MB walked in turn: what memory allows, in GB/s of
//          weight bytes read.
// Through attn::linear() (as models call it: activation quantizing, threads included).
//   gemv_bench [threads] [out] [in] [types...]
// (types: f32 f32rows f16 bf16 q8 q4 q4_k q6_k q5_k q5_0 q4_1 q5_1 q3_k q2_k; the K-quants need `in`
// a multiple of 256, e.g. gemv_bench 1 576 1536)
// Builds natively (bench/native/CMakeLists.txt) and for WebAssembly as it is (the command there).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else
#include <ctime>
#endif

#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "kernels/parallel_gemm.h"
#include "tensors/weight.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// CPU time of the process in ms: on a machine shared with other work, wall time counts the time
// other processes hold the core; CPU time does not (it still counts their effect on the caches).
#ifdef __EMSCRIPTEN__
EM_JS(double, cpu_ms, (), {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
});
#else
double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
#endif

// N(0, 0.02) weights as type t; F32 in panels when `panels` (how models hold float32 linears),
// else out x in (16/8/4-bit linears, embeddings and LM heads).
attn::Weight make_weight(attn::WeightType t, bool panels, int out, int in, std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, 0.02f);
  attn::Weight w;
  if (!w.allocate(t, panels, out, in)) std::exit(1);
  std::vector<float> row(in);
  for (int r = 0; r < out; ++r) {
    for (float& v : row) v = g(rng);
    if (panels) {
      w.set_output(r, row.data());
    } else if (!attn::encode_row(t, row.data(), in, w.bytes() + attn::row_bytes(t, in) * r).empty()) {
      std::exit(1);
    }
  }
  return w;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Times {
  double wall, cpu;  // medians, ms
};

// Medians of `reps` timings of `calls` products over the weights in turn.
Times time_products(const attn::Kernels& kn, const std::vector<attn::Weight>& ws, int calls, int reps,
                    const std::vector<float>& x, std::vector<float>& y) {
  std::vector<double> wall, cpu;
  for (int rep = 0; rep < reps + 1; ++rep) {
    const auto t0 = Clock::now();
    const double c0 = cpu_ms();
    for (int c = 0; c < calls; ++c) {
      const attn::Weight& w = ws[c % ws.size()];
      if (!attn::linear(kn, x.data(), 1, w.view(), nullptr, y.data(), w.out).empty()) std::exit(1);
    }
    if (rep > 0) wall.push_back(ms_since(t0)), cpu.push_back(cpu_ms() - c0);  // (one warm-up repetition)
  }
  return {median(wall), median(cpu)};
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int out = argc > 2 ? std::atoi(argv[2]) : 1536;
  const int in = argc > 3 ? std::atoi(argv[3]) : 576;
  std::vector<std::string> only;
  for (int i = 4; i < argc; ++i) only.push_back(argv[i]);
  const int used = attn::set_num_threads(threads);
  const attn::Kernels& kn = attn::default_kernels();
  std::printf("one-row products %d x %d, %d thread(s), kernels %s\n", out, in, used, kn.name);
  std::vector<float> x(in), y(out);
  std::mt19937 xr(7);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (float& v : x) v = g(xr);
  // "f32" in panels (a float32 linear), "f32rows" out x in (a float32 LM head), then the others.
  const struct {
    const char* name;
    attn::WeightType t;
    bool panels;
  } kinds[] = {{"f32", attn::WeightType::kF32, true}, {"f32rows", attn::WeightType::kF32, false},
               {"f16", attn::WeightType::kF16, false}, {"bf16", attn::WeightType::kBF16, false},
               {"q8", attn::WeightType::kQ8_0, false},   {"q4", attn::WeightType::kQ4_0, false},
               {"q4_k", attn::WeightType::kQ4_K, false}, {"q6_k", attn::WeightType::kQ6_K, false},
               {"q5_k", attn::WeightType::kQ5_K, false}, {"q5_0", attn::WeightType::kQ5_0, false},
               {"q4_1", attn::WeightType::kQ4_1, false}, {"q5_1", attn::WeightType::kQ5_1, false},
               {"q3_k", attn::WeightType::kQ3_K, false}, {"q2_k", attn::WeightType::kQ2_K, false}};
  for (const auto& kind : kinds) {
    const attn::WeightType t = kind.t;
    if (!only.empty() && std::find(only.begin(), only.end(), kind.name) == only.end()) continue;
    if (in % attn::weight_type_info(t).block != 0) {  // (the K-quants' rows are whole super-blocks of 256)
      std::printf("%-7s skipped: in = %d is not a multiple of its block, %d\n", kind.name, in, attn::weight_type_info(t).block);
      continue;
    }
    std::mt19937 rng(1);
    const double bytes = double(attn::row_bytes(t, in)) * out;
    // Hot: rows of the matrix limited so that it stays in L2 (<= 256 KiB).
    const int hot_out = std::max(4, std::min(out, int(262144 / attn::row_bytes(t, in)) / 4 * 4));
    std::vector<attn::Weight> hot;
    hot.push_back(make_weight(t, kind.panels, hot_out, in, rng));
    const double hot_blocks = double(hot_out) * in / 32;
    const int hot_calls = std::max(1, int(2e6 / hot_blocks));
    const Times hot_ms = time_products(kn, hot, hot_calls, 7, x, y);
    // Stream: enough copies for 256 MB.
    std::vector<attn::Weight> cold;
    const int copies = std::max(2, int(256e6 / bytes));
    for (int c = 0; c < copies; ++c) cold.push_back(make_weight(t, kind.panels, out, in, rng));
    const Times cold_ms = time_products(kn, cold, copies, 5, x, y);
    // ns per 32-weight block of one output row, and GB/s of weight bytes, by wall and by CPU time.
    const double hot_bytes = double(attn::row_bytes(t, in)) * hot_out * hot_calls, cold_bytes = bytes * copies;
    std::printf("%-7s hot (%d rows) ns/block %6.2f wall %6.2f cpu, GB/s %5.1f wall %5.1f cpu | stream (%d x %.1f MB) GB/s %5.1f wall %5.1f cpu\n",
                kind.name, hot_out, hot_ms.wall * 1e6 / (hot_calls * hot_blocks),
                hot_ms.cpu * 1e6 / (hot_calls * hot_blocks), hot_bytes / hot_ms.wall / 1e6, hot_bytes / hot_ms.cpu / 1e6,
                copies, bytes / 1e6, cold_bytes / cold_ms.wall / 1e6, cold_bytes / cold_ms.cpu / 1e6);
  }
  return 0;
}
