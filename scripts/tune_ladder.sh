#!/usr/bin/env bash
# The ladder's tuning sweep: runs every `tuning` instance of the `tuned` family (and cuBLAS) at
# the tuning sizes and regenerates kernels/ladder/tuned_configs.inc from the results
# (gemm-tune-ladder), then rebuild.
#
#   scripts/tune_ladder.sh [--from-json FILE] [extra gemm-bench options]
#
# Environment: GEMM_BENCH (default build/bench/gemm-bench), TUNE_SIZES (default 1024,2048,4096,8192),
# TUNE_OUT (the JSON, default build/tune_ladder.json). --from-json skips the run and only
# regenerates the configuration file from an existing JSON (e.g. one sent back from the GPU host).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
root=$gemm_root
bench="${GEMM_BENCH:-$root/build/bench/gemm-bench}"
sizes="${TUNE_SIZES:-1024,2048,4096,8192}"
json="${TUNE_OUT:-$root/build/tune_ladder.json}"

if [[ "${1:-}" == "--from-json" ]]; then
  json="${2:?--from-json needs a file}"
  shift 2
else
  [ -x "$bench" ] || { echo "tune_ladder.sh: no $bench: build first (cmake -B build -G Ninja && cmake --build build)" >&2; exit 2; }
  # The `tuned` family's instances and cuBLAS in one run (pct_of_cublas compares them under the
  # same clocks); no counters (CUPTI replays each kernel), no end-to-end copies, no other
  # family's tuning instances. 16 benchmarks per size; at 0.1 s of GPU time each, about
  # 1-2 minutes for all four sizes on an H100.
  "$bench" --tags=tuning,reference --benchmark_filter='^gemm/fp(32|64)/(tuned|cublas)/' \
    --sizes="$sizes" --counters=off --end-to-end=off \
    --benchmark_out="$json" --benchmark_out_format=json "$@"
fi
tools=$(gemm_tools)
"$tools/gemm-tune-ladder" "$json" --out "$root/kernels/ladder/tuned_configs.inc"
echo "rebuild (cmake --build build) to compile the new configuration into the tuned variant"
