"""Measure the exported spelling-to-sound model and write its model card.

Usage: analyze.py <build_dir> <model_dir>

From the shipped float16 weights: greedy-decoding word and phoneme error rates on the held-out
test words against the context baseline (baseline.py); how monotone the cross-attention is; a
held-out sample the JS tests recompute through WASM; MODEL_CARD.md.
"""

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.dirname(HERE))
from baseline import ContextBaseline  # noqa: E402
from model import Bart  # noqa: E402
from model_card import write_card  # noqa: E402
from safetensors_read import read_safetensors  # noqa: E402
from vocab import Vocab  # noqa: E402

torch.set_num_threads(1)
SAMPLE_WORDS = 300  # the held-out sample the JS test decodes through WASM
ATTENTION_WORDS = 2000


def load_model(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    tensors, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    model = Bart(cfg)
    state = {"shared.weight": tensors["model.shared.weight"], "final_logits_bias": tensors["final_logits_bias"]}
    state.update({k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.encoder.") or k.startswith("model.decoder.")})
    model.load_state_dict({k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in state.items()})
    return model.eval(), cfg, Vocab.load(os.path.join(model_dir, "vocab.json"))


def edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def score(predictions, data):
    """WER: a word is right if it matches any of its pronunciations. PER: edit distance to the
    closest pronunciation, summed, over the summed lengths of those pronunciations."""
    wrong, edits, length = 0, 0, 0
    for pred, (_, prons) in zip(predictions, data):
        wrong += pred not in prons
        e, ref = min((edit_distance(pred, p), p) for p in prons)
        edits += e
        length += len(ref)
    return {"words": len(data), "wer": wrong / len(data), "per": edits / length}


def greedy_all(model, vocab, words, max_len):
    out = []
    for i in range(0, len(words), 500):
        chunk = [[vocab.bos] + vocab.encode_word(w) + [vocab.eos] for w in words[i:i + 500]]
        S = max(map(len, chunk))
        src = torch.tensor([c + [vocab.pad] * (S - len(c)) for c in chunk])
        out += [vocab.decode(ids) for ids in model.greedy(src, max_len)]
    return out


def monotonicity(model, vocab, words, predictions):
    """Per decoder layer and head: the share of consecutive output phonemes whose most-attended
    source letter is at or after the previous phoneme's (source <s> and </s> excluded)."""
    L, H = model.cfg["decoder_layers"], model.cfg["decoder_attention_heads"]
    mono, steps = np.zeros((L, H)), 0
    letters_hit = np.zeros((L, H))
    with torch.no_grad():
        for word, pred in zip(words, predictions):
            if len(pred) < 2:
                continue
            src = torch.tensor([[vocab.bos] + vocab.encode_word(word) + [vocab.eos]])
            # Row t of the decoder is the step that outputs phoneme t.
            dec = torch.tensor([[model.cfg["decoder_start_token_id"]] + vocab.encode_phonemes(pred[:-1])])
            memory, pad, _ = model.encode(src)
            _, _, cross = model.decode(dec, memory, pad)
            for l in range(L):
                arg = cross[l][0].argmax(-1).numpy()  # heads x len(pred)
                for h in range(H):
                    a = arg[h]
                    mono[l, h] += np.sum(a[1:] >= a[:-1])
                    letters_hit[l, h] += np.mean((a >= 1) & (a <= len(word)))
            steps += len(pred) - 1
    n_words = sum(len(p) >= 2 for p in predictions)
    return {"monotone": (mono / steps).round(4).tolist(), "on_letters": (letters_hit / n_words).round(4).tolist(),
            "words": n_words, "steps": steps}


def head_labels(attention):
    """A short label per cross-attention head for the demo's legend (heads.json), from the
    measured shares: where its most-attended position falls and how often it moves forward."""
    def label(mono, on_letters):
        if on_letters < 0.5:
            return f"boundary head · argmax on <s>/</s> {1 - on_letters:.0%}"
        if mono >= 0.85:
            return f"alignment head · monotone {mono:.0%}"
        return f"mixed · monotone {mono:.0%}"
    return {"cross": [[label(m, o) for m, o in zip(ms, os_)] for ms, os_ in zip(attention["monotone"], attention["on_letters"])],
            "measured_on": f"{attention['words']} held-out words, greedy outputs"}


def main():
    build, model_dir = sys.argv[1:3]
    model, cfg, vocab = load_model(model_dir)
    with open(os.path.join(build, "test.json")) as f:
        test = json.load(f)
    with open(os.path.join(build, "train.json")) as f:
        train = json.load(f)
    words = [w for w, _ in test]
    preds = greedy_all(model, vocab, words, cfg["max_position_embeddings"] - 1)
    model_score = score(preds, test)
    print("model", json.dumps(model_score), flush=True)
    baseline = ContextBaseline([(w, p) for w, prons in train for p in prons])
    base_score = score([baseline.predict(w) for w in words], test)
    print("baseline", json.dumps(base_score), flush=True)
    attention = monotonicity(model, vocab, words[:ATTENTION_WORDS], preds[:ATTENTION_WORDS])
    print("attention", json.dumps(attention), flush=True)
    with open(os.path.join(model_dir, "heads.json"), "w") as f:
        json.dump(head_labels(attention), f, indent=1)
    # A fixed, evenly spread sample of the test words for the WASM test.
    pick = np.linspace(0, len(test) - 1, SAMPLE_WORDS).round().astype(int)
    sample_data = [test[i] for i in pick]
    sample_score = score([preds[i] for i in pick], sample_data)
    sample = {"words": [{"word": test[i][0], "pronunciations": test[i][1], "greedy": preds[i]} for i in pick],
              "wer": sample_score["wer"], "per": sample_score["per"]}
    with open(os.path.join(model_dir, "heldout-sample.json"), "w") as f:
        json.dump(sample, f, indent=0)
    with open(os.path.join(build, "train_summary.json")) as f:
        training = json.load(f)
    examples = {w: preds[words.index(w)] for w in ("phone", "knight", "photograph", "rhythm") if w in words}
    for w in ("phone", "knight", "phase", "wrote", "tough", "cat"):
        if w not in examples:
            examples[w] = greedy_all(model, vocab, [w], 30)[0]
    write_card(model_dir, cfg, model_score, base_score, attention, training, sample, examples,
               {"train": len(train), "test": len(test), "val": len(json.load(open(os.path.join(build, "val.json"))))})
    print("wrote", os.path.join(model_dir, "MODEL_CARD.md"))


if __name__ == "__main__":
    main()
