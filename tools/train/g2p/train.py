"""Train the spelling-to-sound encoder-decoder on the CMUdict train split and export it.

Usage: train.py <build_dir> <out_dir> [--steps N]

Source: <s> letters </s>; target: phonemes </s>, fed to the decoder shifted right behind
decoder_start_token_id (</s>, as BART). A word with several pronunciations gives one example
each. Batches of about TOKENS_PER_BATCH target tokens, grouped by length; cross-entropy with
label smoothing; AdamW, linear warmup then cosine decay. One thread, fixed seeds: a rerun gives
the same weights. Exports model.safetensors (float16, BartForConditionalGeneration names; the
tied embeddings and LM head are stored once as model.shared.weight), config.json, vocab.json.
"""

import argparse
import json
import math
import os
import random
import shutil
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.dirname(HERE))  # tools/train: the shared safetensors writer/reader
from model import Bart  # noqa: E402
from safetensors_read import read_safetensors  # noqa: E402
from safetensors_write import write_safetensors  # noqa: E402
from vocab import Vocab  # noqa: E402

torch.set_num_threads(1)

ARCH = {"d_model": 128, "encoder_layers": 3, "decoder_layers": 3, "encoder_attention_heads": 4,
        "decoder_attention_heads": 4, "encoder_ffn_dim": 512, "decoder_ffn_dim": 512,
        "max_position_embeddings": 64}
STEPS = 4800
TOKENS_PER_BATCH = 2500
LR, WARMUP, WEIGHT_DECAY, LABEL_SMOOTHING = 5e-4, 400, 0.01, 0.1


def config(vocab):
    return {"architectures": ["BartForConditionalGeneration"], "model_type": "bart", **ARCH,
            "vocab_size": len(vocab.tokens), "activation_function": "gelu", "scale_embedding": False,
            "normalize_before": False, "add_final_layer_norm": False, "init_std": 0.02,
            "pad_token_id": vocab.pad, "bos_token_id": vocab.bos, "eos_token_id": vocab.eos,
            "decoder_start_token_id": vocab.eos, "forced_eos_token_id": vocab.eos,
            "max_length": ARCH["max_position_embeddings"], "num_beams": 1,
            "dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0, "torch_dtype": "float16",
            "task": "grapheme-to-phoneme"}


def load_pairs(path, vocab):
    with open(path) as f:
        return [(vocab.encode_word(w), vocab.encode_phonemes(p)) for w, prons in json.load(f) for p in prons]


def batches(pairs, rng):
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][1]), len(pairs[i][0]), rng.random()))
    out, cur = [], []
    for i in order:
        if cur and (len(cur) + 1) * (len(pairs[i][1]) + 1) > TOKENS_PER_BATCH:
            out.append(cur)
            cur = []
        cur.append(i)
    out.append(cur)
    rng.shuffle(out)
    return out


def tensors(pairs, idx, vocab):
    """(src, decoder input, target) padded tensors for a batch of pair indices."""
    src = [[vocab.bos] + pairs[i][0] + [vocab.eos] for i in idx]
    tgt = [pairs[i][1] + [vocab.eos] for i in idx]
    S, T = max(map(len, src)), max(map(len, tgt))
    pad = lambda rows, n, v: torch.tensor([r + [v] * (n - len(r)) for r in rows])
    dec_in = pad([[vocab.eos] + t[:-1] for t in tgt], T, vocab.pad)
    return pad(src, S, vocab.pad), dec_in, pad(tgt, T, -100)


def loss_on(model, pairs, vocab, idx_batches):
    total, count = 0.0, 0
    with torch.no_grad():
        for idx in idx_batches:
            src, dec_in, tgt = tensors(pairs, idx, vocab)
            logits = model(src, dec_in)
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100, reduction="sum").item()
            count += int((tgt != -100).sum())
    return total / count


def export(model, cfg, vocab, out_dir, build_dir, summary):
    os.makedirs(out_dir, exist_ok=True)
    tensors16 = {k: v.detach().numpy().astype(np.float16) for k, v in model.hf_state_dict().items()}
    path = os.path.join(out_dir, "model.safetensors")
    write_safetensors(path, tensors16, {"format": "pt"})
    back, _ = read_safetensors(path)
    assert all(np.array_equal(back[k], v) for k, v in tensors16.items()), "safetensors round trip"
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    vocab.save(os.path.join(out_dir, "vocab.json"))
    with open(os.path.join(build_dir, "train_summary.json"), "w") as f:
        json.dump(summary, f, indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=STEPS)
    args = ap.parse_args()
    torch.manual_seed(0)
    rng = random.Random(0)
    with open(os.path.join(args.build, "train.json")) as f:
        vocab = Vocab.from_data(json.load(f))
    cfg = config(vocab)
    train = load_pairs(os.path.join(args.build, "train.json"), vocab)
    val = load_pairs(os.path.join(args.build, "val.json"), vocab)
    val_batches = batches(val, random.Random(1))
    model = Bart(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": no_decay, "weight_decay": 0.0}], lr=LR)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / args.steps))))
    print(f"{len(train)} training pairs, {sum(p.numel() for p in model.parameters())} parameters", flush=True)
    step, epoch, t0, log = 0, 0, time.time(), []
    while step < args.steps:
        epoch += 1
        for idx in batches(train, rng):
            if step >= args.steps:
                break
            src, dec_in, tgt = tensors(train, idx, vocab)
            logits = model(src, dec_in)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100,
                                   label_smoothing=LABEL_SMOOTHING)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            if step % 200 == 0 or step == args.steps:
                model.eval()
                v = loss_on(model, val, vocab, val_batches)
                model.train()
                log.append({"step": step, "epoch": epoch, "train_loss": round(loss.item(), 4), "val_loss": round(v, 4),
                            "minutes": round((time.time() - t0) / 60, 2)})
                print(json.dumps(log[-1]), flush=True)
    summary = {"steps": args.steps, "epochs": epoch, "minutes": round((time.time() - t0) / 60, 1),
               "tokens_per_batch": TOKENS_PER_BATCH, "lr": LR, "warmup": WARMUP, "weight_decay": WEIGHT_DECAY,
               "label_smoothing": LABEL_SMOOTHING, "train_pairs": len(train), "log": log}
    export(model, cfg, vocab, args.out, args.build, summary)
    print(json.dumps({k: v for k, v in summary.items() if k != "log"}))


if __name__ == "__main__":
    main()
