#!/usr/bin/env bash
# Builds both WebAssembly variants (SIMD and scalar) and packages dist/ for npm.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${SKIP_BOOTSTRAP:-0}" = "1" ] || bash scripts/bootstrap.sh

# Debian's em++ needs its bundled JS dependencies (acorn) on NODE_PATH.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
if [ ! -f build/wasm/CMakeCache.txt ]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build/wasm -j2
node scripts/bundle.mjs
