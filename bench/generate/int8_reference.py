"""A check of the 8-bit onnxruntime-web peer's graph (quantize8.py's model.onnx): the generate
workload's PyTorch model with onnxruntime's dynamic int8 quantization simulated — weights int8
per tensor (symmetric, scale max|w| / 127), activations quantized per call as DynamicQuantizeLinear
does (uint8, the range stretched to include 0, round half to even), integer products exact in
float64, the two embedding tables read through int8. Writes OUT_JSON with its greedy ids, their
top-2 margins and the prompt's last-position logits, for int8_check.mjs to compare with the graph.

Usage: /usr/bin/python3 bench/generate/int8_reference.py [SRC_DIR] [OUT_JSON]
  (defaults: build/bench-generate, build/bench-generate-int8/reference.json; about 40 s)
"""

import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export  # noqa: E402  (the workload's own module and greedy loop)


def load(src):
    """The exported model with its safetensors weights, and the export's arguments."""
    args = json.load(open(os.path.join(src, "manifest.json")))["args"]
    a = type("Args", (), args)
    raw = open(os.path.join(src, "model.safetensors"), "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, base = json.loads(raw[8:8 + n]), 8 + n
    model = export.Gpt2Step(a).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            s, e = header[name]["data_offsets"]
            p.copy_(torch.from_numpy(np.frombuffer(raw[base + s:base + e], dtype="<f4").reshape(header[name]["shape"]).copy()))
    return model, a


def int8_weight(w):
    scale = w.abs().max() / 127
    return torch.clamp(torch.round(w / scale), -127, 127).double(), scale.double()


def dynamic_uint8(x):
    """DynamicQuantizeLinear: x ~ (q - zero) * scale over the whole tensor, q in 0..255."""
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = torch.tensor((hi - lo) / 255, dtype=torch.float32)
    zero = torch.clamp(torch.round(torch.tensor(-lo, dtype=torch.float32) / scale), 0, 255)
    return (torch.clamp(torch.round(x / scale) + zero, 0, 255) - zero).double(), scale.double()


def int8_matmul(x, w):
    xq, sx = dynamic_uint8(x)
    wq, sw = int8_weight(w)
    return ((xq @ wq) * (sx * sw)).float()


class DynamicallyQuantized(torch.nn.Module):
    """A module's output as DynamicQuantizeLinear leaves it, (q - zero) * scale: put on ln_f, the
    tied LM head's product with the int8 table below is the int8 graph's product exactly."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        q, scale = dynamic_uint8(self.inner(x))
        return (q * scale).float()


def quantize(model):
    """Every Conv1D through int8_matmul; the embedding tables (and so the tied LM head) through
    int8; the LM head's input through DynamicQuantizeLinear."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, export.Conv1D):
                m.forward = (lambda layer: lambda x: int8_matmul(x, layer.weight) + layer.bias)(m)
        for emb in (model.wte, model.wpe):
            q, s = int8_weight(emb.weight.detach())
            emb.weight.copy_((q * s).float())
    model.ln_f = DynamicallyQuantized(model.ln_f)


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "bench-generate")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "build", "bench-generate-int8", "reference.json")
    model, a = load(src)
    quantize(model)
    prompt = list(struct.unpack(f"<{a.prompt}i", open(os.path.join(src, "prompt.i32"), "rb").read()))
    ids, _, margin, first = export.greedy(model, a, prompt)
    with open(out, "w") as f:
        json.dump({"ids": ids, "margin": margin, "logits": first.tolist()}, f)
    print(f"int8_reference.py: wrote {out}; greedy ids start {ids[:6]}, first margin {margin[0]:.4f}")


if __name__ == "__main__":
    main()
