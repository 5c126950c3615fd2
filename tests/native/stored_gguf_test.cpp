// Checkpoints whose matrices are stored in ggml's blocks (a GGUF file's Q8_0, Q4_K, Q6_K, ...): the
// tensor table holds them as stored, byte for byte (never widened), refuses what does not fit the
// blocks by name, and a Llama whose Q, K and V come in different types (as Q4_K_M files keep V at
// Q6_K in some layers) runs as the same network held at float32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "layers/layers.h"
#include "models/llama.h"
#include "tensors/half.h"
#include "tensors/tensor_table.h"
#include "tensors/weight_types.h"

namespace {

using attn::Dtype;
using attn::WeightStorage;
using attn::WeightType;

std::vector<float> randoms(unsigned seed, std::size_t n, float sd) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = g(rng);
  return v;
}

// rows x cols values encoded row by row in type t.
std::vector<unsigned char> encode(WeightType t, const std::vector<float>& x, int rows, int cols) {
  std::vector<unsigned char> out(attn::row_bytes(t, cols) * rows);
  for (int r = 0; r < rows; ++r)
    EXPECT_EQ(attn::encode_row(t, x.data() + std::size_t(r) * cols, cols, out.data() + attn::row_bytes(t, cols) * r), "");
  return out;
}

std::vector<float> decode(WeightType t, const std::vector<unsigned char>& bytes, int rows, int cols) {
  std::vector<float> out(std::size_t(rows) * cols);
  for (int r = 0; r < rows; ++r)
    attn::weight_type_info(t).decode(bytes.data() + attn::row_bytes(t, cols) * r, cols, out.data() + std::size_t(r) * cols);
  return out;
}

constexpr WeightType kGgufTypes[] = {WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_1, WeightType::kQ5_0,
                                     WeightType::kQ5_1, WeightType::kQ2_K, WeightType::kQ3_K, WeightType::kQ4_K,
                                     WeightType::kQ5_K, WeightType::kQ6_K};

TEST(StoredGguf, QuantizedMatricesAreHeldAsStoredAndWidenedOnlyWhenAsked) {
  const int out = 6, in = 512;
  const std::vector<float> w = randoms(1, std::size_t(out) * in, 0.05f);
  for (WeightType t : kGgufTypes) {
    SCOPED_TRACE(attn::weight_type_info(t).stored_name);
    const std::vector<unsigned char> bytes = encode(t, w, out, in);
    const std::vector<float> values = decode(t, bytes, out, in);
    // auto: the stored bytes are the weight's, whether written in place or copied in parts.
    for (bool in_place : {false, true}) {
      attn::TensorTable table;
      attn::Linear lin;
      lin.add_to(table, "m.", in, out, attn::Layout::kTransposed, false);
      table.set_storage(WeightStorage::kAuto);
      if (in_place) {
        void* at = table.stored_destination("m.weight", std::size_t(out) * in, t);
        ASSERT_NE(at, nullptr);
        std::memcpy(at, bytes.data(), bytes.size());
        ASSERT_EQ(table.set("m.weight", at, std::size_t(out) * in, t), "");
      } else {
        const std::size_t half = bytes.size() / 2;  // two parts of 3 rows
        ASSERT_EQ(table.set_part("m.weight", bytes.data(), std::size_t(out) * in, 0, 3 * in, t), "");
        ASSERT_EQ(table.set_part("m.weight", bytes.data() + half, std::size_t(out) * in, 3 * in, 3 * in, t), "");
      }
      EXPECT_EQ(lin.weight.type, t);
      EXPECT_EQ(table.held_bytes(), bytes.size());
      EXPECT_EQ(std::memcmp(lin.weight.bytes(), bytes.data(), bytes.size()), 0);
    }
    // f32: widened to exactly the decoded values.
    attn::TensorTable table;
    attn::Linear lin;
    lin.add_to(table, "m.", in, out, attn::Layout::kTransposed, false);
    table.set_storage(WeightStorage::kF32);
    ASSERT_EQ(table.set("m.weight", bytes.data(), std::size_t(out) * in, t), "");
    std::vector<float> row(in);
    for (int r = 0; r < out; ++r) {
      lin.weight.view().dequantize_output(r, row.data());
      ASSERT_EQ(std::memcmp(row.data(), values.data() + std::size_t(r) * in, in * sizeof(float)), 0) << "row " << r;
    }
  }
}

TEST(StoredGguf, RefusesRowsThatAreNotWholeBlocksAndNonFiniteScales) {
  attn::TensorTable table;
  attn::Linear lin;
  lin.add_to(table, "m.", 96, 4, attn::Layout::kTransposed, false);
  std::vector<unsigned char> bytes(4 * 144 * 1, 0);
  EXPECT_EQ(table.set("m.weight", bytes.data(), 4 * 96, WeightType::kQ4_K),
            "m.weight: stored as Q4_K in blocks of 256 values, but its rows have 96 values");

  attn::TensorTable ok;
  attn::Linear lin2;
  lin2.add_to(ok, "m.", 256, 2, attn::Layout::kTransposed, false);
  std::vector<unsigned char> q(2 * sizeof(attn::BlockQ4_K), 0);
  attn::BlockQ4_K nan_block{};
  nan_block.d = 0x7e00;  // an f16 NaN scale
  nan_block.scales[0] = 1;
  std::memcpy(q.data() + sizeof(attn::BlockQ4_K), &nan_block, sizeof nan_block);
  EXPECT_EQ(ok.set("m.weight", q.data(), 2 * 256, WeightType::kQ4_K), "m.weight contains NaN at index 256");
  // The table stays usable: the same tensor with a finite scale goes in.
  nan_block.d = attn::float_to_half(0.01f);
  std::memcpy(q.data() + sizeof(attn::BlockQ4_K), &nan_block, sizeof nan_block);
  EXPECT_EQ(ok.set("m.weight", q.data(), 2 * 256, WeightType::kQ4_K), "");
}

// A Llama whose tensors come as a Q4_K_M file holds them (mixed types per layer), against the same
// network with every matrix decoded to float32.
attn::LlamaConfig small_llama() {
  attn::LlamaConfig c;
  c.vocab_size = 40;
  c.max_position_embeddings = 32;
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.rms_norm_eps = 1e-5f;
  c.tie_word_embeddings = true;
  return c;
}

// Q4_K_M's choice, in spirit: most matrices Q4_K, V and down_proj Q6_K in layer 0, the embeddings Q6_K.
WeightType mixed_type(const std::string& name) {
  if (name == "model.embed_tokens.weight") return WeightType::kQ6_K;
  if (name.find("layers.0.") != std::string::npos &&
      (name.find("v_proj") != std::string::npos || name.find("down_proj") != std::string::npos))
    return WeightType::kQ6_K;
  if (name.find("o_proj") != std::string::npos) return WeightType::kQ5_K;
  return WeightType::kQ4_K;
}

TEST(StoredGguf, LlamaWithMixedTypesPerLayerEqualsItsDecodedSelf) {
  const attn::LlamaConfig c = small_llama();
  attn::Llama held, widened;
  ASSERT_EQ(held.configure(c), "");
  ASSERT_EQ(widened.configure(c), "");
  std::size_t stored_bytes = 0;
  for (int i = 0; i < held.tensors().size(); ++i) {
    const auto& e = held.tensors().entry(i);
    const int rows = e.shape[0], cols = e.shape.size() == 2 ? e.shape[1] : 1;
    std::vector<float> x = randoms(100 + i, std::size_t(rows) * cols, e.shape.size() == 2 ? 0.08f : 0.1f);
    if (e.shape.size() == 1) {
      for (float& v : x) v += 1.0f;  // norm gains near 1
      ASSERT_EQ(held.tensors().set(e.name, x.data(), x.size()), "");
      ASSERT_EQ(widened.tensors().set(e.name, x.data(), x.size()), "");
      stored_bytes += x.size() * sizeof(float);
      continue;
    }
    const WeightType t = mixed_type(e.name);
    const std::vector<unsigned char> bytes = encode(t, x, rows, cols);
    ASSERT_EQ(held.tensors().set(e.name, bytes.data(), x.size(), t), "") << e.name;
    const std::vector<float> values = decode(t, bytes, rows, cols);
    ASSERT_EQ(widened.tensors().set(e.name, values.data(), values.size()), "") << e.name;
    stored_bytes += bytes.size();
  }
  EXPECT_EQ(held.tensors().held_bytes(), stored_bytes);  // nothing widened
  ASSERT_EQ(held.finalize(), "");
  ASSERT_EQ(widened.finalize(), "");

  const std::vector<std::int32_t> tokens = {3, 17, 5, 5, 22, 0, 9, 14, 1, 8, 39};
  const int n = static_cast<int>(tokens.size()), V = c.vocab_size;
  std::vector<float> a(std::size_t(n) * V), b(a.size()), attention(std::size_t(c.num_hidden_layers) * 4 * n * n);
  ASSERT_EQ(held.forward(tokens.data(), n, a.data(), attention.data(), 0, nullptr), "");
  ASSERT_EQ(widened.forward(tokens.data(), n, b.data(), nullptr, 0, nullptr), "");
  // The held model's products quantize their activations to 8 bits per block of 32; through two
  // layers of this random network that alone moves the logits by up to 3% of their range (measured
  // with every matrix Q8_0 instead: 0.139 of 4.69), so the bound is 6%. A wrong block layout, type
  // or row order gives errors of the logits' own size.
  double range = 0, err = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    range = std::max(range, std::fabs(double(b[i])));
    err = std::max(err, std::fabs(double(a[i]) - b[i]));
  }
  std::printf("mixed Q4_K/Q5_K/Q6_K llama: max logit error %.3g of max |logit| %.3g\n", err, range);
  EXPECT_LT(err, 0.06 * range);
  // The attention weights are read from the held Q, K (Q4_K) and V (Q6_K in layer 0).
  attn::HeadWeights hw;
  ASSERT_EQ(held.attention_layer(attn::AttentionPart::kSelf, 0)->head_weights(1, &hw), "");
  EXPECT_EQ(hw.w_v.size(), std::size_t(256) * 64);
  // Cached decoding: the same logits as the forward, step by step.
  ASSERT_EQ(held.start_decoding(1, n), "");
  std::vector<float> step(V);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(held.step(tokens.data() + i, 1, step.data(), nullptr), "");
    for (int v = 0; v < V; ++v) ASSERT_NEAR(step[v], a[std::size_t(i) * V + v], 1e-4 * range) << "step " << i;
  }
}

}  // namespace
