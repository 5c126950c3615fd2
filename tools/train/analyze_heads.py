"""Measure what every attention head does on held-out sentences.

Usage: analyze_heads.py <build_dir> <model_dir> <out.json>

Each held-out sentence is fed as "<|endoftext|> + sentence" (as in the demo)
to the exported float16 model.  For every query position t >= 2 (so that the
previous token, the first token and the current token are three different
keys) we read the head's attention row A[t, 0..t] and average over all such
queries of all sentences:

  prev      A[t, t-1]          attention to the previous token
  first     A[t, 0]            attention to position 0 (the <|endoftext|>)
  self      A[t, t]            attention to the current token
  punct     sum of A[t, j] over keys j >= 1 that are punctuation tokens
  punct_uniform  what `punct` would be if the head attended uniformly
  entropy   -sum_j A[t, j] ln A[t, j]  (nats), and entropy / ln(t + 1)
  local     A[t, t] + A[t, t-1] + A[t, t-2]  (the three most recent keys;
            at t = 2 the third one is position 0), and local_uniform, what
            uniform attention would give
  argmax_*  how often the single most-attended key is prev / first / self
  first_by_position   `first` separately for queries at t = 2-9, 10-19, 20+

A head is labelled by the first rule that matches.  The thresholds are fixed
here and applied to every head alike; the argmax rule for sinks and the local
rule were added after a first look at the trained model, because mean shares
alone called every head "broad" although several show a clear, consistent
picture (a column at position 0, or a band along the diagonal):
  previous-token head     prev  >= 0.40 and prev is its largest share
  induction/copy head     induction >= 0.25 (see below): on a sentence said
                          twice, a query in the second copy looks at the token
                          that FOLLOWED its own earlier occurrence, i.e. the
                          head finds "what came next last time" and copies it
  first-token/sink head   position 0 is the most-attended key for >= 90 % of
                          queries, or first >= 0.50 and first is its largest share
  current-token head      self  >= 0.40 and self is its largest share
  punctuation head        punct >= 0.30, punct >= 3 x punct_uniform and
                          punct is its largest share
  local head              local >= 0.50 (and >= 2 x local_uniform)
  broad                   anything else (spread out: see its entropy)
The induction rule comes second because such a head, given ordinary text with
nothing to copy, usually rests on position 0 and would otherwise read as a
sink.

Repeated text (induction test): each of the first N_REPEAT held-out sentences
of MIN_TOKENS..MAX_REPEAT tokens is fed as  EOT s_1..s_n EOT s_1..s_n.  For
the query at the second copy of s_i (i = 1..n-1):
  induction  attention to the first copy's s_{i+1} (the token right after
             the earlier occurrence of the query token)
  duplicate  attention to the first copy's s_i (the earlier occurrence itself)
  argmax_induction  how often s_{i+1} is the single most-attended key
  induction_uniform what uniform attention would give (mean of 1/(t+1))
and the model's loss on s_2..s_n in the first copy vs in the second copy
(a model that copies predicts the second copy far better).
"""

import json
import os
import string
import sys

import numpy as np
import torch

torch.set_num_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer  # noqa: E402
from exported import dims, load_model  # noqa: E402

N_SENTENCES = 500      # first 500 usable validation sentences
MIN_TOKENS = 8         # skip headlines / fragments
N_REPEAT = 300         # sentences for the repeated-text (induction) test
MAX_REPEAT = 62        # EOT s EOT s must fit the 128-token context
PUNCT = set(string.punctuation)
RULES = {
    "previous-token head": "prev >= 0.40 and prev is the largest of prev/first/self/punct",
    "induction/copy head": "induction >= 0.25 (sentence said twice: attention from each token "
                           "of the second copy to the token after its first occurrence)",
    "first-token/sink head": "argmax_first >= 0.90, or first >= 0.50 and first is the largest",
    "current-token head": "self >= 0.40 and self is the largest",
    "punctuation head": "punct >= 0.30 and punct >= 3 * punct_uniform and punct is the largest",
    "local head": "local (attention on t, t-1, t-2) >= 0.50 and >= 2 * local_uniform",
    "broad": "none of the above",
}


def is_punct_token(tok, i):
    text = tok.token_bytes(i).decode("utf-8", errors="replace").strip()
    return i != tok.eot_id and bool(text) and all(c in PUNCT for c in text)


def classify(m):
    shares = {"prev": m["prev"], "first": m["first"], "self": m["self"], "punct": m["punct"]}
    top = max(shares, key=shares.get)
    if top == "prev" and m["prev"] >= 0.40:
        return "previous-token head"
    if m["induction"] >= 0.25:
        return "induction/copy head"
    if m["argmax_first"] >= 0.90 or (top == "first" and m["first"] >= 0.50):
        return "first-token/sink head"
    if top == "self" and m["self"] >= 0.40:
        return "current-token head"
    if top == "punct" and m["punct"] >= 0.30 and m["punct"] >= 3 * m["punct_uniform"]:
        return "punctuation head"
    if m["local"] >= 0.50 and m["local"] >= 2 * m["local_uniform"]:
        return "local head"
    return "broad"


def held_out_sentences(build, tok, ctx):
    out = []
    with open(os.path.join(build, "val.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            ids = [tok.eot_id] + tok.encode_ordinary(line)
            if len(ids) - 1 >= MIN_TOKENS:
                out.append(ids[:ctx])
            if len(out) == N_SENTENCES:
                break
    return out


def repeat_sentences(build, tok):
    out = []
    with open(os.path.join(build, "val.txt"), encoding="utf-8") as f:
        for line in f:
            ids = tok.encode_ordinary(line.strip()) if line.strip() else []
            if MIN_TOKENS <= len(ids) <= MAX_REPEAT:
                out.append(ids)
            if len(out) == N_REPEAT:
                break
    return out


@torch.no_grad()
def repeat_test(model, tok, sentences):
    """Induction scores per head [L, H] and first- vs second-copy loss."""
    L, H, _ = dims(model)
    ind, dup, am_ind = np.zeros((L, H)), np.zeros((L, H)), np.zeros((L, H))
    uniform, n_q = 0.0, 0
    nll_first, nll_second, n_t = 0.0, 0.0, 0
    for s in sentences:
        n = len(s)
        ids = [tok.eot_id] + s + [tok.eot_id] + s
        logits, _, attns = model(torch.tensor([ids]), want_attn=True)
        A = torch.stack([a[0] for a in attns]).double().numpy()   # [L, H, T, T]
        i = np.arange(1, n)                 # s_i, i = 1..n-1 (first copy at position i)
        q = n + 1 + i                       # its second copy
        ind += A[:, :, q, i + 1].sum(-1)
        dup += A[:, :, q, i].sum(-1)
        am_ind += (A[:, :, q, :].argmax(-1) == i + 1).sum(-1)
        uniform += (1.0 / (q + 1)).sum()
        n_q += len(i)
        logp = torch.log_softmax(logits[0].double(), dim=-1)
        tgt = torch.tensor(ids)
        # Targets s_2..s_n: positions 2..n (first copy), n+3..2n+1 (second).
        first = torch.arange(2, n + 1)
        second = torch.arange(n + 3, 2 * n + 2)
        nll_first -= logp[first - 1, tgt[first]].sum().item()
        nll_second -= logp[second - 1, tgt[second]].sum().item()
        n_t += n - 1
    return {"induction": ind / n_q, "duplicate": dup / n_q, "argmax_induction": am_ind / n_q,
            "induction_uniform": uniform / n_q, "queries": n_q, "sentences": len(sentences),
            "loss_first_copy": nll_first / n_t, "loss_second_copy": nll_second / n_t,
            "targets_per_copy": n_t}


@torch.no_grad()
def main():
    build, model_dir, out_path = sys.argv[1:4]
    tok = Tokenizer.from_dir(model_dir)
    model = load_model(model_dir)
    L, H, _ = dims(model)
    punct_ids = np.array([is_punct_token(tok, i) for i in range(len(tok.encoder))])

    keys = ["prev", "first", "self", "punct", "punct_uniform", "entropy", "entropy_norm",
            "local", "local_uniform", "argmax_prev", "argmax_first", "argmax_self"]
    sums = {k: np.zeros((L, H)) for k in keys}
    n_queries = 0
    buckets = {"2-9": (2, 10), "10-19": (10, 20), "20+": (20, 10 ** 9)}
    first_b = {b: np.zeros((L, H)) for b in buckets}
    n_b = {b: 0 for b in buckets}
    sentences = held_out_sentences(build, tok, dims(model)[2])
    for ids in sentences:
        T = len(ids)
        _, _, attns = model(torch.tensor([ids]), want_attn=True)
        A = torch.stack([a[0] for a in attns]).double().numpy()  # [L, H, T, T]
        t = np.arange(2, T)
        is_p = punct_ids[np.array(ids)]
        is_p[0] = False
        rows = A[:, :, t, :]                                       # [L, H, q, T]
        sums["prev"] += rows[..., np.arange(len(t)), t - 1].sum(-1)
        sums["first"] += rows[..., 0].sum(-1)
        sums["self"] += rows[..., np.arange(len(t)), t].sum(-1)
        sums["punct"] += (rows * is_p).sum(-1).sum(-1)
        # Uniform attention over keys 0..t would give punct share = count / (t+1).
        sums["punct_uniform"] += (np.cumsum(is_p)[t] / (t + 1)).sum()
        q = np.arange(len(t))
        sums["local"] += (rows[..., q, t] + rows[..., q, t - 1] + rows[..., q, t - 2]).sum(-1)
        sums["local_uniform"] += (3 / (t + 1)).sum()
        ent = -(rows * np.log(np.clip(rows, 1e-30, None))).sum(-1)
        sums["entropy"] += ent.sum(-1)
        sums["entropy_norm"] += (ent / np.log(t + 1)).sum(-1)
        am = rows.argmax(-1)
        sums["argmax_prev"] += (am == t - 1).sum(-1)
        sums["argmax_first"] += (am == 0).sum(-1)
        sums["argmax_self"] += (am == t).sum(-1)
        n_queries += len(t)
        for b, (lo, hi) in buckets.items():
            sel = (t >= lo) & (t < hi)
            first_b[b] += rows[..., sel, 0].sum(-1)
            n_b[b] += int(sel.sum())

    rep = repeat_test(model, tok, repeat_sentences(build, tok))
    heads = []
    for l in range(L):
        for h in range(H):
            m = {k: round(float(sums[k][l, h] / n_queries), 4) for k in keys}
            for k in ("induction", "duplicate", "argmax_induction"):
                m[k] = round(float(rep[k][l, h]), 4)
            m["induction_uniform"] = round(float(rep["induction_uniform"]), 4)
            m["first_by_position"] = {b: round(float(first_b[b][l, h] / n_b[b]), 4)
                                      for b in buckets}
            heads.append({"layer": l, "head": h, "label": classify(m), **m})
    summary = {
        "model": os.path.basename(os.path.normpath(model_dir)),
        "data": f"first {len(sentences)} validation sentences with >= {MIN_TOKENS} tokens, "
                "each fed as <|endoftext|> + sentence",
        "queries": n_queries,
        "query_positions": "t >= 2 (position 0 is <|endoftext|>)",
        "punctuation_tokens": "tokens whose text (spaces stripped) is only ASCII punctuation",
        "rules": RULES,
        "repeat_test": {
            "data": f"first {rep['sentences']} validation sentences of {MIN_TOKENS}-{MAX_REPEAT} "
                    "tokens, each fed as <|endoftext|> s <|endoftext|> s",
            "queries": rep["queries"],
            "loss_first_copy": round(rep["loss_first_copy"], 4),
            "loss_second_copy": round(rep["loss_second_copy"], 4),
            "targets_per_copy": rep["targets_per_copy"],
        },
        "heads": heads,
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print(f"{len(sentences)} sentences, {n_queries} query positions")
    print(f"repeated sentences: loss first copy {rep['loss_first_copy']:.4f}, "
          f"second copy {rep['loss_second_copy']:.4f} nats/token")
    print("layer head label                  prev  am_prev first  self  punct (unif)  local  "
          "H/ln(t+1)  induction  dup")
    for r in heads:
        print(f"{r['layer']:5d} {r['head']:4d} {r['label']:22s} {r['prev']:.2f}  {r['argmax_prev']:.2f}"
              f"    {r['first']:.2f}  {r['self']:.2f}  {r['punct']:.2f} ({r['punct_uniform']:.2f})  "
              f"{r['local']:.2f}  {r['entropy_norm']:.2f}       {r['induction']:.2f}       "
              f"{r['duplicate']:.2f}")


if __name__ == "__main__":
    main()
