"""Export a trained Llama checkpoint for the browser, in Hugging Face LlamaForCausalLM form.

Usage: export_llama.py <build_dir> <ckpt.pt> <out_dir>     (out_dir = web/models/brown-llama)

Writes model.safetensors (float16, HF names, nn.Linear [out, in] layouts, no lm_head: the
embeddings are tied), config.json, generation_config.json, and the brown-gpt2 tokenizer
(build_dir/tokenizer's vocab.json + merges.txt) as tokenizer.json + tokenizer_config.json;
then reads the file back with the independent reader and checks logits against the
in-memory model, and the tokenizer.json against the original files on the validation text.
"""

import json
import os
import sys

import numpy as np
import torch

from bpe import EOT, Tokenizer
from evaluate import val_windows
from llama_model import Llama, LlamaConfig, hf_config, load_exported
from safetensors_read import read_safetensors
from safetensors_write import write_safetensors

torch.set_num_threads(1)


def byte_level_tokenizer_json(vocab, merges, eot):
    """GPT-2's byte-level BPE as a tokenizer.json: ByteLevel pre-tokenizer with GPT-2's split
    pattern and no prefix space, BPE model, ByteLevel decoder; <|endoftext|> is a special token,
    put before every sequence by the post-processor (the model was trained on
    "<|endoftext|> sentence", as brown-gpt2)."""
    special = {"id": vocab[EOT], "content": EOT, "single_word": False, "lstrip": False,
               "rstrip": False, "normalized": False, "special": True}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}
    bos = {"SpecialToken": {"id": EOT, "type_id": 0}}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [special],
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}},
                     bos, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {EOT: {"id": EOT, "ids": [eot], "tokens": [EOT]}},
        },
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }


def write_json(path, obj, compact=False):
    """compact: one line, for tokenizer.json (it ships in the package: 0.5 MB indented)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False,
                  **({"separators": (",", ":")} if compact else {"indent": 1}))
        f.write("\n")


def write_tokenizer(build, out_dir, context):
    tok = Tokenizer.from_dir(os.path.join(build, "tokenizer"))
    merges = sorted(tok.ranks, key=tok.ranks.get)
    write_json(os.path.join(out_dir, "tokenizer.json"),
               byte_level_tokenizer_json(tok.encoder, merges, tok.eot_id), compact=True)
    write_json(os.path.join(out_dir, "tokenizer_config.json"), {
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": EOT, "eos_token": EOT,
        "unk_token": None, "add_prefix_space": False, "model_max_length": context,
        "clean_up_tokenization_spaces": False})
    write_json(os.path.join(out_dir, "generation_config.json"),
               {"bos_token_id": tok.eot_id, "eos_token_id": tok.eot_id})
    # The written tokenizer.json, read back, must tokenize the validation text as the original.
    again = Tokenizer.from_dir(out_dir)
    with open(os.path.join(build, "val.txt"), encoding="utf-8") as f:
        lines = [ln for ln in f.read().split("\n") if ln][:500]
    assert all(again.encode_ordinary(ln) == tok.encode_ordinary(ln) for ln in lines)
    return tok.eot_id


def check_export(model, cfg, state, out_dir, build, eot):
    """The file read back = the float16-rounded model; it differs from float32 by rounding only."""
    st_path = os.path.join(out_dir, "model.safetensors")
    reloaded = load_exported(out_dir)
    rounded = Llama(cfg)
    rounded.load_state_dict({k: v.half().float() for k, v in state.items()})
    rounded.eval()
    val = np.fromfile(os.path.join(build, "val.bin"), dtype=np.uint16)
    wins = val_windows(val, eot, cfg.max_position_embeddings)[:16]
    n = min(b - a - 1 for a, b in wins)
    x = torch.stack([torch.from_numpy(val[a:a + n].astype(np.int64)) for a, _ in wins])
    with torch.no_grad():
        l32, l16, lre = model(x)[0], rounded(x)[0], reloaded(x)[0]
    check = {"max_abs_logit_diff_vs_fp16_rounded_model": (lre - l16).abs().max().item(),
             "max_abs_logit_diff_vs_fp32_model": (lre - l32).abs().max().item(),
             "max_abs_prob_diff_vs_fp32_model":
                 (torch.softmax(l32, -1) - torch.softmax(lre, -1)).abs().max().item(),
             "positions_checked": int(x.numel()), "file_bytes": os.path.getsize(st_path)}
    print(json.dumps(check, indent=1))
    assert check["max_abs_logit_diff_vs_fp16_rounded_model"] < 1e-3, check
    assert check["max_abs_logit_diff_vs_fp32_model"] < 0.1, check
    assert check["max_abs_prob_diff_vs_fp32_model"] < 5e-3, check
    assert check["file_bytes"] <= 8 * 1024 * 1024, check
    return check


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    build, ckpt_path, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    ckpt = torch.load(ckpt_path, map_location="cpu")
    assert ckpt.get("arch") == "llama", ckpt_path
    cfg = LlamaConfig(**ckpt["config"])
    model = Llama(cfg)
    model.load_state_dict(ckpt["model"])
    model.eval()

    eot = write_tokenizer(build, out_dir, cfg.max_position_embeddings)
    write_json(os.path.join(out_dir, "config.json"), hf_config(cfg, eot, "float16"))
    # Our parameters already carry HF names and layouts (see llama_model.py).
    state = model.state_dict()
    tensors = {k: v.detach().numpy().astype("<f2") for k, v in state.items()}
    st_path = os.path.join(out_dir, "model.safetensors")
    write_safetensors(st_path, tensors, {"format": "pt", "source": "tools/train/export_llama.py",
                                          "training_steps": ckpt["summary"]["steps"]})
    back, _ = read_safetensors(st_path)
    assert list(back) == list(tensors), "tensor names/order differ"
    assert all(np.array_equal(back[k], a) for k, a in tensors.items())
    check = check_export(model, cfg, state, out_dir, build, eot)
    check["checkpoint"] = os.path.basename(ckpt_path)
    check["steps"] = ckpt["summary"]["steps"]
    run = os.path.dirname(ckpt_path)
    with open(os.path.join(run, "export_check.json"), "w", encoding="utf-8") as f:
        json.dump(check, f, indent=1)
    with open(os.path.join(run, "export_summary.json"), "w", encoding="utf-8") as f:
        json.dump(exported_summary(ckpt["summary"], build, cfg), f, indent=1)


def exported_summary(summary, build, cfg):
    """The training summary of the exported weights: the run's (train.py's train_summary.json)
    for its last checkpoint, completed from the arguments for an intermediate one."""
    s = dict(summary)
    a = s["args"]
    train_tokens = os.path.getsize(os.path.join(build, "train.bin")) // 2
    s.setdefault("batch", a["batch"])
    s.setdefault("context", cfg.max_position_embeddings)
    s.setdefault("tokens_seen", s["steps"] * a["batch"] * cfg.max_position_embeddings)
    s.setdefault("train_tokens", train_tokens)
    s.setdefault("epochs", s["tokens_seen"] / train_tokens)
    s.setdefault("torch", torch.__version__)
    return s


if __name__ == "__main__":
    main()
