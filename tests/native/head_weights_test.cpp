// What a model tells a viewer about one head (multi_head_attention.h): its weights as the layer
// holds them, in the seeds' layout, against the checkpoint's tensors read the way each checkpoint
// stores them (GPT-2's Conv1D in x out, Llama's nn.Linear out x in with grouped K/V heads), at f32
// (equal to the bit) and q8 (equal to the row encoded and decoded); and the mask a call applied,
// against the causal / sliding-window rule written out here.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "models/gpt2.h"
#include "models/llama.h"
#include "tensors/weight_types.h"

namespace {

using Tensors = std::map<std::string, std::vector<float>>;

Tensors load_random(attn::TensorTable& t, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.4f);
  Tensors all;
  for (int i = 0; i < t.size(); ++i) {
    const auto& e = t.entry(i);
    std::size_t n = 1;
    for (int d : e.shape) n *= d;
    std::vector<float> v(n);
    for (float& x : v) x = g(rng);
    EXPECT_EQ(t.set(e.name, v.data(), v.size()), "") << e.name;
    all[e.name] = v;
  }
  return all;
}

// A stored row as the storage type holds it: encoded and decoded (f32: itself).
std::vector<float> as_held(attn::WeightType t, const float* row, int n) {
  std::vector<unsigned char> bytes(attn::row_bytes(t, n));
  EXPECT_EQ(attn::encode_row(t, row, n, bytes.data()), "");
  std::vector<float> out(n);
  attn::weight_type_info(t).decode(bytes.data(), n, out.data());
  return out;
}

attn::LlamaConfig tiny_llama() {
  attn::LlamaConfig c;
  c.vocab_size = 23;
  c.max_position_embeddings = 32;
  c.hidden_size = 64;
  c.intermediate_size = 96;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.attention_bias = true;
  c.sliding_window = 3;
  return c;
}

void check_llama_heads(attn::WeightStorage storage, attn::WeightType held) {
  const attn::LlamaConfig c = tiny_llama();
  attn::Llama m;
  ASSERT_EQ(m.configure(c), "");
  m.tensors().set_storage(storage);
  Tensors w = load_random(m.tensors(), 3);
  ASSERT_EQ(m.finalize(), "");
  const int D = c.hidden_size, dk = D / c.num_attention_heads;
  for (int l = 0; l < c.num_hidden_layers; ++l)
    for (int h = 0; h < c.num_attention_heads; ++h) {
      attn::HeadWeights hw;
      ASSERT_EQ(m.attention_layer(attn::AttentionPart::kSelf, l)->head_weights(h, &hw), "");
      const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
      const int kv = h / 2;
      EXPECT_EQ(hw.kv_head, kv);
      for (int c_ = 0; c_ < dk; ++c_) {  // output c_ of the head: one stored row of q/k/v_proj
        const auto q = as_held(held, &w[p + "q_proj.weight"][std::size_t(h * dk + c_) * D], D);
        const auto k = as_held(held, &w[p + "k_proj.weight"][std::size_t(kv * dk + c_) * D], D);
        const auto v = as_held(held, &w[p + "v_proj.weight"][std::size_t(kv * dk + c_) * D], D);
        for (int i = 0; i < D; ++i) {
          ASSERT_EQ(hw.w_q[std::size_t(i) * dk + c_], q[i]) << l << " " << h << " " << i << " " << c_;
          ASSERT_EQ(hw.w_k[std::size_t(i) * dk + c_], k[i]);
          ASSERT_EQ(hw.w_v[std::size_t(i) * dk + c_], v[i]);
        }
        EXPECT_EQ(hw.b_q[c_], w[p + "q_proj.bias"][h * dk + c_]);
        EXPECT_EQ(hw.b_k[c_], w[p + "k_proj.bias"][kv * dk + c_]);
      }
      for (int r = 0; r < D; ++r) {  // o_proj: D outputs over the 4 heads' concatenation
        const auto o = as_held(held, &w[p + "o_proj.weight"][std::size_t(r) * D], D);
        for (int k = 0; k < dk; ++k) ASSERT_EQ(hw.w_o[std::size_t(k) * D + r], o[h * dk + k]);
      }
    }
  attn::HeadWeights hw;
  EXPECT_NE(m.attention_layer(attn::AttentionPart::kSelf, 0)->head_weights(4, &hw).find("out of range"), std::string::npos);
  EXPECT_EQ(m.attention_layer(attn::AttentionPart::kSelf, 2), nullptr);
  EXPECT_EQ(m.attention_layer(attn::AttentionPart::kCross, 0), nullptr);
}

TEST(HeadWeights, LlamaHeadsAtF32EqualTheCheckpoint) { check_llama_heads(attn::WeightStorage::kF32, attn::WeightType::kF32); }
TEST(HeadWeights, LlamaHeadsAtQ8EqualTheCheckpointsRowsAsQ8) {
  check_llama_heads(attn::WeightStorage::kQ8, attn::WeightType::kQ8_0);
}

TEST(HeadWeights, Gpt2HeadsReadConv1DInTheSeedsLayout) {
  attn::GptConfig c{31, 16, 32, 2, 4, 1e-5f};
  attn::Gpt2 m;
  ASSERT_EQ(m.configure(c), "");
  Tensors w = load_random(m.tensors(), 4);
  ASSERT_EQ(m.finalize(), "");
  const int D = c.n_embd, dk = D / c.n_head;
  for (int h = 0; h < c.n_head; ++h) {
    attn::HeadWeights hw;
    ASSERT_EQ(m.attention_layer(attn::AttentionPart::kSelf, 1)->head_weights(h, &hw), "");
    const auto& qkv = w["h.1.attn.c_attn.weight"];  // D x 3D: [Q | K | V] columns
    const auto& proj = w["h.1.attn.c_proj.weight"];  // D x D, in x out
    for (int i = 0; i < D; ++i)
      for (int c_ = 0; c_ < dk; ++c_) {
        ASSERT_EQ(hw.w_q[std::size_t(i) * dk + c_], qkv[std::size_t(i) * 3 * D + h * dk + c_]);
        ASSERT_EQ(hw.w_k[std::size_t(i) * dk + c_], qkv[std::size_t(i) * 3 * D + D + h * dk + c_]);
        ASSERT_EQ(hw.w_v[std::size_t(i) * dk + c_], qkv[std::size_t(i) * 3 * D + 2 * D + h * dk + c_]);
      }
    for (int k = 0; k < dk; ++k)
      for (int r = 0; r < D; ++r) ASSERT_EQ(hw.w_o[std::size_t(k) * D + r], proj[std::size_t(h * dk + k) * D + r]);
    EXPECT_EQ(hw.b_v[0], w["h.1.attn.c_attn.bias"][2 * D + h * dk]);
    EXPECT_EQ(hw.b_o, w["h.1.attn.c_proj.bias"]);
  }
}

// The mask a whole-sequence forward and a cached step applied: causal with Mistral's window of 3.
TEST(HeadWeights, AppliedMaskIsTheCausalWindowOfTheCall) {
  const attn::LlamaConfig c = tiny_llama();
  attn::Llama m;
  ASSERT_EQ(m.configure(c), "");
  load_random(m.tensors(), 5);
  ASSERT_EQ(m.finalize(), "");
  const std::vector<std::int32_t> tokens = {1, 2, 3, 4, 5, 6, 7};
  const int n = 7, H = 4, L = 2;
  std::vector<float> logits(std::size_t(n) * c.vocab_size), attention(std::size_t(L) * H * n * n);
  ASSERT_EQ(m.forward(tokens.data(), n, logits.data(), attention.data(), 0, nullptr), "");
  const attn::AppliedMask& mask = m.attention_layer(attn::AttentionPart::kSelf, 1)->applied_mask();
  ASSERT_EQ(mask.seq_q, n);
  ASSERT_EQ(mask.seq_k, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const bool hidden = j > i || j <= i - 3;
      EXPECT_EQ(mask.hidden.data()[i * n + j], hidden ? 1 : 0) << i << "," << j;
      if (hidden) EXPECT_EQ(attention[(std::size_t(1) * H * n + i) * n + j], 0.0f);  // layer 1, head 0
    }
  // A cached step of 2 new positions after 5: queries at positions 5 and 6 against 7 keys.
  ASSERT_EQ(m.start_decoding(1, n), "");
  ASSERT_EQ(m.step(tokens.data(), 5, logits.data(), nullptr), "");
  std::vector<float> step_attention(std::size_t(L) * H * 2 * n);
  ASSERT_EQ(m.step(tokens.data() + 5, 2, logits.data(), step_attention.data()), "");
  const attn::AppliedMask& step = m.attention_layer(attn::AttentionPart::kSelf, 0)->applied_mask();
  ASSERT_EQ(step.seq_q, 2);
  ASSERT_EQ(step.seq_k, n);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < n; ++j) {
      const int pos = 5 + i;
      EXPECT_EQ(step.hidden.data()[i * n + j], (j > pos || j <= pos - 3) ? 1 : 0) << i << "," << j;
    }
}

}  // namespace
