#!/usr/bin/env bash
# The dispatcher's sweep: every candidate of every arithmetic at every shape of the suites and of
# the held-out list (tests/heldout_shapes.txt), with the cuBLAS anchors and the dispatchers as
# they are built, then kernels/dispatch/auto_table.inc from the suite's shapes (gemm-tune-shapes;
# the held-out ones never enter it) and auto.md beside the JSON (gemm-auto-report: how well the
# built `auto` picked); rebuild to compile the new table into `auto`.
#
#   scripts/tune_shapes.sh [--no-table] [--from-json FILE...] [extra gemm-bench options]
#
# --no-table leaves auto_table.inc as it is: the run then only judges the built `auto` (after a
# rebuild with a new table, its report is the table's evaluation).
# Candidates: the kernels for shapes that take their K split from the device (gemv ks:0,
# split_k, split_k_mma and split_k_wgmma slices:0, stream_k, stream_k_wgmma), the tuned rung, and the tensor rungs'
# representatives; not the fixed-split tuning instances (tag tuning: run them by hand to study a
# shape). Two gemm-bench runs per precision (FP32 holds the FP32 and TF32 arithmetics), one to
# two minutes each on an H100: no counters, no end-to-end copies, every shape as a burst (the
# anchors too, in the same run). Back to back, FP64 and tensor-core kernels hold an H100 at its
# 700 W cap, and a kernel's time would follow the power its predecessors drew (the same kernel
# 10 to 40% apart between two runs); so every burst starts after a rest as long as the GPU was
# busy (--cool-down, at most 0.1 s), and the runs differ in order, each shape's benchmarks as
# listed, then reversed (the dispatchers come last as listed): the tools take every kernel's
# median over both runs.
#
# Environment: GEMM_BENCH (default build/bench/gemm-bench), TUNE_SUITE (default all),
# TUNE_OUT_DIR (the JSON files tune_shapes_<precision>_<order>.json, default build),
# TUNE_ORDERS (default "listed reversed"), TUNE_PRECISIONS (default "fp32 fp64": one of them
# alone splits the sweep over two sittings). --from-json skips the runs and only regenerates the
# table from existing JSON files (e.g. ones sent back from the GPU host).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
root=$gemm_root
bench="${GEMM_BENCH:-$root/build/bench/gemm-bench}"
suite="${TUNE_SUITE:-all}"
dir="${TUNE_OUT_DIR:-$root/build}"
table=1

# --no-table and --from-json FILE... anywhere; everything else goes to gemm-bench.
files=() passthrough=() from_json=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --no-table) table=0; shift ;;
    --from-json)
      from_json=1; shift
      while [[ $# -gt 0 && "$1" != --* ]]; do files+=("$1"); shift; done ;;
    *) passthrough+=("$1"); shift ;;
  esac
done
if [ $from_json = 1 ]; then
  [ ${#files[@]} -gt 0 ] || { echo "tune_shapes.sh: --from-json needs files" >&2; exit 2; }
else
  [ -x "$bench" ] || { echo "tune_shapes.sh: no $bench: build first (cmake -B build -G Ninja && cmake --build build)" >&2; exit 2; }
  mkdir -p "$dir"
  families='cublas|cublaslt|cublas_tf32|cublaslt_tf32|tuned|gemv|gemv_cols|split_k|split_k_mma|stream_k'
  families+='|split_k_wgmma|stream_k_wgmma'
  families+='|wgmma_tma|wgmma_persistent|wgmma_rows|mma_tf32_pipelined|mma_fp64|mma_fp64_m16n8k16'
  families+='|auto|auto_tf32'
  heldout=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/tests/heldout_shapes.txt" | tr -d ' ' | paste -sd,)
  for precision in ${TUNE_PRECISIONS:-fp32 fp64}; do
    for order in ${TUNE_ORDERS:-listed reversed}; do
      json="$dir/tune_shapes_${precision}_$order.json"
      "$bench" --suite="$suite" --shapes="$heldout" --precisions="$precision" \
        --tags=reference,ladder,tensor_core,shapes,dispatch \
        --benchmark_filter="^gemm/$precision/($families)/" \
        --counters=off --end-to-end=off --sustained-from=off --cool-down=0.1 --order="$order" \
        --benchmark_out="$json" --benchmark_out_format=json "${passthrough[@]}"
      files+=("$json")
    done
  done
fi
# The project's Python (scripts/bootstrap) where it exists: the tools need numpy.
tools=$(gemm_tools)
if [ "$table" = 1 ]; then
  "$tools/gemm-tune-shapes" "${files[@]}" --out "$root/kernels/dispatch/auto_table.inc" ||
    { echo "tune_shapes.sh: the sweep's JSON is in ${files[*]}: run scripts/tune_shapes.sh --from-json ${files[*]} where the Python tools run" >&2; exit 1; }
  echo "rebuild (cmake --build build) to compile the new table into auto and auto_tf32"
fi
# How the built auto picked in this sweep. Exit 1 is a target missed, not a failure of the run;
# 2, a sweep without the dispatchers (recorded before they were swept): no report.
report_dir=$(dirname "${files[0]}")
status=0
"$tools/gemm-auto-report" "${files[@]}" --out "$report_dir/auto.md" || status=$?
case $status in
  0|1) ;;
  2) echo "tune_shapes.sh: no auto report: ${files[*]} hold no auto or auto_tf32 benchmarks" >&2 ;;
  *) echo "tune_shapes.sh: gemm-auto-report failed on ${files[*]}" >&2; exit 1 ;;
esac
