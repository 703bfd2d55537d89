#!/usr/bin/env bash
# device call 9: counters on against off in tracking runs (both precisions, 10 repetitions)
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
t0=$(date +%s)
{ cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGEMM_GIT_REVISION=${REV} && cmake --build build; } > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
mkdir -p $OUT/track
t0=$(date +%s)
timeout 200 scripts/track.sh $OUT/track/counters_on.json > /dev/null 2>$OUT/track/on.err; echo "track on exit $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 200 scripts/track.sh $OUT/track/counters_off.json --counters=off > /dev/null 2>$OUT/track/off.err; echo "track off exit $? in $(( $(date +%s) - t0 )) s"
python=$(scripts/bootstrap)
PYTHONPATH=scripts $python scripts/compare.py $OUT/track/counters_on.json $OUT/track/counters_off.json --time-only --markdown $OUT/track/on_vs_off.md > $OUT/track/on_vs_off.log 2>&1; echo "compare exit $?"
tail -4 $OUT/track/on_vs_off.log
(cd $OUT && tar czf track.tgz track && rm -rf track)
