"""The bench's encoder workload: a random-weight BERT (MiniLM-L6 shape by default) and its ONNX export.

Usage: /usr/bin/python3 export.py OUT_DIR --layers 6 --hidden 384 --heads 12 --ffn 1536 --vocab 1000 --positions 512
                 --batch 32 --seq 128 --seed 20261122 --opset 17

Run by bench/encoder/workload.mjs when OUT_DIR (build/bench-encoder/) is missing or stale. Writes:
  config.json, model.safetensors, vocab.txt   Hugging Face BERT layout (this library's loadModel)
  model.onnx                                  torch.onnx.export of the same module (onnxruntime-web)
  input_ids.i32                               batch x seq token ids (int32 LE), [CLS] ... [SEP]
  expected.f32                                batch x hidden: PyTorch's float32 output (LE)
  manifest.json                               the arguments, versions and file list; written last

The module is Hugging Face's BertModel math written out (so its state_dict keys are HF's names):
embeddings (word + position + token type 0) + LayerNorm, post-LN layers with erf GELU, then
sentence-transformers' mean pooling over attention_mask and L2 normalization, all in the graph.
Inputs: input_ids and attention_mask (int64, batch x sequence, both dynamic). Output: embeddings.
Deterministic for a given torch version (seeded default initializers, one thread).
"""

import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)


class Embeddings(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.word_embeddings = nn.Embedding(a.vocab, a.hidden)
        self.position_embeddings = nn.Embedding(a.positions, a.hidden)
        self.token_type_embeddings = nn.Embedding(2, a.hidden)
        self.LayerNorm = nn.LayerNorm(a.hidden, eps=a.eps)

    def forward(self, input_ids):
        seq = input_ids.shape[1]
        pos = self.position_embeddings.weight[:seq]  # positions 0..seq-1
        x = self.word_embeddings(input_ids) + pos + self.token_type_embeddings.weight[0]  # token types all 0
        return self.LayerNorm(x)


class SelfAttention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads, self.dk = a.heads, a.hidden // a.heads
        self.query = nn.Linear(a.hidden, a.hidden)
        self.key = nn.Linear(a.hidden, a.hidden)
        self.value = nn.Linear(a.hidden, a.hidden)

    def forward(self, x, additive_mask):
        b, s, d = x.shape
        split = lambda t: t.view(b, s, self.heads, self.dk).transpose(1, 2)  # b h s dk
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dk) + additive_mask
        z = torch.matmul(scores.softmax(dim=-1), v)
        return z.transpose(1, 2).reshape(b, s, d)


class Dense(nn.Module):
    """HF's BertSelfOutput / BertOutput: dense, residual, LayerNorm."""

    def __init__(self, a, n_in):
        super().__init__()
        self.dense = nn.Linear(n_in, a.hidden)
        self.LayerNorm = nn.LayerNorm(a.hidden, eps=a.eps)

    def forward(self, h, residual):
        return self.LayerNorm(self.dense(h) + residual)


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        setattr(self, "self", SelfAttention(a))  # HF's name: attention.self.query
        self.output = Dense(a, a.hidden)

    def forward(self, x, additive_mask):
        return self.output(getattr(self, "self")(x, additive_mask), x)


class Intermediate(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.dense = nn.Linear(a.hidden, a.ffn)

    def forward(self, x):
        return F.gelu(self.dense(x))  # erf GELU (config hidden_act "gelu")


class Layer(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.attention = Attention(a)
        self.intermediate = Intermediate(a)
        self.output = Dense(a, a.ffn)

    def forward(self, x, additive_mask):
        x = self.attention(x, additive_mask)
        return self.output(self.intermediate(x), x)


class Encoder(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.layer = nn.ModuleList([Layer(a) for _ in range(a.layers)])


class SentenceEncoder(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embeddings = Embeddings(a)
        self.encoder = Encoder(a)

    def forward(self, input_ids, attention_mask):
        m = attention_mask.to(torch.float32)
        # HF's extended attention mask: 0 for real keys, the float32 minimum for padding.
        additive = (1.0 - m)[:, None, None, :] * torch.finfo(torch.float32).min
        x = self.embeddings(input_ids)
        for layer in self.encoder.layer:
            x = layer(x, additive)
        # sentence-transformers: mean over real tokens, then Normalize.
        w = m.unsqueeze(-1)
        pooled = (x * w).sum(dim=1) / w.sum(dim=1).clamp(min=1e-9)
        return F.normalize(pooled, p=2.0, dim=1)


def randomize(model, seed):
    """PyTorch's default initializers (Linear: U(+-1/sqrt(fan_in)), Embedding: N(0, 1)) under one
    seed, plus non-trivial LayerNorm parameters so that every tensor's layout matters."""
    torch.manual_seed(seed)
    for mod in model.modules():
        if hasattr(mod, "reset_parameters"):
            mod.reset_parameters()
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.LayerNorm):
                mod.weight.uniform_(0.8, 1.2)
                mod.bias.uniform_(-0.1, 0.1)


def write_safetensors(path, state):
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name, t in state.items():
        raw = t.detach().contiguous().numpy().astype("<f4").tobytes(order="C")
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    for name, default in [("layers", 6), ("hidden", 384), ("heads", 12), ("ffn", 1536), ("vocab", 1000),
                          ("positions", 512), ("batch", 32), ("seq", 128), ("seed", 20261122), ("opset", 17)]:
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--eps", type=float, default=1e-12)
    p.add_argument("--key", default="", help="stored verbatim in manifest.json: the caller's cache key")
    a = p.parse_args()
    assert a.hidden % a.heads == 0 and a.seq <= a.positions and a.vocab > len(SPECIALS)
    os.makedirs(a.out_dir, exist_ok=True)
    at = lambda f: os.path.join(a.out_dir, f)
    manifest = at("manifest.json")
    if os.path.exists(manifest):
        os.remove(manifest)  # an interrupted run must not look complete

    model = SentenceEncoder(a).eval()
    randomize(model, a.seed)

    # Token ids: [CLS] w_1 .. w_{seq-2} [SEP], every sentence full length (no padding).
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = torch.randint(len(SPECIALS), a.vocab, (a.batch, a.seq), generator=g, dtype=torch.int64)
    ids[:, 0], ids[:, -1] = SPECIALS.index("[CLS]"), SPECIALS.index("[SEP]")
    mask = torch.ones_like(ids)

    with torch.no_grad():
        expected = model(ids, mask)

    write_safetensors(at("model.safetensors"), model.state_dict())
    with open(at("vocab.txt"), "w") as f:
        f.write("\n".join(SPECIALS + [f"w{i}" for i in range(a.vocab - len(SPECIALS))]) + "\n")
    config = {"model_type": "bert", "architectures": ["BertModel"], "vocab_size": a.vocab, "hidden_size": a.hidden,
              "num_hidden_layers": a.layers, "num_attention_heads": a.heads, "intermediate_size": a.ffn,
              "max_position_embeddings": a.positions, "type_vocab_size": 2, "layer_norm_eps": a.eps,
              "hidden_act": "gelu", "position_embedding_type": "absolute"}
    with open(at("config.json"), "w") as f:
        json.dump(config, f, indent=2)
    ids.to(torch.int32).numpy().astype("<i4").tofile(at("input_ids.i32"))
    expected.numpy().astype("<f4").tofile(at("expected.f32"))

    dyn = {0: "batch", 1: "sequence"}
    torch.onnx.export(model, (ids, mask), at("model.onnx"), input_names=["input_ids", "attention_mask"],
                      output_names=["embeddings"], dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "embeddings": {0: "batch"}},
                      opset_version=a.opset, do_constant_folding=True)
    import onnx  # only after the export: torch's exporter does not need the package
    onnx.checker.check_model(at("model.onnx"))

    files = ["config.json", "model.safetensors", "vocab.txt", "model.onnx", "input_ids.i32", "expected.f32"]
    with open(manifest, "w") as f:
        json.dump({"key": a.key, "args": vars(a), "torch": torch.__version__,
                   "onnx": onnx.__version__, "numpy": np.__version__, "files": files}, f, indent=2)
    sizes = ", ".join(f"{n} {os.path.getsize(at(n)) / 2**20:.1f} MiB" for n in files[:4])
    print(f"export.py: wrote {a.out_dir} ({sizes})")


if __name__ == "__main__":
    sys.exit(main())
