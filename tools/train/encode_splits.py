"""Encode train.txt / val.txt into flat uint16 token streams for training.

Usage: encode_splits.py <build_dir>   (reads build_dir/{train,val}.txt and
build_dir/tokenizer/, writes build_dir/{train,val}.bin)

Layout of a stream: every sentence is encoded on its own and preceded by
<|endoftext|>:   EOT s1 EOT s2 EOT s3 ...   (documents stay in order, so a
128-token window still sees the previous sentences of the same text).
Why: the demo and the held-out test feed one sentence at a time as
"<|endoftext|> + sentence" (GPT-2's usual BOS convention).  Encoding sentences
separately gives the first word the same tokens ("The", not " The") in
training as in the demo, and the EOT before each sentence makes that input
pattern, including EOT at position 0, the normal case rather than a rare one.
"""

import os
import sys

import numpy as np

from bpe import Tokenizer


def encode_file(tok, path):
    ids = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                ids.append(tok.eot_id)
                ids.extend(tok.encode_ordinary(line))
    return np.array(ids, dtype=np.uint16)  # vocabularies up to 65536 fit in 16 bits


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "build")
    tok = Tokenizer.from_dir(os.path.join(build, "tokenizer"))
    assert len(tok.encoder) <= 65536
    for split in ("train", "val"):
        arr = encode_file(tok, os.path.join(build, f"{split}.txt"))
        arr.tofile(os.path.join(build, f"{split}.bin"))
        n_sent = int((arr == tok.eot_id).sum())
        print(f"{split}: {len(arr)} tokens ({n_sent} sentences)")


if __name__ == "__main__":
    main()
