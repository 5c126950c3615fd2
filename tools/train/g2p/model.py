"""A BART-layout encoder-decoder in PyTorch with Hugging Face's tensor names, for training.

The exported checkpoint is what transformers' BartForConditionalGeneration would save, so the
library's loader reads it as model_type "bart":
  embeddings: shared token table (encoder, decoder and the tied LM head), learned positions with
  BART's offset of 2, layernorm_embedding; post-LayerNorm layers (x = LN(x + sublayer(x)));
  decoder layers: masked self-attention, cross-attention (queries from the decoder, keys and
  values from the encoder output), the MLP; logits = x shared^T + final_logits_bias.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

POSITION_OFFSET = 2  # BartLearnedPositionalEmbedding: rows 0 and 1 are never used


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))

    def split(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.h, self.dk).transpose(1, 2)

    def forward(self, x, kv, mask):
        """mask: broadcastable to batch x heads x n_q x n_k, True = not attended. Returns (out, weights)."""
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(kv)), self.split(self.v_proj(kv))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dk)
        w = scores.masked_fill(mask, float("-inf")).softmax(-1)
        z = (w @ v).transpose(1, 2).reshape(x.shape)
        return self.out_proj(z), w


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.self_attn = Attention(d, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, x, pad_mask):
        a, w = self.self_attn(x, x, pad_mask)
        x = self.self_attn_layer_norm(x + a)
        x = self.final_layer_norm(x + self.fc2(F.gelu(self.fc1(x))))
        return x, w


class DecoderLayer(EncoderLayer):
    def __init__(self, d, heads, ffn):
        super().__init__(d, heads, ffn)
        self.encoder_attn = Attention(d, heads)
        self.encoder_attn_layer_norm = nn.LayerNorm(d)

    def forward(self, y, causal_mask, memory, memory_mask):
        a, ws = self.self_attn(y, y, causal_mask)
        y = self.self_attn_layer_norm(y + a)
        c, wc = self.encoder_attn(y, memory, memory_mask)
        y = self.encoder_attn_layer_norm(y + c)
        y = self.final_layer_norm(y + self.fc2(F.gelu(self.fc1(y))))
        return y, ws, wc


class Stack(nn.Module):
    """Positions + embedding LayerNorm + layers: HF's BartEncoder / BartDecoder (the token table is shared)."""

    def __init__(self, layer, cfg, n_layers, heads, ffn):
        super().__init__()
        d = cfg["d_model"]
        self.embed_positions = nn.Embedding(cfg["max_position_embeddings"] + POSITION_OFFSET, d)
        self.layernorm_embedding = nn.LayerNorm(d)
        self.layers = nn.ModuleList(layer(d, heads, ffn) for _ in range(n_layers))

    def embed(self, shared, ids):
        pos = torch.arange(ids.shape[1], device=ids.device) + POSITION_OFFSET
        return self.layernorm_embedding(shared(ids) + self.embed_positions(pos))


class Bart(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.shared = nn.Embedding(cfg["vocab_size"], cfg["d_model"], padding_idx=cfg["pad_token_id"])
        self.encoder = Stack(EncoderLayer, cfg, cfg["encoder_layers"], cfg["encoder_attention_heads"], cfg["encoder_ffn_dim"])
        self.decoder = Stack(DecoderLayer, cfg, cfg["decoder_layers"], cfg["decoder_attention_heads"], cfg["decoder_ffn_dim"])
        self.register_buffer("final_logits_bias", torch.zeros(1, cfg["vocab_size"]))
        std = cfg["init_std"]
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, std)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def encode(self, src):
        """src: batch x S ids (padded with pad_token_id). Returns (memory, pad mask, attentions)."""
        pad = (src == self.cfg["pad_token_id"])[:, None, None, :]
        x = self.encoder.embed(self.shared, src)
        ws = []
        for layer in self.encoder.layers:
            x, w = layer(x, pad)
            ws.append(w)
        return x, pad, ws

    def decode(self, tgt_in, memory, pad):
        """tgt_in: batch x T ids starting with decoder_start_token_id. Returns (logits, self attns, cross attns)."""
        T = tgt_in.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt_in.device).triu(1)
        y = self.decoder.embed(self.shared, tgt_in)
        ws, wc = [], []
        for layer in self.decoder.layers:
            y, a, c = layer(y, causal, memory, pad)
            ws.append(a)
            wc.append(c)
        return y @ self.shared.weight.T + self.final_logits_bias, ws, wc

    def forward(self, src, tgt_in):
        memory, pad, _ = self.encode(src)
        return self.decode(tgt_in, memory, pad)[0]

    def hf_state_dict(self):
        """Parameters under BartForConditionalGeneration's names (the tied copies left out)."""
        out = {"model.shared.weight": self.shared.weight, "final_logits_bias": self.final_logits_bias}
        for name, t in self.named_parameters():
            if name.startswith(("encoder.", "decoder.")):
                out["model." + name] = t
        return out

    @torch.no_grad()
    def greedy(self, src, max_len):
        """Greedy decoding of a batch; returns lists of ids without the start and end tokens."""
        memory, pad, _ = self.encode(src)
        start, end = self.cfg["decoder_start_token_id"], self.cfg["eos_token_id"]
        seq = torch.full((src.shape[0], 1), start, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            nxt = self.decode(seq, memory, pad)[0][:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, self.cfg["pad_token_id"]), nxt)
            seq = torch.cat([seq, nxt[:, None]], 1)
            done |= nxt == end
            if done.all():
                break
        out = []
        for row in seq[:, 1:].tolist():
            out.append(row[:row.index(end)] if end in row else row)
        return out
