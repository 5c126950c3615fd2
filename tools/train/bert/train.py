"""Pre-train the small BERT with masked LM on the Brown train split and export it.

Usage: train.py <build_dir> <out_dir> [--steps N]

Examples are one sentence, or two consecutive sentences of a document as a pair
([CLS] A [SEP] B [SEP], token types 0 then 1), at most 128 tokens, batched by length. Each step
masks 15 % of the real tokens (80 % -> [MASK], 10 % -> a random token, 10 % unchanged) and
computes the loss on those only. One thread, fixed seeds: a rerun gives the same weights.
Exports model.safetensors (float16, Hugging Face BertForMaskedLM names; the decoder is tied to
the word embeddings and not stored), config.json, vocab.txt and tokenizer_config.json.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.dirname(HERE))  # tools/train (after this folder): the shared safetensors reader/writer
from model import BertForMaskedLM  # noqa: E402
from safetensors_read import read_safetensors  # noqa: E402
from safetensors_write import write_safetensors  # noqa: E402
from wordpiece import WordPiece  # noqa: E402

torch.set_num_threads(1)

CONFIG = {
    "architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": 8000, "hidden_size": 160,
    "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 640, "hidden_act": "gelu",
    "max_position_embeddings": 128, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
    "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02,
    "position_embedding_type": "absolute", "torch_dtype": "float16",
}
MAX_LEN = CONFIG["max_position_embeddings"]
TOKENS_PER_BATCH = 3072
MASK_RATE = 0.15


def read_documents(path):
    """train.txt / val.txt: one sentence a line, a blank line between documents."""
    with open(path, encoding="utf-8") as f:
        return [[s for s in block.split("\n") if s.strip()] for block in f.read().split("\n\n") if block.strip()]


def make_examples(docs, wp, rng):
    """(ids, types) per example: a sentence alone, or with the next one as a pair (half the time)."""
    out = []
    for doc in docs:
        enc = [wp.encode(s)[:MAX_LEN - 3] for s in doc]
        i = 0
        while i < len(enc):
            a = enc[i]
            if i + 1 < len(enc) and rng.random() < 0.5 and len(a) + len(enc[i + 1]) + 3 <= MAX_LEN:
                b = enc[i + 1]
                out.append(([wp.cls] + a + [wp.sep] + b + [wp.sep], [0] * (len(a) + 2) + [1] * (len(b) + 1)))
                i += 2
            else:
                out.append(([wp.cls] + a + [wp.sep], [0] * (len(a) + 2)))
                i += 1
    return out


def batches(examples, rng):
    """Examples sorted by length, cut into batches of about TOKENS_PER_BATCH tokens, shuffled."""
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i][0]), rng.random()))
    out, cur = [], []
    for i in order:
        if cur and (len(cur) + 1) * len(examples[i][0]) > TOKENS_PER_BATCH:
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def collate(examples, idx, pad_id):
    n = max(len(examples[i][0]) for i in idx)
    ids = np.full((len(idx), n), pad_id, dtype=np.int64)
    types = np.zeros((len(idx), n), dtype=np.int64)
    for r, i in enumerate(idx):
        e_ids, e_types = examples[i]
        ids[r, :len(e_ids)] = e_ids
        types[r, :len(e_types)] = e_types
    return torch.from_numpy(ids), torch.from_numpy(types)


def mask_tokens(ids, wp, gen):
    """BERT's masking: returns (input ids, positions chosen, their original ids)."""
    special = (ids == wp.pad) | (ids == wp.cls) | (ids == wp.sep)
    chosen = (torch.rand(ids.shape, generator=gen) < MASK_RATE) & ~special
    if not chosen.any():
        chosen[0, 1] = True
    inp = ids.clone()
    r = torch.rand(ids.shape, generator=gen)
    inp[chosen & (r < 0.8)] = wp.mask
    rand_tok = torch.randint(5, CONFIG["vocab_size"], ids.shape, generator=gen)
    swap = chosen & (r >= 0.8) & (r < 0.9)
    inp[swap] = rand_tok[swap]
    return inp, chosen, ids[chosen]


def lr_at(step, steps, peak, warmup):
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup))))


def export(model, wp, out_dir, summary):
    os.makedirs(out_dir, exist_ok=True)
    tensors = {k: v.detach().to(torch.float16).numpy() for k, v in model.state_dict().items()}
    path = os.path.join(out_dir, "model.safetensors")
    write_safetensors(path, tensors, {"format": "pt"})
    back, _ = read_safetensors(path)
    assert sorted(back) == sorted(tensors), "tensor names changed on the way"
    for k, v in tensors.items():
        assert np.array_equal(back[k], v), k
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True, "tokenizer_class": "BertTokenizer", "model_max_length": MAX_LEN,
                   "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                   "mask_token": "[MASK]"}, f, indent=2)
    with open(os.path.join(out_dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(wp.vocab) + "\n")
    print(f"exported {len(tensors)} tensors, {os.path.getsize(path) / 1e6:.2f} MB", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("out")
    p.add_argument("--steps", type=int, default=2200)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=300)
    a = p.parse_args()
    torch.manual_seed(0)
    rng = random.Random(0)
    gen = torch.Generator().manual_seed(1)
    wp = WordPiece.load(os.path.join(a.build, "vocab.txt"))
    assert len(wp.vocab) == CONFIG["vocab_size"]
    examples = make_examples(read_documents(os.path.join(a.build, "train.txt")), wp, rng)
    n_tokens = sum(len(e[0]) for e in examples)
    print(f"{len(examples)} examples, {n_tokens} tokens", flush=True)
    model = BertForMaskedLM(CONFIG)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
    queue, step, seen, t0, log = [], 0, 0, time.time(), []
    running = None
    while step < a.steps:
        if not queue:
            queue = batches(examples, rng)
        ids, types = collate(examples, queue.pop(), wp.pad)
        inp, chosen, target = mask_tokens(ids, wp, gen)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a.steps, a.lr, a.warmup)
        h = model.hidden(inp, types, ids == wp.pad)
        loss = torch.nn.functional.cross_entropy(model.mlm_logits(h[chosen]), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        seen += int((ids != wp.pad).sum())
        running = loss.item() if running is None else 0.98 * running + 0.02 * loss.item()
        step += 1
        if step % 100 == 0 or step == a.steps:
            rec = {"step": step, "loss": round(running, 4), "epochs": round(seen / n_tokens, 3), "seconds": round(time.time() - t0, 1)}
            log.append(rec)
            print(json.dumps(rec), flush=True)
    summary = {"steps": a.steps, "tokens_per_batch": TOKENS_PER_BATCH, "peak_lr": a.lr, "warmup": a.warmup,
               "tokens_seen": seen, "train_tokens": n_tokens, "epochs": seen / n_tokens, "examples": len(examples),
               "parameters": n_params, "seconds": time.time() - t0, "final_loss": running, "log": log,
               "torch": torch.__version__}
    with open(os.path.join(a.build, "train_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    export(model, wp, a.out, summary)


if __name__ == "__main__":
    main()
