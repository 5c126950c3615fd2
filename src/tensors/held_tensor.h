// A checkpoint tensor read back as a model holds it, so that a loaded model can be saved at its
// precision (a GGUF file with Q4_0 blocks stays 4.5 bits a weight, nothing decoded and encoded
// again). After finalize() a model's tensors live where its layers took them (Q, K and V fused in
// the attention layer, F32 matrices in panels): a model says where each one is now (a HeldTensor),
// and held_tensor_bytes writes it out in the checkpoint's orientation.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tensors/weight.h"

namespace attn {

// A weight matrix (weight.out > 0: a view of its storage, out x in) or a vector of float32 values.
struct HeldTensor {
  WeightView weight;
  const float* values = nullptr;
  std::size_t count = 0;
};

// The tensor's bytes in the type it is held in, rows as a checkpoint stores an nn.Linear or an
// embedding table (out x in, each output's inputs contiguous): quantized blocks and F16 / BF16
// rows as they are, F32 matrices read out of their panels, vectors as float32. Little-endian, as
// the core holds them.
void held_tensor_bytes(const HeldTensor& t, std::vector<unsigned char>* out);

}  // namespace attn
