// Shared by the model tests: fill every tensor a model declares with seeded random numbers.
#pragma once

#include <gtest/gtest.h>

#include <random>

#include "reference.h"
#include "tensors/tensor_table.h"

inline void load_random_tensors(attn::TensorTable& table, unsigned seed, double scale) {
  std::mt19937 rng(seed);
  for (int i = 0; i < table.size(); ++i) {
    const auto& e = table.entry(i);
    size_t n = 1;
    for (int d : e.shape) n *= d;
    auto data = ref::to_float(ref::random_vec(rng, n, scale));
    // LayerNorm gains near 1, as trained models have them; biases stay small and non-zero.
    if (e.name.find("LayerNorm.weight") != std::string::npos || e.name.find("ln_") != std::string::npos ||
        e.name.find("layer_norm") != std::string::npos || e.name.find("layernorm") != std::string::npos)
      if (e.name.find("weight") != std::string::npos)
        for (float& v : data) v += 1.0f;
    ASSERT_EQ(table.set(e.name, data.data(), data.size()), "") << e.name;
  }
}
