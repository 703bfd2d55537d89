#!/usr/bin/env bash
# Records a regression-tracking run: the benchmarks tagged "tracked", 1024^3, kernel time only,
# 10 repetitions per benchmark kept as separate rows (compare.py's rank test needs them),
# repetitions randomly interleaved across benchmarks so that clock and thermal drift during the
# run spreads over every benchmark instead of biasing whichever ran first; counters on. Each row
# carries sm_clock_mhz and clock_throttled, which compare.py uses to compare cycles.
#
# Usage: scripts/track.sh OUTPUT.json [extra gemm-bench flags]
# Then:  gemm-compare BASELINE.json CANDIDATE.json      (exit 0 same, 1 regression, 2 bad input)
#        gemm-history RUN1.json RUN2.json ... --out DIR  (one run per revision, oldest first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/track.sh OUTPUT.json [gemm-bench flags]}
shift
bench=${BUILD_DIR:-$root/build}/bench/gemm-bench
[ -x "$bench" ] || { echo "build first: cmake -B build -G Ninja && cmake --build build" >&2; exit 2; }
"$bench" --tags=tracked --sizes=1024 --end-to-end=off --min-time=0.02 \
  --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true \
  --benchmark_out="$out" --benchmark_out_format=json "$@" >/dev/null
echo "recorded $out"
