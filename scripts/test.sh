#!/usr/bin/env bash
# The whole test suite from a fresh clone: installs what is missing, builds, then runs
#   native  - GoogleTest on the C++ core (scalar and SIMD kernels against a float64 reference)
#   js      - Jest on the built .wasm in Node (PyTorch fixtures, seeds, errors, loading, npm pack)
#   browser - Jest driving headless Chromium (the package, a bundled page, the demo)
#   perf    - only on request, not in "all": the wall-clock bounds (scripts/check_perf.mjs), which
#             a busy machine can fail, so the tests above assert no time
# Usage: npm test [-- native|js|browser|perf]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"

bash scripts/bootstrap.sh
SKIP_BOOTSTRAP=1 bash scripts/build.sh

if [ "$what" = all ] || [ "$what" = native ]; then
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/native -j2
  ctest --test-dir build/native --output-on-failure
fi
# "all" runs the js and browser projects in one Jest run, so its two workers (jest.config.cjs)
# share out the files of both: a Node file runs while a Chromium file waits on its page.
if [ "$what" = all ]; then
  npx jest --selectProjects js browser
elif [ "$what" = js ] || [ "$what" = browser ]; then
  npx jest --selectProjects "$what"
fi
if [ "$what" = perf ]; then
  node scripts/check_perf.mjs
fi
