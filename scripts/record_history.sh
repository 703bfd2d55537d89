#!/usr/bin/env bash
# Records a regression history whose regressions are known, on a machine with an NVIDIA GPU:
# seven revisions of this tree, each built and tracked with scripts/track.sh, then history.py and
# the dashboard over them.
#
#   r0 r1     the tree as it is, built once, tracked twice (same build: a change point here is false)
#   r2        + a clock64 spin in kernel A costing ~2% of its cycles      (gemm_study/regression/inject.py)
#   r3        + a spin in kernel B costing ~5%
#   r4        + a spin in kernel C costing ~10%  (the three accumulate like real commits)
#   r5 r6     the spins taken out again, tracked twice
#
# Spins are calibrated from r0's cycles (share x kernel cycles / waves of blocks). Kernels: the
# first three of RECORD_TARGETS whose family has its own single kernel file; the tracked set is
# the FP32 benchmarks of RECORD_FAMILIES (compute-bound at 1024^3, where cycles hold still: the
# simulation behind the defaults, drift_sim.history_table, finds the 2% step in about 19 of 20
# such histories and no false step). About 4-5 minutes on an H100 with 16 cores from a cold build.
#
# Usage: scripts/record_history.sh OUT_DIR     (writes OUT_DIR/runs, history/, dashboard.html, logs/)
#   RECORD_TARGETS="warptile blocktile_2d blocktile_1d vectorized mma_tf32"  RECORD_SHARES="0.02 0.05 0.10"
#   RECORD_FAMILIES="warptile|blocktile_2d|blocktile_1d|vectorized|conflict_free|tuned|mma_tf32_pipelined"
#   RECORD_REPETITIONS=10
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
root=$gemm_root
out=${1:?usage: scripts/record_history.sh OUT_DIR}
mkdir -p "$out/runs" "$out/logs"
out=$(cd "$out" && pwd)
targets=(${RECORD_TARGETS:-warptile blocktile_2d blocktile_1d vectorized mma_tf32})
shares=(${RECORD_SHARES:-0.02 0.05 0.10})
families=${RECORD_FAMILIES:-warptile|blocktile_2d|blocktile_1d|vectorized|conflict_free|tuned|mma_tf32_pipelined}
repetitions=${RECORD_REPETITIONS:-10}
tools=$(gemm_tools)
gemm_cuda_on_path
gemm_has_gpu || { echo "error: no NVIDIA GPU here (nvidia-smi lists none)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
say() { printf '[%4d s] %s\n' $(( $(date +%s) - start )) "$*" | tee -a "$out/logs/record.log"; }

say "copying the tree (its files as they are, without reports/) to $work/tree"
mkdir -p "$work/tree"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --exclude='reports/*' --ignore-failed-read -cf - 2>/dev/null || true) | tar -xf - -C "$work/tree"
  head=${GEMM_GIT_REVISION:-$(cd "$root" && git rev-parse --short=12 HEAD)$(cd "$root" && git diff --quiet HEAD -- . || echo -dirty)}
else
  # A source export without git metadata: every file but the reports, build trees and the
  # virtual environment; GEMM_GIT_REVISION names the revision it is.
  (cd "$root" && tar --exclude='./reports' --exclude='./build*' --exclude='./.venv' -cf - .) |
    tar -xf - -C "$work/tree"
  head=${GEMM_GIT_REVISION:-unknown}
fi
tree=$work/tree
build=$work/build

build_bench() {  # LABEL
  say "build ($1)"
  GEMM_BUILD_SOURCE=$tree GEMM_GIT_REVISION=$head gemm_build "$build" gemm-bench >>"$out/logs/build.log" 2>&1 ||
    { tail -30 "$out/logs/build.log"; echo "error: build failed ($1)" >&2; exit 1; }
}

n=0
track() {  # LABEL: a tracking run labelled LABEL (context git_revision; the build's own stays in build_git_revision)
  local file
  file=$out/runs/$(printf '%02d' $n)_${1//[^A-Za-z0-9._+-]/_}.json
  say "track $1 -> $(basename "$file")"
  BUILD_DIR=$build "$root/scripts/track.sh" "$file" --precisions=fp32 \
    --benchmark_filter="^gemm/fp32/($families)/" --benchmark_repetitions="$repetitions" \
    >>"$out/logs/track.log" 2>&1 || { tail -30 "$out/logs/track.log"; echo "error: track.sh failed ($1)" >&2; exit 1; }
  "$tools/gemm-results" relabel "$file" "$1"
  n=$((n + 1))
}

build_bench "$head"
track "$head"
track "$head"

chosen=()
for family in "${targets[@]}"; do
  [ ${#chosen[@]} -lt ${#shares[@]} ] || break
  if "$tools/gemm-inject" check --tree "$tree" "$family" 2>>"$out/logs/record.log" &&
     grep -q "\"gemm/fp32/$family/" "$out/runs/00_"*.json; then
    chosen+=("$family")
  fi
done
[ ${#chosen[@]} = ${#shares[@]} ] || { echo "error: only ${#chosen[@]} injectable tracked families among ${targets[*]}" >&2; exit 1; }
pairs=()
for i in "${!chosen[@]}"; do pairs+=("${chosen[$i]}=${shares[$i]}"); done
"$tools/gemm-inject" plan --tree "$tree" --baseline "$out/runs/00_"*.json "${pairs[@]}" >"$out/injections.json"
say "plan: $(tr -d '\n' <"$out/injections.json")"

label=$head
for i in "${!chosen[@]}"; do
  family=${chosen[$i]}
  "$tools/gemm-inject" apply --tree "$tree" --plan "$out/injections.json" "$family" | tee -a "$out/logs/record.log"
  label=$label+slow-$family
  build_bench "$label"
  track "$label"
done

"$tools/gemm-inject" remove --tree "$tree" >/dev/null
build_bench "$head (spins removed)"
track "$head+removed"
track "$head+removed"

say "history and dashboard"
set +e
"$tools/gemm-history" "$out/runs" --out "$out/history" --dashboard "$out/dashboard.html" \
  | tee "$out/logs/history.log"
set -e
say "done in $(( $(date +%s) - start )) s: $out/history/history.md, $out/dashboard.html"
