#!/usr/bin/env bash
# Installs everything the build, the tests and the demo need, and nothing twice.
# Safe to run on every invocation: each step checks before it installs.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# fonts-dejavu-core: Chromium renders the demo's text in screenshots with it.
# libeigen3-dev: Eigen's GEMM in the scalar WASM build (src/kernels/kernels_eigen.cpp).
# python3-sentencepiece: the reference the Llama-style tokenizer is tested against
# (tests/js/sentencepiece_tokenizer.test.cjs trains a small model with it).
# python3-jinja2: the reference the chat templates are rendered against (tools/chat/jinja_reference.py,
# tests/js/chat_template.test.cjs).
# jupyter-nbconvert: renders a notebook holding the widget (tests/browser/widget_package.test.cjs).
# clang-19: compiles the relaxed-SIMD kernels (attention_relaxed.wasm; Emscripten's clang 14 cannot;
# the link stays em++'s, with npm's binaryen: CMakeLists.txt).
for pkg in emscripten googletest libgtest-dev cmake wabt chromium fonts-dejavu-core libeigen3-dev python3-sentencepiece python3-jinja2 jupyter-nbconvert clang-19; do
  have_pkg "$pkg" || need_apt+=("$pkg")
done
# PyTorch is only needed to regenerate reference fixtures, to train (tools/) and for the bench's
# encoder workload (torch.onnx.export + the onnx checker, bench/encoder/export.py), not for tests.
# libopenblas0-serial: torch's matmuls ~8x faster than the reference BLAS (training in ~45 min).
if [ "${WITH_TORCH:-0}" = "1" ]; then
  for pkg in python3-torch python3-onnx libopenblas0-serial; do have_pkg "$pkg" || need_apt+=("$pkg"); done
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "bootstrap: apt-get install ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

# npm install follows package-lock.json's versions. (npm ci would be stricter, but npm 11 rejects
# its own lockfiles over other platforms' optional packages.)
if [ ! -d node_modules ] || [ package.json -nt node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: npm install"
  npm install --no-audit --no-fund
fi
