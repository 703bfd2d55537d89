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
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
out=${1:-sanitizer-logs}
tests=${BUILD_DIR:-$root/build}/tests/gpu_tests
filter=${SANITIZE_FILTER:-CorrectnessTails/*:CorrectnessPersistent/*:CorrectnessTunedConfigs/*}
IFS=, read -r -a tools <<<"${SANITIZE_TOOLS:-memcheck,racecheck,synccheck,initcheck}"
gemm_cuda_on_path
sanitizer=$(command -v compute-sanitizer) ||
  { echo "compute-sanitizer not found: it ships with the CUDA toolkit (bin/)" >&2; exit 2; }
[ -x "$tests" ] || { echo "build first: cmake -B build -G Ninja && cmake --build build" >&2; exit 2; }
gemm_has_gpu || { echo "no NVIDIA GPU here: compute-sanitizer needs one" >&2; exit 2; }
commands=$(gemm_tools) || exit 2  # the gemm-* commands (gemm-results counts the tests)
mkdir -p "$out"

status=0
for tool in "${tools[@]}"; do
  case $tool in memcheck|racecheck|synccheck|initcheck) ;;
    *) echo "unknown tool '$tool' (memcheck, racecheck, synccheck, initcheck)" >&2; exit 2 ;; esac
  log=$out/$tool.log
  start=$(date +%s)
  # racecheck also reports hazards it can only suspect (warnings); --racecheck-report all lists them.
  extra=(); [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  report=$out/$tool.gtest.json
  rm -f "$report"
  "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 3 --print-limit 20 \
    "$tests" --gtest_filter="$filter" --gtest_output="json:$report" >"$log" 2>&1
  rc=$?
  counts=$("$commands/gemm-results" gtest "$report" 2>/dev/null || echo "passed 0, no test report")
  summary=$(grep -m1 -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" || echo "no summary line")
  echo "$tool: exit $rc in $(( $(date +%s) - start )) s; tests $counts; $summary"
  [ $rc = 0 ] || status=1
  case $counts in "passed 0,"*) echo "$tool: no test ran (filter '$filter')" >&2; status=1 ;; esac
done
exit $status
