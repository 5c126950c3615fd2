"""Masked-LM loss, perplexity and accuracy of brown-bert on the held-out documents, against a
unigram baseline on exactly the same masked positions (fixed, seeded masking: every real token
replaced by [MASK] with probability 0.15, at least one per sentence)."""

import math
import os

import numpy as np
import torch

from train import MAX_LEN, read_documents


def val_sentences(build, wp):
    """(ids, document index) for each validation sentence, as [CLS] sentence [SEP]."""
    out = []
    for d, doc in enumerate(read_documents(os.path.join(build, "val.txt"))):
        for s in doc:
            ids = wp.encode(s)[:MAX_LEN - 2]
            if ids:
                out.append(([wp.cls] + ids + [wp.sep], d, s))
    return out


def mask_fixed(ids, wp, rng):
    """The evaluation's masking: each real token replaced by [MASK] with probability 0.15 (at least one)."""
    cand = list(range(1, len(ids) - 1))
    pos = [i for i in cand if rng.random() < 0.15] or [cand[int(rng.random() * len(cand))]]
    inp = list(ids)
    for p in pos:
        inp[p] = wp.mask
    return inp, pos, [ids[p] for p in pos]


@torch.no_grad()
def masked_lm_eval(model, sents, wp, unigram_logp, rng):
    total = right = n = 0
    uni_total = uni_right = 0
    top_unigram = int(np.argmax(unigram_logp))
    examples = []
    for ids, _, text in sents:
        inp, pos, tgt = mask_fixed(ids, wp, rng)
        x = torch.tensor([inp])
        h = model.hidden(x, torch.zeros_like(x), x == wp.pad)
        logits = model.mlm_logits(h[0, pos])
        logp = torch.log_softmax(logits, -1)
        t = torch.tensor(tgt)
        total += float(-logp[torch.arange(len(tgt)), t].sum())
        right += int((logits.argmax(-1) == t).sum())
        uni_total += float(-unigram_logp[tgt].sum())
        uni_right += sum(1 for v in tgt if v == top_unigram)
        n += len(tgt)
        examples.append((inp, pos, tgt, text))
    return {"masked_tokens": n, "sentences": len(sents),
            "loss": total / n, "perplexity": math.exp(total / n), "accuracy": right / n,
            "unigram_loss": uni_total / n, "unigram_perplexity": math.exp(uni_total / n), "unigram_accuracy": uni_right / n,
            "unigram_top_token": wp.vocab[top_unigram]}, examples


def unigram(build, wp):
    """Train-split token frequencies (add-one smoothed), specials excluded."""
    counts = np.ones(len(wp.vocab))
    for doc in read_documents(os.path.join(build, "train.txt")):
        for s in doc:
            for i in wp.encode(s):
                counts[i] += 1
    counts[[wp.pad, wp.cls, wp.sep, wp.mask]] = 0
    return np.log(counts / counts.sum() + 1e-30)
