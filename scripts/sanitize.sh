#!/usr/bin/env bash
# compute-sanitizer over the rungs: memcheck (out-of-bounds and misaligned accesses), racecheck
# (shared-memory hazards between threads), synccheck (barriers that not every thread reaches)
# and initcheck (reads of uninitialized global memory), each on the GPU tests' CorrectnessTails
# suite (every ladder and tensor-core rung at shapes with whole tiles and tails in M, N and K),
# CorrectnessTunedConfigs (the tuned rung's configuration of every size at those shapes) and
# CorrectnessPersistent (the persistent grids at a shape where each block walks several tiles).
# One log per tool under OUT_DIR; the summary line of each log is printed.
#
# Usage: scripts/sanitize.sh [OUT_DIR]     (default: sanitizer-logs)
#   SANITIZE_TOOLS=memcheck,racecheck,synccheck,initcheck
#   SANITIZE_FILTER=CorrectnessTails/*:CorrectnessPersistent/*:CorrectnessTunedConfigs/*
# Exit status: 0 every tool clean, 1 a tool reported errors or a test failed, 2 cannot run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-sanitizer-logs}
tests=${BUILD_DIR:-$root/build}/tests/gpu_tests
filter=${SANITIZE_FILTER:-CorrectnessTails/*:CorrectnessPersistent/*:CorrectnessTunedConfigs/*}
IFS=, read -r -a tools <<<"${SANITIZE_TOOLS:-memcheck,racecheck,synccheck,initcheck}"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
sanitizer=$(command -v compute-sanitizer) ||
  { echo "compute-sanitizer not found: it ships with the CUDA toolkit (bin/)" >&2; exit 2; }
[ -x "$tests" ] || { echo "build first: cmake -B build -G Ninja && cmake --build build" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "no NVIDIA GPU here: compute-sanitizer needs one" >&2; exit 2; }
mkdir -p "$out"

status=0
for tool in "${tools[@]}"; do
  case $tool in memcheck|racecheck|synccheck|initcheck) ;;
    *) echo "unknown tool '$tool' (memcheck, racecheck, synccheck, initcheck)" >&2; exit 2 ;; esac
  log=$out/$tool.log
  start=$(date +%s)
  # racecheck also reports hazards it can only suspect (warnings); --racecheck-report all lists them.
  extra=(); [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 3 --print-limit 20 \
    "$tests" --gtest_filter="$filter" >"$log" 2>&1
  rc=$?
  passed=$(grep -m1 -o '\[  PASSED  \] [0-9]* test' "$log" | grep -o '[0-9]*' || echo 0)
  skipped=$(grep -m1 -o '\[  SKIPPED \] [0-9]* test' "$log" | grep -o '[0-9]*' || echo 0)
  summary=$(grep -m1 -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" || echo "no summary line")
  echo "$tool: exit $rc in $(( $(date +%s) - start )) s; tests passed $passed, skipped $skipped; $summary"
  [ $rc = 0 ] || status=1
  if [ "$passed" = 0 ]; then echo "$tool: no test ran (filter '$filter')" >&2; status=1; fi
done
exit $status
