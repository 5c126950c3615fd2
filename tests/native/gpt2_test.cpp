// The GPT-2 forward's contract: loading checks, token checks, and internal consistency.
// Its numbers are checked against a PyTorch reference in tests/js/transformer.test.cjs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference.h"
#include "models/gpt2.h"
#include "model_test_util.h"

namespace {

attn::GptConfig tiny() { return {11, 8, 8, 2, 2, 1e-5f}; }

void load_random(attn::Gpt2& m, unsigned seed) { load_random_tensors(m.tensors(), seed, 0.3); }

TEST(Gpt2, RejectsBadConfigsTensorsAndTokens) {
  attn::Gpt2 m;
  EXPECT_EQ(m.configure({11, 8, 9, 2, 2, 1e-5f}), "n_embd (9) is not divisible by n_head (2)");
  EXPECT_EQ(m.configure({0, 8, 8, 2, 2, 1e-5f}), "vocab_size must be between 1 and 1048576, got 0");
  ASSERT_EQ(m.configure(tiny()), "");
  std::vector<float> small(5, 0.0f);
  EXPECT_EQ(m.tensors().set("h.1.mlp.c_fc.weight", small.data(), 5), "h.1.mlp.c_fc.weight has 5 elements, expected 256");
  EXPECT_EQ(m.tensors().set("h.2.ln_1.bias", small.data(), 8), "unknown tensor h.2.ln_1.bias");
  std::vector<float> bad(8, 0.0f);
  bad[3] = std::nanf("");
  EXPECT_EQ(m.tensors().set("ln_f.bias", bad.data(), 8), "ln_f.bias contains NaN at index 3");
  std::vector<int32_t> tokens = {1, 2, 3};
  std::vector<float> logits(3 * 11);
  EXPECT_NE(m.forward(tokens.data(), 3, logits.data(), nullptr, 0, nullptr), "");
  EXPECT_EQ(m.finalize(), "missing tensor wte.weight");
  load_random(m, 1);
  ASSERT_EQ(m.finalize(), "");
  EXPECT_EQ(m.tensors().set("ln_f.bias", small.data(), 8),
            "the model is finalized: configure() again to load new weights");
  tokens[1] = 11;
  EXPECT_EQ(m.forward(tokens.data(), 3, logits.data(), nullptr, 0, nullptr),
            "token 11 at position 1 is outside the vocabulary of 11");
  std::vector<int32_t> long_input(9, 1);
  std::vector<float> long_logits(9 * 11);
  EXPECT_EQ(m.forward(long_input.data(), 9, long_logits.data(), nullptr, 0, nullptr),
            "9 tokens exceed the model's context of 8 positions");
  tokens[1] = 2;
  EXPECT_EQ(m.forward(tokens.data(), 3, logits.data(), nullptr, 0, nullptr), "");
}

TEST(Gpt2, CausalPrefixGivesTheSameLogitsAndAttentionRowsSumToOne) {
  attn::Gpt2 m;
  ASSERT_EQ(m.configure(tiny()), "");
  load_random(m, 2);
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9, 2};
  std::vector<float> full(7 * 11), prefix(4 * 11), attention(2 * 2 * 7 * 7);
  ASSERT_EQ(m.forward(tokens.data(), 7, full.data(), attention.data(), 1, nullptr), "");
  ASSERT_EQ(m.forward(tokens.data(), 4, prefix.data(), nullptr, 0, nullptr), "");
  // A causal model's first 4 positions cannot see the later 3 tokens.
  for (int i = 0; i < 4 * 11; ++i) EXPECT_NEAR(full[i], prefix[i], 1e-5);
  for (int row = 0; row < 2 * 2 * 7; ++row) {
    double sum = 0;
    for (int j = 0; j < 7; ++j) sum += attention[row * 7 + j];
    EXPECT_NEAR(sum, 1.0, 1e-5);
    EXPECT_EQ(attention[row * 7 + 6] != 0.0f, row % 7 == 6);  // only the last query sees the last key
  }
}

TEST(Gpt2, ScalarAndSimdKernelsAgree) {
  attn::Gpt2 a(attn::scalar_kernels()), b(attn::simd_kernels());
  ASSERT_EQ(a.configure(tiny()), "");
  ASSERT_EQ(b.configure(tiny()), "");
  load_random(a, 3);
  load_random(b, 3);
  ASSERT_EQ(a.finalize(), "");
  ASSERT_EQ(b.finalize(), "");
  const std::vector<int32_t> tokens = {0, 10, 5, 5, 7};
  std::vector<float> la(5 * 11), lb(5 * 11);
  attn::MhaTrace trace;
  ASSERT_EQ(a.forward(tokens.data(), 5, la.data(), nullptr, 0, nullptr), "");
  ASSERT_EQ(b.forward(tokens.data(), 5, lb.data(), nullptr, 1, &trace), "");
  for (size_t i = 0; i < la.size(); ++i) EXPECT_NEAR(la[i], lb[i], 1e-4);
  EXPECT_EQ(trace.attention.weights.size(), size_t(2 * 5 * 5));
}

TEST(Gpt2, LogitRowsAreTheLastRowsOfTheFullRun) {
  attn::Gpt2 m;
  ASSERT_EQ(m.configure(tiny()), "");
  load_random(m, 4);
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9};
  std::vector<float> full(6 * 11), attention_full(2 * 2 * 6 * 6);
  ASSERT_EQ(m.forward(tokens.data(), 6, full.data(), attention_full.data(), 0, nullptr), "");
  for (int keep : {0, 1, 2, 6}) {
    // Filled with a marker: exactly keep x vocab floats are written.
    std::vector<float> kept(6 * 11 + 1, 777.0f), attention(2 * 2 * 6 * 6);
    ASSERT_EQ(m.forward(tokens.data(), 6, kept.data(), attention.data(), 0, nullptr, keep), "");
    for (int i = 0; i < keep * 11; ++i) EXPECT_EQ(kept[i], full[(6 - keep) * 11 + i]) << "keep " << keep << " at " << i;
    EXPECT_EQ(kept[keep * 11], 777.0f) << "keep " << keep;
    EXPECT_EQ(attention, attention_full);  // the attention does not depend on the head
  }
  std::vector<float> logits(6 * 11);
  EXPECT_EQ(m.forward(tokens.data(), 6, logits.data(), nullptr, 0, nullptr, 7),
            "logit rows 7 out of range [0, 6] (the run's tokens)");
  EXPECT_EQ(m.forward(tokens.data(), 6, logits.data(), nullptr, 0, nullptr, -2),
            "logit rows -2 out of range [0, 6] (the run's tokens)");
}

// The traced layer's block (block_trace.h) against double-precision arithmetic on its own rows: the
// residual sums, ln_2 of the stream (with the gains and biases the trace reports), GELU of the up
// projection, and one layer's output as the next one's input.
TEST(Gpt2, BlockTraceHoldsTheStreamTheNormsAndTheMlp) {
  attn::Gpt2 m;
  ASSERT_EQ(m.configure(tiny()), "");
  load_random(m, 4);
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5};
  const int n = 5, D = 8, F = 32;
  std::vector<float> logits(n * 11);
  attn::MhaTrace trace0, trace1;
  attn::BlockTrace b0, b1;
  ASSERT_EQ(m.forward(tokens.data(), n, logits.data(), nullptr, 0, &trace0, -1, &b0), "");
  ASSERT_EQ(m.forward(tokens.data(), n, logits.data(), nullptr, 1, &trace1, -1, &b1), "");
  ASSERT_EQ(b1.input.size(), std::size_t(n * D));
  ASSERT_EQ(b1.ffn.up.size(), std::size_t(n * F));
  EXPECT_EQ(b1.ffn.gate.size(), 0u);
  EXPECT_EQ(b1.cross.size(), 0u);
  ASSERT_EQ(b1.norm_count, 2);
  const auto layer_norm = [&](const float* x, const attn::NormTrace& p, double* y) {
    double mean = 0, var = 0;
    for (int i = 0; i < D; ++i) mean += x[i] / D;
    for (int i = 0; i < D; ++i) var += (x[i] - mean) * (x[i] - mean) / D;
    for (int i = 0; i < D; ++i) y[i] = (x[i] - mean) / std::sqrt(var + p.eps.data()[0]) * p.gain.data()[i] + p.bias.data()[i];
  };
  for (int r = 0; r < n; ++r) {
    const int o = r * D;
    double y[8];
    layer_norm(b1.input.data() + o, b1.norms[0], y);
    for (int i = 0; i < D; ++i) EXPECT_NEAR(trace1.x.data()[o + i], y[i], 1e-5);  // the attention read ln_1(input)
    for (int i = 0; i < D; ++i) {
      EXPECT_NEAR(b1.after_attention.data()[o + i], double(b1.input.data()[o + i]) + b1.attention.data()[o + i], 1e-6);
      EXPECT_NEAR(b1.after_mlp.data()[o + i], double(b1.after_attention.data()[o + i]) + b1.mlp.data()[o + i], 1e-6);
      EXPECT_EQ(b1.output.data()[o + i], b1.after_mlp.data()[o + i]);
      // Layer 0's output is layer 1's input (to float32 rounding: a traced attention sums in another order).
      EXPECT_NEAR(b1.input.data()[o + i], b0.output.data()[o + i], 1e-5);
    }
    layer_norm(b1.after_attention.data() + o, b1.norms[1], y);
    for (int i = 0; i < D; ++i) EXPECT_NEAR(b1.mlp_input.data()[o + i], y[i], 1e-5);
  }
  for (int i = 0; i < n * F; ++i) {
    const double u = b1.ffn.up.data()[i];
    EXPECT_NEAR(b1.ffn.hidden.data()[i], 0.5 * u * (1 + std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u))), 1e-5);
  }
}

}  // namespace
