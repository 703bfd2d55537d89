#!/usr/bin/env bash
# Builds everything and runs every test: CTest (CPU tests, command-line contract, and the GPU
# tests, which skip with the reason where there is no CUDA device) and the Python tools' pytest,
# in the project's virtual environment (scripts/bootstrap creates it on first use; missing
# prerequisites are named, one line each, with how to get them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/bootstrap" --cxx
python=$("$root/scripts/bootstrap")
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build"
(cd "$build" && ctest --output-on-failure)
# ctest hides the output of skipped tests: show why the GPU tests and the SASS test were skipped,
# if they were.
log=$build/Testing/Temporary/LastTest.log
if reason=$(grep -h -m1 "no CUDA device available" "$log"); then
  echo "GPU tests skipped: ${reason#*Skipped }"
fi
if reason=$(grep -h -m1 "^SKIP cuobjdump not found" "$log"); then
  echo "SASS test (cpu.sass) skipped: ${reason#SKIP }"
fi
# The Python tools' format and lint (ruff, from scripts/bootstrap --test; the GPU machine has no
# network, and the study never needs it).
if "$python" -m ruff --version >/dev/null 2>&1; then
  "$python" -m ruff format --check --quiet "$root"
  "$python" -m ruff check --quiet "$root"
  echo "ruff: format and lint clean"
else
  echo "ruff not installed: lint skipped"
fi
# The Python tools' tests, under coverage where it is installed: a rule no test reaches shows up
# as an uncovered line.
if "$python" -m coverage --version >/dev/null 2>&1; then
  "$python" -m coverage run --rcfile=/dev/null --source="$root/scripts" -m pytest -q "$root/scripts/tests"
  "$python" -m coverage report --fail-under=85 | tail -1
else
  echo "coverage not installed: tests run without it"
  "$python" -m pytest -q "$root/scripts/tests"
fi
