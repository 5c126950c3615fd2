"""Validation loss / perplexity of a model and of n-gram baselines.

Usage: evaluate.py <build_dir> <model_dir> <out.json> [<old_model_dir>]
  model_dir is an exported directory (config.json + model.safetensors), so
  the numbers are those of the weights we actually ship (float16).
  old_model_dir: the previously shipped model, scored on the same
  validation text with its own tokenizer, for the old-vs-new comparison.

Every token of the validation stream except the very first is predicted
exactly once, by every model, from the same left context:
  * the transformer sees windows of <= 128 tokens that start at a sentence's
    <|endoftext|> (as in training and in the demo) and hold whole sentences;
    consecutive windows share one token (last target = next first input);
  * the unigram / bigram baselines see 0 / 1 previous token.
Losses are mean negative log-likelihood in nats per token; perplexity is
exp(loss).  Tokenizers differ between models, so the card also gives
perplexity per word (see PER_WORD below), which compares across them.
"""

import json
import math
import os
import sys

import numpy as np
import torch

torch.set_num_threads(1)


def val_windows(stream, eot, ctx):
    """Cut the stream into windows [a, b) of at most ctx + 1 tokens; each
    window starts at a sentence start when it can and ends right after an
    <|endoftext|> (i.e. it also predicts the next sentence's marker)."""
    starts = np.flatnonzero(stream == eot).tolist() + [len(stream)]
    windows, a, si = [], 0, 0
    while a < len(stream) - 1:
        # Furthest sentence boundary reachable within ctx + 1 tokens.
        b = a + 1
        while si < len(starts) and starts[si] <= a:
            si += 1
        j = si
        while j < len(starts) and starts[j] + 1 - a <= ctx + 1:
            b = starts[j] + 1 if starts[j] < len(stream) else len(stream)
            j += 1
        if b == a + 1:  # a sentence longer than the context: cut it
            b = min(a + ctx + 1, len(stream))
        windows.append((a, b))
        a = b - 1
    return windows


@torch.no_grad()
def model_nll(model, stream, windows, batch=16):
    """Sum of -log p over all targets, and the number of targets."""
    ctx = max(b - a for a, b in windows) - 1
    total, count = 0.0, 0
    for i in range(0, len(windows), batch):
        chunk = windows[i:i + batch]
        x = torch.zeros(len(chunk), ctx, dtype=torch.long)
        y = torch.full((len(chunk), ctx), -1, dtype=torch.long)
        for r, (a, b) in enumerate(chunk):
            w = torch.from_numpy(stream[a:b].astype(np.int64))
            x[r, :b - a - 1] = w[:-1]
            y[r, :b - a - 1] = w[1:]
        logits, _, _ = model(x)
        logp = torch.log_softmax(logits.double(), dim=-1)
        mask = y >= 0
        total -= logp[mask].gather(-1, y[mask].unsqueeze(-1)).sum().item()
        count += int(mask.sum())
    return total, count


def unigram_nll(train, targets, vocab, k):
    counts = np.bincount(train, minlength=vocab).astype(np.float64) + k
    logp = np.log(counts / counts.sum())
    return -logp[targets].mean()


def bigram_table(train, vocab):
    pairs = train[:-1].astype(np.int64) * vocab + train[1:]
    return np.bincount(pairs, minlength=vocab * vocab).reshape(vocab, vocab)


def bigram_nll(table, prev, nxt, k):
    """Add-k: p(b | a) = (c(a, b) + k) / (c(a) + k V)."""
    vocab = table.shape[0]
    row = table.sum(axis=1).astype(np.float64)
    p = (table[prev, nxt] + k) / (row[prev] + k * vocab)
    return -np.log(p).mean()


def fit_k(train, vocab, fn):
    """Choose the smoothing constant on the last 5 % of the TRAIN stream
    (fitting on the first 95 %), never on validation data."""
    cut = int(len(train) * 0.95)
    fit, held = train[:cut], train[cut:]
    grid = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0]
    scores = {k: fn(fit, held, vocab, k) for k in grid}
    return min(scores, key=scores.get), scores


def baselines(train, val, vocab):
    train = train.astype(np.int64)
    val = val.astype(np.int64)
    ku, _ = fit_k(train, vocab, lambda f, h, v, k: unigram_nll(f, h[1:], v, k))
    kb, _ = fit_k(train, vocab,
                  lambda f, h, v, k: bigram_nll(bigram_table(f, v), h[:-1], h[1:], k))
    uni = unigram_nll(train, val[1:], vocab, ku)
    bi = bigram_nll(bigram_table(train, vocab), val[:-1], val[1:], kb)
    return {"unigram": {"k": ku, "loss": uni, "perplexity": math.exp(uni)},
            "bigram": {"k": kb, "loss": bi, "perplexity": math.exp(bi)}}


def score_model(model_dir, build, val=None):
    """Loss of an exported model on the validation text, per token and per
    word.  val: the token stream if already encoded with this model's
    tokenizer; otherwise val.txt is encoded here exactly as encode_splits.py
    does (so another tokenizer, e.g. the previous model's, sees the same
    text split into its own tokens)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from exported import load_model, shape
    from bpe import Tokenizer
    from encode_splits import encode_file
    model = load_model(model_dir)
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    if val is None:
        val = encode_file(Tokenizer.from_dir(model_dir), os.path.join(build, "val.txt"))
    with open(os.path.join(build, "split.json"), encoding="utf-8") as f:
        stats = json.load(f)["val_stats"]
    dim = shape(cfg)
    windows = val_windows(val, cfg["eos_token_id"], dim["context"])
    total, count = model_nll(model, val, windows)
    assert count == len(val) - 1, (count, len(val))
    loss = total / count
    return {"loss": loss, "perplexity": math.exp(loss),
            "total_nats": total, "tokens_predicted": count, "windows": len(windows),
            "tokens_per_word": count / stats["words"],
            "words": stats["words"], "words_no_punct": stats["words_no_punct"],
            "loss_per_word": total / stats["words"],
            "perplexity_per_word": math.exp(total / stats["words"]),
            "perplexity_per_word_no_punct": math.exp(total / stats["words_no_punct"]),
            "vocab_size": cfg["vocab_size"], "n_embd": dim["width"],
            "n_layer": dim["layers"], "n_head": dim["heads"], "kv_heads": dim["kv_heads"],
            "model_type": cfg.get("model_type", "gpt2"),
            "parameters": sum(p.numel() for p in model.parameters()),
            "file_bytes": os.path.getsize(os.path.join(model_dir, "model.safetensors")),
            "weights": "exported float16 safetensors"}


PER_WORD = ("per word = exp(total nats over the validation stream / number of corpus "
            "word tokens in the validation documents), where the total is summed over "
            "every predicted token (every token of the stream but the first, the "
            "<|endoftext|> before each next sentence included) and the corpus word "
            "tokens are the `word/tag` items of the tagged Brown files, punctuation "
            "tokens included; the no-punct variant divides by the word tokens that "
            "contain a letter or digit")


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    build, model_dir, out_path = sys.argv[1:4]
    old_dir = sys.argv[4] if len(sys.argv) > 4 else None
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    train = np.fromfile(os.path.join(build, "train.bin"), dtype=np.uint16)
    val = np.fromfile(os.path.join(build, "val.bin"), dtype=np.uint16)

    model = score_model(model_dir, build, val)
    result = {"val_tokens_predicted": model["tokens_predicted"],
              "val_windows": model["windows"], "per_word_definition": PER_WORD,
              "model": model}
    if old_dir:
        result["old_model"] = score_model(old_dir, build)
    result.update(baselines(train, val, cfg["vocab_size"]))
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    for name in ("model", "old_model", "unigram", "bigram"):
        r = result.get(name)
        if r is None:
            continue
        extra = (f"  per word: perplexity {r['perplexity_per_word']:.2f} "
                 f"({r['tokens_per_word']:.3f} tokens/word)" if "total_nats" in r else "")
        print(f"{name:9s} loss {r['loss']:.4f} nats/token  perplexity {r['perplexity']:.2f}{extra}")


if __name__ == "__main__":
    main()
