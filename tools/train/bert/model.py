"""A BERT for masked-LM pre-training whose state_dict has Hugging Face BertForMaskedLM's names
(bert.embeddings..., bert.encoder.layer.N..., cls.predictions...) and math: post-LayerNorm blocks,
erf GELU, LayerNorm eps 1e-12, MLM head = dense + GELU + LayerNorm, decoder tied to the word
embeddings, plus a bias."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Module(nn.Module):
    """A plain container, so attribute paths spell Hugging Face's tensor names."""


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], c["hidden_size"])
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, ids, types):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.word_embeddings(ids) + self.position_embeddings(pos)[None] + self.token_type_embeddings(types)
        return self.LayerNorm(x)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        D, I = c["hidden_size"], c["intermediate_size"]
        self.n_head = c["num_attention_heads"]
        self.attention = Module()
        self.attention.self = Module()
        self.attention.self.query = nn.Linear(D, D)
        self.attention.self.key = nn.Linear(D, D)
        self.attention.self.value = nn.Linear(D, D)
        self.attention.output = Module()
        self.attention.output.dense = nn.Linear(D, D)
        self.attention.output.LayerNorm = nn.LayerNorm(D, eps=c["layer_norm_eps"])
        self.intermediate = Module()
        self.intermediate.dense = nn.Linear(D, I)
        self.output = Module()
        self.output.dense = nn.Linear(I, D)
        self.output.LayerNorm = nn.LayerNorm(D, eps=c["layer_norm_eps"])

    def forward(self, x, pad, want_attention=False):
        B, n, D = x.shape
        H = self.n_head
        s = self.attention.self
        split = lambda t: t.view(B, n, H, D // H).transpose(1, 2)
        q, k, v = split(s.query(x)), split(s.key(x)), split(s.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(D // H)
        scores = scores.masked_fill(pad[:, None, None, :], float("-inf"))  # padded keys
        w = scores.softmax(-1)
        z = (w @ v).transpose(1, 2).reshape(B, n, D)
        x = self.attention.output.LayerNorm(x + self.attention.output.dense(z))
        x = self.output.LayerNorm(x + self.output.dense(F.gelu(self.intermediate.dense(x))))
        return (x, w) if want_attention else x


class BertForMaskedLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.bert = Module()
        self.bert.embeddings = Embeddings(c)
        self.bert.encoder = Module()
        self.bert.encoder.layer = nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])
        D = c["hidden_size"]
        self.cls = Module()
        self.cls.predictions = Module()
        self.cls.predictions.transform = Module()
        self.cls.predictions.transform.dense = nn.Linear(D, D)
        self.cls.predictions.transform.LayerNorm = nn.LayerNorm(D, eps=c["layer_norm_eps"])
        self.cls.predictions.bias = nn.Parameter(torch.zeros(c["vocab_size"]))
        self.apply(self._init)

    def _init(self, m):
        # BERT's initialization: N(0, 0.02) weights, zero biases, LayerNorm 1 / 0.
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=self.config["initializer_range"])
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)

    def hidden(self, ids, types, pad, want_attention=False):
        x = self.bert.embeddings(ids, types)
        maps = []
        for layer in self.bert.encoder.layer:
            if want_attention:
                x, w = layer(x, pad, True)
                maps.append(w)
            else:
                x = layer(x, pad)
        return (x, maps) if want_attention else x

    def mlm_logits(self, h):
        t = self.cls.predictions.transform
        t = t.LayerNorm(F.gelu(t.dense(h)))
        return t @ self.bert.embeddings.word_embeddings.weight.T + self.cls.predictions.bias
