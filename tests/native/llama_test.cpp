// The Llama-family decoder against a float64 reference written here from the architecture (Hugging
// Face's modeling_llama: RMSNorm, rotate-half rotary embeddings, grouped-query attention, SwiGLU),
// not from the core: random weights under the checkpoint's names, GQA with 1, 2 and all K/V heads,
// rope_theta and rope_scaling, q/k/v biases (Qwen2), tied and untied heads; and every cached
// decoding step equal to the uncached forward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "models/llama.h"
#include "reference.h"

namespace {

using Vec = std::vector<double>;
using Tensors = std::map<std::string, Vec>;

// Fills every declared tensor with seeded values (norm gains near 1, as trained models have them)
// and keeps them for the reference.
Tensors load_random(attn::TensorTable& t, unsigned seed) {
  std::mt19937 rng(seed);
  Tensors all;
  for (int i = 0; i < t.size(); ++i) {
    const auto& e = t.entry(i);
    size_t n = 1;
    for (int d : e.shape) n *= d;
    Vec v = ref::random_vec(rng, n, 0.4);
    if (e.name.find("norm") != std::string::npos)
      for (double& x : v) x = 1.0 + 0.5 * x;
    for (double& x : v) x = static_cast<float>(x);  // the reference sees exactly the stored values
    auto f = ref::to_float(v);
    EXPECT_EQ(t.set(e.name, f.data(), f.size()), "") << e.name;
    all[e.name] = v;
  }
  return all;
}

// x (rows x in) times W^T, W as nn.Linear stores it (out x in), plus an optional bias.
Vec matmul_t(const Vec& x, int rows, int in, const Vec& w, int out, const Vec* bias) {
  Vec y(size_t(rows) * out);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double s = bias ? (*bias)[o] : 0.0;
      for (int i = 0; i < in; ++i) s += x[size_t(r) * in + i] * w[size_t(o) * in + i];
      y[size_t(r) * out + o] = s;
    }
  return y;
}

Vec rms_norm(const Vec& x, int rows, int dim, const Vec& g, double eps) {
  Vec y(x.size());
  for (int r = 0; r < rows; ++r) {
    double ss = 0;
    for (int i = 0; i < dim; ++i) ss += x[size_t(r) * dim + i] * x[size_t(r) * dim + i];
    const double inv = 1.0 / std::sqrt(ss / dim + eps);
    for (int i = 0; i < dim; ++i) y[size_t(r) * dim + i] = x[size_t(r) * dim + i] * inv * g[i];
  }
  return y;
}

// The rotary frequencies of a run of n positions, from the formulas of RoFormer and of HF's
// rope_scaling types (d: the rotated width; longrope: 1 / (factor_i theta^(2i/d)), its long
// factors once n passes the original context).
Vec frequencies(const attn::RopeConfig& rope, int d, int n = 1) {
  Vec f(d / 2);
  for (int i = 0; i < d / 2; ++i) f[i] = std::pow(rope.theta, -2.0 * i / d);
  if (rope.scaling == "longrope") {
    const Vec& factors = n > rope.original_max_position_embeddings ? rope.long_factor : rope.short_factor;
    for (int i = 0; i < d / 2; ++i) f[i] /= factors[i];
  }
  for (double& x : f) {
    if (rope.scaling == "linear") x /= rope.factor;
    if (rope.scaling != "llama3") continue;
    const double wavelen = 2 * M_PI / x, old = rope.original_max_position_embeddings;
    if (wavelen > old / rope.low_freq_factor) x /= rope.factor;
    else if (wavelen >= old / rope.high_freq_factor) {
      const double smooth = (old / wavelen - rope.low_freq_factor) / (rope.high_freq_factor - rope.low_freq_factor);
      x = (1 - smooth) * x / rope.factor + smooth * x;
    }
  }
  return f;
}

// q * cos + rotate_half(q) * sin, rotate_half(x) = [-x2, x1], on the first d values of one head
// vector at `pos` (Phi-3's partial rotation passes the rest); cos and sin scaled by `scale`
// (longrope's attention factor).
void rotate(double* x, int d, const Vec& freq, int pos, double scale = 1.0) {
  for (int i = 0; i < d / 2; ++i) {
    const double c = scale * std::cos(pos * freq[i]), s = scale * std::sin(pos * freq[i]);
    const double a = x[i], b = x[i + d / 2];
    x[i] = a * c - b * s;
    x[i + d / 2] = b * c + a * s;
  }
}

struct RefOut {
  Vec logits;     // n x vocab
  Vec attention;  // layers x heads x n x n
};

RefOut reference(const attn::LlamaConfig& c, const Tensors& w, const std::vector<int32_t>& tokens) {
  const int n = static_cast<int>(tokens.size()), D = c.hidden_size, H = c.num_attention_heads;
  const int KV = c.num_key_value_heads ? c.num_key_value_heads : H, d = c.head_dim ? c.head_dim : D / H;
  const int rot = c.rope.rotary_dim ? c.rope.rotary_dim : d;
  const Vec freq = frequencies(c.rope, rot, n);
  attn::RopeConfig local_rope;  // Gemma 3's sliding layers: rope_local_base_freq, default type
  local_rope.theta = c.rope_local_theta;
  const Vec local_freq = frequencies(local_rope, rot, n);
  const double rope_scale = c.rope.scaling == "longrope" ? c.rope.attention_factor : 1.0;
  // Gemma3RMSNorm: x / rms * (1 + weight); the others x / rms * weight.
  const auto norm = [&](const Vec& v, int rows, int dim, const std::string& name) {
    Vec g = w.at(name);
    if (c.unit_offset_norms)
      for (double& x : g) x += 1.0;
    return rms_norm(v, rows, dim, g, c.rms_norm_eps);
  };
  const Vec& embed = w.at("model.embed_tokens.weight");
  const double embed_scale = c.scale_embeddings ? std::sqrt(double(D)) : 1.0;  // Gemma3TextScaledWordEmbedding
  Vec x(size_t(n) * D);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < D; ++j) x[size_t(i) * D + j] = embed[size_t(tokens[i]) * D + j] * embed_scale;
  RefOut out;
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const auto bias = [&](const char* name) { return c.attention_bias ? &w.at(p + name) : nullptr; };
    const bool sliding = c.sliding_window > 0 && (c.window_layers.empty() || c.window_layers[l] == '1');
    Vec h = norm(x, n, D, p + "input_layernorm.weight");
    Vec q = matmul_t(h, n, D, w.at(p + "self_attn.q_proj.weight"), H * d, bias("self_attn.q_proj.bias"));
    Vec k = matmul_t(h, n, D, w.at(p + "self_attn.k_proj.weight"), KV * d, bias("self_attn.k_proj.bias"));
    Vec v = matmul_t(h, n, D, w.at(p + "self_attn.v_proj.weight"), KV * d, bias("self_attn.v_proj.bias"));
    if (c.qk_norm) {  // Qwen3Attention: q_norm / k_norm over each head's d values, before the rotation
      q = norm(q, n * H, d, p + "self_attn.q_norm.weight");
      k = norm(k, n * KV, d, p + "self_attn.k_norm.weight");
    }
    const bool rotates = c.rope_layers.empty() || c.rope_layers[l] == '1';  // SmolLM3's use_rope
    const Vec& f = sliding && c.rope_local_theta > 0 ? local_freq : freq;
    for (int i = 0; i < n && rotates; ++i) {
      for (int hh = 0; hh < H; ++hh) rotate(&q[(size_t(i) * H + hh) * d], rot, f, i, rope_scale);
      for (int g = 0; g < KV; ++g) rotate(&k[(size_t(i) * KV + g) * d], rot, f, i, rope_scale);
    }
    const double scale = c.attention_scale > 0 ? c.attention_scale : 1.0 / std::sqrt(double(d));
    Vec z(size_t(n) * H * d, 0.0);
    for (int hh = 0; hh < H; ++hh) {
      const int g = hh / (H / KV);  // repeat_kv: query head hh reads K/V head hh / n_rep
      for (int i = 0; i < n; ++i) {
        // Causal, and with a sliding window W only keys j > i - W (HF's sliding_window_overlay).
        const int first = sliding ? std::max(0, i - c.sliding_window + 1) : 0;
        Vec s(i + 1, -1e300);
        double mx = -1e300, sum = 0;
        for (int j = first; j <= i; ++j) {
          double dot = 0;
          for (int t = 0; t < d; ++t) dot += q[(size_t(i) * H + hh) * d + t] * k[(size_t(j) * KV + g) * d + t];
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int j = 0; j < n; ++j) {
          const double pj = j >= first && j <= i ? s[j] / sum : 0.0;
          out.attention.push_back(pj);
          if (j <= i)
            for (int t = 0; t < d; ++t) z[(size_t(i) * H + hh) * d + t] += pj * v[(size_t(j) * KV + g) * d + t];
        }
      }
    }
    Vec o = matmul_t(z, n, H * d, w.at(p + "self_attn.o_proj.weight"), D, nullptr);
    if (c.sandwich_norms) o = norm(o, n, D, p + "post_attention_layernorm.weight");  // Gemma3DecoderLayer
    for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
    h = norm(x, n, D, p + (c.sandwich_norms ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight"));
    const int F = c.intermediate_size;
    Vec gate = matmul_t(h, n, D, w.at(p + "mlp.gate_proj.weight"), F, nullptr);
    Vec up = matmul_t(h, n, D, w.at(p + "mlp.up_proj.weight"), F, nullptr);
    for (size_t i = 0; i < gate.size(); ++i) {
      const double g = gate[i];  // silu, or gelu_pytorch_tanh (Gemma)
      gate[i] = (c.gelu_mlp ? 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g)))
                            : g / (1 + std::exp(-g))) * up[i];
    }
    Vec m = matmul_t(gate, n, F, w.at(p + "mlp.down_proj.weight"), D, nullptr);
    if (c.sandwich_norms) m = norm(m, n, D, p + "post_feedforward_layernorm.weight");
    for (size_t i = 0; i < x.size(); ++i) x[i] += m[i];
  }
  x = norm(x, n, D, "model.norm.weight");
  const Vec& head = c.tie_word_embeddings ? embed : w.at("lm_head.weight");
  out.logits = matmul_t(x, n, D, head, c.vocab_size, nullptr);
  if (c.final_logit_softcapping > 0)  // Gemma3ForCausalLM
    for (double& v : out.logits) v = c.final_logit_softcapping * std::tanh(v / c.final_logit_softcapping);
  return out;
}

attn::LlamaConfig tiny(int kv_heads, bool bias, bool tied) {
  attn::LlamaConfig c;
  c.vocab_size = 23;
  c.max_position_embeddings = 32;
  c.hidden_size = 16;
  c.intermediate_size = 24;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = kv_heads;
  c.rms_norm_eps = 1e-5f;
  c.attention_bias = bias;
  c.tie_word_embeddings = tied;
  return c;
}

double max_abs_diff(const float* a, const Vec& b, size_t offset, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(double(a[i]) - b[offset + i]));
  return m;
}

const std::vector<int32_t> kTokens = {3, 17, 5, 5, 22, 0, 9, 14, 1, 8};
// Attention weights against the float64 reference: float32's rounding through these random tiny
// models leaves 2.6e-7 to 2.5e-6 (a change in how one RMSNorm rounds moves a model's figure either
// way within that spread), well inside the bound of 2e-5.
constexpr double kAttentionTolerance = 4e-6;

// Decodes `tokens` through the cache (the first 4 at once, then one at a time), each step's logits
// (and, with_attention, its attention rows) against the reference's rows of the full sequence.
void check_decoding(attn::Llama& m, const attn::LlamaConfig& c, const RefOut& ref, bool with_attention) {
  const int n = static_cast<int>(kTokens.size()), V = c.vocab_size, H = c.num_attention_heads, L = c.num_hidden_layers;
  ASSERT_EQ(m.start_decoding(1, n), "");
  int done = 0;
  for (int step_n : {4, 1, 1, 1, 1, 1, 1}) {
    std::vector<float> step_logits(V), step_attention(size_t(L) * H * step_n * (done + step_n));
    ASSERT_EQ(m.step(kTokens.data() + done, step_n, step_logits.data(), with_attention ? step_attention.data() : nullptr), "");
    done += step_n;
    const size_t last = size_t(done - 1) * V;
    EXPECT_LT(max_abs_diff(step_logits.data(), ref.logits, last, V), 2e-5) << "step ending at " << done;
    if (!with_attention) continue;
    // Each new query row i (position done - step_n + i) against the done keys.
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < step_n; ++i) {
          const int pos = done - step_n + i;
          const size_t at = ((size_t(l) * H + h) * step_n + i) * done;
          const size_t ref_at = ((size_t(l) * H + h) * n + pos) * n;
          EXPECT_LT(max_abs_diff(step_attention.data() + at, ref.attention, ref_at, done), kAttentionTolerance)
              << "layer " << l << " head " << h << " position " << pos;
        }
  }
  EXPECT_EQ(m.cached_length(), n);
}

// The forward against the reference (with attention weights: the materializing path; without:
// the tiled one), then decoding, each cached step equal to the uncached forward's row.
void check_model(const attn::LlamaConfig& c, unsigned seed, double attention_tolerance = kAttentionTolerance) {
  attn::Llama m;
  ASSERT_EQ(m.configure(c), "");
  const Tensors w = load_random(m.tensors(), seed);
  ASSERT_EQ(m.finalize(), "");
  const int n = static_cast<int>(kTokens.size()), V = c.vocab_size, H = c.num_attention_heads, L = c.num_hidden_layers;
  std::vector<float> logits(size_t(n) * V), attention(size_t(L) * H * n * n), tiled(size_t(n) * V);
  ASSERT_EQ(m.forward(kTokens.data(), n, logits.data(), attention.data(), 0, nullptr), "");
  ASSERT_EQ(m.forward(kTokens.data(), n, tiled.data(), nullptr, 0, nullptr), "");
  const RefOut ref = reference(c, w, kTokens);
  EXPECT_LT(max_abs_diff(tiled.data(), ref.logits, 0, tiled.size()), 2e-5) << "logits, tiled";
  const double logit_err = max_abs_diff(logits.data(), ref.logits, 0, logits.size());
  const double attention_err = max_abs_diff(attention.data(), ref.attention, 0, attention.size());
  EXPECT_LT(logit_err, 2e-5) << "logits";
  EXPECT_LT(attention_err, attention_tolerance) << "attention";
  std::printf("kv=%d bias=%d tied=%d theta=%g scaling=%s: logits %.2e attention %.2e\n", c.num_key_value_heads,
              c.attention_bias, c.tie_word_embeddings, c.rope.theta, c.rope.scaling.c_str(), logit_err, attention_err);

  check_decoding(m, c, ref, true);
  check_decoding(m, c, ref, false);
}

TEST(Llama, Qwen3QkNormWithHeadDimOtherThanHiddenOverHeads) {
  attn::LlamaConfig c = tiny(2, false, false);
  c.qk_norm = true;
  c.head_dim = 6;  // 4 heads x 6 = 24 != hidden 16, as Qwen3-0.6B's 16 x 128 != 1024
  check_model(c, 31);
}

TEST(Llama, SmolLM3LayersWithoutRotation) {
  attn::LlamaConfig c = tiny(2, false, true);
  c.rope_layers = "10";  // no_rope_layer_interval 2: the second layer does not rotate
  check_model(c, 37);
  c.rope_layers = "01";
  check_model(c, 38);
  c.rope_layers = "1";
  attn::Llama m;
  EXPECT_EQ(m.configure(c), "rope_layers must be one '0' or '1' per layer (2), got \"1\"");
}

TEST(Llama, GroupedQueryHeadsOneTwoAndAll) {
  check_model(tiny(1, false, true), 1);
  check_model(tiny(2, false, false), 2);
  check_model(tiny(4, false, true), 3);
}

TEST(Llama, Qwen2BiasesAndUntiedHead) {
  check_model(tiny(2, true, false), 4);
  check_model(tiny(1, true, true), 5);
}

TEST(Llama, RopeThetaAndScaling) {
  attn::LlamaConfig c = tiny(2, false, true);
  c.rope.theta = 500000.0;
  check_model(c, 6);
  c.rope.scaling = "linear";
  c.rope.factor = 4.0;
  check_model(c, 7);
  // head_dim 8 at theta 1e4: wavelengths 6.3, 63, 628 and 6283 positions; with an original
  // context of 64 (bands at 16 and 64) the first is kept, the second blended, the others scaled.
  c.rope.theta = 10000.0;
  c.head_dim = 8;
  c.rope.scaling = "llama3";
  c.rope.factor = 8.0;
  c.rope.low_freq_factor = 1.0;
  c.rope.high_freq_factor = 4.0;
  c.rope.original_max_position_embeddings = 64;
  check_model(c, 8);
}

TEST(Llama, HeadDimOtherThanHiddenOverHeads) {
  attn::LlamaConfig c = tiny(2, true, false);
  c.head_dim = 6;
  check_model(c, 9);
}

TEST(Llama, TraceHoldsQAndKBeforeAndAfterTheRotation) {
  attn::LlamaConfig c = tiny(2, true, false);
  c.rope.theta = 100.0;
  attn::Llama m;
  ASSERT_EQ(m.configure(c), "");
  load_random(m.tensors(), 13);
  ASSERT_EQ(m.finalize(), "");
  const int n = static_cast<int>(kTokens.size()), d = 4;
  std::vector<float> logits(size_t(n) * 23);
  attn::MhaTrace trace;
  ASSERT_EQ(m.forward(kTokens.data(), n, logits.data(), nullptr, 1, &trace), "");
  const Vec freq = frequencies(c.rope, d);
  // q: 1 x 4 heads x n x d; k: 1 x 2 K/V heads x n x d. Rotating the "before" rows at their
  // position gives the "after" ones; position 0 is not rotated at all.
  for (auto [before, after, heads] : {std::make_tuple(&trace.q_before_rotary, &trace.q, 4),
                                      std::make_tuple(&trace.k_before_rotary, &trace.k, 2)}) {
    ASSERT_EQ(before->size(), size_t(heads) * n * d);
    ASSERT_EQ(after->size(), before->size());
    double err = 0, moved = 0;
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < n; ++i) {
        const float* b = before->data() + (size_t(h) * n + i) * d;
        const float* a = after->data() + (size_t(h) * n + i) * d;
        Vec x(b, b + d);
        rotate(x.data(), d, freq, i);
        for (int t = 0; t < d; ++t) {
          err = std::max(err, std::fabs(x[t] - a[t]));
          if (i > 0) moved = std::max(moved, std::fabs(double(b[t]) - a[t]));
        }
      }
    EXPECT_LT(err, 1e-5);
    EXPECT_GT(moved, 0.01);  // the rotation did something
  }
}

TEST(Llama, RefusesUnsupportedConfigsByName) {
  attn::Llama m;
  attn::LlamaConfig c = tiny(3, false, true);
  EXPECT_EQ(m.configure(c), "num_attention_heads (4) is not a multiple of num_key_value_heads (3)");
  c = tiny(2, false, true);
  c.rope.scaling = "yarn";
  EXPECT_EQ(m.configure(c), "rope_scaling type 'yarn' is not supported (supported: linear, llama3, longrope)");
  c = tiny(2, false, true);
  c.head_dim = 5;
  EXPECT_EQ(m.configure(c), "rotary embeddings need an even head_dim, got 5");
  c = tiny(2, false, false);
  ASSERT_EQ(m.configure(c), "");
  EXPECT_EQ(m.finalize(), "missing tensor model.embed_tokens.weight");
  // Tied: no lm_head.weight is declared; Llama has no biases unless attention_bias.
  c.tie_word_embeddings = true;
  ASSERT_EQ(m.configure(c), "");
  std::vector<float> head(23 * 16, 0.0f);
  EXPECT_EQ(m.tensors().set("lm_head.weight", head.data(), head.size()), "unknown tensor lm_head.weight");
  EXPECT_EQ(m.tensors().set("model.layers.0.self_attn.q_proj.bias", head.data(), 16),
            "unknown tensor model.layers.0.self_attn.q_proj.bias");
}

TEST(Llama, LongSequenceWithASlidingWindowTiled) {
  // 300 positions: several 32-query and 128-key blocks of the tiled path, the window skipping
  // whole key blocks, against the reference and the materializing path.
  attn::LlamaConfig c = tiny(2, true, false);
  c.max_position_embeddings = 512;
  c.sliding_window = 40;
  attn::Llama m;
  ASSERT_EQ(m.configure(c), "");
  const Tensors w = load_random(m.tensors(), 12);
  ASSERT_EQ(m.finalize(), "");
  std::mt19937 rng(5);
  std::vector<int32_t> tokens(300);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % 23);
  const RefOut ref = reference(c, w, tokens);
  std::vector<float> tiled(300 * 23), materialized(300 * 23), attention(size_t(2) * 4 * 300 * 300);
  ASSERT_EQ(m.forward(tokens.data(), 300, tiled.data(), nullptr, 0, nullptr), "");
  ASSERT_EQ(m.forward(tokens.data(), 300, materialized.data(), attention.data(), 0, nullptr), "");
  EXPECT_LT(max_abs_diff(tiled.data(), ref.logits, 0, tiled.size()), 5e-5);
  EXPECT_LT(max_abs_diff(materialized.data(), ref.logits, 0, tiled.size()), 5e-5);
  EXPECT_LT(max_abs_diff(attention.data(), ref.attention, 0, attention.size()), 2e-6);
}

TEST(Llama, SlidingWindowShorterThanTheSequence) {
  // Mistral's window: 3 and 1 (each position sees itself only) of 10 positions, cached and not.
  attn::LlamaConfig c = tiny(2, false, false);
  c.sliding_window = 3;
  check_model(c, 10);
  c.sliding_window = 1;
  check_model(c, 11);
}

TEST(Llama, Gemma3LocalAndGlobalLayers) {
  // Gemma 3: (1 + w) norms, four per layer, embeddings times sqrt(hidden), GeGLU, q/k norms, the
  // query_pre_attn_scalar scale, a window of 3 on layers 0 and 2 with their own rope base, a global
  // layer 1, and a final softcap; the window shorter than the run so the cached steps roll.
  attn::LlamaConfig c = tiny(2, false, true);
  c.num_hidden_layers = 3;
  c.head_dim = 6;
  c.qk_norm = c.unit_offset_norms = c.sandwich_norms = c.scale_embeddings = c.gelu_mlp = true;
  c.sliding_window = 3;
  c.window_layers = "101";
  c.rope.theta = 1e6;
  c.rope_local_theta = 1e4;
  c.attention_scale = 1.0f / std::sqrt(5.0f);
  c.final_logit_softcapping = 3.0f;
  // Gains of 1 + w (w near 1 here) and the x4 embedding scale make activations several times those
  // of the other tests: attention within 2e-5 (the bound) rather than 4e-6.
  check_model(c, 21, 2e-5);
}

TEST(Llama, Phi3PartialRotaryAndLongrope) {
  // Phi-4-mini: a quarter of each head passes unrotated; longrope's short factors (the run within
  // the original context), then its long ones (past it: the forward only, as a cached run switches
  // midway as HF's does), cos and sin scaled by the attention factor.
  attn::LlamaConfig c = tiny(2, false, false);
  c.head_dim = 8;
  c.rope.rotary_dim = 6;
  c.rope.scaling = "longrope";
  c.rope.short_factor = {1.0, 1.5, 2.5};
  c.rope.long_factor = {2.0, 4.0, 9.0};
  c.rope.attention_factor = 1.2;
  c.rope.original_max_position_embeddings = 16;
  check_model(c, 31);
  c.rope.original_max_position_embeddings = 6;
  attn::Llama m;
  ASSERT_EQ(m.configure(c), "");
  const Tensors w = load_random(m.tensors(), 32);
  ASSERT_EQ(m.finalize(), "");
  const int n = static_cast<int>(kTokens.size());
  std::vector<float> logits(size_t(n) * c.vocab_size);
  ASSERT_EQ(m.forward(kTokens.data(), n, logits.data(), nullptr, 0, nullptr), "");
  const RefOut ref = reference(c, w, kTokens);
  EXPECT_LT(max_abs_diff(logits.data(), ref.logits, 0, logits.size()), 2e-5);
  c.rope.long_factor.pop_back();
  EXPECT_EQ(m.configure(c), "rope_scaling long_factor must hold 3 numbers (half the rotated head), got 2");
}

// Embeddings in the 1e36s, as a bf16 checkpoint can hold them: in float32 every RMSNorm's sum of
// squares (~1e72) would overflow, x / sqrt(Infinity) = 0, and the logits were all 0 with no error.
// With the mean square in double the norms are the formula's and the logits the float64
// reference's (the residual stream keeps the embeddings' scale, finite throughout).
TEST(Llama, HugeButFiniteEmbeddingsNormalizeAsInFloat64) {
  const attn::LlamaConfig c = tiny(2, false, false);
  attn::Llama m;
  ASSERT_EQ(m.configure(c), "");
  Tensors w = load_random(m.tensors(), 21);
  Vec& embed = w["model.embed_tokens.weight"];
  for (double& x : embed) x = static_cast<float>(x * 1e36);
  const auto stored = ref::to_float(embed);
  ASSERT_EQ(m.tensors().set("model.embed_tokens.weight", stored.data(), stored.size()), "");
  ASSERT_EQ(m.finalize(), "");
  const int n = static_cast<int>(kTokens.size());
  std::vector<float> logits(size_t(n) * c.vocab_size);
  ASSERT_EQ(m.forward(kTokens.data(), n, logits.data(), nullptr, 0, nullptr), "");
  const RefOut ref = reference(c, w, kTokens);
  double top = 0;
  for (double v : ref.logits) top = std::max(top, std::fabs(v));
  ASSERT_GT(top, 0.1);
  EXPECT_LT(max_abs_diff(logits.data(), ref.logits, 0, logits.size()), 1e-5 * top);
}

TEST(Llama, RollingCacheHoldsMemoryFlat) {
  // A window of 4 over 64 decoded positions (16x the window): the cache's rows stay at 2 x window
  // while every step's logits equal the uncached forward's.
  attn::LlamaConfig c = tiny(2, false, false);
  c.max_position_embeddings = 64;
  c.sliding_window = 4;
  attn::Llama m;
  ASSERT_EQ(m.configure(c), "");
  const Tensors w = load_random(m.tensors(), 41);
  ASSERT_EQ(m.finalize(), "");
  std::mt19937 rng(7);
  std::vector<int32_t> tokens(64);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % 23);
  const RefOut ref = reference(c, w, tokens);
  ASSERT_EQ(m.start_decoding(1, 64), "");
  std::vector<float> step_logits(c.vocab_size);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(m.step(tokens.data() + i, 1, step_logits.data(), nullptr), "");
    EXPECT_LT(max_abs_diff(step_logits.data(), ref.logits, size_t(i) * c.vocab_size, c.vocab_size), 2e-5) << i;
    for (const attn::KvCache& cache : m.caches()) {
      EXPECT_LE(cache.capacity, 2 * c.sliding_window);
      EXPECT_LE(cache.k.size(), size_t(2 * c.sliding_window) * cache.hk);
    }
  }
  EXPECT_EQ(m.cached_length(), 64);
}

}  // namespace
