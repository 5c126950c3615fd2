"""Export the trained checkpoint for the browser, in Hugging Face GPT-2 form.

Usage: export.py <build_dir> <out_dir>     (out_dir = web/models/brown-gpt2)

Writes model.safetensors (float16, HF GPT-2 tensor names and Conv1D in x out
layouts), config.json (HF GPT-2 keys), vocab.json, merges.txt; then reads the
file back with the independent reader and checks logits against the
in-memory model.
"""

import json
import os
import shutil
import struct
import sys

import numpy as np
import torch

from model import GPT2, GPTConfig, load_exported
from safetensors_read import read_safetensors
from safetensors_write import write_safetensors
from evaluate import val_windows

torch.set_num_threads(1)


def hf_config(cfg, eot):
    return {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": cfg.vocab_size,
        "n_positions": cfg.n_positions,
        "n_ctx": cfg.n_positions,
        "n_embd": cfg.n_embd,
        "n_layer": cfg.n_layer,
        "n_head": cfg.n_head,
        "n_inner": None,  # None means 4 * n_embd, as in HF
        "activation_function": "gelu_new",
        "layer_norm_epsilon": cfg.layer_norm_epsilon,
        "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
        "initializer_range": 0.02,
        "scale_attn_weights": True,
        "tie_word_embeddings": True,
        "bos_token_id": eot,
        "eos_token_id": eot,
        "torch_dtype": "float16",
    }


def main():
    build, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    ckpt = torch.load(os.path.join(build, "ckpt.pt"), map_location="cpu")
    cfg = GPTConfig(**ckpt["config"])
    model = GPT2(cfg)
    model.load_state_dict(ckpt["model"])
    model.eval()

    with open(os.path.join(build, "tokenizer", "vocab.json"), encoding="utf-8") as f:
        eot = json.load(f)["<|endoftext|>"]
    for name in ("vocab.json", "merges.txt"):
        shutil.copyfile(os.path.join(build, "tokenizer", name), os.path.join(out_dir, name))
    with open(os.path.join(out_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(hf_config(cfg, eot), f, indent=2)
        f.write("\n")

    # Our parameters already carry HF names and layouts (see model.py).
    state = model.state_dict()
    tensors = {k: v.detach().numpy().astype("<f2") for k, v in state.items()}
    st_path = os.path.join(out_dir, "model.safetensors")
    write_safetensors(st_path, tensors, {"format": "pt", "source": "tools/train/export.py",
                                          "training_steps": ckpt["summary"]["steps"]})

    # --- Verification with the independent reader -------------------------
    back, _ = read_safetensors(st_path)
    assert list(back) == list(tensors), "tensor names/order differ"
    for k, arr in tensors.items():
        assert back[k].shape == arr.shape and np.array_equal(back[k], arr), k
    reloaded = load_exported(out_dir)
    # Same network with float16-rounded weights, built in memory.
    rounded = GPT2(cfg)
    rounded.load_state_dict({k: v.half().float() for k, v in state.items()})
    rounded.eval()

    val = np.fromfile(os.path.join(build, "val.bin"), dtype=np.uint16)
    wins = val_windows(val, eot, cfg.n_positions)[:16]
    x = torch.zeros(len(wins), cfg.n_positions, dtype=torch.long)
    n = min(b - a - 1 for a, b in wins)
    for r, (a, b) in enumerate(wins):
        x[r, :n] = torch.from_numpy(val[a:a + n].astype(np.int64))
    x = x[:, :n]
    with torch.no_grad():
        l32, _, _ = model(x)
        l16, _, _ = rounded(x)
        lre, _, _ = reloaded(x)
    same = (lre - l16).abs().max().item()
    vs32 = (lre - l32).abs().max().item()
    p32, pre = torch.softmax(l32, -1), torch.softmax(lre, -1)
    prob_diff = (p32 - pre).abs().max().item()
    check = {"max_abs_logit_diff_vs_fp16_rounded_model": same,
             "max_abs_logit_diff_vs_fp32_model": vs32,
             "max_abs_prob_diff_vs_fp32_model": prob_diff,
             "positions_checked": int(x.numel()),
             "file_bytes": os.path.getsize(st_path)}
    print(json.dumps(check, indent=1))
    # Reloaded file must equal the fp16-rounded model up to float32 noise, and
    # differ from the float32 model only by float16 weight rounding.
    assert same < 1e-3, same
    assert vs32 < 0.1 and prob_diff < 5e-3, (vs32, prob_diff)
    with open(os.path.join(build, "export_check.json"), "w", encoding="utf-8") as f:
        json.dump(check, f, indent=1)


if __name__ == "__main__":
    main()
