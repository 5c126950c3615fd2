"""A small Llama, computed the way Hugging Face's LlamaForCausalLM computes it.

Parameter names and layouts are Hugging Face's (nn.Linear: [out, in], y = x @ W^T,
no biases), so `state_dict()` is exactly what export_llama.py writes and what the
browser loads:
  model.embed_tokens.weight [V, C]
  model.layers.N.input_layernorm.weight [C]            (RMSNorm)
  model.layers.N.self_attn.q_proj.weight [H*d, C]
  model.layers.N.self_attn.k_proj.weight [Hkv*d, C]    (grouped-query: Hkv < H)
  model.layers.N.self_attn.v_proj.weight [Hkv*d, C]
  model.layers.N.self_attn.o_proj.weight [C, H*d]
  model.layers.N.post_attention_layernorm.weight [C]
  model.layers.N.mlp.gate_proj.weight / up_proj.weight [I, C]   down_proj.weight [C, I]
  model.norm.weight [C]
The LM head is tied: logits = norm(x) @ embed_tokens.weight^T (tie_word_embeddings).
Positions enter only through rotary embeddings on Q and K (rotate-half convention,
rope_theta), so there is no position table.
"""

import json
import math
import os
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LlamaConfig:
    vocab_size: int = 14336
    max_position_embeddings: int = 128
    hidden_size: int = 160
    intermediate_size: int = 432   # 3 x 160 x 432 ~ GPT-2's 2 x 160 x 640 MLP weights
    num_hidden_layers: int = 4
    num_attention_heads: int = 8
    num_key_value_heads: int = 2
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    def to_json(self):
        return asdict(self)


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * w, computed in float32 as HF's LlamaRMSNorm does."""

    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rope_tables(n_pos, head_dim, theta):
    """cos, sin [n_pos, head_dim] for rotate-half rotary embeddings: frequency i
    (theta^(-2i/d)) drives dimensions i and i + d/2."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    ang = torch.arange(n_pos, dtype=torch.float32)[:, None] * inv_freq[None, :]
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x, cos, sin):
    """x [B, heads, T, d] rotated by position: x cos + rotate_half(x) sin."""
    return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.h, self.hkv, self.d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        assert self.h % self.hkv == 0, "query heads must split evenly into K/V groups"
        C = cfg.hidden_size
        self.q_proj = nn.Linear(C, self.h * self.d, bias=False)
        self.k_proj = nn.Linear(C, self.hkv * self.d, bias=False)
        self.v_proj = nn.Linear(C, self.hkv * self.d, bias=False)
        self.o_proj = nn.Linear(self.h * self.d, C, bias=False)
        mask = torch.tril(torch.ones(cfg.max_position_embeddings, cfg.max_position_embeddings,
                                     dtype=torch.bool))
        self.register_buffer("causal", mask, persistent=False)

    def forward(self, x, cos, sin, want_attn=False):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.h, self.d).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.hkv, self.d).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.hkv, self.d).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        # Query head j reads K/V head j // (h / hkv): consecutive query heads share one.
        rep = self.h // self.hkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)
        scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
        probs = F.softmax(scores, dim=-1)
        y = (probs @ v).transpose(1, 2).reshape(B, T, self.h * self.d)
        return self.o_proj(y), (probs if want_attn else None)


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, cfg):
        super().__init__()
        C, I = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj = nn.Linear(C, I, bias=False)
        self.up_proj = nn.Linear(C, I, bias=False)
        self.down_proj = nn.Linear(I, C, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, want_attn=False):
        a, probs = self.self_attn(self.input_layernorm(x), cos, sin, want_attn)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, probs


class Body(nn.Module):
    """HF's LlamaModel (the "model." prefix of every weight name)."""

    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = Body(cfg)
        cos, sin = rope_tables(cfg.max_position_embeddings, cfg.head_dim, cfg.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        # GPT-2's initialisation (as model.py): N(0, 0.02), and the projections that write
        # into the residual stream scaled by 1/sqrt(2 * layers); norms start at 1.
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02
                if name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                    std /= math.sqrt(2 * cfg.num_hidden_layers)
                nn.init.normal_(p, std=std)

    def forward(self, idx, targets=None, want_attn=False):
        B, T = idx.shape
        assert T <= self.cfg.max_position_embeddings
        cos, sin = self.rope_cos[:T], self.rope_sin[:T]
        x = self.model.embed_tokens(idx)
        attns = []
        for layer in self.model.layers:
            x, probs = layer(x, cos, sin, want_attn)
            attns.append(probs)
        x = self.model.norm(x)
        logits = x @ self.model.embed_tokens.weight.t()  # tied LM head
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1),
                                   ignore_index=-1)
        return logits, loss, (attns if want_attn else None)

    def num_params(self):
        return sum(p.numel() for p in self.parameters())


def hf_config(cfg, eos_id, dtype):
    """config.json in LlamaForCausalLM's layout."""
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": cfg.vocab_size, "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size, "num_hidden_layers": cfg.num_hidden_layers,
        "num_attention_heads": cfg.num_attention_heads,
        "num_key_value_heads": cfg.num_key_value_heads, "head_dim": cfg.head_dim,
        "hidden_act": "silu", "max_position_embeddings": cfg.max_position_embeddings,
        "rms_norm_eps": cfg.rms_norm_eps, "rope_theta": cfg.rope_theta, "rope_scaling": None,
        "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": True,
        "initializer_range": 0.02, "bos_token_id": eos_id, "eos_token_id": eos_id,
        "torch_dtype": dtype,
    }


def load_exported(model_dir):
    """Build a float32 Llama from an exported directory (config.json +
    model.safetensors), going through the independent safetensors reader."""
    from safetensors_read import read_safetensors
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        hf = json.load(f)
    assert hf["model_type"] == "llama" and hf.get("rope_scaling") is None
    cfg = LlamaConfig(vocab_size=hf["vocab_size"],
                      max_position_embeddings=hf["max_position_embeddings"],
                      hidden_size=hf["hidden_size"], intermediate_size=hf["intermediate_size"],
                      num_hidden_layers=hf["num_hidden_layers"],
                      num_attention_heads=hf["num_attention_heads"],
                      num_key_value_heads=hf["num_key_value_heads"],
                      rms_norm_eps=hf["rms_norm_eps"], rope_theta=hf["rope_theta"])
    tensors, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    model = Llama(cfg)
    state = {k: torch.from_numpy(v.astype("float32")) for k, v in tensors.items()}
    model.load_state_dict(state, strict=True)
    model.eval()
    return model
