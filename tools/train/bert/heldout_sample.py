"""heldout-sample.json: masked held-out examples (single sentences and sentence pairs) with the
float32 reference numbers from the shipped weights, for tests/js/brown_bert.test.cjs."""

import os

import torch

from evaluate import mask_fixed
from train import MAX_LEN, read_documents


def pair_examples(build, wp, rng, count=8):
    """[CLS] a [SEP] b [SEP] from consecutive sentences of held-out documents, masked the same way."""
    out = []
    for doc in read_documents(os.path.join(build, "val.txt")):
        for a, b in zip(doc, doc[1:]):
            ia, ib = wp.encode(a), wp.encode(b)
            if 4 <= len(ia) and 4 <= len(ib) and len(ia) + len(ib) + 3 <= MAX_LEN:
                ids = [wp.cls] + ia + [wp.sep] + ib + [wp.sep]
                types = [0] * (len(ia) + 2) + [1] * (len(ib) + 1)
                inp, pos, tgt = mask_fixed(ids, wp, rng)
                out.append((inp, pos, tgt, [a, b], types))
                break  # one pair per document
        if len(out) == count:
            break
    return out


@torch.no_grad()
def heldout_sample(model, examples, pairs, wp, count=32):
    whole = [e for e in examples if len(wp.encode(e[3])) + 2 == len(e[0])]  # not truncated
    step = max(1, len(whole) // count)
    picked = [e + ([0] * len(e[0]),) for e in (whole[i] for i in range(0, step * count, step))][:count] + pairs
    total = right = n = tops = 0
    items = []
    for inp, pos, tgt, text, types in picked:
        x, ty = torch.tensor([inp]), torch.tensor([types])
        h = model.hidden(x, ty, x == wp.pad)
        logits = model.mlm_logits(h[0, pos])
        logp = torch.log_softmax(logits, -1)
        total += float(-logp[torch.arange(len(tgt)), torch.tensor(tgt)].sum())
        right += int((logits.argmax(-1) == torch.tensor(tgt)).sum())
        n += len(tgt)
        item = {"text": text, "input_ids": inp, "token_type_ids": types, "masked_positions": pos, "original_ids": tgt}
        top6 = logits[0].topk(6).values
        # Only where the top 6 logits are clearly apart, so float32 summation order cannot reorder them.
        if tops < 3 and isinstance(text, str) and bool((top6[:-1] - top6[1:] > 0.02).all()):
            tops += 1
            v = h[0].mean(0)
            item["embedding_first8"] = [round(float(t), 6) for t in (v / v.norm())[:8]]
            item["top5_at_first_mask"] = [int(i) for i in logits[0].topk(5).indices]
        items.append(item)
    return {"what": "held-out Brown sentences as [CLS] s [SEP] (and 8 consecutive pairs as [CLS] a [SEP] b [SEP], "
                    "token types 0/1), ~15% of tokens replaced by [MASK] (seeded); reference numbers from the "
                    "shipped float16 weights upcast to float32 (PyTorch)",
            "loss": total / n, "accuracy": right / n, "masked_tokens": n, "examples": items}
