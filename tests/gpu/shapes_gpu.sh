#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, the checks and measurements of the kernels for shapes beyond
# large squares (kernels/shapes/, kernels/dispatch/), in parts that each fit a few minutes on an
# H100 and each write their own logs, so one that fails loses nothing of the others:
#
#   tests/gpu/shapes_gpu.sh check [OUT_DIR]  build; CPU tests; the GPU correctness suite (every
#                                            variant at odd shapes, the split sums bit for bit
#                                            in repeated runs, their counters left at zero);
#                                            the split schedules' counter claims
#   tests/gpu/shapes_gpu.sh sanitize [OUT]   compute-sanitizer memcheck, racecheck, synccheck
#                                            on the split schedules and the padded wgmma at
#                                            shapes with tails
#   tests/gpu/shapes_gpu.sh tune  [OUT_DIR]  the sweep over the shape suites that fills the
#                                            dispatcher's table (scripts/tune_shapes.sh), then
#                                            a rebuild with it
#   tests/gpu/shapes_gpu.sh study [OUT_DIR]  auto and the cuBLAS anchors over the whole suite,
#                                            with the counters its table reads (waves, SM
#                                            activity, DRAM bytes): the per-shape table's data
#
# OUT_DIR defaults to $OUT, else shapes-gpu-logs; BUILD_DIR to build-shapes; STUDY_SUITE (study's
# shapes) to all (e.g. study: the default study's subset). A line per step goes
# to stdout and OUT_DIR/<part>/summary.txt. Exit status: 0 everything passed, 1 a step failed,
# 2 cannot run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
part=${1:-}
case $part in check|sanitize|tune|study) ;;
  *) echo "usage: $0 check|sanitize|tune|study [OUT_DIR]" >&2; exit 2 ;; esac
out=${2:-${OUT:-shapes-gpu-logs}}/$part
build=${BUILD_DIR:-$root/build-shapes}
mkdir -p "$out" && out=$(cd "$out" && pwd)
gemm_cuda_on_path
gemm_has_gpu || { echo "no NVIDIA GPU here" >&2; exit 2; }
tools=$(gemm_tools) || exit 2
: >"$out/summary.txt"
say() { echo "$*" | tee -a "$out/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1
# The revision the build says it is (GEMM_GIT_REVISION, as run_study.sh and record_history.sh
# prefer it), else the checkout's.
[ -n "${GEMM_GIT_REVISION:-}" ] && echo "$GEMM_GIT_REVISION" >"$out/revision.txt" ||
  (cd "$root" && git rev-parse HEAD 2>/dev/null || echo unknown) >"$out/revision.txt"
status=0

build() {
  local start=$(date +%s)
  if gemm_build "$build" >"$out/build.log" 2>&1; then
    say "build: ok in $(( $(date +%s) - start )) s"
  else
    say "build: FAILED (build.log)"; tail -30 "$out/build.log"; exit 1
  fi
}
bench() { "$build/bench/gemm-bench" "$@"; }

case $part in
check)
  build
  start=$(date +%s)
  (cd "$build" && ctest -L cpu -j8) >"$out/ctest_cpu.log" 2>&1 || status=1
  say "ctest -L cpu: $(grep -m1 'tests passed' "$out/ctest_cpu.log") in $(( $(date +%s) - start )) s"
  start=$(date +%s)
  "$build/tests/gpu_tests" --gtest_filter='Correctness*' --gtest_output="json:$out/gpu_correctness.json" \
    >"$out/gpu_correctness.log" 2>&1 || status=1
  say "gpu Correctness*: $("$tools/gemm-results" gtest "$out/gpu_correctness.json") in $(( $(date +%s) - start )) s"
  grep -A1 '^\[  FAILED  \]' "$out/gpu_correctness.log" | head -40 | tee -a "$out/summary.txt"
  start=$(date +%s)
  "$build/tests/gpu_tests" --gtest_filter='CountersShapes*' --gtest_output="json:$out/gpu_counters.json" \
    >"$out/gpu_counters.log" 2>&1 || status=1
  say "gpu CountersShapes*: $("$tools/gemm-results" gtest "$out/gpu_counters.json") in $(( $(date +%s) - start )) s"
  ;;
sanitize)
  build
  BUILD_DIR=$build SANITIZE_TOOLS=${SANITIZE_TOOLS:-memcheck,racecheck,synccheck} \
    SANITIZE_FILTER='CorrectnessSplitTails/*:CorrectnessWorkspace*:CorrectnessTails/*wgmma*' \
    "$root/scripts/sanitize.sh" "$out/sanitizer" 2>&1 | tee -a "$out/summary.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  ;;
tune)
  build
  start=$(date +%s)
  GEMM_BENCH=$build/bench/gemm-bench TUNE_OUT_DIR=$out "$root/scripts/tune_shapes.sh" \
    >"$out/tune.log" 2>&1 || status=1
  say "tune_shapes.sh: exit $status in $(( $(date +%s) - start )) s (tune.log; the table: kernels/dispatch/auto_table.inc, a copy in $out)"
  cp "$root/kernels/dispatch/auto_table.inc" "$out/" 2>/dev/null
  gemm_build "$build" >"$out/rebuild.log" 2>&1 || { say "rebuild: FAILED"; status=1; }
  ;;
study)
  build
  start=$(date +%s)
  # auto per arithmetic against the anchors (cuBLAS and cuBLASLt of the same arithmetic), the
  # whole suite, in the sustained power state from 2048^3 as the study does, with the counters
  # the suite's table reads: the SMs' busy cycles (the tail of the last wave) and the DRAM bytes
  # (the decode shapes' bound); the waves come from the launch facts without a replay.
  bench --suite="${STUDY_SUITE:-all}" --tags=dispatch,reference --end-to-end=off \
    --counter-metrics=sm_active_cycles_min,sm_active_cycles_avg,sm_active_cycles_max,sm_cycles_elapsed,dram_read_bytes,dram_write_bytes,gpu_time_ns \
    --benchmark_filter='^gemm/fp(32|64)/(auto|auto_tf32|cublas|cublaslt|cublas_tf32|cublaslt_tf32)/' \
    --benchmark_out="$out/suite.json" --benchmark_out_format=json >"$out/suite.log" 2>&1 || status=1
  say "suite study: exit $status in $(( $(date +%s) - start )) s ($out/suite.json)"
  ;;
esac
say "shapes_gpu.sh $part: $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status
