#!/usr/bin/env bash
# device call 10: the refactored wgmma rungs: correctness, counters, sanitizers, timing
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
t0=$(date +%s)
{ cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGEMM_GIT_REVISION=${REV} && cmake --build build; } > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout 60 build/tests/gpu_tests --gtest_filter='CorrectnessPersistent*:CorrectnessTails/*wgmma*:Correctness/*wgmma*:CountersTensor*' > $OUT/tests.log 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $OUT/tests.log | head
SANITIZE_FILTER='CorrectnessPersistent/*:CorrectnessTails/*wgmma*' SANITIZE_TOOLS=memcheck,racecheck,synccheck timeout 60 scripts/sanitize.sh $OUT/san; echo "sanitize exit $?"
timeout 60 build/bench/gemm-bench --sizes=4096,8192 --precisions=fp32 --end-to-end=off --counters=off \
  --benchmark_filter='/(wgmma_tma|wgmma_persistent|cublas_tf32)/' --benchmark_out=$OUT/wgmma.json --benchmark_out_format=json > $OUT/wgmma.log 2>&1
echo "bench exit $?"; grep -E "GFLOP/s" $OUT/wgmma.log | tail -6
