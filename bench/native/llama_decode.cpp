// A whole decoding run of a SmolLM2-135M-shaped Llama natively (random weights as the browser
// bench's: uniform +-2.4/sqrt(576); 30 layers, hidden 576, 9 heads over 3 K/V heads, FFN 1536,
// vocabulary 49152, tied head), through the thread pool: 64 prompt ids, then greedy one-token
// steps. Prints per storage type the prompt's time (one 64-row step, after a warm-up run), the
// decode tokens/s, the weights' GB/s, and the pool's dispatches (barriers) per decoded token with
// the caller's mean wait per barrier (parallel.h PoolStats): what issue 35 asks to measure before
// and after. Last, the time of the activation checks a step makes (issue 38: 4 scans of hidden_size
// floats a layer, one of the vocabulary's logits), timed alone, since a wall-clock A/B of whole
// steps cannot resolve it on a shared machine.
//   llama_decode [threads] [tokens] [f32|f16|q8|q4 ...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "models/llama.h"
#include "tensors/finite.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

attn::LlamaConfig smollm2() {
  attn::LlamaConfig c;
  c.vocab_size = 49152, c.max_position_embeddings = 2048, c.hidden_size = 576, c.intermediate_size = 1536;
  c.num_hidden_layers = 30, c.num_attention_heads = 9, c.num_key_value_heads = 3, c.rms_norm_eps = 1e-5f;
  c.rope.theta = 100000, c.tie_word_embeddings = true;
  return c;
}

// Loads the model at `storage`; false on any error (printed).
bool load(attn::Llama& m, attn::WeightStorage storage) {
  if (std::string err = m.configure(smollm2()); !err.empty()) return std::fprintf(stderr, "%s\n", err.c_str()), false;
  attn::TensorTable& t = m.tensors();
  t.set_storage(storage);
  std::mt19937 rng(7);
  const float bound = 2.4f / 24.0f;
  std::uniform_real_distribution<float> u(-bound, bound);
  std::vector<float> v;
  for (int i = 0; i < t.size(); ++i) {
    const auto& e = t.entry(i);
    std::size_t n = 1;
    for (int d : e.shape) n *= d;
    v.resize(n);
    const bool norm = e.name.find("norm") != std::string::npos;
    for (float& x : v) x = norm ? 1.0f : u(rng);
    if (std::string err = t.set(e.name, v.data(), n); !err.empty()) return std::fprintf(stderr, "%s\n", err.c_str()), false;
  }
  if (std::string err = m.finalize(); !err.empty()) return std::fprintf(stderr, "%s\n", err.c_str()), false;
  return true;
}

int argmax(const std::vector<float>& x) { return int(std::max_element(x.begin(), x.end()) - x.begin()); }

// Microseconds of one decoding step's activation checks (activation_check.h): all_finite over
// hidden_size floats 4 times a layer, then over the vocabulary's logits, as Llama::step makes them.
double check_us_per_token(const attn::LlamaConfig& c) {
  std::vector<float> x(std::size_t(c.hidden_size) * 4, 0.5f), logits(c.vocab_size, 0.25f);
  constexpr int kReps = 2000;
  int finite = 0;
  const auto t0 = Clock::now();
  for (int r = 0; r < kReps; ++r) {
    x[r % x.size()] = float(r);  // (so no pass can be hoisted out of the loop)
    for (int l = 0; l < c.num_hidden_layers; ++l)
      for (int part = 0; part < 4; ++part) finite += attn::all_finite(x.data() + part * c.hidden_size, c.hidden_size);
    finite += attn::all_finite(logits.data(), logits.size());
  }
  const double us = ms_since(t0) * 1e3 / kReps;
  return finite == kReps * (c.num_hidden_layers * 4 + 1) ? us : -1.0;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int tokens = argc > 2 ? std::atoi(argv[2]) : 64;
  std::vector<std::string> types;
  for (int i = 3; i < argc; ++i) types.push_back(argv[i]);
  if (types.empty()) types = {"f32", "q8", "q4"};
  const int used = attn::set_num_threads(threads);
  std::printf("SmolLM2-135M-shaped Llama, 64 prompt ids + %d greedy tokens, %d thread(s), kernels %s\n", tokens, used,
              attn::default_kernels().name);
  for (const std::string& name : types) {
    const attn::WeightStorage storage = name == "f32" ? attn::WeightStorage::kF32
                                        : name == "f16" ? attn::WeightStorage::kF16
                                        : name == "q8"  ? attn::WeightStorage::kQ8
                                                        : attn::WeightStorage::kQ4;
    attn::Llama m;
    if (!load(m, storage)) return 1;
    // Bytes a step reads: every matrix once (the tied embedding as the head; its row lookup is noise).
    const double bytes = double(m.tensors().held_bytes());
    std::vector<int32_t> prompt(64);
    for (int i = 0; i < 64; ++i) prompt[i] = 3 + (i * 7919) % 49000;
    std::vector<float> logits(49152);
    for (int rep = 0; rep < 2; ++rep) {  // (the first run warms up)
      const auto tp = Clock::now();
      if (m.start_decoding(1, 64 + tokens).size() || m.step(prompt.data(), 64, logits.data(), nullptr).size()) return 1;
      const double prefill_ms = ms_since(tp);
      attn::reset_pool_stats(true);
      const auto t0 = Clock::now();
      std::vector<double> ms;
      for (int s = 1; s < tokens; ++s) {
        const int32_t next = argmax(logits);
        const auto ts = Clock::now();
        if (!m.step(&next, 1, logits.data(), nullptr).empty()) return 1;
        ms.push_back(ms_since(ts));
      }
      const double total = ms_since(t0);
      const attn::PoolStats st = attn::pool_stats();
      attn::reset_pool_stats(false);
      if (rep == 0) continue;
      std::sort(ms.begin(), ms.end());
      const int steps = tokens - 1;
      const double med = ms[ms.size() / 2];
      std::printf("%-4s %6.1f MB  prefill %.1f ms  %6.1f tok/s (median step %.2f ms, best %.2f)  %5.1f GB/s  barriers/token %.1f  "
                  "wait/barrier %.1f us  time in barriers %.1f %%  chunks by caller %.0f %%  sleeps/token: workers %.1f, "
                  "caller %.1f\n",
                  name.c_str(), bytes / 1e6, prefill_ms, steps / total * 1e3, med, ms.front(), bytes / med / 1e6,
                  double(st.dispatches) / steps, st.dispatches ? st.wait_us / st.dispatches : 0.0,
                  st.dispatch_us / (total * 10), st.chunks ? 100.0 * st.caller_chunks / st.chunks : 0.0,
                  double(st.worker_sleeps) / steps, double(st.caller_sleeps) / steps);
    }
  }
  const attn::LlamaConfig c = smollm2();
  std::printf("activation checks: %.2f us per token (%d floats scanned: 4 x %d per layer x %d layers + %d logits)\n",
              check_us_per_token(c), 4 * c.hidden_size * c.num_hidden_layers + c.vocab_size, c.hidden_size,
              c.num_hidden_layers, c.vocab_size);
  return 0;
}
