// Reading a loaded Llama's tensors back as held (Llama::held_tensor, held_tensor_bytes), the core of
// model.save(): after finalize() has fused Q, K and V into the attention layer and laid F32
// matrices out in panels, each tensor's bytes must be what the table made of the values set, row
// by row: F32 the values themselves, F16 / Q8_0 / Q4_0 each row encoded by its type's encoder
// (weight_types.h), vectors as float32 (Gemma's gains as the 1 + weight the model holds). Checked
// for every tensor of a Qwen2 (q/k/v biases, grouped K/V heads, untied head), a Phi-3 (one fused
// qkv_proj and gate_up_proj) and a Gemma 3, at each storage.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "models/llama.h"
#include "tensors/held_tensor.h"

namespace {

using attn::WeightStorage;
using attn::WeightType;

struct Set {
  std::vector<float> values;
  std::vector<int> shape;
};

// The bytes the core should hold for values set as `shape`, held in type t (rows: shape[0] outputs).
std::vector<unsigned char> expected_bytes(const Set& s, WeightType t, bool vector, float offset) {
  std::vector<unsigned char> out;
  if (vector) {
    std::vector<float> v = s.values;
    for (float& x : v) x += offset;
    out.resize(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  }
  const int rows = s.shape[0], cols = s.shape[1];
  const std::size_t row = attn::row_bytes(t, cols);
  out.resize(row * rows);
  for (int r = 0; r < rows; ++r)
    EXPECT_EQ(attn::encode_row(t, s.values.data() + std::size_t(r) * cols, cols, out.data() + row * r), "");
  return out;
}

void check_readback(attn::LlamaConfig c, WeightStorage storage, unsigned seed) {
  attn::Llama model;
  ASSERT_EQ(model.configure(c), "");
  attn::TensorTable& t = model.tensors();
  t.set_storage(storage);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<Set> set(t.size());
  for (int i = 0; i < t.size(); ++i) {
    std::size_t n = 1;
    for (int d : t.entry(i).shape) n *= d;
    set[i].shape = t.entry(i).shape;
    set[i].values.resize(n);
    for (float& v : set[i].values) v = u(rng);
    ASSERT_EQ(t.set(t.entry(i).name, set[i].values.data(), n), "") << t.entry(i).name;
  }
  attn::HeldTensor before;
  EXPECT_EQ(model.held_tensor(0, &before), "the model is not loaded: set every tensor, then finalize()");
  ASSERT_EQ(model.finalize(), "");
  std::vector<unsigned char> bytes;
  for (int i = 0; i < t.size(); ++i) {
    const auto& e = t.entry(i);
    attn::HeldTensor held;
    ASSERT_EQ(model.held_tensor(i, &held), "") << e.name;
    attn::held_tensor_bytes(held, &bytes);
    const bool vector = e.shape.size() == 1;
    const bool norm = e.name.find("norm") != std::string::npos;
    const WeightType type = vector ? WeightType::kF32 : held.weight.type;
    EXPECT_EQ(type, t.held_type(i)) << e.name;
    EXPECT_EQ(bytes, expected_bytes(set[i], type, vector, norm && c.unit_offset_norms ? 1.0f : 0.0f))
        << e.name << " held as " << attn::weight_type_name(type) << " (" << attn::weight_storage_name(storage) << ")";
  }
  attn::HeldTensor out;
  EXPECT_EQ(model.held_tensor(t.size(), &out), "tensor " + std::to_string(t.size()) + " out of range");
}

attn::LlamaConfig base(const char* type) {
  attn::LlamaConfig c;
  c.model_type = type;
  c.vocab_size = 40, c.max_position_embeddings = 16, c.hidden_size = 64, c.intermediate_size = 96;
  c.num_hidden_layers = 2, c.num_attention_heads = 4, c.num_key_value_heads = 2;
  c.rope.theta = 10000;
  return c;
}

class HeldTensorTest : public ::testing::TestWithParam<WeightStorage> {};

TEST_P(HeldTensorTest, Qwen2WithBiasesAndAnUntiedHead) {
  attn::LlamaConfig c = base("qwen2");
  c.attention_bias = true;
  check_readback(c, GetParam(), 1);
}

TEST_P(HeldTensorTest, Phi3FusedQkvAndGateUp) {
  attn::LlamaConfig c = base("phi3");
  c.fused_projections = true;
  c.tie_word_embeddings = true;
  check_readback(c, GetParam(), 2);
}

TEST_P(HeldTensorTest, Gemma3UnitOffsetNormsAndQkNorms) {
  attn::LlamaConfig c = base("gemma3_text");
  c.head_dim = 32, c.qk_norm = true, c.unit_offset_norms = c.sandwich_norms = c.scale_embeddings = c.gelu_mlp = true;
  c.tie_word_embeddings = true;
  check_readback(c, GetParam(), 3);
}

INSTANTIATE_TEST_SUITE_P(Storages, HeldTensorTest,
                         ::testing::Values(WeightStorage::kF32, WeightStorage::kF16, WeightStorage::kQ8, WeightStorage::kQ4),
                         [](const auto& info) { return std::string(attn::weight_storage_name(info.param)); });

}  // namespace
