"""BERT's tokenizer in Python: the basic tokenizer + WordPiece, and a WordPiece vocabulary learner.

Usage: wordpiece.py <train.txt> <out_dir> [vocab_size]   -> out_dir/vocab.txt

The learner is what Hugging Face's WordPieceTrainer does: BPE merges by pair frequency over the
words of the corpus, where a non-initial piece carries the "##" prefix; the vocabulary is the
special tokens, the alphabet (each character, alone and as "##c") and the merged pieces. Encoding
is BERT's greedy longest-match-first, which is why the vocabulary, not the merge order, is kept.
"""

import collections
import heapq
import os
import sys
import unicodedata

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
MAX_WORD_CHARS = 100


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or
            0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or
            0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def _is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def basic_tokenize(text):
    """Lower-cased, accent-stripped words and punctuation marks, as BertTokenizer(do_lower_case)."""
    out = []
    clean = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")):
            continue
        if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
            clean.append(" ")
        elif _is_cjk(cp):
            clean.append(f" {ch} ")
        else:
            clean.append(ch)
    for word in unicodedata.normalize("NFC", "".join(clean)).split():
        word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
        cur = ""
        for ch in word:
            if _is_punct(ch):
                if cur:
                    out.append(cur)
                out.append(ch)
                cur = ""
            else:
                cur += ch
        if cur:
            out.append(cur)
    return out


class WordPiece:
    def __init__(self, vocab):
        self.vocab = list(vocab)
        self.ids = {t: i for i, t in enumerate(self.vocab)}
        self.pad, self.unk, self.cls, self.sep, self.mask = (self.ids[t] for t in SPECIALS)
        self.cache = {}

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls([line.rstrip("\n") for line in f if line.rstrip("\n") != ""])

    def word_ids(self, word):
        hit = self.cache.get(word)
        if hit is not None:
            return hit
        ids, start = [], 0
        if len(word) > MAX_WORD_CHARS:
            ids = [self.unk]
        while start < len(word) and not ids[-1:] == [self.unk]:
            for end in range(len(word), start, -1):
                piece = ("##" if start else "") + word[start:end]
                if piece in self.ids:
                    ids.append(self.ids[piece])
                    start = end
                    break
            else:
                ids = [self.unk]
        self.cache[word] = ids
        return ids

    def encode(self, text):
        """Text -> ids without [CLS]/[SEP]."""
        return [i for w in basic_tokenize(text) for i in self.word_ids(w)]


def learn(word_counts, vocab_size):
    """BPE merges with "##" continuation pieces until the vocabulary has vocab_size entries."""
    words = [[w[0]] + ["##" + c for c in w[1:]] for w in word_counts]
    freqs = list(word_counts.values())
    vocab = list(SPECIALS)
    alphabet = sorted({s for w in words for s in w})
    vocab += alphabet
    known = set(vocab)
    # Every bare character also as a continuation, and vice versa, so any word of known characters
    # can be spelled.
    for s in alphabet:
        other = s[2:] if s.startswith("##") else "##" + s
        if other not in known:
            vocab.append(other)
            known.add(other)
    pairs = collections.Counter()
    where = collections.defaultdict(set)
    for i, (w, f) in enumerate(zip(words, freqs)):
        for a, b in zip(w, w[1:]):
            pairs[a, b] += f
            where[a, b].add(i)
    heap = [(-c, p) for p, c in pairs.items()]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        neg, pair = heapq.heappop(heap)
        if pairs.get(pair, 0) != -neg or -neg == 0:
            continue  # stale entry
        a, b = pair
        merged = a + b[2:]
        for i in list(where[pair]):
            w, f = words[i], freqs[i]
            for x, y in zip(w, w[1:]):  # remove this word's old pairs
                pairs[x, y] -= f
                where[x, y].discard(i)
                if (x, y) != pair and pairs[x, y] > 0:
                    heapq.heappush(heap, (-pairs[x, y], (x, y)))  # its count dropped: re-queue it
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    out.append(merged)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for x, y in zip(out, out[1:]):
                pairs[x, y] += f
                where[x, y].add(i)
                heapq.heappush(heap, (-pairs[x, y], (x, y)))
        if merged not in known:
            vocab.append(merged)
            known.add(merged)
    return vocab


def main():
    train_txt, out_dir = sys.argv[1], sys.argv[2]
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 8000
    counts = collections.Counter()
    with open(train_txt, encoding="utf-8") as f:
        for line in f:
            counts.update(basic_tokenize(line))
    vocab = learn(counts, size)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    wp = WordPiece(vocab)
    total = sum(counts.values())
    whole = sum(c for w, c in counts.items() if len(wp.word_ids(w)) == 1 and wp.word_ids(w) != [wp.unk])
    print(f"vocab {len(vocab)} from {len(counts)} distinct words; {whole / total:.1%} of running words are one piece")


if __name__ == "__main__":
    main()
