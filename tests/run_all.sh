#!/usr/bin/env bash
# Builds everything and runs every test: CTest (CPU tests, command-line contract, and the GPU
# tests, which skip with the reason where there is no CUDA device) and the Python tools' pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build"
(cd "$build" && ctest --output-on-failure)
# ctest hides the output of skipped tests: show why the GPU tests were skipped, if they were.
if reason=$(grep -h -m1 "no CUDA device available" "$build/Testing/Temporary/LastTest.log"); then
  echo "GPU tests skipped: ${reason#*Skipped }"
fi
python3 -m pytest -q "$root/scripts/tests"
