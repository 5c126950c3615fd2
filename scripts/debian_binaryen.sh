#!/bin/sh
# Runs a command (CMakeLists.txt: the SIMD, scalar and threads builds' links) with Debian's binaryen:
# `npm run build` puts node_modules/.bin first on PATH, and with it npm's binaryen 132, which only
# the relaxed build's link may use (through scripts/binaryen132/): emcc 3.1.6 misreads 132's
# minified names, and the glue keeps the long ones (the .wasm then fails to instantiate).
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '/node_modules/\.bin$' | paste -sd: -)
export PATH
exec "$@"
