// The BERT forward's contract: a float64 reference of the whole encoder (written here, from the
// formulas), padding that does not change a sentence's result, the heads, and loading checks.
// Hugging Face-named fixtures from PyTorch are checked in tests/js/bert.test.cjs.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "models/bert.h"
#include "model_test_util.h"

namespace {

attn::BertConfig tiny() {
  attn::BertConfig c;
  c.vocab_size = 13;
  c.max_position_embeddings = 10;
  c.type_vocab_size = 2;
  c.hidden_size = 8;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 12;
  c.layer_norm_eps = 1e-12f;
  c.pooler = c.mlm_head = true;
  return c;
}

// The checkpoint's tensors by name, in double, as loaded (checkpoint layouts: Linear is out x in).
struct RefWeights {
  std::map<std::string, ref::Vec> t;
  const ref::Vec& operator[](const std::string& name) const { return t.at(name); }
};

RefWeights load_random(attn::Bert& m, unsigned seed) {
  RefWeights w;
  std::mt19937 rng(seed);
  auto& table = m.tensors();
  for (int i = 0; i < table.size(); ++i) {
    const auto& e = table.entry(i);
    size_t n = 1;
    for (int d : e.shape) n *= d;
    ref::Vec v = ref::random_vec(rng, n, 0.5);
    if (e.name.find("LayerNorm.weight") != std::string::npos)
      for (double& x : v) x += 1.0;
    const auto f = ref::to_float(v);
    EXPECT_EQ(table.set(e.name, f.data(), n), "") << e.name;
    w.t[e.name] = ref::Vec(f.begin(), f.end());
  }
  return w;
}

using Rows = std::vector<ref::Vec>;  // n rows of features

Rows linear(const Rows& x, const ref::Vec& W, const ref::Vec& b) {  // W: out x in
  const size_t out = b.size(), in = x[0].size();
  Rows y(x.size(), ref::Vec(out));
  for (size_t r = 0; r < x.size(); ++r)
    for (size_t o = 0; o < out; ++o) {
      double s = b[o];
      for (size_t i = 0; i < in; ++i) s += x[r][i] * W[o * in + i];
      y[r][o] = s;
    }
  return y;
}

Rows layer_norm(const Rows& x, const ref::Vec& g, const ref::Vec& b, double eps) {
  Rows y = x;
  for (auto& row : y) {
    double mean = 0, var = 0;
    for (double v : row) mean += v;
    mean /= row.size();
    for (double v : row) var += (v - mean) * (v - mean);
    var /= row.size();
    for (size_t i = 0; i < row.size(); ++i) row[i] = (row[i] - mean) / std::sqrt(var + eps) * g[i] + b[i];
  }
  return y;
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// One sentence through BERT, in double: the formulas of bert.h, with no padding at all.
Rows reference(const RefWeights& w, const attn::BertConfig& c, const std::vector<int32_t>& ids,
               const std::vector<int32_t>& types) {
  const int n = static_cast<int>(ids.size()), D = c.hidden_size, H = c.num_attention_heads, dh = D / H;
  Rows x(n, ref::Vec(D));
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < D; ++d)
      x[i][d] = w["embeddings.word_embeddings.weight"][ids[i] * D + d] +
                w["embeddings.position_embeddings.weight"][i * D + d] +
                w["embeddings.token_type_embeddings.weight"][types[i] * D + d];
  x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], c.layer_norm_eps);
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    const Rows q = linear(x, w[p + "attention.self.query.weight"], w[p + "attention.self.query.bias"]);
    const Rows k = linear(x, w[p + "attention.self.key.weight"], w[p + "attention.self.key.bias"]);
    const Rows v = linear(x, w[p + "attention.self.value.weight"], w[p + "attention.self.value.bias"]);
    Rows z(n, ref::Vec(D, 0.0));
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < n; ++i) {
        ref::Vec s(n);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < n; ++j) {
          double dot = 0;
          for (int d = 0; d < dh; ++d) dot += q[i][h * dh + d] * k[j][h * dh + d];
          s[j] = dot / std::sqrt(double(dh));
          mx = std::max(mx, s[j]);
        }
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int j = 0; j < n; ++j)
          for (int d = 0; d < dh; ++d) z[i][h * dh + d] += s[j] / sum * v[j][h * dh + d];
      }
    Rows a = linear(z, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"]);
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < D; ++d) a[i][d] += x[i][d];
    x = layer_norm(a, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], c.layer_norm_eps);
    Rows f = linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]);
    for (auto& row : f)
      for (double& e : row) e = gelu(e);
    Rows o = linear(f, w[p + "output.dense.weight"], w[p + "output.dense.bias"]);
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < D; ++d) o[i][d] += x[i][d];
    x = layer_norm(o, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], c.layer_norm_eps);
  }
  return x;
}

TEST(Bert, PaddedBatchMatchesAFloat64ReferenceOfEachSentenceAlone) {
  const auto c = tiny();
  for (const attn::Kernels* kn : {&attn::scalar_kernels(), &attn::simd_kernels()}) {
    attn::Bert m(*kn);
    ASSERT_EQ(m.configure(c), "");
    const RefWeights w = load_random(m, 7);
    ASSERT_EQ(m.finalize(), "");
    // Three sentences of lengths 6, 3 and 4 (a pair), padded to 6 with id 0.
    const std::vector<std::vector<int32_t>> ids = {{2, 5, 7, 9, 11, 3}, {2, 12, 3}, {2, 4, 3, 8}};
    const std::vector<std::vector<int32_t>> types = {{0, 0, 0, 0, 0, 0}, {0, 0, 0}, {0, 0, 0, 1}};
    const int B = 3, n = 6, D = c.hidden_size;
    std::vector<int32_t> tok(B * n, 0), typ(B * n, 0);
    std::vector<uint8_t> pad(B * n, 1);
    for (int b = 0; b < B; ++b)
      for (size_t i = 0; i < ids[b].size(); ++i) tok[b * n + i] = ids[b][i], typ[b * n + i] = types[b][i], pad[b * n + i] = 0;
    std::vector<float> hidden(B * n * D), attention(c.num_hidden_layers * B * c.num_attention_heads * n * n);
    ASSERT_EQ(m.forward({tok.data(), typ.data(), pad.data(), B, n}, hidden.data(), attention.data(), -1, nullptr), "");
    for (int b = 0; b < B; ++b) {
      const Rows want = reference(w, c, ids[b], types[b]);
      for (size_t i = 0; i < ids[b].size(); ++i)
        for (int d = 0; d < D; ++d) EXPECT_NEAR(hidden[(b * n + i) * D + d], want[i][d], 2e-5) << kn->name << " b" << b << " i" << i;
    }
    // Attention rows sum to 1 over real keys, never look at padding, and are not triangular.
    for (int l = 0; l < c.num_hidden_layers; ++l)
      for (int b = 0; b < B; ++b)
        for (int h = 0; h < c.num_attention_heads; ++h)
          for (size_t i = 0; i < ids[b].size(); ++i) {
            const float* row = &attention[((((size_t(l) * B + b) * c.num_attention_heads + h) * n) + i) * n];
            double sum = 0;
            for (int j = 0; j < n; ++j) {
              sum += row[j];
              if (j >= int(ids[b].size())) EXPECT_EQ(row[j], 0.0f);
              else EXPECT_GT(row[j], 0.0f);  // bidirectional: every real key gets weight
            }
            EXPECT_NEAR(sum, 1.0, 1e-5);
          }
  }
}

TEST(Bert, HeadsMatchTheirFormulas) {
  const auto c = tiny();
  attn::Bert m;
  ASSERT_EQ(m.configure(c), "");
  const RefWeights w = load_random(m, 8);
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> ids = {2, 6, 4, 3};
  const int n = 4, D = c.hidden_size, V = c.vocab_size;
  std::vector<float> hidden(n * D), logits(n * V), pooled(D);
  ASSERT_EQ(m.forward({ids.data(), nullptr, nullptr, 1, n}, hidden.data(), nullptr, -1, nullptr), "");
  ASSERT_EQ(m.mlm_logits(hidden.data(), n, logits.data()), "");
  ASSERT_EQ(m.pooler(hidden.data(), 1, n, pooled.data()), "");
  Rows h(n, ref::Vec(D));
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < D; ++d) h[i][d] = hidden[i * D + d];
  // MLM: LN(gelu(dense(h))) E^T + bias.
  Rows t = linear(h, w["cls.predictions.transform.dense.weight"], w["cls.predictions.transform.dense.bias"]);
  for (auto& row : t)
    for (double& e : row) e = gelu(e);
  t = layer_norm(t, w["cls.predictions.transform.LayerNorm.weight"], w["cls.predictions.transform.LayerNorm.bias"], c.layer_norm_eps);
  const Rows want = linear(t, w["embeddings.word_embeddings.weight"], w["cls.predictions.bias"]);
  for (int i = 0; i < n; ++i)
    for (int v = 0; v < V; ++v) EXPECT_NEAR(logits[i * V + v], want[i][v], 1e-4);
  // Pooler: tanh(dense(h[0])).
  const Rows p = linear({h[0]}, w["pooler.dense.weight"], w["pooler.dense.bias"]);
  for (int d = 0; d < D; ++d) EXPECT_NEAR(pooled[d], std::tanh(p[0][d]), 1e-5);
}

TEST(Bert, RejectsBadConfigsTensorsAndInputs) {
  attn::Bert m;
  auto c = tiny();
  c.hidden_size = 9;
  EXPECT_EQ(m.configure(c), "hidden_size (9) is not divisible by num_attention_heads (2)");
  c = tiny();
  c.type_vocab_size = 0;
  EXPECT_EQ(m.configure(c), "type_vocab_size must be between 1 and 1024, got 0");
  c = tiny();
  c.pooler = c.mlm_head = false;
  ASSERT_EQ(m.configure(c), "");
  EXPECT_EQ(m.finalize(), "missing tensor embeddings.word_embeddings.weight");
  std::vector<float> w(8 * 12);
  EXPECT_EQ(m.tensors().set("encoder.layer.0.intermediate.dense.weight", w.data(), 95),
            "encoder.layer.0.intermediate.dense.weight has 95 elements, expected 96");
  EXPECT_EQ(m.tensors().set("pooler.dense.weight", w.data(), 64), "unknown tensor pooler.dense.weight");
  load_random(m, 9);
  ASSERT_EQ(m.finalize(), "");
  std::vector<int32_t> ids = {2, 13, 3}, types = {0, 2, 0};
  std::vector<float> hidden(11 * 8);
  EXPECT_EQ(m.forward({ids.data(), nullptr, nullptr, 1, 3}, hidden.data(), nullptr, -1, nullptr),
            "token 13 at position 1 is outside the vocabulary of 13");
  ids[1] = 4;
  EXPECT_EQ(m.forward({ids.data(), types.data(), nullptr, 1, 3}, hidden.data(), nullptr, -1, nullptr),
            "token type 2 at position 1 is outside the type_vocab_size of 2");
  std::vector<int32_t> long_ids(11, 4);
  EXPECT_EQ(m.forward({long_ids.data(), nullptr, nullptr, 1, 11}, hidden.data(), nullptr, -1, nullptr),
            "11 tokens exceed the model's 10 positions (max_position_embeddings)");
  EXPECT_EQ(m.mlm_logits(hidden.data(), 1, hidden.data()), "this checkpoint has no masked-LM head (cls.predictions.*)");
  EXPECT_EQ(m.pooler(hidden.data(), 1, 3, hidden.data()), "this checkpoint has no pooler (pooler.dense.*)");
}

}  // namespace
