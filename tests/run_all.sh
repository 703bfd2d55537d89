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
python3 -m pytest -q "$root/scripts/tests"
