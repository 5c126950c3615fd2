"""PyTorch's greedy continuation of the generate workload's model with its weights as this library holds
them at loadModel's dtype 'f16', 'q8' and 'q4', for the bench to check our low-bit
engines' tokens against the same weights rather than against float32.

Usage: /usr/bin/python3 lowbit_reference.py OUT_DIR --source SRC_DIR --source-key KEY [--dtypes f16,q8,q4] [--quantizer SHA] [--key KEY]

Run by bench/generate/workload.mjs (cached like export.py's folder) into build/bench-generate-lowbit/.
The weights go through tests/fixtures/lowbit_quant.py, a quantizer written from the Q8_0 / Q4_0
definitions that reproduces the library's stored weights bit for bit (checked there): f16 rounds
every matrix and table; q8 holds the block matrices and the tied token table as Q8_0 and keeps the
position table as stored; q4 holds the block matrices as Q4_0 and the token table as Q8_0. At q8 and
q4 each weight product's input rows are quantized per block of 32 first (max|x| / 127, round half to
even), as the core's integer products do, the LM head's included. Everything else is float64: the
reference is the model on those weights without float32's rounding, so our engine's distance from it
is float32 rounding plus, at q8/q4, the activation codes a float32 run rounds the other way where
x / d lies within ~1e-4 of a tie (the closest such distance is recorded).

Writes OUT_DIR/<dtype>.json for each dtype: ids (the greedy continuation through the KV cache, as
export.py's), second and margin (per step the runner-up id and the top-1 minus top-2 logit),
top_ids and top_logits (per step the 8 highest logits), logits (the prompt's last-position logits),
float32 (the same model run in float32: its greedy ids, and its prompt logits' max and rms
|difference| from these), tie_margin and quantized (the closest any quantized activation came to a
rounding tie, in steps, and how many were quantized), seconds (float64 run); then manifest.json
(written last).
"""

import argparse
import json
import os
import struct
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fixtures"))
import export  # noqa: E402  (the workload's model and greedy loop)
import int8_reference  # noqa: E402  (its loader of the export's safetensors)
import lowbit_quant as lq  # noqa: E402

torch.set_num_threads(1)
TOP = 8  # logits kept per step


def role(name):
    """lowbit_quant's role of a parameter of export.Gpt2Step (Hugging Face GPT-2 names)."""
    if name == "wte.weight":
        return "table"
    if name == "wpe.weight":
        return "position"
    if name.endswith(".weight") and ".ln_" not in name and not name.startswith("ln_"):
        return "conv1d"
    return "vector"


class QuantizedInput(torch.nn.Module):
    """The final LayerNorm's output quantized per block of 32, so that the tied LM head's product
    (export.py: ln_f(x) @ wte.T) is the quantized product. The quantizer computes q @ w.T; with
    w the identity that is q itself, exactly (each sum is one product by 1 and zeros)."""

    def __init__(self, inner, quantizer, width):
        super().__init__()
        self.inner, self.quantizer = inner, quantizer
        self.register_buffer("eye", torch.eye(width, dtype=torch.float64))  # a buffer: .float() converts it

    def forward(self, x):
        return self.quantizer(self.inner(x), self.eye)


def held_model(src, dtype):
    """export.Gpt2Step in float64 on the weights a model loaded with `dtype` holds; at q8/q4 also
    the activation quantizer every weight product goes through (else None)."""
    torch.set_default_dtype(torch.float64)  # the model's parameters and export.py's empty past
    model, a = int8_reference.load(src)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(lq.held(p.float(), dtype, role(name)))  # the checkpoint's values are float32
    if dtype not in ("q8", "q4"):
        return model, a, None
    quantizer = lq.ActivationQuantizer()
    for m in model.modules():
        if isinstance(m, export.Conv1D):  # y = x W + b with W in x out; the quantizer takes out x in
            m.forward = (lambda layer: lambda x: quantizer(x, layer.weight.T) + layer.bias)(m)
    model.ln_f = QuantizedInput(model.ln_f, quantizer, a.hidden)
    return model, a, quantizer


class TopLogits:
    """The model as export.greedy calls it, keeping each call's TOP highest logits and their ids: where
    an engine's token differs, how far below the top its own choice was."""

    def __init__(self, model):
        self.model, self.ids, self.values = model, [], []

    def __call__(self, ids, *past):
        out = self.model(ids, *past)
        top = out[0][0].topk(TOP)
        self.ids.append(top.indices.tolist())
        self.values.append(top.values.tolist())
        return out


def float32_run(model, a, prompt, logits):
    """The same model run in float32 (converted in place): its greedy ids, and the max and rms
    |difference| of its prompt logits from float64's. How far float32's rounding alone (and the
    activation codes it rounds the other way) moves them, and where that alone parts the tokens."""
    model.float()
    torch.set_default_dtype(torch.float32)
    ids, _, _, first = export.greedy(model, a, prompt)
    d = (first.double() - logits).abs()
    return {"ids": ids, "max": d.max().item(), "rms": d.pow(2).mean().sqrt().item()}


def reference(src, dtype):
    start = time.perf_counter()
    model, a, quantizer = held_model(src, dtype)
    prompt = list(struct.unpack(f"<{a.prompt}i", open(os.path.join(src, "prompt.i32"), "rb").read()))
    top = TopLogits(model)
    ids, second, margin, first = export.greedy(top, a, prompt)
    r = {"dtype": dtype, "ids": ids, "second": second, "margin": margin, "top_ids": top.ids, "top_logits": top.values,
         "logits": first.tolist(), "tie_margin": quantizer.closest if quantizer else None,
         "quantized": quantizer.count if quantizer else 0}
    r["seconds"] = round(time.perf_counter() - start, 1)  # the reference itself; the float32 rerun is a check
    r["float32"] = float32_run(model, a, prompt, first)
    return r


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    p.add_argument("--source", required=True, help="export.py's folder")
    p.add_argument("--source-key", required=True, help="its manifest's key (the cache key covers it)")
    p.add_argument("--dtypes", default="f16,q8,q4")
    p.add_argument("--quantizer", default="", help="lowbit_quant.py's digest (only in the cache key)")
    p.add_argument("--key", default="", help="stored verbatim in manifest.json: the caller's cache key")
    a = p.parse_args()
    dtypes = a.dtypes.split(",")
    assert all(d in ("f16", "q8", "q4") for d in dtypes), a.dtypes
    os.makedirs(a.out_dir, exist_ok=True)
    manifest = os.path.join(a.out_dir, "manifest.json")
    if os.path.exists(manifest):
        os.remove(manifest)  # an interrupted run must not look complete
    source = json.load(open(os.path.join(a.source, "manifest.json")))
    assert source["key"] == a.source_key, "the source changed"
    new = source["args"]["new"]
    expected = list(struct.unpack(f"<{new}i", open(os.path.join(a.source, "expected.i32"), "rb").read()))
    lines = []
    for dtype in dtypes:
        r = reference(a.source, dtype)
        with open(os.path.join(a.out_dir, f"{dtype}.json"), "w") as f:
            json.dump(r, f)
        same = next((i for i, (x, y) in enumerate(zip(r["ids"], expected)) if x != y), len(expected))
        tie = f", closest tie {r['tie_margin']:.1e} steps in {r['quantized']} activations" if r["tie_margin"] is not None else ""
        f32 = r["float32"]
        own = next((i for i, (x, y) in enumerate(zip(r["ids"], f32["ids"])) if x != y), len(expected))
        lines.append(f"{dtype} {r['seconds']} s, least margin {min(r['margin']):.2e}, {same} leading ids = float32 PyTorch's{tie}; "
                     f"run in float32: prompt logits max {f32['max']:.1e}, rms {f32['rms']:.1e} away, {own} leading ids equal")
    with open(manifest, "w") as f:
        json.dump({"key": a.key, "args": vars(a), "torch": torch.__version__, "files": [f"{d}.json" for d in dtypes]}, f, indent=1)
    print(f"lowbit_reference.py: wrote {a.out_dir}: " + "; ".join(lines))


if __name__ == "__main__":
    main()
