#!/usr/bin/env bash
# Records a regression-tracking run: fixed shapes, 10 repetitions per benchmark (per-repetition
# rows are kept for the Mann-Whitney test), counters on. Compare two such files with
# scripts/compare.py BASELINE.json CANDIDATE.json.
#
# Usage: scripts/track.sh OUTPUT.json [extra gemm-bench flags]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/track.sh OUTPUT.json [gemm-bench flags]}
shift
bench=${BUILD_DIR:-$root/build}/bench/gemm-bench
[ -x "$bench" ] || { echo "build first: cmake -B build -G Ninja && cmake --build build" >&2; exit 2; }
"$bench" --sizes=1024 --end-to-end=off --min-time=0.02 --benchmark_repetitions=10 \
  --benchmark_filter='^gemm/fp(32|64)/(cublas|naive_(row|col)|shared[a-z_]*)/' \
  --benchmark_out="$out" --benchmark_out_format=json "$@" >/dev/null
echo "recorded $out"
