#!/usr/bin/env bash
# Builds, runs every test (GPU tests included), checks that the printed ncu command selects
# exactly one benchmark's kernel, and dumps the SASS of the shared-memory kernels.
# Usage: scripts/gpu_check.sh OUT_DIR   (run on a machine with an NVIDIA GPU)
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
out=${1:?usage: scripts/gpu_check.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$gemm_root" || exit 2  # build/ and its tests are the checkout's
gemm_build build >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv | tee "$out/gpu.txt"
(cd build && ctest --output-on-failure -j1 >"$out/ctest.log" 2>&1); echo "ctest exit $?"
grep -E "tests passed|Failed|FAILED|SKIPPED|\*\*\*" "$out/ctest.log" | head -40
cuobjdump -sass build/kernels/libgemm_kernels.a 2>/dev/null |
  awk '/Function :/{f=$3} /LDS|STS/{match($0,/(LDS|STS)[.A-Z0-9]*/); print f, substr($0,RSTART,RLENGTH)}' |
  sort | uniq -c >"$out/shared_instructions.txt"
name="gemm/fp32/naive_col/block:32x32/m:1024/n:1024/k:1024"
cmd=$(build/bench/gemm-bench --ncu-command="$name" | sed 's/--set full/--metrics gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum/; s| -o [^ ]* | -o '"$out"'/ncu_check |')
echo "$cmd" | tee "$out/ncu_command.txt"
eval "$cmd" >"$out/ncu_run.log" 2>&1; echo "ncu exit $?"
ncu -i "$out/ncu_check.ncu-rep" --csv --page raw --print-units base \
  --metrics gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
  >"$out/ncu_check.csv" 2>&1
echo "profiled kernels: $(($(wc -l <"$out/ncu_check.csv") - 2))"; cut -c1-300 "$out/ncu_check.csv"
