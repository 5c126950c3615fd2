"""The simple baseline the model card compares with: letters in context -> phoneme chunks.

NETtalk's idea, with a learned alignment: hard EM aligns each training word's letters to its
phonemes, every letter taking 0, 1 or 2 phonemes (as "x" -> K S); then a held-out word is read
letter by letter, each letter giving the chunk seen most often with the same letter and its two
neighbours on each side, backing off to one neighbour each side, then to the letter alone.
"""

import collections
import math

EM_ITERATIONS = 3


def align(word, phones, logp):
    """Best split of phones into len(word) chunks of 0-2 phonemes under logp[(letter, chunk)]."""
    n, m = len(word), len(phones)
    best = [[-math.inf] * (m + 1) for _ in range(n + 1)]
    back = [[0] * (m + 1) for _ in range(n + 1)]
    best[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(0, m + 1):
            for size in (0, 1, 2):
                if j - size < 0 or best[i - 1][j - size] == -math.inf:
                    continue
                s = best[i - 1][j - size] + logp(word[i - 1], tuple(phones[j - size:j]))
                if s > best[i][j]:
                    best[i][j], back[i][j] = s, size
    if best[n][m] == -math.inf:
        return None
    chunks, j = [], m
    for i in range(n, 0, -1):
        size = back[i][j]
        chunks.append(tuple(phones[j - size:j]))
        j -= size
    return chunks[::-1]


class ContextBaseline:
    def __init__(self, pairs):
        """pairs: [(word, phones)] (one pronunciation per example)."""
        counts = None
        for _ in range(EM_ITERATIONS):
            if counts is None:  # first pass: every chunk size equally likely
                logp = lambda letter, chunk: -abs(len(chunk) - 1) * 0.5  # noqa: E731
            else:
                totals = collections.Counter()
                for (letter, _), c in counts.items():
                    totals[letter] += c
                logp = lambda letter, chunk, c=counts, t=totals: math.log((c[letter, chunk] + 0.1) / (t[letter] + 10.0))  # noqa: E731
            counts = collections.Counter()
            self.aligned = []
            for word, phones in pairs:
                chunks = align(word, phones, logp)
                if chunks:
                    self.aligned.append((word, chunks))
                    for letter, chunk in zip(word, chunks):
                        counts[letter, chunk] += 1
        self.tables = [collections.defaultdict(collections.Counter) for _ in range(3)]
        for word, chunks in self.aligned:
            padded = "##" + word + "##"
            for i, chunk in enumerate(chunks):
                for width, table in zip((2, 1, 0), self.tables):
                    table[padded[i + 2 - width:i + 3 + width]][chunk] += 1

    def predict(self, word):
        padded, out = "##" + word + "##", []
        for i in range(len(word)):
            for width, table in zip((2, 1, 0), self.tables):
                seen = table.get(padded[i + 2 - width:i + 3 + width])
                if seen:
                    out.extend(max(seen.items(), key=lambda kv: (kv[1], kv[0]))[0])
                    break
        return out
