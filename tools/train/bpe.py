"""GPT-2 style byte-level BPE: training, GPT-2 file format I/O, encode/decode.

Usage (training):  bpe.py <train.txt> <out_dir> [vocab_size=4096]
writes out_dir/vocab.json and out_dir/merges.txt in the same format as
OpenAI/Hugging Face GPT-2, so `Tokenizer.from_files` reads either ours or the
real GPT-2 files.

Vocabulary layout (same as GPT-2's): ids 0..255 are the 256 byte symbols in
`bytes_to_unicode` order, then one id per merge in merge order, and the
`<|endoftext|>` special token last.

Pre-tokenization.  GPT-2 splits text with the regex
    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
Python's `re` has no \\p{..} classes, so we use:
    \\p{L}  ->  [^\\W\\d_]    (word characters that are not digits or "_")
    \\p{N}  ->  \\d
    [^\\s\\p{L}\\p{N}] -> (?:[^\\s\\w]|_)
These are exactly equal on ASCII, which is all of the Brown corpus.  On other
scripts the only difference is that numeric characters which are not decimal
digits (e.g. "½", "²") count as letters instead of numbers.
"""

import json
import os
import re
import sys
import heapq
from collections import Counter, defaultdict

EOT = "<|endoftext|>"

PRETOKENIZE = re.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character table.

    Bytes that are already visible characters keep their own code point; the
    rest (control bytes, space, etc.) are moved to 256, 257, ... so that no
    BPE symbol contains whitespace or control characters.  The order of this
    table is also the order of the first 256 vocabulary ids."""
    keep = (list(range(ord("!"), ord("~") + 1))
            + list(range(ord("¡"), ord("¬") + 1))
            + list(range(ord("®"), ord("ÿ") + 1)))
    table = {}
    for b in keep:
        table[b] = chr(b)
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    # Order: the kept bytes first, then the shifted ones (GPT-2 id order).
    return {b: table[b] for b in keep + [b for b in range(256) if b not in keep]}


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def to_symbols(piece):
    """A pre-token (str) -> its byte-level character string."""
    return "".join(BYTE_TO_CHAR[b] for b in piece.encode("utf-8"))


class Tokenizer:
    def __init__(self, encoder, merges):
        self.encoder = encoder                      # token string -> id
        self.decoder = {i: s for s, i in encoder.items()}
        self.ranks = {pair: r for r, pair in enumerate(merges)}
        self.eot_id = encoder.get(EOT)
        self.cache = {}

    @classmethod
    def from_files(cls, vocab_path, merges_path):
        with open(vocab_path, encoding="utf-8") as f:
            encoder = json.load(f)
        merges = []
        with open(merges_path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#version"):
                    continue
                a, b = line.split(" ")
                merges.append((a, b))
        return cls(encoder, merges)

    @classmethod
    def from_tokenizer_json(cls, path):
        """The same tokenizer from a Hugging Face tokenizer.json (model BPE; merges as
        "a b" strings or [a, b] pairs), as tokenizer_json.py writes it."""
        with open(path, encoding="utf-8") as f:
            model = json.load(f)["model"]
        assert model["type"] == "BPE", model["type"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        return cls(model["vocab"], merges)

    @classmethod
    def from_dir(cls, d):
        """vocab.json + merges.txt (GPT-2's files), else tokenizer.json (the Llama export)."""
        if not os.path.exists(os.path.join(d, "vocab.json")):
            return cls.from_tokenizer_json(os.path.join(d, "tokenizer.json"))
        return cls.from_files(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))

    def _bpe(self, symbols):
        """Apply merges to one pre-token, lowest rank first (GPT-2's rule)."""
        if symbols in self.cache:
            return self.cache[symbols]
        parts = list(symbols)
        while len(parts) > 1:
            best, best_rank = None, None
            for pair in zip(parts, parts[1:]):
                r = self.ranks.get(pair)
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = pair, r
            if best is None:
                break
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == best:
                    merged.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        ids = [self.encoder[p] for p in parts]
        self.cache[symbols] = ids
        return ids

    def encode_ordinary(self, text):
        """Encode text; the string "<|endoftext|>" gets no special meaning."""
        ids = []
        for piece in PRETOKENIZE.findall(text):
            ids.extend(self._bpe(to_symbols(piece)))
        return ids

    def encode(self, text):
        """Encode text, mapping literal "<|endoftext|>" to the special id."""
        ids = []
        for i, chunk in enumerate(text.split(EOT)):
            if i > 0:
                ids.append(self.eot_id)
            ids.extend(self.encode_ordinary(chunk))
        return ids

    def token_bytes(self, i):
        s = self.decoder[i]
        if s == EOT:
            return EOT.encode("utf-8")
        return bytes(CHAR_TO_BYTE[c] for c in s)

    def decode(self, ids):
        return b"".join(self.token_bytes(i) for i in ids).decode("utf-8", errors="replace")


def train(lines, vocab_size, both_forms=True):
    """Learn vocab_size - 256 - 1 merges from an iterable of text lines.

    Classic BPE over the pre-token frequency table, with incremental pair
    counts (only words that contain the merged pair are revisited) and a lazy
    max-heap, so ~4k merges over the Brown corpus take well under a minute.
    Ties between equally frequent pairs go to the lexicographically smallest
    pair, which keeps the result deterministic."""
    counts = Counter()
    for line in lines:
        pieces = PRETOKENIZE.findall(line)
        for piece in pieces:
            counts[to_symbols(piece)] += 1
        if both_forms and pieces and pieces[0][0].isalpha():
            # Each sentence is encoded on its own, so its first word is seen
            # without a leading space ("However"), though in running text
            # (and as a word in a common-word list) it is " However".  Count
            # it in both forms so both can become one token.
            counts[to_symbols(" " + pieces[0])] += 1
    words = [list(w) for w in sorted(counts)]
    freqs = [counts[w] for w in sorted(counts)]

    pair_count = defaultdict(int)
    pair_words = defaultdict(set)
    for wi, w in enumerate(words):
        for pair in zip(w, w[1:]):
            pair_count[pair] += freqs[wi]
            pair_words[pair].add(wi)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)

    n_merges = vocab_size - 256 - 1
    merges = []
    while len(merges) < n_merges and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -neg:
            continue  # stale heap entry; the current count was pushed again
        if -neg < 2:
            break
        merges.append(pair)
        new_sym = pair[0] + pair[1]
        touched = set()
        for wi in pair_words.pop(pair):
            w, f = words[wi], freqs[wi]
            for p in zip(w, w[1:]):
                pair_count[p] -= f
                touched.add(p)
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == pair[0] and w[i + 1] == pair[1]:
                    out.append(new_sym)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[wi] = out
            for p in zip(out, out[1:]):
                pair_count[p] += f
                pair_words[p].add(wi)
                touched.add(p)
        for p in touched:
            c = pair_count.get(p, 0)
            if c <= 0:
                pair_count.pop(p, None)
                pair_words.pop(p, None)
            elif p != pair:
                heapq.heappush(heap, (-c, p))
        pair_count.pop(pair, None)
    return merges


def save(merges, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    vocab = {}
    for c in BYTE_TO_CHAR.values():
        vocab[c] = len(vocab)
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab[EOT] = len(vocab)
    with open(os.path.join(out_dir, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(out_dir, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    return vocab


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    train_path, out_dir = sys.argv[1], sys.argv[2]
    vocab_size = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    with open(train_path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    merges = train(lines, vocab_size)
    vocab = save(merges, out_dir)
    print(f"bpe: {len(merges)} merges, vocabulary {len(vocab)} -> {out_dir}")

    # Round-trip check: byte-level BPE must reproduce every line exactly.
    tok = Tokenizer.from_dir(out_dir)
    for line in lines[:2000]:
        assert tok.decode(tok.encode(line)) == line, line


if __name__ == "__main__":
    main()
