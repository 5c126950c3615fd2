// Non-finite activations made by a model's weights (issue 38): each family's forward and decoding
// step names the model, the layer, the tensor and the position where the overflow appears, as
// coming from the weights, not the input; the attention layer's own "query contains NaN" check
// never fires inside a model; the model still runs inputs that do not reach the bad weight. The
// tiny models are random but for the weights each test makes huge (1e38, a bfloat16 value), placed
// where float32 overflows for certain (the reasoning beside each).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "layers/activation_check.h"
#include "model_test_util.h"
#include "models/bart.h"
#include "models/bert.h"
#include "models/gpt2.h"
#include "models/llama.h"
#include "tensors/finite.h"

namespace {

constexpr float kHuge = 1e38f;
const std::string kTail = ": the model's weights produced it \\(float32 overflowed\\), not the input$";

// Replaces tensor `name` (after load_random_tensors) by seeded values near 0 with value(i, v)
// applied to each: the test's own edits.
void edit(attn::TensorTable& t, const std::string& name, const std::function<float(std::size_t, float)>& value) {
  for (int i = 0; i < t.size(); ++i) {
    const auto& e = t.entry(i);
    if (e.name != name) continue;
    std::size_t n = 1;
    for (int d : e.shape) n *= d;
    std::mt19937 rng(n + i);
    std::uniform_real_distribution<float> u(-0.3f, 0.3f);
    const bool gain = name.find("norm") != std::string::npos || name.find("ln_") != std::string::npos;
    std::vector<float> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = value(k, gain ? 1.0f + u(rng) : u(rng));
    ASSERT_EQ(t.set(name, v.data(), n), "") << name;
    return;
  }
  FAIL() << "no tensor " << name;
}

void expect_matches(const std::string& err, const std::string& pattern) {
  EXPECT_TRUE(std::regex_search(err, std::regex(pattern))) << "got: " << err << "\nexpected: " << pattern;
  EXPECT_EQ(err.find("contains"), std::string::npos) << err;  // never the attention layer's input check
}

bool finite(const std::vector<float>& x) { return attn::all_finite(x.data(), x.size()); }

TEST(ActivationCheck, AllFiniteAgreesWithTheScalarSearch) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  const float finite_edges[] = {FLT_MAX, -FLT_MAX, FLT_MIN, -0.0f, 1e-45f, kHuge};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 2);
  for (std::size_t n = 0; n < 70; ++n) {
    std::vector<float> x(n);
    for (float& v : x) v = u(rng);
    for (std::size_t k = 0; k < n; k += 7) x[k] = finite_edges[k % 6];
    EXPECT_TRUE(attn::all_finite(x.data(), n)) << n;
    for (std::size_t at = 0; at < n; at += 5)
      for (float s : specials) {
        std::vector<float> y = x;
        y[at] = s;
        EXPECT_FALSE(attn::all_finite(y.data(), n)) << n << " " << at;
        EXPECT_EQ(attn::first_non_finite(y.data(), n), long(at));
      }
  }
}

attn::LlamaConfig tiny_llama() {
  attn::LlamaConfig c;
  c.vocab_size = 17, c.max_position_embeddings = 16, c.hidden_size = 16, c.intermediate_size = 24;
  c.num_hidden_layers = 4, c.num_attention_heads = 4, c.num_key_value_heads = 2, c.rms_norm_eps = 1e-5f;
  c.model_type = "qwen2";
  c.attention_bias = true;
  return c;
}

// One gain of layer 2's post_attention_layernorm at 1e38: the MLP's input h has h_j ~ +-1e38, so
// gate and up are ~1e37 where W[:, j] is not tiny; silu(g) * up overflows wherever g > 0 (about
// half the units, at every position), and down_proj turns the infinities into its output.
TEST(ActivationCheck, LlamaNamesTheMlpWhoseGainOverflowed) {
  attn::Llama m;
  ASSERT_EQ(m.configure(tiny_llama()), "");
  load_random_tensors(m.tensors(), 5, 0.3);
  edit(m.tensors(), "model.layers.2.post_attention_layernorm.weight", [](std::size_t i, float v) { return i == 3 ? kHuge : v; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {1, 4, 2, 8};
  std::vector<float> logits(4 * 17);
  const std::string where = "^qwen2 model: (NaN|-?Infinity) in layer 2's MLP output \\(model\\.layers\\.2\\.mlp\\.down_proj\\) at ";
  expect_matches(m.forward(tokens.data(), 4, logits.data(), nullptr, -1, nullptr), where + "position 0, feature \\d+" + kTail);
  // Decoding: a second sequence and a step past the prompt name their own positions.
  ASSERT_EQ(m.start_decoding(2, 8), "");
  expect_matches(m.step(tokens.data(), 2, logits.data(), nullptr), where + "position 0 of sequence 0, feature \\d+" + kTail);
}

// Gemma 3's sandwich norms: the MLP's input is pre_feedforward_layernorm, whose gain 3 (stored as
// w, used as 1 + w) is 1e38; GeGLU's gelu(gate) * up overflows where gate > 0 as SwiGLU's does, and
// the post_feedforward_layernorm that closes the MLP turns the infinities into NaN.
TEST(ActivationCheck, GemmaNamesItsSandwichNorm) {
  attn::Llama m;
  attn::LlamaConfig c = tiny_llama();
  c.model_type = "gemma3_text", c.attention_bias = false;
  c.qk_norm = c.unit_offset_norms = c.sandwich_norms = c.scale_embeddings = c.gelu_mlp = true;
  ASSERT_EQ(m.configure(c), "");
  load_random_tensors(m.tensors(), 12, 0.3);
  edit(m.tensors(), "model.layers.1.pre_feedforward_layernorm.weight", [](std::size_t i, float v) { return i == 3 ? kHuge : v; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4};
  std::vector<float> logits(3 * 17);
  expect_matches(m.forward(tokens.data(), 3, logits.data(), nullptr, -1, nullptr),
                 "^gemma3_text model: NaN in layer 1's MLP output \\(model\\.layers\\.1\\.post_feedforward_layernorm\\) at position 0, feature 0" + kTail);
}

// Feature 5 of every token's embedding is 3 (the rest near 0), so layer 0's input_layernorm makes
// it about 3.9 before its gain, which is 3e38 there: the normed row holds Infinity. The attention
// layer's own check would have called it "query contains Infinity", the caller's input.
TEST(ActivationCheck, LlamaNamesTheNormBeforeTheAttention) {
  attn::Llama m;
  attn::LlamaConfig c = tiny_llama();
  c.model_type = "llama", c.attention_bias = false;
  ASSERT_EQ(m.configure(c), "");
  load_random_tensors(m.tensors(), 6, 0.3);
  edit(m.tensors(), "model.embed_tokens.weight", [](std::size_t i, float v) { return i % 16 == 5 ? 3.0f : v; });
  edit(m.tensors(), "model.layers.0.input_layernorm.weight", [](std::size_t i, float v) { return i == 5 ? 3e38f : v; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4};
  std::vector<float> logits(3 * 17);
  expect_matches(m.forward(tokens.data(), 3, logits.data(), nullptr, -1, nullptr),
                 "^llama model: Infinity in layer 0's self-attention input \\(model\\.layers\\.0\\.input_layernorm\\) at position 0, feature 5" + kTail);
}

// model.norm's gains and one lm_head row at 1e38: that row's products are each +-1e76, so its logit
// is infinite or NaN whatever the input; the residual stream itself stays finite.
TEST(ActivationCheck, LlamaNamesTheLogits) {
  attn::Llama m;
  attn::LlamaConfig c = tiny_llama();
  c.model_type = "mistral", c.attention_bias = false;
  ASSERT_EQ(m.configure(c), "");
  load_random_tensors(m.tensors(), 7, 0.3);
  edit(m.tensors(), "model.norm.weight", [](std::size_t, float) { return kHuge; });
  edit(m.tensors(), "lm_head.weight", [](std::size_t i, float v) { return i / 16 == 9 ? kHuge : v; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4};
  std::vector<float> logits(3 * 17);
  expect_matches(m.forward(tokens.data(), 3, logits.data(), nullptr, -1, nullptr, 1),
                 "^mistral model: (NaN|-?Infinity) in the logits \\(lm_head\\.weight\\) at position 2, token \\d+" + kTail);
}

// GPT-2's position 3 embedding all 1e38: x = wte + wpe is finite there, but ln_1's mean sums 8
// of them (Infinity), so layer 0's attention input is NaN from position 3 on. Shorter inputs, and
// the decoding steps before position 3, never read that row.
TEST(ActivationCheck, Gpt2NamesTheNormThatOverflowedAndRunsShorterInputs) {
  attn::Gpt2 m;
  ASSERT_EQ(m.configure({11, 8, 8, 2, 2, 1e-5f}), "");
  load_random_tensors(m.tensors(), 8, 0.3);
  edit(m.tensors(), "wpe.weight", [](std::size_t i, float v) { return i / 8 == 3 ? kHuge : v; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5};
  std::vector<float> logits(5 * 11);
  const std::string where = "^GPT-2 model: NaN in layer 0's self-attention input \\(h\\.0\\.ln_1\\) at position 3";
  expect_matches(m.forward(tokens.data(), 5, logits.data(), nullptr, -1, nullptr), where + ", feature 0" + kTail);
  ASSERT_EQ(m.forward(tokens.data(), 3, logits.data(), nullptr, -1, nullptr), "");  // still usable
  EXPECT_TRUE(finite(std::vector<float>(logits.begin(), logits.begin() + 3 * 11)));
  ASSERT_EQ(m.start_decoding(2, 8), "");
  const std::vector<int32_t> two = {3, 1, 4, 1, 5, 9};  // two sequences of 3
  ASSERT_EQ(m.step(two.data(), 3, logits.data(), nullptr), "");
  expect_matches(m.step(two.data(), 1, logits.data(), nullptr), where + " of sequence 0, feature 0" + kTail);
}

attn::BertConfig tiny_bert() {
  attn::BertConfig c;
  c.vocab_size = 13, c.max_position_embeddings = 8, c.type_vocab_size = 2, c.hidden_size = 8;
  c.num_hidden_layers = 3, c.num_attention_heads = 2, c.intermediate_size = 12;
  return c;
}

// A post-LayerNorm block: layer 1's output.dense bias all 1e38 makes x + MLP(x) 1e38 in every
// feature, and output.LayerNorm's mean sums them to Infinity: NaN in the layer's output.
TEST(ActivationCheck, BertNamesTheLayerAndTheSequence) {
  attn::Bert m;
  ASSERT_EQ(m.configure(tiny_bert()), "");
  load_random_tensors(m.tensors(), 9, 0.3);
  edit(m.tensors(), "encoder.layer.1.output.dense.bias", [](std::size_t, float) { return kHuge; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9};
  std::vector<float> hidden(6 * 8);
  attn::EncoderInput in;
  in.tokens = tokens.data(), in.batch = 2, in.n = 3;
  expect_matches(m.forward(in, hidden.data(), nullptr, -1, nullptr),
                 "^BERT model: NaN in layer 1's MLP output \\(encoder\\.layer\\.1\\.output\\.LayerNorm\\) at position 0 of sequence 0, feature 0" + kTail);
}

TEST(ActivationCheck, BertNamesTheEmbeddingsOfOnePosition) {
  attn::Bert m;
  ASSERT_EQ(m.configure(tiny_bert()), "");
  load_random_tensors(m.tensors(), 10, 0.3);
  edit(m.tensors(), "embeddings.position_embeddings.weight", [](std::size_t i, float v) { return i / 8 == 2 ? kHuge : v; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9};
  std::vector<float> hidden(6 * 8);
  attn::EncoderInput in;
  in.tokens = tokens.data(), in.batch = 2, in.n = 3;
  expect_matches(m.forward(in, hidden.data(), nullptr, -1, nullptr),
                 "^BERT model: NaN in the embeddings \\(embeddings\\.LayerNorm\\) at position 2 of sequence 0, feature 0" + kTail);
  in.batch = 3, in.n = 2;  // positions 0 and 1 only
  ASSERT_EQ(m.forward(in, hidden.data(), nullptr, -1, nullptr), "");
  EXPECT_TRUE(finite(hidden));
}

// The masked-LM head: its dense layer's bias all 1e38 makes every transformed feature 1e38, and
// its LayerNorm's mean sums them to Infinity: the logits are NaN.
TEST(ActivationCheck, BertNamesTheMaskedLmHead) {
  attn::Bert m;
  attn::BertConfig c = tiny_bert();
  c.mlm_head = true;
  ASSERT_EQ(m.configure(c), "");
  load_random_tensors(m.tensors(), 13, 0.3);
  edit(m.tensors(), "cls.predictions.transform.dense.bias", [](std::size_t, float) { return kHuge; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> tokens = {3, 1, 4};
  std::vector<float> hidden(3 * 8), logits(3 * 13);
  attn::EncoderInput in;
  in.tokens = tokens.data(), in.n = 3;
  ASSERT_EQ(m.forward(in, hidden.data(), nullptr, -1, nullptr), "");
  expect_matches(m.mlm_logits(hidden.data(), 3, logits.data()),
                 "^BERT model: NaN in the masked-LM logits \\(cls\\.predictions, decoder tied to embeddings\\.word_embeddings\\) at row 0, token 0" + kTail);
}

attn::BartConfig tiny_bart() {
  attn::BartConfig c;
  c.vocab_size = 11, c.max_position_embeddings = 12, c.d_model = 8;
  c.encoder_layers = c.decoder_layers = 2, c.encoder_attention_heads = c.decoder_attention_heads = 2;
  c.encoder_ffn_dim = c.decoder_ffn_dim = 12;
  return c;
}

// The encoder's layer 1 attention output (out_proj's bias) and the decoder's position 2 + 4 (BART's
// learned positions start at row 2), each all 1e38: the LayerNorm after them sums 8 of them to
// Infinity, and its output is NaN.
TEST(ActivationCheck, BartNamesTheEncoderLayerAndTheDecoderStep) {
  attn::Bart m;
  ASSERT_EQ(m.configure(tiny_bart()), "");
  load_random_tensors(m.tensors(), 11, 0.3);
  edit(m.tensors(), "encoder.layers.1.self_attn.out_proj.bias", [](std::size_t, float) { return kHuge; });
  edit(m.tensors(), "decoder.embed_positions.weight", [](std::size_t i, float v) { return i / 8 == 2 + 4 ? kHuge : v; });
  ASSERT_EQ(m.finalize(), "");
  const std::vector<int32_t> src = {3, 1, 4, 1, 5};
  std::vector<float> memory(5 * 8);
  attn::EncoderInput in;
  in.tokens = src.data(), in.n = 5;
  expect_matches(m.encode(in, memory.data(), nullptr, -1, nullptr),
                 "^BART encoder: NaN in layer 1's self-attention output \\(encoder\\.layers\\.1\\.self_attn_layer_norm\\) at position 0, feature 0" + kTail);
  // A finite memory for the decoder (the encoder's bad layer is not under test here).
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : memory) v = u(rng);
  const attn::Memory mem{memory.data(), nullptr, 5};
  ASSERT_EQ(m.start_decoding(mem, 1, 8), "");
  std::vector<float> logits(11);
  const std::vector<int32_t> target = {2, 5, 7, 1};
  ASSERT_EQ(m.step(target.data(), 4, logits.data(), nullptr, nullptr), "");  // positions 0-3
  EXPECT_TRUE(finite(logits));
  expect_matches(m.step(target.data(), 1, logits.data(), nullptr, nullptr),
                 "^BART decoder: NaN in the embeddings \\(decoder\\.layernorm_embedding\\) at position 4, feature 0" + kTail);
  std::vector<float> all(5 * 11);
  const std::vector<int32_t> five = {2, 5, 7, 1, 3};
  expect_matches(m.decode(five.data(), 1, 5, mem, all.data(), nullptr, nullptr, -1, nullptr, nullptr),
                 "^BART decoder: NaN in the embeddings \\(decoder\\.layernorm_embedding\\) at position 4, feature 0" + kTail);
  ASSERT_EQ(m.decode(five.data(), 1, 4, mem, all.data(), nullptr, nullptr, -1, nullptr, nullptr), "");
}

}  // namespace
