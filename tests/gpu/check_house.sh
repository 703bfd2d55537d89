#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds, runs the CPU and GPU tests, and compute-sanitizer
# (memcheck, racecheck, synccheck) over every rung, its sweep instances and the tuned rung's
# configurations at shapes with tails and whole tiles (scripts/sanitize.sh's suites). Every log
# goes to OUT_DIR; a summary line per step goes to stdout and OUT_DIR/summary.txt.
#
#   tests/gpu/check_house.sh [OUT_DIR]      (default: $OUT, else gpu-check-logs)
#   BUILD_DIR (default build-gpu-check), SANITIZE_TOOLS (default memcheck,racecheck,synccheck)
#
# Exit status: 0 everything passed and every tool was clean, 1 otherwise, 2 cannot run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
out=${1:-${OUT:-gpu-check-logs}}
build=${BUILD_DIR:-$root/build-gpu-check}
mkdir -p "$out" && out=$(cd "$out" && pwd)
gemm_cuda_on_path
gemm_has_gpu || { echo "no NVIDIA GPU here" >&2; exit 2; }
tools=$(gemm_tools) || exit 2

status=0
say() { echo "$*" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1

start=$(date +%s)
if gemm_build "$build" >"$out/build.log" 2>&1; then
  say "build: ok in $(( $(date +%s) - start )) s ($(grep -c 'warning' "$out/build.log") warning lines)"
else
  say "build: FAILED (build.log)"; tail -30 "$out/build.log"; exit 1
fi

# GoogleTest writes a JSON report per test binary run into gtest_<label>/ (ctest runs the GPU
# suites as separate runs of one binary: gpu_tests.json, gpu_tests_1.json, ...).
for label in cpu gpu; do
  log=$out/ctest_$label.log
  start=$(date +%s)
  rm -rf "$out/gtest_$label" && mkdir -p "$out/gtest_$label"
  (cd "$build" && GTEST_OUTPUT="json:$out/gtest_$label/" ctest -L "$label" -V -j1) >"$log" 2>&1
  rc=$?
  say "ctest -L $label: exit $rc in $(( $(date +%s) - start )) s; $(grep -m1 'tests passed' "$log")"
  [ $rc = 0 ] || status=1
done
# The GPU suites' own counts: a suite whose tests all skipped would pass ctest too.
say "gtest in ctest -L gpu: $("$tools/gemm-results" gtest "$out"/gtest_gpu/*.json)"

BUILD_DIR=$build SANITIZE_TOOLS=${SANITIZE_TOOLS:-memcheck,racecheck,synccheck} \
  "$root/scripts/sanitize.sh" "$out/sanitizer" 2>&1 | tee -a "$out/summary.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
say "check_house: $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status
