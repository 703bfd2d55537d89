#!/usr/bin/env bash
# The CUPTI-vs-Nsight Compute cross-check at the shapes that show whether its rule holds on any
# shape, and the L2 states behind the DRAM bytes where it did not, into one folder:
#
#   scripts/ncu_crosscheck_shapes.sh OUT [GEMM_BENCH]
#
#   OUT/1024x1024x1024/   the study's shape (A+B+C within L2), every benchmark tagged crosscheck
#   OUT/1000x1000x1000/   no multiple of 128, A+B+C within L2, the same benchmarks
#   OUT/3000x2000x1500/   no multiple of 128, A+B+C 1.03x (FP32) and 2.06x (FP64) the H100's L2:
#                         the ladder and tensor-core rungs (the write-ups' kernels would take
#                         minutes there)
#   OUT/cache_states_1536/  FP64 1536^3 (A+B+C 54 MiB, just above 50 MiB of L2): DRAM bytes by
#                         CUPTI three ways and ncu three ways (gemm-ncu-cache-states)
#   OUT/summary.txt       each step's exit status and seconds
#
# Needs a GPU, ncu and a built gemm-bench (default build/bench/gemm-bench). Exit status 1 when a
# cross-check has a required agreement that fails (or a step fails), 0 when all hold.
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
root=$gemm_root
out=${1:?usage: scripts/ncu_crosscheck_shapes.sh OUT [GEMM_BENCH]}
bench=${2:-$root/build/bench/gemm-bench}
tools=${GEMM_TOOLS:-$(gemm_tools)} || exit 2  # GEMM_TOOLS: a folder of gemm-* commands
mkdir -p "$out" || exit 2
summary=$out/summary.txt
: >"$summary"
status=0

step() {  # NAME COMMAND...
  local name=$1 start rc
  shift
  start=$(date +%s)
  "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "$name: exit $rc, $(($(date +%s) - start)) s" | tee -a "$summary"
  [ "$rc" -eq 0 ] || status=1
}

for shape in 1024x1024x1024 1000x1000x1000; do
  step "$shape" "$tools/gemm-ncu-crosscheck" --bench "$bench" --shape "$shape" --out "$out/$shape"
done
step 3000x2000x1500 "$tools/gemm-ncu-crosscheck" --bench "$bench" --shape 3000x2000x1500 \
  --also-tagged ladder,tensor_core --out "$out/3000x2000x1500"
step cache_states_1536 "$tools/gemm-ncu-cache-states" --bench "$bench" \
  --shape 1536x1536x1536 --precisions fp64 --out "$out/cache_states_1536"
for table in "$out"/*/ncu_crosscheck.md; do
  [ -f "$table" ] && echo "$(basename "$(dirname "$table")"): $(grep "required agreements hold" "$table")" | tee -a "$summary"
done
exit $status
