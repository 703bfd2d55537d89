#!/usr/bin/env bash
# Do the study's numbers come back on this GPU? The default study (scripts/run_study.sh), then at
# once the same study again with times only (STUDY_COUNTERS=off STUDY_CROSSCHECK=off: about half
# its time), then gemm-reproducibility on the two: every benchmark above 1 ms SAME by
# compare.py's rule, and the README's headline figures within 2%.
#
# Usage: scripts/reproducibility.sh OUT_DIR
#   writes OUT_DIR/first/<gpu>/ (the whole study: results, report, ncu/), OUT_DIR/second/<gpu>/
#   (its times) and OUT_DIR/reproducibility.md. The study's settings (STUDY_SIZES, ...) apply to
#   both runs.
# Exit status: 0 reproducible, 1 not (the page says what moved), 2 bad input or a failed study.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
root=$gemm_root
out=${1:-}
[ -n "$out" ] && [ $# -eq 1 ] || { echo "error: usage: scripts/reproducibility.sh OUT_DIR" >&2; exit 2; }
gemm_has_gpu || { echo "error: no NVIDIA GPU here (nvidia-smi lists none): both runs need one" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd)

results_of() {  # RUN_DIR: the one results.json the study wrote under it
  local found=() file
  for file in "$1"/*/results.json; do [ -f "$file" ] && found+=("$file"); done
  [ ${#found[@]} -eq 1 ] ||
    { echo "error: expected one $1/<gpu>/results.json, found ${#found[@]}${found[0]:+: ${found[*]}}" >&2; exit 2; }
  echo "${found[0]}"
}

echo "== first run: the default study"
"$root/scripts/run_study.sh" "$out/first" || { echo "error: the first study failed" >&2; exit 2; }
echo "== second run, back to back: times only"
STUDY_COUNTERS=off STUDY_CROSSCHECK=off "$root/scripts/run_study.sh" "$out/second" ||
  { echo "error: the second study failed" >&2; exit 2; }
# Assigned first: an exit inside $(...) ends only that subshell, and set -e acts on an assignment,
# not on an argument (the comparison would run on an empty path).
first_json=$(results_of "$out/first")
second_json=$(results_of "$out/second")
tools=$(gemm_tools)
"$tools/gemm-reproducibility" "$first_json" "$second_json" --out "$out/reproducibility.md"
