#include "layers/post_ln_block.h"

namespace attn {

void AttentionSublayer::add_to(TensorTable& t, const Names& names, int dim, float eps) {
  q.add_to(t, names.q, dim, dim, Layout::kTransposed);
  k.add_to(t, names.k, dim, dim, Layout::kTransposed);
  v.add_to(t, names.v, dim, dim, Layout::kTransposed);
  o.add_to(t, names.o, dim, dim, Layout::kTransposed);
  ln.eps = eps;
  ln.add_to(t, names.ln, dim);
  output_name = names.ln.substr(0, names.ln.size() - 1);  // (the prefix ends in '.')
}

std::string AttentionSublayer::finalize(int dim, int heads) {
  MhaConfig mc{dim, heads, 0, 0, 0, 0, true};
  mc.model_activations = true;  // (checked by the block: activation_check.h)
  std::string err = attn.configure(mc);
  // The attention layer takes Q, K, V and O over (fusing the first three).
  MhaStoredWeights w;
  if (err.empty()) {
    w.q = std::move(q.weight), w.k = std::move(k.weight), w.v = std::move(v.weight), w.o = std::move(o.weight);
    w.b_q = q.bias.data(), w.b_k = k.bias.data(), w.b_v = v.bias.data(), w.b_o = o.bias.data();
    err = attn.set_weights(std::move(w));
  }
  q = Linear(), k = Linear(), v = Linear(), o = Linear();  // attn holds them now
  return err;
}

std::string PostLnBlock::finalize(int dim, int heads) {
  std::string err = self.finalize(dim, heads);
  if (err.empty() && has_cross) err = cross.finalize(dim, heads);
  return err;
}

std::string PostLnBlock::check_sublayer(const ActivationCheck& check, const float* x, std::size_t rows, const char* what,
                                        const AttentionSublayer& sub) const {
  return check(x, rows, mlp.fc.in, [&] { return layer_tensor(layer, what, sub.output_name); });
}

std::string PostLnBlock::finish(const Kernels& kn, float* x, std::size_t rows, const ActivationCheck& check,
                                BlockTrace* block) {
  const int dim = mlp.fc.in;
  const std::size_t nd = rows * dim;
  std::string err = keep_in(block, &BlockTrace::mlp_input, x, nd);
  if (err.empty()) err = mlp.forward(kn, x, static_cast<int>(rows), f_, a_.data(), block ? &block->ffn : nullptr);
  if (!err.empty()) return err;
  add_in_place(x, a_.data(), nd);
  err = keep_in(block, &BlockTrace::mlp, a_.data(), nd);
  if (err.empty()) err = keep_in(block, &BlockTrace::after_mlp, x, nd);
  if (!err.empty()) return err;
  out_ln.forward(x, static_cast<int>(rows), dim, x);
  err = keep_in(block, &BlockTrace::output, x, nd);
  return err.empty() ? check(x, rows, dim, [&] { return layer_tensor(layer, "MLP output", out_ln_name); }) : err;
}

std::string PostLnBlock::forward(const Kernels& kn, float* x, int batch, int n, const Masks& self_masks,
                                 const Memory* memory, float* self_weights, float* cross_weights, MhaTrace* self_trace,
                                 MhaTrace* cross_trace, const ActivationCheck& check, BlockTrace* block) {
  const int dim = mlp.fc.in;
  const std::size_t rows = std::size_t(batch) * n, nd = rows * dim;
  if (has_cross && !memory) return "a decoder layer needs the encoder output";
  if (!a_.resize(nd)) return out_of_memory("activations", nd);
  const auto keep = [&](Buffer BlockTrace::*slot, const float* values) { return keep_in(block, slot, values, nd); };
  std::string err;
  if (block) {
    err = block->begin(x, nd);
    if (err.empty()) err = block->keep_norm(self.ln, dim);
    if (err.empty() && has_cross) err = block->keep_norm(cross.ln, dim);
    if (err.empty()) err = block->keep_norm(out_ln, dim);
    if (!err.empty()) return err;
  }
  MhaInput in;
  in.query = in.key = in.value = x;
  in.batch = batch;
  in.seq_q = in.seq_k = n;
  in.masks = self_masks;
  err = self.attn.forward(in, a_.data(), self_weights, self_trace);
  if (!err.empty()) return err;
  add_in_place(x, a_.data(), nd);
  err = keep(&BlockTrace::attention, a_.data());
  if (err.empty()) err = keep(&BlockTrace::after_attention, x);
  if (!err.empty()) return err;
  self.ln.forward(x, static_cast<int>(rows), dim, x);
  err = check_sublayer(check, x, rows, "self-attention output", self);
  if (!err.empty()) return err;
  if (has_cross) {
    MhaInput ci;
    ci.query = x;
    ci.key = ci.value = memory->states;
    ci.batch = batch;
    ci.seq_q = n;
    ci.seq_k = memory->seq;
    ci.masks.key_padding = memory->padding;
    err = cross.attn.forward(ci, a_.data(), cross_weights, cross_trace);
    if (!err.empty()) return err;
    add_in_place(x, a_.data(), nd);
    err = keep(&BlockTrace::cross, a_.data());
    if (err.empty()) err = keep(&BlockTrace::after_cross, x);
    if (!err.empty()) return err;
    cross.ln.forward(x, static_cast<int>(rows), dim, x);
    err = check_sublayer(check, x, rows, "cross-attention output", cross);
    if (!err.empty()) return err;
  }
  return finish(kn, x, rows, check, block);
}

std::string PostLnBlock::step(const Kernels& kn, float* x, int n, KvCache& self_cache, KvCache* cross_cache,
                              const std::uint8_t* cross_padding, float* self_weights, float* cross_weights,
                              const ActivationCheck& check) {
  const int dim = mlp.fc.in;
  const std::size_t rows = std::size_t(self_cache.batch) * n, nd = rows * dim;
  if (has_cross && (!cross_cache || cross_cache->batch != self_cache.batch))
    return "a decoder layer needs a cross-attention cache of the same batch";
  if (!a_.resize(nd)) return out_of_memory("activations", nd);
  std::string err = self.attn.forward_cached(x, n, self_cache, true, true, nullptr, a_.data(), self_weights);
  if (!err.empty()) return err;
  add_in_place(x, a_.data(), nd);
  self.ln.forward(x, static_cast<int>(rows), dim, x);
  err = check_sublayer(check, x, rows, "self-attention output", self);
  if (!err.empty()) return err;
  if (has_cross) {
    err = cross.attn.forward_cached(x, n, *cross_cache, false, false, cross_padding, a_.data(), cross_weights);
    if (!err.empty()) return err;
    add_in_place(x, a_.data(), nd);
    cross.ln.forward(x, static_cast<int>(rows), dim, x);
    err = check_sublayer(check, x, rows, "cross-attention output", cross);
    if (!err.empty()) return err;
  }
  return finish(kn, x, rows, check);
}

}  // namespace attn
