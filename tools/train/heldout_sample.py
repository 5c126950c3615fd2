"""Write a small held-out test fixture for the WASM forward pass.

Usage: heldout_sample.py <build_dir> <model_dir> <out.json>

Picks 20 validation sentences by a fixed rule (from each of the first 20
validation documents, its first sentence of 10..60 tokens), encodes each as
[<|endoftext|>] + tokens, and records the next-token loss that the model
loaded back from the exported float16 safetensors gives on exactly those
ids.  A JavaScript test can then run our own forward pass on `ids` and must
reproduce `mean_loss` (and each sentence's loss) up to float rounding.
"""

import json
import math
import os
import sys

import torch

torch.set_num_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer  # noqa: E402
from model import load_exported  # noqa: E402

N = 20
MIN_TOKENS, MAX_TOKENS = 10, 60


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
def main():
    build, model_dir, out_path = sys.argv[1:4]
    tok = Tokenizer.from_dir(model_dir)
    model = load_exported(model_dir)
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
        "description": "Held-out Brown validation sentences for checking a GPT-2 forward "
                       "pass against PyTorch.",
        "model": "brown-gpt2 (model.safetensors, float16 weights, float32 compute)",
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
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    print(f"{len(items)} sentences, {total_tokens} predicted tokens, "
          f"mean loss {mean:.4f}, perplexity {math.exp(mean):.2f}")


if __name__ == "__main__":
    main()
