// Incremental decoding's contract: every step through the KV cache gives what a full, uncached
// forward of the same prefix gives (GPT-2 and BART), beams reordered in the cache continue the
// right sequences, and misuse gets named errors. BART's numbers against PyTorch: tests/js.
#include <gtest/gtest.h>

#include <vector>

#include "models/bart.h"
#include "models/gpt2.h"
#include "model_test_util.h"

namespace {

constexpr int kVocab = 11;

attn::BartConfig tiny_bart() {
  attn::BartConfig c;
  c.vocab_size = kVocab;
  c.max_position_embeddings = 12;
  c.d_model = 8;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.encoder_attention_heads = 2;
  c.decoder_attention_heads = 2;
  c.encoder_ffn_dim = 12;
  c.decoder_ffn_dim = 12;
  return c;
}

void expect_near(const float* a, const float* b, int n, double tol, const char* what) {
  for (int i = 0; i < n; ++i) ASSERT_NEAR(a[i], b[i], tol) << what << " [" << i << "]";
}

TEST(Gpt2Decoding, EveryCachedStepEqualsTheFullForwardOfItsPrefix) {
  attn::Gpt2 m;
  ASSERT_EQ(m.configure({kVocab, 16, 8, 2, 2, 1e-5f}), "");
  load_random_tensors(m.tensors(), 7, 0.3);
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9, 2, 6};
  ASSERT_EQ(m.start_decoding(1, 16), "");
  std::vector<float> step_logits(kVocab), step_attn(2 * 2 * 3 * 3);
  ASSERT_EQ(m.step(tokens.data(), 3, step_logits.data(), step_attn.data()), "");  // the prompt in one step
  for (int n = 3; n <= 8; ++n) {
    std::vector<float> full(n * kVocab), full_attn(2 * 2 * n * n);
    ASSERT_EQ(m.forward(tokens.data(), n, full.data(), full_attn.data(), 0, nullptr), "");
    expect_near(step_logits.data(), full.data() + (n - 1) * kVocab, kVocab, 2e-5, "logits");
    if (n > 3) {  // one new token: its attention row per layer and head is the full forward's last row
      for (int lh = 0; lh < 4; ++lh) expect_near(step_attn.data() + lh * n, full_attn.data() + (lh * n + n - 1) * n, n, 1e-6, "attention");
    }
    if (n == 8) break;
    step_attn.assign(2 * 2 * (n + 1), 0.0f);
    ASSERT_EQ(m.step(&tokens[n], 1, step_logits.data(), step_attn.data()), "");
  }
  EXPECT_EQ(m.cached_length(), 8);
}

TEST(Gpt2Decoding, ReorderedBeamsContinueTheirOwnSequences) {
  attn::Gpt2 m;
  ASSERT_EQ(m.configure({kVocab, 16, 8, 2, 2, 1e-5f}), "");
  load_random_tensors(m.tensors(), 8, 0.3);
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  std::vector<int32_t> both = {1, 2, 3, 5, 6, 7};  // batch 2 x 3
  ASSERT_EQ(m.start_decoding(2, 8), "");
  std::vector<float> logits(3 * kVocab);
  ASSERT_EQ(m.step(both.data(), 3, logits.data(), nullptr), "");
  const int order[3] = {1, 0, 1};  // three beams: b, a, b
  ASSERT_EQ(m.reorder_cache(order, 3), "");
  const std::vector<int32_t> next = {8, 4, 8};
  ASSERT_EQ(m.step(next.data(), 1, logits.data(), nullptr), "");
  std::vector<float> full_a(4 * kVocab), full_b(4 * kVocab);
  ASSERT_EQ(m.forward(a.data(), 4, full_a.data(), nullptr, 0, nullptr), "");
  ASSERT_EQ(m.forward(b.data(), 4, full_b.data(), nullptr, 0, nullptr), "");
  expect_near(logits.data(), full_b.data() + 3 * kVocab, kVocab, 2e-5, "beam 0");
  expect_near(logits.data() + kVocab, full_a.data() + 3 * kVocab, kVocab, 2e-5, "beam 1");
  expect_near(logits.data() + 2 * kVocab, full_b.data() + 3 * kVocab, kVocab, 2e-5, "beam 2");
}

TEST(Gpt2Decoding, NamedErrors) {
  attn::Gpt2 m;
  ASSERT_EQ(m.configure({kVocab, 8, 8, 2, 2, 1e-5f}), "");
  load_random_tensors(m.tensors(), 9, 0.3);
  ASSERT_EQ(m.finalize(), "");
  std::vector<int32_t> t = {1, 2, 3, 4, 5, 6};
  std::vector<float> logits(kVocab);
  EXPECT_EQ(m.step(t.data(), 1, logits.data(), nullptr), "no decoding in progress: call start_decoding() first");
  ASSERT_EQ(m.start_decoding(1, 100), "");  // capped at the context of 8
  ASSERT_EQ(m.step(t.data(), 6, logits.data(), nullptr), "");
  EXPECT_EQ(m.step(t.data(), 3, logits.data(), nullptr),
            "9 tokens exceed the decoding capacity of 8 positions (the model's context is 8)");
  const int bad[1] = {1};
  EXPECT_EQ(m.reorder_cache(bad, 1), "reorder: sequence 1 out of range (batch 1)");
  t[0] = kVocab;
  EXPECT_EQ(m.step(t.data(), 1, logits.data(), nullptr), "token 11 at position 0 is outside the vocabulary of 11");
  t[0] = 1;
  EXPECT_EQ(m.step(t.data(), 1, logits.data(), nullptr), "");  // still usable after the errors
}

struct Source {
  std::vector<int32_t> tokens;
  std::vector<uint8_t> padding;
  int batch, n;
};

TEST(BartDecoding, EveryCachedStepEqualsTheFullDecoderAndPaddingChangesNothing) {
  attn::Bart m;
  ASSERT_EQ(m.configure(tiny_bart()), "");
  load_random_tensors(m.tensors(), 11, 0.3);
  ASSERT_EQ(m.finalize(), "");
  // Two sources in one batch: the second padded from 3 to 5 tokens.
  Source src{{0, 4, 5, 6, 2, 0, 7, 2, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, 2, 5};
  const int D = 8, S = 5, H = 2, L = 2;
  std::vector<float> memory(2 * S * D), alone(3 * D);
  ASSERT_EQ(m.encode({src.tokens.data(), nullptr, src.padding.data(), 2, S}, memory.data(), nullptr, -1, nullptr), "");
  ASSERT_EQ(m.encode({src.tokens.data() + 5, nullptr, nullptr, 1, 3}, alone.data(), nullptr, -1, nullptr), "");
  expect_near(memory.data() + S * D, alone.data(), 3 * D, 2e-5, "padded source");
  const attn::Memory mem{memory.data(), src.padding.data(), S};

  const std::vector<int32_t> target = {2, 8, 9, 3, 10, 4};  // both sequences decode the same target
  const int T = static_cast<int>(target.size());
  std::vector<int32_t> both(2 * T);
  for (int b = 0; b < 2; ++b) std::copy(target.begin(), target.end(), both.begin() + b * T);
  std::vector<float> full(2 * T * kVocab), cross(L * 2 * H * T * S);
  ASSERT_EQ(m.decode(both.data(), 2, T, mem, full.data(), nullptr, cross.data(), -1, nullptr, nullptr), "");
  ASSERT_EQ(m.start_decoding(mem, 2, 12), "");
  for (int t = 0; t < T; ++t) {
    const int32_t next[2] = {target[t], target[t]};
    std::vector<float> logits(2 * kVocab), step_cross(L * 2 * H * S);
    ASSERT_EQ(m.step(next, 1, logits.data(), nullptr, step_cross.data()), "");
    for (int b = 0; b < 2; ++b) expect_near(logits.data() + b * kVocab, full.data() + (b * T + t) * kVocab, kVocab, 2e-5, "logits");
    for (int lbh = 0; lbh < L * 2 * H; ++lbh)
      expect_near(step_cross.data() + lbh * S, cross.data() + (lbh * T + t) * S, S, 1e-6, "cross-attention");
  }
  // Padded keys get no cross-attention.
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t)
        for (int j = 3; j < S; ++j) EXPECT_EQ(cross[(((l * 2 + 1) * H + h) * T + t) * S + j], 0.0f);
}

TEST(BartDecoding, BeamsSpreadFromOneSourceAndNamedErrors) {
  attn::Bart m;
  ASSERT_EQ(m.configure(tiny_bart()), "");
  load_random_tensors(m.tensors(), 12, 0.3);
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> src = {0, 4, 5, 2};
  std::vector<float> memory(4 * 8), logits(3 * kVocab), one(kVocab), full(2 * kVocab);
  ASSERT_EQ(m.encode({src.data(), nullptr, nullptr, 1, 4}, memory.data(), nullptr, -1, nullptr), "");
  const attn::Memory mem{memory.data(), nullptr, 4};
  ASSERT_EQ(m.start_decoding(mem, 1, 12), "");
  const int32_t start = 2;
  ASSERT_EQ(m.step(&start, 1, one.data(), nullptr, nullptr), "");
  const int spread[3] = {0, 0, 0};
  ASSERT_EQ(m.reorder_cache(spread, 3), "");
  const int32_t next[3] = {7, 8, 9};
  ASSERT_EQ(m.step(next, 1, logits.data(), nullptr, nullptr), "");
  for (int b = 0; b < 3; ++b) {
    const int32_t prefix[2] = {2, next[b]};
    ASSERT_EQ(m.decode(prefix, 1, 2, mem, full.data(), nullptr, nullptr, -1, nullptr, nullptr), "");
    expect_near(logits.data() + b * kVocab, full.data() + kVocab, kVocab, 2e-5, "beam");
  }
  const int32_t bad[3] = {1, kVocab, 1};
  EXPECT_EQ(m.step(bad, 1, logits.data(), nullptr, nullptr), "token 11 at position 1 is outside the vocabulary of 11");
  std::vector<int32_t> too_long(13, 1);
  std::vector<float> mem13(13 * 8);
  EXPECT_EQ(m.encode({too_long.data(), nullptr, nullptr, 1, 13}, mem13.data(), nullptr, -1, nullptr),
            "13 positions exceed the model's 12 (max_position_embeddings)");
}

}  // namespace
