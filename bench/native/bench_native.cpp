// Native timing of the library's core (attn::MultiHeadAttention) for one workload.
// Driven by bench/engines/native.mjs:
//   bench_native --data FILE --batch B --seq S --dmodel D --heads H --causal 0|1
//                (--out FILE | --time WARMUP_MIN_CALLS WARMUP_MIN_MS WARMUP_MAX_MS BUDGET_MS MIN_REPS MAX_REPS)
// FILE holds float32 wQ wK wV wO (D x D each), bQ bK bV bO (D each), x (B x S x D), written by
// the bench, so native sees the exact data every other engine sees. --out writes the output
// (float32) for the agreement check; --time prints one JSON line with the timings, using the
// same warm-up and repetition policy as bench/common/timing.mjs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention/multi_head_attention.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

[[noreturn]] void fail(const std::string& msg) {
  std::fprintf(stderr, "bench_native: %s\n", msg.c_str());
  std::exit(1);
}

std::vector<float> read_floats(const char* path, size_t n) {
  std::vector<float> v(n);
  FILE* f = std::fopen(path, "rb");
  if (!f) fail(std::string("cannot open ") + path);
  size_t got = std::fread(v.data(), sizeof(float), n, f);
  std::fclose(f);
  if (got != n) fail("data file too short");
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* data_path = nullptr;
  const char* out_path = nullptr;
  int B = 0, S = 0, D = 0, H = 0, causal = 0;
  bool time_mode = false;
  double policy[6] = {0};  // warmup min calls, min ms, max ms, budget ms, min reps, max reps
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { if (i + 1 >= argc) fail("missing value after " + a); return argv[++i]; };
    if (a == "--data") data_path = next();
    else if (a == "--out") out_path = next();
    else if (a == "--batch") B = std::atoi(next());
    else if (a == "--seq") S = std::atoi(next());
    else if (a == "--dmodel") D = std::atoi(next());
    else if (a == "--heads") H = std::atoi(next());
    else if (a == "--causal") causal = std::atoi(next());
    else if (a == "--time") { time_mode = true; for (double& p : policy) p = std::atof(next()); }
    else fail("unknown argument " + a);
  }
  if (!data_path || B <= 0 || S <= 0 || D <= 0 || H <= 0 || (!out_path && !time_mode)) fail("bad arguments");

  const size_t dd = size_t(D) * D, n_x = size_t(B) * S * D;
  std::vector<float> all = read_floats(data_path, 4 * dd + 4 * size_t(D) + n_x);
  const float* p = all.data();
  const float *wq = p, *wk = p + dd, *wv = p + 2 * dd, *wo = p + 3 * dd;
  const float* b0 = p + 4 * dd;
  const float *bq = b0, *bk = b0 + D, *bv = b0 + 2 * D, *bo = b0 + 3 * D;
  const float* x = b0 + 4 * D;

  attn::MultiHeadAttention mha;
  attn::MhaConfig cfg;
  cfg.d_model = D;
  cfg.num_heads = H;
  cfg.bias = true;
  std::string err = mha.configure(cfg);
  if (!err.empty()) fail("configure: " + err);
  attn::MhaWeightsView w;
  w.w_q = wq; w.w_k = wk; w.w_v = wv; w.w_o = wo;
  w.b_q = bq; w.b_k = bk; w.b_v = bv; w.b_o = bo;
  err = mha.set_weights(w);
  if (!err.empty()) fail("set_weights: " + err);

  attn::MhaInput in;
  in.query = in.key = in.value = x;
  in.batch = B;
  in.seq_q = in.seq_k = S;
  in.masks.causal = causal != 0;
  std::vector<float> out(n_x);
  auto call = [&]() {
    std::string e = mha.forward(in, out.data(), nullptr, nullptr);
    if (!e.empty()) fail("forward: " + e);
  };

  if (!time_mode) {
    auto t = Clock::now();
    call();
    double first_ms = ms_since(t);
    FILE* f = std::fopen(out_path, "wb");
    if (!f || std::fwrite(out.data(), sizeof(float), n_x, f) != n_x) fail("cannot write output");
    std::fclose(f);
    std::printf("{\"firstCallMs\":%.6f}\n", first_ms);
    return 0;
  }

  // Warm-up: caches, page faults of the scratch buffers, CPU clocks.
  int warm_calls = 0;
  auto warm_start = Clock::now();
  std::vector<double> warm;
  for (;;) {
    auto t = Clock::now();
    call();
    double ms = ms_since(t);
    warm.push_back(ms);
    warm_calls++;
    double spent = ms_since(warm_start);
    if (warm_calls >= policy[0] && spent >= policy[1]) break;
    if (spent + ms > policy[2]) break;
  }
  double warmup_ms = ms_since(warm_start);
  // Reps from the median warm-up call (the first one excluded: it is the cold one).
  double per_call = median(warm.size() > 1 ? std::vector<double>(warm.begin() + 1, warm.end()) : warm);
  int reps = int(std::max(policy[4], std::min(policy[5], std::floor(policy[3] / std::max(per_call, 1e-3)))));
  std::vector<double> samples(reps);
  volatile float sink = 0;  // reading the output keeps the calls observable
  for (int r = 0; r < reps; r++) {
    auto t = Clock::now();
    call();
    samples[r] = ms_since(t);
    sink = sink + out[r % n_x];
  }
  std::printf("{\"medianMs\":%.6f,\"minMs\":%.6f,\"reps\":%d,\"warmupCalls\":%d,\"warmupMs\":%.3f}\n", median(samples),
              *std::min_element(samples.begin(), samples.end()), reps, warm_calls, warmup_ms);
  return 0;
}
