#!/usr/bin/env bash
# The whole study in one command: build, run every variant at the study's shapes with counters,
# cross-check CUPTI against Nsight Compute, and write reports/<gpu>/ (results JSON, ncu exports,
# report.md, CSV tables, figures). Without a GPU it says so, runs the serial CPU baseline and
# points to the committed GPU results.
#
# Usage: scripts/run_study.sh [OUTPUT_ROOT]      (default: reports)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out_root=${1:-$root/reports}
build=${BUILD_DIR:-$root/build}
sizes=${STUDY_SIZES:-256,512,1024,2048,4096}

# GEMM_GIT_REVISION names the revision where the tree is not a git checkout.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  ${GEMM_GIT_REVISION:+-DGEMM_GIT_REVISION=$GEMM_GIT_REVISION} >/dev/null
cmake --build "$build" >/dev/null
bench=$build/bench/gemm-bench

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "No NVIDIA GPU here: running the serial CPU baseline only."
  "$bench" --cpu-only --sizes=256,512
  echo "Results measured on GPUs are committed under $root/reports/ (see reports/*/report.md)."
  exit 0
fi

work=$(mktemp -d)
cmd="scripts/run_study.sh (gemm-bench --sizes=$sizes --benchmark_out=results.json --benchmark_out_format=json)"
echo "running: $cmd"
"$bench" --sizes="$sizes" --benchmark_out="$work/results.json" --benchmark_out_format=json \
  >"$work/gemm-bench.log" 2>&1 || { tail -20 "$work/gemm-bench.log"; exit 1; }
slug=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["context"]["gpu_slug"])' "$work/results.json")
out=$out_root/$slug
mkdir -p "$out"
cp "$work/results.json" "$work/gemm-bench.log" "$out/"

mkdir -p "$out/ncu"
echo "cross-checking CUPTI with ncu (--clock-control none)"
python3 "$root/scripts/ncu_crosscheck.py" --bench "$bench" --shape 1024x1024x1024 --out "$out/ncu" \
  >"$out/ncu/crosscheck.log" 2>&1 || echo "ncu cross-check reported a disagreement or failed: see $out/ncu/"
python3 "$root/scripts/report.py" "$out/results.json" --out "$out" --command "$cmd" \
  $( [ -f "$out/ncu/ncu_crosscheck.md" ] && echo --ncu-crosscheck "$out/ncu/ncu_crosscheck.md" )
echo "study written to $out (report: $out/report.md)"
