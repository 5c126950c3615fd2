"""PyTorch's greedy tokens for the generate-llama workload (bench/llama/browser.mjs): the random
Llama of bench/llama/weights.mjs, whose weights bench/llama/pytorch.mjs writes once as
OUT_DIR/weights.safetensors (F32), run by a Llama forward written here from the architecture
(Hugging Face's LlamaForCausalLM: RMSNorm, rotate-half rotary with rope_theta, grouped-query
attention by repeating each K/V head over its query group, SwiGLU MLP, tied or untied LM head),
with a KV cache: the prompt in one call, then one token per call, argmax of the last position's
logits each time. torch only (no transformers package).

Variants, each a greedy continuation with per step the runner-up id and the top-1 minus top-2 logit:
  f64   the weights as stored, computed in float64 (the reference)
  f32   the same in float32 (rotary tables in float32, as Hugging Face computes them)
  f16   the matrices and the embedding table rounded to float16 (as this library's f16 holds them),
        computed in float64
  int8  onnxruntime's dynamic quantization as bench/llama/onnx.mjs's 8-bit graph does it: every
        weight product with W int8 per tensor (symmetric, scale max|W| / 127) and its input
        quantized per call to uint8 over the whole tensor (DynamicQuantizeLinear: the range stretched
        to include 0, round half to even), integer products exact in float64; embedding rows read
        from the int8 table; the rest in float64
Writes OUT_DIR/reference.json (the ids, runner-ups and margins per variant), OUT_DIR/logits0.<variant>.f32
(the prompt's last-position logits) and OUT_DIR/manifest.json last.

Usage: /usr/bin/python3 bench/llama/reference.py OUT_DIR --config JSON --prompt 1,2,3 --new 64 [--weights KEY] [--key KEY]
"""

import argparse
import json
import math
import os
import struct
import time

import numpy as np
import torch

VARIANTS = ("f64", "f32", "f16", "int8")


def read_safetensors(path):
    """{name: float32 tensor} of an F32 safetensors file (the only dtype pytorch.mjs writes)."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, base = json.loads(raw[8:8 + n]), 8 + n
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        if h["dtype"] != "F32":
            raise ValueError(f"{name}: dtype {h['dtype']}, expected F32")
        s, e = h["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(raw, dtype="<f4", count=(e - s) // 4, offset=base + s).reshape(h["shape"]).copy())
    return out


def int8_weight(w):
    """onnxruntime's symmetric int8 per tensor: (q, scale), the scale a float32 as the graph stores it."""
    scale = torch.tensor(float(w.abs().max()) / 127, dtype=torch.float32)
    return torch.clamp(torch.round(w.float() / scale), -127, 127).double(), float(scale)


def dynamic_uint8(x):
    """DynamicQuantizeLinear of the whole tensor: x ~ (q - zero) * scale, q in 0..255; returns (q - zero, scale)."""
    x = x.float()
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = torch.tensor((hi - lo) / 255, dtype=torch.float32)
    zero = torch.clamp(torch.round(torch.tensor(-lo, dtype=torch.float32) / scale), 0, 255)
    return (torch.clamp(torch.round(x / scale) + zero, 0, 255) - zero).double(), float(scale)


class Linear:
    """x W^T for an nn.Linear weight W (out x in), in the variant's arithmetic."""

    def __init__(self, w, variant):
        self.int8 = variant == "int8"
        if self.int8:
            self.q, self.scale = int8_weight(w)
            self.q = self.q.t().contiguous()
        else:
            self.w = prepare(w, variant).t().contiguous()

    def __call__(self, x):
        if not self.int8:
            return x @ self.w
        xq, sx = dynamic_uint8(x)
        return (xq @ self.q) * (float(torch.tensor(sx, dtype=torch.float32) * torch.tensor(self.scale, dtype=torch.float32)))


def dtype_of(variant):
    return torch.float32 if variant == "f32" else torch.float64


def prepare(w, variant):
    """A weight as the variant holds it: f16-rounded for f16, in the variant's compute type."""
    if variant == "f16":
        w = w.half()
    return w.to(dtype_of(variant))


class Llama:
    """The forward of one config, KV cache included; `step(ids)` appends them and returns the last logits."""

    def __init__(self, cfg, weights, variant):
        self.cfg, self.variant, dt = cfg, variant, dtype_of(variant)
        self.D, self.H, self.KV = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
        self.d = cfg.get("head_dim") or self.D // self.H
        self.eps = cfg["rms_norm_eps"]
        table = weights["model.embed_tokens.weight"]
        if variant == "int8":
            q, scale = int8_weight(table)
            self.embed = q * scale
        else:
            self.embed = prepare(table, variant)
        head = table if cfg.get("tie_word_embeddings") else weights["lm_head.weight"]
        self.head = Linear(head, variant)
        norm = lambda name: weights[name].to(dt)  # norms are bfloat16 values: exact in every variant
        self.layers = []
        for l in range(cfg["num_hidden_layers"]):
            p = f"model.layers.{l}."
            lin = lambda n: Linear(weights[p + n + ".weight"], variant)
            self.layers.append({
                "in": norm(p + "input_layernorm.weight"), "post": norm(p + "post_attention_layernorm.weight"),
                "q": lin("self_attn.q_proj"), "k": lin("self_attn.k_proj"), "v": lin("self_attn.v_proj"), "o": lin("self_attn.o_proj"),
                "gate": lin("mlp.gate_proj"), "up": lin("mlp.up_proj"), "down": lin("mlp.down_proj"),
                "cache_k": None, "cache_v": None,
            })
        self.final = norm("model.norm.weight")
        self.inv_freq = self.frequencies(cfg.get("rope_theta", 10000.0))
        self.past = 0

    def frequencies(self, theta):
        """theta^(-2i/d): in float32 at f32 as Hugging Face computes it, else float64."""
        i = torch.arange(0, self.d, 2, dtype=torch.int64)
        if self.variant == "f32":
            return 1.0 / (theta ** (i.float() / self.d))
        return 1.0 / (theta ** (i.double() / self.d))

    def rms_norm(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    def rotate(self, x, pos):
        """x [heads, S, d] at positions pos: x cos + rotate_half(x) sin, rotate_half = [-x2, x1]."""
        angles = pos.to(self.inv_freq.dtype)[:, None] * self.inv_freq[None, :]
        emb = torch.cat([angles, angles], dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        x1, x2 = x[..., : self.d // 2], x[..., self.d // 2:]
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin

    def attention(self, layer, h, pos):
        S, H, KV, d = h.shape[0], self.H, self.KV, self.d
        q = self.rotate(layer["q"](h).view(S, H, d).transpose(0, 1), pos)
        k = self.rotate(layer["k"](h).view(S, KV, d).transpose(0, 1), pos)
        v = layer["v"](h).view(S, KV, d).transpose(0, 1)
        if layer["cache_k"] is not None:
            k, v = torch.cat([layer["cache_k"], k], dim=1), torch.cat([layer["cache_v"], v], dim=1)
        layer["cache_k"], layer["cache_v"] = k, v
        # repeat_kv: query head j reads K/V head j // (H / KV)
        k, v = k.repeat_interleave(H // KV, dim=0), v.repeat_interleave(H // KV, dim=0)
        scores = (q @ k.transpose(1, 2)) / math.sqrt(d)
        T = k.shape[1]
        keys, queries = torch.arange(T), pos
        scores = scores.masked_fill(keys[None, :] > queries[:, None], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return layer["o"](out.transpose(0, 1).reshape(S, H * d))

    def step(self, ids):
        pos = torch.arange(self.past, self.past + len(ids))
        x = self.embed[torch.tensor(ids)].to(dtype_of(self.variant))
        for layer in self.layers:
            x = x + self.attention(layer, self.rms_norm(x, layer["in"]), pos)
            h = self.rms_norm(x, layer["post"])
            g = layer["gate"](h)
            x = x + layer["down"](torch.nn.functional.silu(g) * layer["up"](h))
        self.past += len(ids)
        return self.head(self.rms_norm(x[-1:], self.final))[0]


def greedy(cfg, weights, variant, prompt, new):
    """ids, runner-ups, top-1 minus top-2 margins, and the prompt's last-position logits."""
    model = Llama(cfg, weights, variant)
    ids, second, margin, first = [], [], [], None
    logits = model.step(prompt)
    first = logits.float().numpy()
    while True:
        top = torch.topk(logits.double(), 2)
        ids.append(int(top.indices[0]))
        second.append(int(top.indices[1]))
        margin.append(float(top.values[0] - top.values[1]))
        if len(ids) == new:
            return {"ids": ids, "second": second, "margin": margin}, first
        logits = model.step([ids[-1]])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    p.add_argument("--config", required=True)
    p.add_argument("--prompt", required=True)
    p.add_argument("--new", type=int, default=64)
    p.add_argument("--weights", default="", help="the weights' version (the caller's cache key)")
    p.add_argument("--key", default="")
    a = p.parse_args()
    torch.set_num_threads(1)  # a shared machine: one core, as the bench's other references
    manifest = os.path.join(a.out_dir, "manifest.json")
    if os.path.exists(manifest):
        os.remove(manifest)
    cfg, prompt = json.loads(a.config), [int(x) for x in a.prompt.split(",")]
    weights = read_safetensors(os.path.join(a.out_dir, "weights.safetensors"))
    out, files, t0 = {"prompt": prompt}, ["reference.json"], time.time()
    with torch.no_grad():
        for variant in VARIANTS:
            out[variant], first = greedy(cfg, weights, variant, prompt, a.new)
            name = f"logits0.{variant}.f32"
            first.astype("<f4").tofile(os.path.join(a.out_dir, name))
            files.append(name)
    json.dump(out, open(os.path.join(a.out_dir, "reference.json"), "w"))
    agree = lambda v: next((i for i, (x, y) in enumerate(zip(out[v]["ids"], out["f64"]["ids"])) if x != y), a.new)
    with open(manifest, "w") as f:
        json.dump({"key": a.key, "files": files, "torch": torch.__version__}, f)
    print(f"reference.py: {a.new} greedy tokens x {len(VARIANTS)} variants in {time.time() - t0:.0f} s; "
          + ", ".join(f"{v} = f64 for {agree(v)}" for v in VARIANTS[1:]) + f"; f64 min margin {min(out['f64']['margin']):.2e}")


if __name__ == "__main__":
    main()
