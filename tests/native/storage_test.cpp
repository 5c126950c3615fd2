// Models held at 32, 16, 8 and 4 bits a weight (TensorTable's WeightStorage, issue 22): each
// checkpoint layout lands in its storage type as encode_row makes it, named errors for what a
// type cannot hold, and whole models (GPT-2, BERT, BART) close to their float32 selves, with
// cached decoding still equal to the full forward at every type.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "models/bart.h"
#include "models/bert.h"
#include "models/gpt2.h"
#include "tensors/half.h"
#include "layers/layers.h"
#include "model_test_util.h"
#include "kernels/parallel_gemm.h"
#include "tensors/weight.h"

namespace {

using attn::Dtype;
using attn::WeightStorage;
using attn::WeightType;

constexpr WeightStorage kStorages[] = {WeightStorage::kF32, WeightStorage::kF16, WeightStorage::kQ8, WeightStorage::kQ4};

std::vector<float> randoms(unsigned seed, std::size_t n) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.5f);
  std::vector<float> v(n);
  for (float& x : v) x = g(rng);
  return v;
}

// What output r of a matrix should hold: its float values through encode_row, decoded.
std::vector<float> expected_row(WeightType t, const std::vector<float>& values) {
  std::vector<unsigned char> bytes(attn::row_bytes(t, int(values.size())));
  EXPECT_EQ(attn::encode_row(t, values.data(), int(values.size()), bytes.data()), "");
  std::vector<float> out(values.size());
  attn::WeightView{t, false, bytes.data(), 1, int(values.size()), 0}.dequantize_output(0, out.data());
  return out;
}

TEST(Storage, EachLayoutLandsInItsTypeOutputByOutput) {
  const int in = 64, out = 12;
  std::vector<float> w = randoms(1, std::size_t(in) * out);
  for (float& v : w) v = attn::half_to_float(attn::float_to_half(v));  // the same values as F16 and F32
  std::vector<std::uint16_t> w16(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) w16[i] = attn::float_to_half(w[i]);
  for (Dtype stored : {Dtype::kF32, Dtype::kF16})
  for (WeightStorage s : kStorages)
    for (int kind = 0; kind < 3; ++kind) {  // Conv1D (in x out), nn.Linear (out x in), an embedding table
      attn::TensorTable t;
      t.set_storage(s);
      attn::Linear lin;
      attn::Embedding emb;
      attn::Weight* weight = kind == 2 ? &emb.table : &lin.weight;
      if (kind == 2) emb.add_to(t, "m.weight", out, in, true);
      else lin.add_to(t, "m.", in, out, kind == 0 ? attn::Layout::kAsIs : attn::Layout::kTransposed);
      const void* data = stored == Dtype::kF32 ? static_cast<const void*>(w.data()) : w16.data();
      ASSERT_EQ(t.set("m.weight", data, w.size(), stored), "");
      const WeightType want_type = s == WeightStorage::kF16 ? WeightType::kF16
                                 : s == WeightStorage::kQ8  ? WeightType::kQ8_0
                                 : s == WeightStorage::kQ4  ? (kind == 2 ? WeightType::kQ8_0 : WeightType::kQ4_0)
                                                            : WeightType::kF32;
      ASSERT_EQ(weight->type, want_type);  // (q4: a word embedding, also the tied head, at q8)
      EXPECT_EQ(weight->panels, want_type == WeightType::kF32);  // (kind 2: a word embedding, also a head)
      for (int r = 0; r < out; ++r) {
        std::vector<float> values(in);
        for (int k = 0; k < in; ++k) values[k] = kind == 0 ? w[std::size_t(k) * out + r] : w[std::size_t(r) * in + k];
        const std::vector<float> want = expected_row(want_type, values);
        std::vector<float> got(in);
        weight->view().dequantize_output(r, got.data());
        for (int k = 0; k < in; ++k)
          ASSERT_EQ(got[k], want[k]) << attn::weight_storage_name(s) << " from " << int(stored) << " kind " << kind << " "
                                     << r << "," << k;
      }
    }
}

TEST(Storage, PartsOfWholeRowsInOrderGiveWhatOneSetGives) {
  const int in = 64, out = 12;
  const std::vector<float> w = randoms(9, std::size_t(in) * out);
  for (WeightStorage s : kStorages)
    for (int kind = 0; kind < 3; ++kind) {  // Conv1D, nn.Linear, an embedding table
      attn::TensorTable whole, parts;
      attn::Linear lw, lp;
      attn::Embedding ew, ep;
      whole.set_storage(s);
      parts.set_storage(s);
      if (kind == 2) ew.add_to(whole, "m.weight", out, in, true), ep.add_to(parts, "m.weight", out, in, true);
      const attn::Layout layout = kind == 0 ? attn::Layout::kAsIs : attn::Layout::kTransposed;
      if (kind < 2) lw.add_to(whole, "m.", in, out, layout), lp.add_to(parts, "m.", in, out, layout);
      const std::size_t n = w.size(), row = kind == 0 ? out : in;  // a stored row's values
      ASSERT_EQ(whole.set("m.weight", w.data(), n), "");
      // Three parts of 5, 1 and the rest of the stored rows.
      const std::size_t cuts[] = {0, 5 * row, 6 * row, n};
      for (int p = 0; p < 3; ++p) {
        if (kind < 2) EXPECT_EQ(parts.check_complete(), "missing tensor m.weight");
        ASSERT_EQ(parts.set_part("m.weight", w.data() + cuts[p], n, cuts[p], cuts[p + 1] - cuts[p], Dtype::kF32), "");
      }
      const attn::Weight& a = kind == 2 ? ew.table : lw.weight;
      const attn::Weight& b = kind == 2 ? ep.table : lp.weight;
      ASSERT_EQ(a.byte_size(), b.byte_size());
      EXPECT_EQ(std::memcmp(a.storage.data(), b.storage.data(), a.byte_size()), 0)
          << attn::weight_storage_name(s) << " kind " << kind;
    }
}

TEST(Storage, PartsOutOfOrderOrNotWholeRowsAreRefusedAndABadPartLeavesTheTensorUnset) {
  attn::TensorTable t;
  attn::Linear lin;
  lin.add_to(t, "d.", 32, 4, attn::Layout::kTransposed);  // stored 4 x 32
  std::vector<float> w = randoms(10, 128);
  EXPECT_EQ(t.set_part("d.weight", w.data(), 128, 0, 20, Dtype::kF32), "d.weight: elements [0, 20) are not whole rows of its 128");
  ASSERT_EQ(t.set_part("d.weight", w.data(), 128, 0, 32, Dtype::kF32), "");
  EXPECT_EQ(t.set_part("d.weight", w.data() + 64, 128, 64, 32, Dtype::kF32),
            "d.weight: its parts must come in order, in one dtype (expected element 32)");
  w[70] = std::nanf("");
  EXPECT_EQ(t.set_part("d.weight", w.data() + 32, 128, 32, 96, Dtype::kF32), "d.weight contains NaN at index 70");
  EXPECT_TRUE(lin.weight.empty());
  EXPECT_EQ(t.check_complete(), "missing tensor d.weight");
}

TEST(Storage, AutoKeepsSixteenBitsAsStoredAndWritesThemInPlace) {
  const int in = 32, out = 3;
  const std::vector<float> w = randoms(2, std::size_t(in) * out);
  for (Dtype d : {Dtype::kF16, Dtype::kBF16}) {
    std::vector<std::uint16_t> bits(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) bits[i] = d == Dtype::kF16 ? attn::float_to_half(w[i]) : attn::float_to_bf16(w[i]);
    attn::TensorTable t;
    attn::Linear lin;
    lin.add_to(t, "m.", in, out, attn::Layout::kTransposed);
    void* at = t.stored_destination("m.weight", w.size(), d);
    ASSERT_EQ(at, static_cast<void*>(lin.weight.bytes()));
    std::memcpy(at, bits.data(), bits.size() * 2);
    ASSERT_EQ(t.set("m.weight", at, w.size(), d), "");
    EXPECT_EQ(int(lin.weight.type), int(d));
    EXPECT_EQ(std::memcmp(lin.weight.bytes(), bits.data(), bits.size() * 2), 0);
    // Conv1D's stored columns are not its rows: staged and turned, not written in place.
    attn::Linear conv;
    conv.add_to(t, "c.", in, out, attn::Layout::kAsIs);
    EXPECT_EQ(t.stored_destination("c.weight", w.size(), d), nullptr);
    ASSERT_EQ(t.set("c.weight", bits.data(), w.size(), d), "");
    EXPECT_EQ(int(conv.weight.type), int(d));
  }
}

TEST(Storage, WidthsNotWholeBlocksFallBackAndValuesATypeCannotHoldAreNamed) {
  attn::TensorTable t;
  attn::Linear lin;
  attn::Embedding positions;
  lin.add_to(t, "h.0.mlp.c_fc.", 40, 8, attn::Layout::kAsIs);
  positions.add_to(t, "wpe.weight", 4, 40);  // not quantizable: stays as stored under q8
  // 40 inputs are no whole number of Q8_0's 32-value blocks: held at F16 instead (as llama.cpp's
  // quantizer falls back to a wider type), and said so; the rest of the model stays q8.
  for (WeightStorage s : {WeightStorage::kQ8, WeightStorage::kQ4}) {
    t.set_storage(s);
    std::vector<float> w(40 * 8, 0.25f), p(4 * 40, 0.5f);
    ASSERT_EQ(t.set("h.0.mlp.c_fc.weight", w.data(), w.size()), "");
    ASSERT_EQ(t.set("wpe.weight", p.data(), p.size()), "");
    EXPECT_EQ(t.held_type(0), WeightType::kF16);
    EXPECT_EQ(lin.weight.type, WeightType::kF16);
    EXPECT_EQ(t.held_type(2), WeightType::kF32);  // as stored
  }
  attn::TensorTable t2;
  attn::Linear dense;
  dense.add_to(t2, "dense.", 32, 2, attn::Layout::kTransposed);
  t2.set_storage(WeightStorage::kF16);
  std::vector<float> w(64, 0.5f);
  w[33] = 1e5f;
  EXPECT_EQ(t2.set("dense.weight", w.data(), w.size()),
            "dense.weight: output 1: value 100000 at column 1 is too large for f16; load this model with dtype 'f32'");
  EXPECT_TRUE(dense.weight.empty());
  w[33] = std::nanf("");
  t2.set_storage(WeightStorage::kQ4);
  EXPECT_EQ(t2.set("dense.weight", w.data(), w.size()), "dense.weight contains NaN at index 33");
  w[33] = 1e9f;
  EXPECT_EQ(t2.set("dense.weight", w.data(), w.size()),
            "dense.weight: output 1: values up to 1e+09 are too large for q4's f16 block scales; load this model with "
            "dtype 'f32'");
  w[33] = 0.25f;
  EXPECT_EQ(t2.set("dense.weight", w.data(), w.size()), "");
  EXPECT_EQ(dense.weight.byte_size(), 2u * sizeof(attn::BlockQ4_0));
}

TEST(Storage, LinearAtEachTypeMatchesFloat64OnTheStoredValuesForFewAndManyRows) {
  // 1 and 8 rows take the decoding paths (16-bit rows read directly), 9 and 40 the widened panels
  // through the tiled GEMM (16-bit) or the integer products (q8/q4): all within float32 rounding
  // of float64 over the stored values (q8/q4: plus the activations' quantization, bounded
  // in weight_test.cpp; here loosely).
  const int in = 96, out = 70;  // 70: a last panel of 6 outputs
  const std::vector<float> w = randoms(3, std::size_t(in) * out), bias = randoms(4, out);
  for (WeightType t : {WeightType::kF32, WeightType::kF16, WeightType::kBF16, WeightType::kQ8_0, WeightType::kQ4_0}) {
    attn::Weight weight;
    ASSERT_TRUE(weight.allocate(t, false, out, in));
    for (int r = 0; r < out; ++r)
      ASSERT_EQ(attn::encode_row(t, w.data() + std::size_t(r) * in, in, weight.bytes() + attn::row_bytes(t, in) * r), "");
    std::vector<float> stored(std::size_t(in) * out);
    for (int r = 0; r < out; ++r) weight.view().dequantize_output(r, stored.data() + std::size_t(r) * in);
    for (int rows : {1, 8, 9, 40}) {
      const std::vector<float> x = randoms(5 + rows, std::size_t(rows) * in);
      std::vector<float> y(std::size_t(rows) * out);
      ASSERT_EQ(attn::linear(attn::default_kernels(), x.data(), rows, weight.view(), bias.data(), y.data(), out), "");
      const double tol = attn::is_quantized(t) ? 0.05 : 1e-5;
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < out; ++j) {
          double want = bias[j], mag = std::fabs(bias[j]);
          for (int k = 0; k < in; ++k) {
            want += double(x[std::size_t(i) * in + k]) * stored[std::size_t(j) * in + k];
            mag += std::fabs(double(x[std::size_t(i) * in + k]) * stored[std::size_t(j) * in + k]);
          }
          ASSERT_NEAR(y[std::size_t(i) * out + j], want, tol * mag) << attn::weight_type_name(t) << " rows " << rows;
        }
    }
  }
}

// A model configured, loaded with seeded random weights at storage s, and finalized.
template <class Model, class Config>
void load_at(Model& m, const Config& c, WeightStorage s, unsigned seed, double scale) {
  ASSERT_EQ(m.configure(c), "");
  m.tensors().set_storage(s);
  load_random_tensors(m.tensors(), seed, scale);
  ASSERT_EQ(m.finalize(), "");
}

// Largest |a - b| over the largest |b|: the error relative to the outputs' scale.
double relative_gap(const std::vector<float>& a, const std::vector<float>& b) {
  double gap = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    gap = std::max(gap, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  return gap / scale;
}

// The float32 model's logits against each storage's: relative gaps bounded per type. Per weight,
// f16 rounds to 2^-11 relative, q8 to 1/254 of its block's largest, q4 to 1/16; random layers
// compound that (measured on these models: f16 ~5e-4, q8 0.021-0.031, q4 0.27-0.32), and the gaps
// grow from type to type.
constexpr double kGapBound[] = {0.0, 2e-3, 5e-2, 0.5};

TEST(Storage, Gpt2AtEachTypeStaysCloseToFloat32AndDecodesAsItRuns) {
  const attn::GptConfig c{50, 16, 64, 2, 2, 1e-5f};
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9, 2, 6};
  const int n = 8, V = c.vocab_size;
  std::vector<float> base;
  double previous_gap = 0;
  for (int si = 0; si < 4; ++si) {
    attn::Gpt2 m;
    load_at(m, c, kStorages[si], 5, 0.3);
    if (HasFatalFailure()) return;
    std::vector<float> logits(n * V);
    ASSERT_EQ(m.forward(tokens.data(), n, logits.data(), nullptr, 0, nullptr), "");
    if (si == 0) base = logits;
    const double gap = relative_gap(logits, base);
    EXPECT_LE(gap, kGapBound[si]) << attn::weight_storage_name(kStorages[si]);
    EXPECT_GT(gap, si == 0 ? -1.0 : previous_gap) << attn::weight_storage_name(kStorages[si]);
    previous_gap = gap;
    // Cached decoding at this type: the prompt, then one token a step, each the full run's row.
    ASSERT_EQ(m.start_decoding(1, 16), "");
    std::vector<float> step(V);
    ASSERT_EQ(m.step(tokens.data(), 4, step.data(), nullptr), "");
    for (int i = 4; i <= n; ++i) {
      for (int v = 0; v < V; ++v) ASSERT_NEAR(step[v], logits[(i - 1) * V + v], 1e-4) << i;
      if (i < n) ASSERT_EQ(m.step(&tokens[i], 1, step.data(), nullptr), "");
    }
  }
}

TEST(Storage, BertAndBartAtEachTypeStayCloseToFloat32) {
  attn::BertConfig bc;
  bc.vocab_size = 40, bc.max_position_embeddings = 16, bc.type_vocab_size = 2, bc.hidden_size = 64;
  bc.num_hidden_layers = 2, bc.num_attention_heads = 4, bc.intermediate_size = 96, bc.mlm_head = true;
  attn::BartConfig ac;
  ac.vocab_size = 40, ac.max_position_embeddings = 16, ac.d_model = 64, ac.encoder_layers = 1, ac.decoder_layers = 2;
  ac.encoder_attention_heads = ac.decoder_attention_heads = 2, ac.encoder_ffn_dim = ac.decoder_ffn_dim = 96;
  const std::vector<int32_t> ids = {2, 5, 7, 9, 11, 3};
  const int n = 6;
  std::vector<float> bert_base, bart_base;
  for (int si = 0; si < 4; ++si) {
    attn::Bert bert;
    load_at(bert, bc, kStorages[si], 6, 0.1);
    if (HasFatalFailure()) return;
    std::vector<float> hidden(n * 64), logits(n * 40);
    ASSERT_EQ(bert.forward({ids.data(), nullptr, nullptr, 1, n}, hidden.data(), nullptr, -1, nullptr), "");
    ASSERT_EQ(bert.mlm_logits(hidden.data(), n, logits.data()), "");
    if (si == 0) bert_base = logits;
    EXPECT_LE(relative_gap(logits, bert_base), kGapBound[si]) << "bert " << attn::weight_storage_name(kStorages[si]);

    attn::Bart bart;
    load_at(bart, ac, kStorages[si], 7, 0.1);
    if (HasFatalFailure()) return;
    std::vector<float> memory(n * 64), full(4 * 40), step(40);
    ASSERT_EQ(bart.encode({ids.data(), nullptr, nullptr, 1, n}, memory.data(), nullptr, -1, nullptr), "");
    const attn::Memory mem{memory.data(), nullptr, n};
    ASSERT_EQ(bart.decode(ids.data(), 1, 4, mem, full.data(), nullptr, nullptr, -1, nullptr, nullptr), "");
    if (si == 0) bart_base = full;
    EXPECT_LE(relative_gap(full, bart_base), kGapBound[si]) << "bart " << attn::weight_storage_name(kStorages[si]);
    ASSERT_EQ(bart.start_decoding(mem, 1, 8), "");
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(bart.step(&ids[i], 1, step.data(), nullptr, nullptr), "");
      for (int v = 0; v < 40; ++v) ASSERT_NEAR(step[v], full[i * 40 + v], 1e-4) << i;
    }
  }
}

}  // namespace
