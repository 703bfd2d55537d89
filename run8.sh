#!/usr/bin/env bash
# device call 8: quick study twice (fresh .venv, then reused), counters on against off
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
rm -rf .venv
t0=$(date +%s)
{ cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGEMM_GIT_REVISION=${REV} && cmake --build build; } > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for run in 1 2; do
  t0=$(date +%s.%N)
  GEMM_GIT_REVISION=$REV timeout 100 scripts/run_study.sh --quick $OUT/quick$run > $OUT/quick_study$run.log 2>&1
  echo "quick study $run exit $? in $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s (wall, date)"
  tail -13 $OUT/quick_study$run.log | head -12
done
(cd $OUT && tar czf quick.tgz quick1 quick2 quick_study1.log quick_study2.log && rm -rf quick1 quick2)
mkdir -p $OUT/track
t0=$(date +%s)
timeout 170 scripts/track.sh $OUT/track/counters_on.json --benchmark_repetitions=5 > /dev/null 2>$OUT/track/on.err; echo "track on exit $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 170 scripts/track.sh $OUT/track/counters_off.json --benchmark_repetitions=5 --counters=off > /dev/null 2>$OUT/track/off.err; echo "track off exit $? in $(( $(date +%s) - t0 )) s"
python=$(scripts/bootstrap)
PYTHONPATH=scripts $python scripts/compare.py $OUT/track/counters_on.json $OUT/track/counters_off.json --time-only --markdown $OUT/track/on_vs_off.md > $OUT/track/on_vs_off.log 2>&1; echo "compare exit $?"
tail -4 $OUT/track/on_vs_off.log
(cd $OUT && tar czf track.tgz track && rm -rf track)
