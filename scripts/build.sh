#!/usr/bin/env bash
# Builds both WebAssembly variants (SIMD and scalar) and packages dist/ for npm.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${SKIP_BOOTSTRAP:-0}" = "1" ] || bash scripts/bootstrap.sh

# Debian's em++ needs its bundled JS dependencies (acorn) on NODE_PATH.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
# npm runs this (npm run build, npm test) with node_modules/.bin first on PATH, where npm's binaryen
# 132 puts its wasm-opt: em++ would then take it for every link, and 3.1.6 cannot read the names
# 132's --minify-imports-and-exports prints (the .wasm gets short import names, the glue keeps the
# long ones: "Import #0 module="a" function="a" error: function import requires a callable"). Only
# the relaxed-SIMD link uses binaryen 132, through scripts/binaryen132/ (CMakeLists.txt).
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '/node_modules/\.bin$' | paste -sd: -)
export PATH
if [ ! -f build/wasm/CMakeCache.txt ]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build/wasm -j2
node scripts/bundle.mjs
