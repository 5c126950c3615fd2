"""Write a small held-out test fixture for the WASM forward pass.

Usage: heldout_sample.py <build_dir> <model_dir> <out.json>

Picks 20 validation sentences by a fixed rule (from each of the first 20
validation documents, its first sentence of 10..60 tokens), encodes each as
[<|endoftext|>] + tokens, and records the next-token loss that the model
loaded back from the exported float16 safetensors gives on exactly those
ids.  A JavaScript test can then run our own forward pass on `ids` and must
reproduce `mean_loss` (and each sentence's loss) up to float rounding.

Also (from the same PyTorch model): `logits_check`, the 8 largest logits at every position of
the first LOGIT_SENTENCES sentences, and `greedy`, GREEDY_TOKENS greedy tokens after each of
GREEDY_PROMPTS (each step a full forward of the whole sequence, no cache; stopping after
<|endoftext|>), with the smallest gap between the chosen and the runner-up logit, so a test
knows how much rounding its comparison can absorb.
"""

import json
import math
import os
import sys

import torch

torch.set_num_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer  # noqa: E402
from exported import load_model, read_config  # noqa: E402

N = 20
MIN_TOKENS, MAX_TOKENS = 10, 60
LOGIT_SENTENCES, TOP = 3, 8
GREEDY_PROMPTS = ["The jury said it did not", "In the morning the", "He was born in"]
GREEDY_TOKENS = 16


def pick_sentences(build, tok):
    with open(os.path.join(build, "val.txt"), encoding="utf-8") as f:
        docs = f.read().strip("\n").split("\n\n")
    picked = []
    for doc in docs:
        for line in doc.split("\n"):
            n = len(tok.encode_ordinary(line))
            if MIN_TOKENS <= n <= MAX_TOKENS:
                picked.append(line)
                break
        if len(picked) == N:
            break
    return picked


@torch.no_grad()
def top_logits(model, ids):
    """Per position: the TOP largest next-token logits and their ids."""
    logits = model(torch.tensor([ids]))[0][0]
    vals, idx = logits.topk(TOP, dim=-1)
    return {"ids": idx.tolist(), "logits": [[round(v, 5) for v in row] for row in vals.tolist()]}


@torch.no_grad()
def greedy(model, tok, text, context):
    ids = [tok.eot_id] + tok.encode_ordinary(text)
    new, gap = [], float("inf")
    while len(new) < GREEDY_TOKENS and len(ids) + len(new) < context:
        top2 = model(torch.tensor([ids + new]))[0][0, -1].topk(2)
        gap = min(gap, top2.values[0].item() - top2.values[1].item())
        new.append(int(top2.indices[0]))
        if new[-1] == tok.eot_id:
            break
    return {"prompt": text, "ids": ids, "new_tokens": new, "text": tok.decode(new),
            "min_top2_gap": round(gap, 5)}


@torch.no_grad()
def main():
    build, model_dir, out_path = sys.argv[1:4]
    tok = Tokenizer.from_dir(model_dir)
    model = load_model(model_dir)
    cfg = read_config(model_dir)
    kind = cfg.get("model_type", "gpt2")
    items, total_nll, total_tokens = [], 0.0, 0
    for text in pick_sentences(build, tok):
        ids = [tok.eot_id] + tok.encode_ordinary(text)
        assert tok.decode(ids[1:]) == text
        logits, _, _ = model(torch.tensor([ids]))
        logp = torch.log_softmax(logits[0].double(), dim=-1)
        nll = -logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]
        items.append({"text": text, "ids": ids,
                      "loss": float(nll.mean()),
                      "sum_nll": float(nll.sum()),
                      "argmax_next": logits[0].argmax(-1).tolist()})
        total_nll += float(nll.sum())
        total_tokens += len(ids) - 1
    mean = total_nll / total_tokens
    out = {
        "description": f"Held-out Brown validation sentences for checking a {kind} forward "
                       "pass against PyTorch.",
        "model": f"{os.path.basename(os.path.normpath(model_dir))} (model.safetensors, "
                 "float16 weights, float32 compute)",
        "convention": "ids[0] is <|endoftext|> (BOS); for each sentence the loss is the mean "
                      "over t = 1..len(ids)-1 of -ln softmax(logits[t-1])[ids[t]] (natural "
                      "log, nats/token); argmax_next[t] is the most likely token after "
                      "ids[0..t]. mean_loss weights every predicted token equally across "
                      "all sentences; perplexity = exp(mean_loss).",
        "eot_id": tok.eot_id,
        "predicted_tokens": total_tokens,
        "mean_loss": mean,
        "perplexity": math.exp(mean),
        "sentences": items,
        "logits_check": [top_logits(model, it["ids"]) for it in items[:LOGIT_SENTENCES]],
        "greedy": [greedy(model, tok, p, cfg.get("max_position_embeddings", 128))
                   for p in GREEDY_PROMPTS],
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    print(f"{len(items)} sentences, {total_tokens} predicted tokens, "
          f"mean loss {mean:.4f}, perplexity {math.exp(mean):.2f}")


if __name__ == "__main__":
    main()
