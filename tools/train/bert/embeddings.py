"""Do brown-bert's sentence embeddings put sentences of one Brown genre closer than sentences of
different genres? Mean-pooled (all tokens), L2-normalized final states of held-out sentences, compared
only across documents (two sentences of one document share their topic, not just their genre)."""

import collections
import json
import os

import numpy as np
import torch


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
    # Up to 40 sentences (>= 10 tokens) per genre, taken in turn from each of its documents.
    by_doc = collections.defaultdict(list)
    for ids, d, _ in sents:
        if len(ids) >= 10:
            by_doc[d].append(ids)
    picked, per = [], collections.Counter()
    for rank in range(max(len(v) for v in by_doc.values())):
        for d in sorted(by_doc):
            g = genre_of[val_docs[d]]
            if rank < len(by_doc[d]) and per[g] < 40:
                per[g] += 1
                picked.append((by_doc[d][rank], g, d))
    e = embed(model, [p[0] for p in picked], wp)
    genres, docs = [p[1] for p in picked], np.array([p[2] for p in picked])
    same = np.array([[a == b for b in genres] for a in genres])
    other_doc = docs[:, None] != docs[None, :]
    out = {"sentences": len(picked), "documents": len(set(docs.tolist())), "genres": dict(per)}
    centred = e - e.mean(0, keepdim=True)
    centred = centred / centred.norm(dim=1, keepdim=True).clamp_min(1e-12)
    for name, v in (("", e), ("centred_", centred)):
        sim = (v @ v.T).numpy()
        out[name + "mean_cos_same_genre"] = float(sim[same & other_doc].mean())
        out[name + "mean_cos_different_genre"] = float(sim[~same].mean())
    sim = (e @ e.T).numpy()
    sim[~other_doc] = -np.inf  # neighbours from other documents only
    nn = sim.argmax(1)
    out["nearest_neighbour_same_genre"] = float(np.mean([genres[i] == genres[j] for i, j in enumerate(nn)]))
    # Chance: a random sentence of another document has this sentence's genre.
    out["nearest_neighbour_chance"] = float(np.mean([(same[i] & other_doc[i]).sum() / other_doc[i].sum() for i in range(len(genres))]))
    return out
