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
out=${1:-${OUT:-gpu-check-logs}}
build=${BUILD_DIR:-$root/build-gpu-check}
mkdir -p "$out" && out=$(cd "$out" && pwd)
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L >/dev/null 2>&1 || { echo "no NVIDIA GPU here" >&2; exit 2; }

status=0
say() { echo "$*" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1

start=$(date +%s)
if cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 &&
   cmake --build "$build" >"$out/build.log" 2>&1; then
  say "build: ok in $(( $(date +%s) - start )) s ($(grep -c 'warning' "$out/build.log") warning lines)"
else
  say "build: FAILED (build.log)"; tail -30 "$out/build.log"; exit 1
fi

count() {  # the numbers in gtest's summary lines `[  WORD ] N tests` of a log, added up
  grep -o "\[  $1 *\] [0-9]* test" "$2" | grep -o '[0-9]*' | awk '{n += $1} END {print n + 0}'
}
for label in cpu gpu; do
  log=$out/ctest_$label.log
  start=$(date +%s)
  (cd "$build" && ctest -L "$label" -V -j1) >"$log" 2>&1
  rc=$?
  say "ctest -L $label: exit $rc in $(( $(date +%s) - start )) s; $(grep -m1 'tests passed' "$log")"
  [ $rc = 0 ] || status=1
done
# The GPU suites' own counts: a suite whose tests all skipped would pass ctest too.
log=$out/ctest_gpu.log
say "gtest in ctest -L gpu: passed $(count PASSED "$log"), skipped $(count SKIPPED "$log"), failed $(count FAILED "$log")"

BUILD_DIR=$build SANITIZE_TOOLS=${SANITIZE_TOOLS:-memcheck,racecheck,synccheck} \
  "$root/scripts/sanitize.sh" "$out/sanitizer" 2>&1 | tee -a "$out/summary.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
say "check_house: $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status
