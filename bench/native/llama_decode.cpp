// A whole decoding run of a SmolLM2-135M-shaped Llama natively (random weights as the browser
// bench's: uniform +-2.4/sqrt(576); 30 layers, hidden 576, 9 heads over 3 K/V heads, FFN 1536,
// vocabulary 49152, tied head), through the thread pool: 64 prompt ids, then greedy one-token
// steps. Prints per storage type the prompt's time (one 64-row step, after a warm-up run), the
// decode tokens/s, the weights' GB/s, and the pool's dispatches (barriers) per decoded token with
// the caller's mean wait per barrier (parallel.h PoolStats): what issue 35 asks to measure before
// and after. Last, the time of the activation checks a step makes (issue 38: 4 scans of hidden_size
// floats a layer, one of the vocabulary's logits), timed alone, since a wall-clock A/B of whole
// steps cannot resolve it on a shared machine.
// family=NAME makes it issue 34's family of that shape (bench/llama/weights.mjs SMOLLM2_SIZED: qwen3,
// gemma3, smollm3, phi3), to find what a family's decode pays beyond the Llama's.
//   llama_decode [threads] [tokens] [f32|f16|q8|q4 ...] [family=llama|qwen3|gemma3|smollm3|phi3]
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

// The family's differences from the Llama at SmolLM2's shape (as SMOLLM2_SIZED); false if unknown.
bool apply_family(attn::LlamaConfig& c, const std::string& family) {
  const int L = c.num_hidden_layers;
  if (family == "qwen3") {
    c.qk_norm = true, c.rms_norm_eps = 1e-6f, c.rope.theta = 1e6;
  } else if (family == "smollm3") {
    for (int l = 0; l < L; ++l) c.rope_layers += (l + 1) % 4 ? '1' : '0';
  } else if (family == "phi3") {
    c.fused_projections = true, c.rope.rotary_dim = 48;  // (Phi-4-mini's 3/4 of a 64-value head)
  } else if (family == "gemma3") {
    c.qk_norm = c.unit_offset_norms = c.sandwich_norms = c.scale_embeddings = c.gelu_mlp = true;
    c.rms_norm_eps = 1e-6f, c.rope.theta = 1e6, c.rope_local_theta = 1e4, c.attention_scale = 1.0f / 8;
    c.sliding_window = 512;
    for (int l = 0; l < L; ++l) c.window_layers += (l + 1) % 6 ? '1' : '0';
  } else if (family != "llama") {
    return false;
  }
  c.model_type = family == "gemma3" ? "gemma3_text" : family;
  return true;
}

// Loads the model at `storage`; false on any error (printed).
bool load(attn::Llama& m, attn::WeightStorage storage, const attn::LlamaConfig& config) {
  if (std::string err = m.configure(config); !err.empty()) return std::fprintf(stderr, "%s\n", err.c_str()), false;
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
  attn::LlamaConfig config = smollm2();
  std::string family = "llama";
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("family=", 0) == 0) family = a.substr(7);
    else types.push_back(a);
  }
  if (!apply_family(config, family)) return std::fprintf(stderr, "unknown family %s\n", family.c_str()), 1;
  if (types.empty()) types = {"f32", "q8", "q4"};
  const int used = attn::set_num_threads(threads);
  std::printf("SmolLM2-135M-shaped %s, 64 prompt ids + %d greedy tokens, %d thread(s), kernels %s\n", config.model_type.c_str(),
              tokens, used, attn::default_kernels().name);
  for (const std::string& name : types) {
    const attn::WeightStorage storage = name == "f32" ? attn::WeightStorage::kF32
                                        : name == "f16" ? attn::WeightStorage::kF16
                                        : name == "q8"  ? attn::WeightStorage::kQ8
                                                        : attn::WeightStorage::kQ4;
    attn::Llama m;
    if (!load(m, storage, config)) return 1;
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
