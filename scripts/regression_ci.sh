#!/usr/bin/env bash
# The regression job in one command, as CI runs it on a GPU runner (.github/workflows/gpu-regression.yml)
# and as anyone runs it by hand: build, record a tracking run (scripts/track.sh), compare it with the
# stored baseline (compare.py), append it to the GPU's history, regenerate the history and its
# dashboard (history.py), and fail on a regression.
#
# Usage: scripts/regression_ci.sh HISTORY_ROOT [--recorded RUN.json] [--no-append] [-- track.sh options]
#   HISTORY_ROOT/<gpu>/baseline.json   the stored baseline (the first run becomes it when absent)
#   HISTORY_ROOT/<gpu>/runs/NNN_<revision>.json   every appended run, in order
#   HISTORY_ROOT/<gpu>/compare.md, history.md, history.json, dashboard.html
#   --recorded RUN.json  take an already recorded run instead of building and running gemm-bench
#   --no-append          compare and draw, but leave the history as it was (a pull request)
# Exit status: 0 no regression; 1 a regression (compare.py against the baseline, or an open one in
# the history); 2 bad input or a failed build or run.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
root=$gemm_root
history_root=""; recorded=""; append=1; track_options=()
while [ $# -gt 0 ]; do
  case $1 in
    --recorded) recorded=${2:?--recorded needs a file}; shift ;;
    --no-append) append=0 ;;
    --) shift; track_options=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) history_root=$1 ;;
  esac
  shift
done
[ -n "$history_root" ] || { echo "error: usage: scripts/regression_ci.sh HISTORY_ROOT [--recorded RUN.json]" >&2; exit 2; }
tools=$(gemm_tools)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage() { printf '\n== %s\n' "$*"; }

if [ -n "$recorded" ]; then
  [ -f "$recorded" ] || { echo "error: $recorded: no such file" >&2; exit 2; }
  stage "recorded run: $recorded (no build, no gemm-bench)"
  run=$recorded
else
  stage "build (${BUILD_DIR:-$root/build})"
  build=${BUILD_DIR:-$root/build}
  gemm_build "$build" gemm-bench >"$work/build.log" 2>&1 ||
    { tail -20 "$work/build.log" 2>/dev/null; echo "error: build failed" >&2; exit 2; }
  stage "tracking run (scripts/track.sh ${track_options[*]})"
  run=$work/run.json
  BUILD_DIR=$build "$root/scripts/track.sh" "$run" "${track_options[@]}" || { echo "error: tracking run failed" >&2; exit 2; }
fi

slug=$("$tools/gemm-results" context "$run" gpu_slug --default gpu 2>/dev/null) &&
  revision=$("$tools/gemm-results" context "$run" git_revision --default unknown) ||
  { echo "error: $run: not a gemm-bench results file" >&2; exit 2; }
dir=$history_root/$slug
mkdir -p "$dir/runs"
status=0

stage "compare with the baseline ($dir/baseline.json)"
if [ -f "$dir/baseline.json" ]; then
  set +e
  "$tools/gemm-compare" "$dir/baseline.json" "$run" --markdown "$dir/compare.md" >/dev/null
  compared=$?
  set -e
  [ $compared -le 1 ] || exit 2
  tail -n 3 "$dir/compare.md"
  [ $compared = 0 ] || status=1
else
  cp "$run" "$dir/baseline.json"
  echo "no baseline yet: this run ($revision) is the baseline now"
fi

if [ $append = 1 ]; then
  count=$(find "$dir/runs" -maxdepth 1 -name '*.json' | wc -l)
  target=$dir/runs/$(printf '%03d' $((count + 1)))_${revision//[^A-Za-z0-9._+-]/_}.json
  cp "$run" "$target"
  stage "appended to the history: $target"
fi

runs=$(find "$dir/runs" -maxdepth 1 -name '*.json' | wc -l)
extra=()
[ $append = 1 ] || extra=("$run")
if [ $((runs + ${#extra[@]})) -ge 2 ]; then
  stage "history and dashboard ($dir)"
  set +e
  "$tools/gemm-history" "$dir/runs" "${extra[@]}" --out "$dir" --no-figures --dashboard "$dir/dashboard.html"
  drawn=$?
  set -e
  [ $drawn -le 1 ] || exit 2
  [ $drawn = 0 ] || status=1
else
  echo "history: $runs run(s) so far; the dashboard starts with the second"
fi
stage "verdict"
[ $status = 0 ] && echo "no regression" || echo "REGRESSION: see $dir/compare.md, $dir/history.md and $dir/dashboard.html"
exit $status
