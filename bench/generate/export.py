"""The bench's generate workload: a random-weight GPT-2 (GPT-2 small's shape by default), its ONNX
export with past key/values, a prompt and PyTorch's own greedy continuation.

Usage: /usr/bin/python3 export.py OUT_DIR --layers 12 --hidden 768 --heads 12 --vocab 50257 --positions 1024
                 --prompt 64 --new 64 --seed 20261123 --opset 17

Run by bench/generate/workload.mjs when OUT_DIR (build/bench-generate/) is missing or stale. Writes:
  config.json, model.safetensors,     Hugging Face GPT-2 layout (this library's loadModel); the
  vocab.json, merges.txt              tokenizer is a stand-in (the bench feeds token ids)
  model.onnx                          torch.onnx.export of one decoding step with past key/values:
                                      input_ids [1, S] int64, past_key.i / past_value.i [1, H, P, dk]
                                      -> logits [1, vocab] (last position), present_key.i /
                                      present_value.i [1, H, P + S, dk]; S and P dynamic, P = 0 first
                                      (empty past: onnxruntime-web accepts it, so one graph serves
                                      prefill and decoding)
  prompt.i32, expected.i32            the prompt's ids and PyTorch's greedy continuation (int32 LE)
  second.i32, margin.f32              per new token: PyTorch's runner-up id and its top-1 minus top-2
                                      logit (float32 LE), to explain where a low-bit engine parts
  logits0.f32                         the prompt's last-position logits (float32 LE, vocab of them):
                                      each engine's prefill is compared with them
  manifest.json                       the arguments, versions and file list; written last

The module is GPT-2's math written out with Hugging Face's tensor names (Conv1D weights stored
in x out): token + position embeddings, pre-LayerNorm blocks (causal attention, tanh GELU MLP),
final LayerNorm, LM head tied to the token embeddings. Weights: embeddings N(0, 0.02) as GPT-2
initializes, block matrices N(0, 0.1) (see below), biases 0, LayerNorm at 1 / 0. Deterministic
for a given torch version (seeded, one thread).

The logits are the last position's only, as this library's generate computes them: Hugging Face's
own export (what transformers.js runs) returns [1, S, vocab], which would add a 64 x 768 x 50257
matmul to onnxruntime-web's prefill that ours does not do.
"""

import argparse
import json
import math
import os
import struct

import torch
import torch.nn as nn

torch.set_num_threads(1)


class Conv1D(nn.Module):
    """GPT-2's linear layer: weight in x out, y = x W + b."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


def gelu_tanh(x):
    # Written out: GPT-2's "gelu_new", and an ONNX graph of plain ops.
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads, self.dk = a.heads, a.hidden // a.heads
        self.c_attn = Conv1D(a.hidden, 3 * a.hidden)
        self.c_proj = Conv1D(a.hidden, a.hidden)

    def forward(self, x, past_k, past_v):
        b, s, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        split = lambda t: t.view(b, s, self.heads, self.dk).transpose(1, 2)  # b h s dk
        q, k, v = split(q), torch.cat([past_k, split(k)], dim=2), torch.cat([past_v, split(v)], dim=2)
        p = past_k.shape[2]
        # Query i sits at position p + i and may see keys 0 .. p + i.
        later = torch.arange(p + s)[None, :] > (torch.arange(s)[:, None] + p)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.dk)
        scores = scores.masked_fill(later, float("-inf"))
        z = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, s, d)
        return self.c_proj(z), k, v


class Mlp(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.c_fc = Conv1D(a.hidden, 4 * a.hidden)
        self.c_proj = Conv1D(4 * a.hidden, a.hidden)

    def forward(self, x):
        return self.c_proj(gelu_tanh(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.ln_1 = nn.LayerNorm(a.hidden, eps=1e-5)
        self.attn = Attention(a)
        self.ln_2 = nn.LayerNorm(a.hidden, eps=1e-5)
        self.mlp = Mlp(a)

    def forward(self, x, past_k, past_v):
        a, k, v = self.attn(self.ln_1(x), past_k, past_v)
        x = x + a
        return x + self.mlp(self.ln_2(x)), k, v


class Gpt2Step(nn.Module):
    """One decoding step: new tokens plus every layer's past keys/values -> the last position's
    logits and the presents (past + new)."""

    def __init__(self, a):
        super().__init__()
        self.wte = nn.Embedding(a.vocab, a.hidden)
        self.wpe = nn.Embedding(a.positions, a.hidden)
        self.h = nn.ModuleList([Block(a) for _ in range(a.layers)])
        self.ln_f = nn.LayerNorm(a.hidden, eps=1e-5)

    def forward(self, input_ids, *past):
        p, s = past[0].shape[2], input_ids.shape[1]
        x = self.wte(input_ids) + self.wpe(torch.arange(p, p + s))
        presents = []
        for i, block in enumerate(self.h):
            x, k, v = block(x, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        logits = self.ln_f(x[:, -1]) @ self.wte.weight.T
        return (logits, *presents)


def empty_past(a):
    return [torch.zeros(1, a.heads, 0, a.hidden // a.heads) for _ in range(2 * a.layers)]


@torch.no_grad()
def greedy(model, a, prompt):
    """The continuation an engine must reproduce: prefill, then one token per step through the cache.
    Also each step's runner-up id and top-1 minus top-2 logit: where a low-bit engine's tokens part
    from these, the margin there says how near a tie PyTorch itself was."""
    out, second, margin, past, ids = [], [], [], empty_past(a), torch.tensor([prompt])
    first = None
    for _ in range(a.new):
        logits, *past = model(ids, *past)
        first = logits[0].clone() if first is None else first
        top = logits[0].topk(2)
        nxt = int(logits[0].argmax())
        out.append(nxt)
        second.append(int(top.indices[1]))
        margin.append(float(top.values[0] - top.values[1]))
        ids = torch.tensor([[nxt]])
    return out, second, margin, first


def write_safetensors(path, state):
    header, offset, sizes = {"__metadata__": {"format": "pt"}}, 0, []
    for name, t in state.items():
        n = t.numel() * 4
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + n]}
        offset += n
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for t in state.values():  # tensor by tensor: no second copy of 500 MB in memory
            f.write(t.detach().contiguous().numpy().astype("<f4").tobytes())


def byte_tokens():
    """GPT-2's byte -> printable character table (the first 256 vocabulary entries)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    for name, default in [("layers", 12), ("hidden", 768), ("heads", 12), ("vocab", 50257), ("positions", 1024),
                          ("prompt", 64), ("new", 64), ("seed", 20261123), ("opset", 17)]:
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--key", default="", help="stored verbatim in manifest.json: the caller's cache key")
    a = p.parse_args()
    assert a.hidden % a.heads == 0 and a.prompt + a.new <= a.positions and a.vocab > 256
    os.makedirs(a.out_dir, exist_ok=True)
    at = lambda f: os.path.join(a.out_dir, f)
    if os.path.exists(at("manifest.json")):
        os.remove(at("manifest.json"))  # an interrupted run must not look complete

    torch.manual_seed(a.seed)
    model = Gpt2Step(a).eval()
    with torch.no_grad():
        for name, t in model.named_parameters():
            if name.endswith("bias"):
                t.zero_()
            elif ".ln_" in name or name.startswith("ln_f"):
                t.fill_(1.0)
            elif name.startswith(("wte", "wpe")):
                t.normal_(0.0, 0.02)
            else:
                # Wider than GPT-2's 0.02: at 0.02 greedy decoding of this prompt repeats one
                # token 11 times from the start (14 distinct in 64); at 0.1, 51 distinct.
                t.normal_(0.0, 0.1)

    g = torch.Generator().manual_seed(a.seed + 1)
    prompt = torch.randint(256, a.vocab - 1, (a.prompt,), generator=g).tolist()
    expected, second, margin, first_logits = greedy(model, a, prompt)
    # config.json's eos is the last id; this library's generate stops there, ORT's loop would not.
    assert a.vocab - 1 not in expected, "PyTorch's continuation contains the end-of-text token: change --seed"

    write_safetensors(at("model.safetensors"), dict(model.named_parameters()))
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": a.vocab, "n_positions": a.positions,
              "n_ctx": a.positions, "n_embd": a.hidden, "n_layer": a.layers, "n_head": a.heads, "layer_norm_epsilon": 1e-5,
              "activation_function": "gelu_new", "bos_token_id": a.vocab - 1, "eos_token_id": a.vocab - 1}
    with open(at("config.json"), "w") as f:
        json.dump(config, f, indent=1)
    tokens = byte_tokens() + [f"tok{i}" for i in range(256, a.vocab - 1)] + ["<|endoftext|>"]
    with open(at("vocab.json"), "w") as f:
        json.dump({t: i for i, t in enumerate(tokens)}, f)
    with open(at("merges.txt"), "w") as f:
        f.write("#version: 0.2\n")
    for name, ids in [("prompt.i32", prompt), ("expected.i32", expected), ("second.i32", second)]:
        with open(at(name), "wb") as f:
            f.write(struct.pack(f"<{len(ids)}i", *ids))
    with open(at("margin.f32"), "wb") as f:
        f.write(struct.pack(f"<{len(margin)}f", *margin))
    with open(at("logits0.f32"), "wb") as f:
        f.write(first_logits.numpy().astype("<f4").tobytes())

    names = [f"past_{kv}.{i}" for i in range(a.layers) for kv in ("key", "value")]
    example_past = [torch.zeros(1, a.heads, 2, a.hidden // a.heads) for _ in names]
    torch.onnx.export(
        model, (torch.tensor([prompt[:3]]), *example_past), at("model.onnx"), opset_version=a.opset,
        input_names=["input_ids", *names], output_names=["logits", *[n.replace("past", "present") for n in names]],
        dynamic_axes={"input_ids": {1: "sequence"}, **{n: {2: "past"} for n in names},
                      **{n.replace("past", "present"): {2: "total"} for n in names}})
    import onnx  # only after the export: torch's exporter does not need the package
    onnx.checker.check_model(at("model.onnx"))

    files = ["config.json", "model.safetensors", "vocab.json", "merges.txt", "model.onnx", "prompt.i32", "expected.i32",
             "second.i32", "margin.f32", "logits0.f32"]
    with open(at("manifest.json"), "w") as f:
        json.dump({"key": a.key, "args": vars(a), "torch": torch.__version__, "onnx": onnx.__version__, "files": files}, f, indent=1)
    sizes = ", ".join(f"{n} {os.path.getsize(at(n)) / 2**20:.0f} MiB" for n in ("model.safetensors", "model.onnx"))
    print(f"export.py: wrote {a.out_dir} ({sizes}); PyTorch's greedy continuation starts {expected[:6]}")


if __name__ == "__main__":
    main()
