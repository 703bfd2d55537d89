#!/usr/bin/env bash
# The whole study in one command: build, run gemm-bench's default selection at the study's shapes
# with counters, cross-check CUPTI against Nsight Compute on the variants tagged crosscheck, write
# reports/<gpu>/ (results JSON, ncu exports, report.md, CSV tables, figures, logs, stages.json) and
# print where the time went. Without a GPU it says so, runs the serial CPU baseline and points to
# the committed GPU results.
#
# Usage: scripts/run_study.sh [--quick] [OUTPUT_ROOT]        (default OUTPUT_ROOT: reports)
#   --quick   under a minute: 1024 and 2048, FP32 only, no end-to-end, cross-check on 1
#             benchmark, no seed 001 series
#
# Settings (environment; docs/running.md has the time of each stage on an H100):
#   STUDY_SIZES=512,1024,2048,4096   STUDY_PRECISIONS=fp32,fp64
#   STUDY_MIN_TIME, STUDY_MAX_TIME (seconds), STUDY_CI (percent): gemm-bench's --min-time,
#                       --max-time and --ci, the samples per benchmark (default: gemm-bench's)
#   STUDY_END_TO_END=on              STUDY_CROSSCHECK_SHAPE=1024x1024x1024
#   STUDY_SEED_SERIES=on (off quick): seed 001's one-thread-per-block series and the serial CPU
#                       baseline at the largest cube under the series' cap, into the same results
#   STUDY_TAGS=seed,ladder,tensor_core,reference,cpu (gemm-bench --tags: the ladder and its
#                       references; the kernels for other shapes are studied over the shape
#                       suite, tests/gpu/shapes_gpu.sh study)
#   STUDY_CROSSCHECK_LIMIT=0 (0: every benchmark tagged crosscheck)   BUILD_DIR=build
#   The cross-check takes CUPTI's side from the study's own results and keeps an earlier
#   cross-check in the output folder made with the same driver, CUDA, GPU, metric catalogue and
#   collection code (STUDY_CROSSCHECK=fresh runs ncu regardless).
#   STUDY_COUNTERS=on, STUDY_CROSSCHECK=on: off for a run that only re-measures times (about
#                       half the study's time), e.g. the second of two runs that compare.py checks
#   STUDY_COUNTERS_CAP (gemm-bench --counters-cap: the write-ups' kernels' counters up to N^3;
#                       default gemm-bench's, 1024)
#   GEMM_GIT_REVISION names the revision where the tree is not a git checkout.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
root=$gemm_root

quick=0
out_root=$root/reports
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) out_root=$1 ;;
  esac
  shift
done

if [ $quick = 1 ]; then
  sizes=${STUDY_SIZES:-1024,2048}; precisions=${STUDY_PRECISIONS:-fp32}
  end_to_end=${STUDY_END_TO_END:-off}; crosscheck_limit=${STUDY_CROSSCHECK_LIMIT:-1}
  seed_series=${STUDY_SEED_SERIES:-off}
else
  sizes=${STUDY_SIZES:-512,1024,2048,4096}; precisions=${STUDY_PRECISIONS:-fp32,fp64}
  end_to_end=${STUDY_END_TO_END:-on}; crosscheck_limit=${STUDY_CROSSCHECK_LIMIT:-0}
  seed_series=${STUDY_SEED_SERIES:-on}
fi
counters_cap=${STUDY_COUNTERS_CAP:-}
counters=${STUDY_COUNTERS:-on}; crosscheck=${STUDY_CROSSCHECK:-on}
case $counters in on|off) ;; *) echo "error: STUDY_COUNTERS=$counters: expected on or off" >&2; exit 2 ;; esac
case $crosscheck in on|off|fresh) ;; *) echo "error: STUDY_CROSSCHECK=$crosscheck: expected on, off or fresh" >&2; exit 2 ;; esac
# The samples per benchmark: gemm-bench's defaults unless set.
sampling=(${STUDY_MIN_TIME:+--min-time="$STUDY_MIN_TIME"} ${STUDY_MAX_TIME:+--max-time="$STUDY_MAX_TIME"}
          ${STUDY_CI:+--ci="$STUDY_CI"})
crosscheck_shape=${STUDY_CROSSCHECK_SHAPE:-1024x1024x1024}
build=${BUILD_DIR:-$root/build}
bench=$build/bench/gemm-bench
# Logs live in the build folder until gemm-bench has named the GPU, then are copied into the
# report folder; the build log survives a failed or GPU-less study.
logs=$build/study-logs
work=""  # gemm-bench's output before the report folder is known; removed on exit
trap '[ -z "$work" ] || rm -rf "$work"' EXIT

stage() { printf '\n== %s\n' "$*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
declare -A seconds=()

stage "prerequisites"
t=$(now)
"$root/scripts/bootstrap" --cxx
tools=$(gemm_tools)  # the gemm-* commands; creates .venv on first use
gemm_cuda_on_path
seconds[prerequisites]=$(since "$t")

stage "build ($build, log: $logs/build.log)"
t=$(now)
rm -rf "$logs" && mkdir -p "$logs"  # this study's logs only
# ninja's progress lines ([k/N] what it builds) reach the terminal; everything goes to the log.
gemm_build "$build" 2>&1 |
  tee "$logs/build.log" | { grep --line-buffered -E '^\[[0-9]+/[0-9]+\]' | cut -c1-110 || true; } ||
  { tail -20 "$logs/build.log"; echo "build failed: $logs/build.log" >&2; exit 1; }
seconds[build]=$(since "$t")
echo "built in ${seconds[build]} s (log: $logs/build.log)"

if ! gemm_has_gpu; then
  stage "no NVIDIA GPU here (nvidia-smi lists none)"
  if [ $quick = 1 ]; then what="--quick's GPU part (sizes $sizes, $precisions)"; else what="the study (sizes $sizes, $precisions)"; fi
  echo "Not run: $what, its counters, the ncu cross-check and the report: they need a GPU."
  echo "Runs here: the serial CPU baseline at 256^3 and 512^3 (gemm-bench --cpu-only --sizes=256,512)."
  "$bench" --cpu-only --sizes=256,512 2>&1 | tee "$logs/cpu-baseline.log" || true
  echo "Results measured on GPUs are committed under $root/reports/ (see reports/*/report.md); logs: $logs"
  exit 0
fi

work=$(mktemp -d)
tags=${STUDY_TAGS:-seed,ladder,tensor_core,reference,cpu}
options=(--sizes="$sizes" --precisions="$precisions" "${sampling[@]}" --end-to-end="$end_to_end"
         --tags="$tags" ${counters_cap:+--counters-cap="$counters_cap"})
[ "$counters" = off ] && options+=(--counters=off)
cmd="scripts/run_study.sh$( [ $quick = 1 ] && echo ' --quick' || true) (gemm-bench ${options[*]} --benchmark_out=results.json)"
stage "gemm-bench: verify, time and count every variant (${options[*]})"
t=$(now)
# Progress ([k/N] name GFLOP/s elapsed ETA) is on stderr: shown and logged; the console table is logged.
"$bench" "${options[@]}" --benchmark_out="$work/results.json" --benchmark_out_format=json \
  >"$logs/gemm-bench.log" 2> >(tee "$logs/gemm-bench.progress.log" >&2) ||
  { tail -20 "$logs/gemm-bench.log"; echo "gemm-bench failed: logs in $logs" >&2; exit 1; }
# Seed 001's one-thread-per-block series (single_thread_blocks, 1 to 1024 blocks) is capped below
# the study's sizes: it runs at the largest cube under its cap (gemm-bench --help names the caps)
# with the serial CPU baseline of that shape, kernel only and end to end (the write-up's speedups
# include the copies), without counters (they would replay its second-long launches many times),
# and its entries join the results.
if [ "$seed_series" = on ]; then
  edge=$("$bench" --cap-edge=single_thread_blocks 2>/dev/null || true)
  if [ -n "$edge" ]; then
    series=(--sizes="$edge" --precisions="$precisions" "${sampling[@]}" --end-to-end=on --counters=off
            --benchmark_filter='^gemm(_e2e)?/fp[0-9]+/(single_thread_blocks|cpu_serial)/')
    cmd="$cmd; seed 001 series: gemm-bench ${series[*]}"
    echo "seed 001 series at ${edge}^3: gemm-bench ${series[*]}"
    "$bench" "${series[@]}" --benchmark_out="$work/series.json" --benchmark_out_format=json \
      >"$logs/seed-series.log" 2>&1 ||
      { tail -20 "$logs/seed-series.log"; echo "gemm-bench (seed 001 series) failed: logs in $logs" >&2; exit 1; }
    "$tools/gemm-results" append "$work/results.json" "$work/series.json"
  else
    echo "seed 001 series not run: gemm-bench --cap-edge names no cap for single_thread_blocks"
  fi
fi
seconds[bench]=$(since "$t")
slug=$("$tools/gemm-results" context "$work/results.json" gpu_slug)
out=$out_root/$slug
mkdir -p "$out/ncu" "$out/logs"
cp "$work/results.json" "$out/"
rm -f "$out/stages.json"

# Each instruction form's throughput per SM per clock (FFMA ... HGMMA), which the bottleneck
# account turns instruction counts into time with (pipe_peaks.json beside the results).
rm -f "$out/pipe_peaks.json"  # a file of an earlier study in this folder would join these results
if [ "$counters" = on ] && [ -x "$build/bench/pipe-peaks" ]; then
  stage "pipe peaks: each instruction form's throughput per SM per clock (bench/pipe_peaks.cu)"
  t=$(now)
  "$build/bench/pipe-peaks" --json="$out/pipe_peaks.json" 2>&1 | tee "$logs/pipe_peaks.log" ||
    echo "pipe-peaks failed (logs/pipe_peaks.log): the account counts tensor work in busy cycles"
  seconds["pipe peaks"]=$(since "$t")
fi

# The build's machine code (sass.json.gz beside the results): each rung's main loop, which the
# report's step sentences compare beside the account (so not in a times-only run, nor in
# --quick, whose minute it would cost a third of). Needs cuobjdump (the CUDA toolkit's binary
# utilities).
rm -f "$out/sass.json" "$out/sass.json.gz"
cuobjdump_bin=$(command -v cuobjdump || echo "${GEMM_CUDA_TOOLS:-/usr/local/cuda/bin}/cuobjdump")
if [ "$counters" = on ] && [ $quick = 0 ] && [ -x "$cuobjdump_bin" ]; then
  stage "sass: the main loop of every kernel the study ran (tests/cpu/sass_compare.py collect)"
  t=$(now)
  if "$tools/python" "$root/tests/cpu/sass_compare.py" collect "$build" --cuobjdump "$cuobjdump_bin" \
      --out "$out/sass.json" >"$logs/sass.log" 2>&1; then
    gzip -f "$out/sass.json"
  else
    echo "sass_compare.py failed (logs/sass.log): the step sentences leave out the machine code"
  fi
  seconds[sass]=$(since "$t")
elif [ "$counters" = on ] && [ $quick = 0 ]; then
  echo "no cuobjdump: the step sentences leave out the machine code"
fi

# The rungs whose main loop holds a nested loop (a tile loaded element by element): how often each
# SASS line runs per warp and k-tile, from ncu's source counters (source_counters.json beside the
# results), so that the account simulates the path a warp takes. Needs the sass stage and ncu
# (found as the ncu tools find it: PATH, then the CUDA and Nsight Compute folders).
rm -f "$out/source_counters.json"
if [ -f "$out/sass.json.gz" ]; then
  stage "source counters: the executed path of the rungs with a nested loop (gemm-source-counters)"
  t=$(now)
  "$tools/gemm-source-counters" "$out/results.json" --bench "$bench" --out "$out/source_counters.json" \
    >"$logs/source_counters.log" 2>&1 ||
    echo "gemm-source-counters failed (logs/source_counters.log): those rungs keep the latency term"
  tail -2 "$logs/source_counters.log"
  seconds["source counters"]=$(since "$t")
fi

if [ "$crosscheck" != off ]; then
  stage "cross-check: CUPTI vs ncu at $crosscheck_shape (tag crosscheck$([ "$crosscheck_limit" != 0 ] && echo ", first $crosscheck_limit"))"
  t=$(now)
  reuse=(--reuse-if-unchanged)
  [ "$crosscheck" = fresh ] && reuse=()
  # CUPTI's side: the study's own counters (where counters were on), measured again only for
  # benchmarks the study did not count fully.
  cupti=()
  [ "$counters" = on ] && cupti=(--cupti "$out/results.json")
  "$tools/gemm-ncu-crosscheck" --bench "$bench" --shape "$crosscheck_shape" \
    --precisions "$precisions" --limit "$crosscheck_limit" --out "$out/ncu" "${cupti[@]}" "${reuse[@]}" 2>&1 |
    tee "$logs/crosscheck.log" |
    tail -3 || echo "ncu cross-check reported a disagreement or failed: see $out/ncu/ and logs/crosscheck.log"
  seconds[crosscheck]=$(since "$t")
else
  stage "cross-check: not run (STUDY_CROSSCHECK=off)"
fi

record_stages() {  # the breakdown so far, into stages.json next to the results
  local args=() name
  for name in "${!seconds[@]}"; do args+=(--stage "$name=${seconds[$name]}"); done
  "$tools/gemm-stages" --results "$out/results.json" --out "$out/stages.json" "${args[@]}" \
    --setting "sizes=$sizes" --setting "precisions=$precisions" --setting "sampling=${sampling[*]:-gemm-bench defaults}" \
    --setting "end_to_end=$end_to_end" --setting "quick=$quick" \
    --setting "counters_cap=${counters_cap:-default}" --setting "counters=$counters" \
    --setting "crosscheck=$crosscheck"
}
record_stages >/dev/null

stage "report"
t=$(now)
crosscheck_md=()
[ -f "$out/ncu/ncu_crosscheck.md" ] && crosscheck_md=(--ncu-crosscheck "$out/ncu/ncu_crosscheck.md")
"$tools/gemm-report" "$out/results.json" --out "$out" --command "$cmd" "${crosscheck_md[@]}" \
  2>&1 | tee "$logs/report.log"
seconds[report]=$(since "$t")
cp "$logs"/* "$out/logs/"

stage "where the time went (also in $out/stages.json)"
record_stages
echo "study written to $out (report: $out/report.md)"
