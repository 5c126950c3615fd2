"""The G2P model's one vocabulary: BART's four specials, the letters, then the phonemes.

Source tokens are single letters (lower case); target tokens are ARPAbet phonemes without
stress (upper case), so the two never collide and one table serves encoder, decoder and head.
"""

import json

SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]


class Vocab:
    def __init__(self, tokens):
        self.tokens = tokens
        self.ids = {t: i for i, t in enumerate(tokens)}
        self.bos, self.pad, self.eos, self.unk = (self.ids[t] for t in SPECIALS)

    @classmethod
    def from_data(cls, pairs):
        letters = sorted({c for w, _ in pairs for c in w})
        phones = sorted({p for _, prons in pairs for pr in prons for p in pr})
        return cls(SPECIALS + letters + phones)

    @classmethod
    def load(cls, path):
        with open(path) as f:
            ids = json.load(f)
        return cls(sorted(ids, key=ids.get))

    def save(self, path):
        with open(path, "w") as f:
            json.dump(self.ids, f, indent=0)

    def encode_word(self, word):
        return [self.ids.get(c, self.unk) for c in word.lower()]

    def encode_phonemes(self, phones):
        return [self.ids[p] for p in phones]

    def decode(self, ids):
        return [self.tokens[i] for i in ids]
