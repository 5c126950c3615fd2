"""What each head of brown-bert attends to on held-out sentences -> heads.json's records and labels."""

import collections
import math

import torch

@torch.no_grad()
def head_stats(model, config, sents, wp):
    L, H = config["num_hidden_layers"], config["num_attention_heads"]
    keys = ["cls", "sep", "prev", "next", "self", "entropy", "entropy_norm"]
    acc = {(l, h): collections.defaultdict(float) for l in range(L) for h in range(H)}
    queries = 0
    for ids, _, _ in sents:
        n = len(ids)
        x = torch.tensor([ids])
        _, maps = model.hidden(x, torch.zeros_like(x), x == wp.pad, want_attention=True)
        q = torch.arange(1, n - 1)  # real tokens as queries
        queries += len(q)
        for l, w in enumerate(maps):
            for h in range(H):
                a = w[0, h, 1:n - 1]  # (n-2) x n
                s = acc[l, h]
                s["cls"] += float(a[:, 0].sum())
                s["sep"] += float(a[:, n - 1].sum())
                # prev from the second word on, next up to the second-last: never [CLS] / [SEP] again
                s["prev"] += float(a[torch.arange(1, len(q)), q[1:] - 1].sum()) / max(1, len(q) - 1) * len(q)
                s["next"] += float(a[torch.arange(len(q) - 1), q[:-1] + 1].sum()) / max(1, len(q) - 1) * len(q)
                s["self"] += float(a[torch.arange(len(q)), q].sum())
                ent = -(a * torch.log(a.clamp_min(1e-12))).sum(-1)
                s["entropy"] += float(ent.sum())
                s["entropy_norm"] += float((ent / math.log(n)).sum())
    heads = []
    for (l, h), s in acc.items():
        rec = {"layer": l, "head": h, **{k: round(s[k] / queries, 4) for k in keys}}
        rec["label"] = label(rec)
        heads.append(rec)
    return heads, queries


RULES = {
    "[CLS]/[SEP] sink": "cls + sep >= 0.5",
    "previous token": "prev >= 0.4 and prev is the largest of cls/sep/prev/next/self",
    "next token": "next >= 0.4 and next is the largest",
    "current token": "self >= 0.4 and self is the largest",
    "local": "prev + self + next >= 0.45 (the token and its two neighbours, whatever the split)",
    "broad": "none of the above (entropy_norm says how spread out)",
}


def label(r):
    parts = {"cls": r["cls"], "sep": r["sep"], "prev": r["prev"], "next": r["next"], "self": r["self"]}
    top = max(parts, key=parts.get)
    if r["cls"] + r["sep"] >= 0.5:
        return "[CLS]/[SEP] sink"
    for key, name in (("prev", "previous token"), ("next", "next token"), ("self", "current token")):
        if top == key and parts[key] >= 0.4:
            return name
    if r["prev"] + r["self"] + r["next"] >= 0.45:
        return "local"
    return "broad"
