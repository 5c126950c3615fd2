"""GPT-2, computed the way Hugging Face's GPT2LMHeadModel computes it.

Parameter names and layouts are Hugging Face's (without the "transformer."
prefix), so `state_dict()` is exactly what export.py writes and what the
browser loads:
  wte.weight [V, C]          wpe.weight [T, C]
  h.N.ln_1.weight/bias [C]
  h.N.attn.c_attn.weight [C, 3C]  (Conv1D: in x out, y = x @ W + b)
  h.N.attn.c_proj.weight [C, C]
  h.N.ln_2.weight/bias [C]
  h.N.mlp.c_fc.weight [C, 4C]     h.N.mlp.c_proj.weight [4C, C]
  ln_f.weight/bias [C]
The LM head has no weights of its own: logits = ln_f(x) @ wte.weight^T.
"""

import json
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    vocab_size: int = 14336
    n_positions: int = 128
    n_embd: int = 160
    n_layer: int = 4
    n_head: int = 4
    layer_norm_epsilon: float = 1e-5
    dropout: float = 0.0

    def to_json(self):
        return asdict(self)


def gelu_new(x):
    """GELU, tanh approximation (HF "gelu_new", as in the original GPT-2)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def sinusoids(n_pos, dim):
    """The Transformer's positional encoding: pairs (sin, cos) of pos / 10000^(2i/dim)."""
    pos = torch.arange(n_pos, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    out = torch.zeros(n_pos, dim)
    out[:, 0::2] = torch.sin(pos * freq)
    out[:, 1::2] = torch.cos(pos * freq)
    return out


class Conv1D(nn.Module):
    """GPT-2's "Conv1D": a linear layer whose weight is stored in x out."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(
            *x.shape[:-1], self.weight.shape[1])


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = Conv1D(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = Conv1D(cfg.n_embd, cfg.n_embd)
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.resid_drop = nn.Dropout(cfg.dropout)
        # Not persistent: the mask is not a weight and must not be exported.
        mask = torch.tril(torch.ones(cfg.n_positions, cfg.n_positions, dtype=torch.bool))
        self.register_buffer("causal", mask, persistent=False)

    def forward(self, x, want_attn=False):
        B, T, C = x.shape
        hd = C // self.n_head
        # c_attn output is [q | k | v], each split into heads in order.
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
        probs = F.softmax(scores, dim=-1)
        y = self.attn_drop(probs) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # merge heads
        y = self.resid_drop(self.c_proj(y))
        return y, (probs if want_attn else None)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = Conv1D(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = Conv1D(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.c_proj(gelu_new(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.attn = Attention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.mlp = MLP(cfg)

    def forward(self, x, want_attn=False):
        a, probs = self.attn(self.ln_1(x), want_attn)
        x = x + a
        x = x + self.mlp(self.ln_2(x))
        return x, probs


class GPT2(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.n_positions, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        # GPT-2 initialisation: N(0, 0.02) everywhere; the projections that
        # write into the residual stream are scaled by 1/sqrt(2 * n_layer) so
        # its variance does not grow with depth.  wpe is still a learned
        # table (GPT-2's layout), but it starts from sinusoids at the same
        # scale: with them "attend to position t - 1" is a fixed rotation
        # that W_Q^T W_K can express from step one, so a small model on a
        # small corpus grows previous-token (and then induction) heads in
        # its budget; from random positions it did not (all heads broad).
        nn.init.normal_(self.wte.weight, std=0.02)
        with torch.no_grad():
            self.wpe.weight.copy_(sinusoids(cfg.n_positions, cfg.n_embd) * (0.02 * math.sqrt(2)))
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.n_layer))

    def forward(self, idx, targets=None, want_attn=False):
        B, T = idx.shape
        assert T <= self.cfg.n_positions
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        attns = []
        for block in self.h:
            x, probs = block(x, want_attn)
            attns.append(probs)
        x = self.ln_f(x)
        logits = x @ self.wte.weight.t()  # tied LM head
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1),
                                   ignore_index=-1)
        return logits, loss, (attns if want_attn else None)

    def num_params(self):
        return sum(p.numel() for p in self.parameters())


def load_exported(model_dir):
    """Build a float32 GPT2 from an exported directory (config.json +
    model.safetensors), going through the independent safetensors reader."""
    import os
    from safetensors_read import read_safetensors
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        hf = json.load(f)
    cfg = GPTConfig(vocab_size=hf["vocab_size"], n_positions=hf["n_positions"],
                    n_embd=hf["n_embd"], n_layer=hf["n_layer"], n_head=hf["n_head"],
                    layer_norm_epsilon=hf["layer_norm_epsilon"])
    tensors, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    model = GPT2(cfg)
    state = {k: torch.from_numpy(v.astype("float32")) for k, v in tensors.items()}
    model.load_state_dict(state, strict=True)
    model.eval()
    return model
