#!/usr/bin/env bash
# tests/run_all.sh's steps on the GPU machine at $REV, without coverage tracing (which does not
# fit a call), in two parts whose trees each fit the transfer: PART=a builds, runs every CTest
# test and the pytest files that need no reports/h200; PART=b the pytest files that read it.
set -uo pipefail
REV=${REV:?}; PART=${PART:?}
out=$OUT/run_all_${REV}_$PART; mkdir -p "$out"
t0=$(date +%s)
log() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/calls.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/gpu.csv"
python=$(scripts/bootstrap)
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
scripts/bootstrap --cxx > "$out/bootstrap.log" 2>&1
GEMM_GIT_REVISION=$REV cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/cmake.log" 2>&1 && cmake --build build >> "$out/cmake.log" 2>&1 || { log "build failed"; tail -20 "$out/cmake.log"; exit 1; }
log built
H200_FILES="test_drift_sim.py test_suite_table.py test_latency.py test_compare.py test_regression_ci.py test_history.py test_facts.py test_study_tools.py test_same_output.py"
if [ "$PART" = a ]; then
  (cd build && timeout 330 ctest --output-on-failure > "$out/ctest.log" 2>&1); log "ctest rc=$? ($(grep 'tests passed' "$out/ctest.log"))"
  ignore=$(for f in $H200_FILES; do printf -- "--ignore=scripts/tests/%s " "$f"; done)
  left=$(( 560 - ($(date +%s) - t0) ))
  PYTHONUNBUFFERED=1 timeout $left "$python" -m pytest -q -p no:cacheprovider -rfs $ignore scripts/tests > "$out/pytest.log" 2>&1
else
  left=$(( 560 - ($(date +%s) - t0) ))
  PYTHONUNBUFFERED=1 timeout $left "$python" -m pytest -q -p no:cacheprovider -rfs $(for f in $H200_FILES; do printf "scripts/tests/%s " "$f"; done) > "$out/pytest.log" 2>&1
fi
log "pytest rc=$? ($(tail -1 "$out/pytest.log"))"
gzip -9 "$out/pytest.log"
