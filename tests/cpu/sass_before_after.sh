#!/usr/bin/env bash
# The SASS of every kernel the study runs at two revisions, side by side (sass_compare.py). ptxas
# output depends on the source file's path, so each revision is built in turn at the same path
# (a scratch folder, removed afterwards): differences in the report are the code's.
#
#   tests/cpu/sass_before_after.sh REV_BEFORE REV_AFTER OUT.md
#   SASS_WORK: a scratch folder to use and keep (default: a new one under TMPDIR, removed).
#   cuobjdump: on PATH or in GEMM_CUDA_TOOLS (scripts/bootstrap's .venv has it once
#   `pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` ran, as .ci/run does).
# Exit status: 0 written, 1 a build failed, 2 bad usage.
set -euo pipefail
[ $# = 3 ] || { echo "usage: tests/cpu/sass_before_after.sh REV_BEFORE REV_AFTER OUT.md" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
before=$(git -C "$root" rev-parse --short=12 "$1^{commit}") || exit 2
after=$(git -C "$root" rev-parse --short=12 "$2^{commit}") || exit 2
out=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
if [ -n "${SASS_WORK:-}" ]; then
  work=$SASS_WORK  # kept afterwards, with before.json and after.json
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/gemm-sass.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
# The project's Python: sass_compare.py reads the main loops with the study's own code.
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
python="$(gemm_tools)/python"

for side in before after; do
  rev=${!side}
  rm -rf "$work/src" "$work/build"
  mkdir -p "$work/src"
  git -C "$root" archive "$rev" | tar -x -C "$work/src"
  echo "building $side ($rev) at $work/src: gemm_kernels" >&2
  cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGEMM_GIT_REVISION="$rev" >"$work/$side.configure.log" 2>&1 ||
    { tail -20 "$work/$side.configure.log" >&2; exit 1; }
  cmake --build "$work/build" --target gemm_kernels >"$work/$side.build.log" 2>&1 ||
    { tail -20 "$work/$side.build.log" >&2; exit 1; }
  "$python" "$root/tests/cpu/sass_compare.py" collect "$work/build" --label "$rev" \
    --out "$work/$side.json"
done
"$python" "$root/tests/cpu/sass_compare.py" report "$work/before.json" "$work/after.json" \
  --out "$out" --shown-command "tests/cpu/sass_before_after.sh $before $after $3"
echo "wrote $out" >&2
