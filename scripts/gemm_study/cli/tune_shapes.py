"""Fills the `auto` dispatcher's table: the fastest verified variant per arithmetic and shape of
a suite sweep (scripts/tune_shapes.sh), written as kernels/dispatch/auto_table.inc, and every
candidate's time at every suite shape beside it (auto_times.inc: what auto's model scales to the
shapes the table does not hold).

  gemm-tune-shapes RESULTS.json [MORE.json ...] [--out kernels/dispatch/auto_table.inc] [--dry-run]

Arithmetics, and the variants that may serve each (a variant serves an arithmetic when its
result is at least as accurate; the references and the dispatchers themselves never do):
  fp32  FP32 storage, FP32 arithmetic on the CUDA cores (auto in fp32; anchor cublas, cublaslt)
  tf32  FP32 storage, TF32 or FP32 arithmetic (auto_tf32; anchor cublas_tf32, cublaslt_tf32)
  fp64  FP64 (auto in fp64; anchor cublas, cublaslt: DGEMM on the tensor cores)
A variant's time at a shape is the median over repetitions of its median launch time; failed
benchmarks (wrong result, refused) never win. Within 2% of the fastest, a variant that takes its
K split from the device (a `ks` or `slices` parameter of 0) wins over one with a fixed split,
since the dispatcher reuses a winner's configuration at shapes the table does not hold.
With several files, a later file's (arithmetic, shape) replaces the earlier files' results.
The shapes of tests/heldout_shapes.txt never enter the table or the times: `auto` is judged on them
(gemm-auto-report).
Exit status: 0 written, 2 bad input (no candidates, unreadable JSON).
"""

import sys

from gemm_study.cli.common import sweep_parser
from gemm_study.data.errors import InputError, run_cli
from gemm_study.data.shape import Shape
from gemm_study.tuning import sweep
from gemm_study.tuning.shape_table import (
    DEFAULT_OUT,
    collect,
    heldout_shapes,
    render,
    render_times,
    times_path,
    winners,
)


def main(argv=None):
    args = sweep_parser("gemm-tune-shapes", __doc__, DEFAULT_OUT, "table").parse_args(argv)
    try:
        (times, anchors), sources = sweep.read_sweeps(args.results, collect)
        heldout = heldout_shapes()
        wins = winners(times, anchors, heldout)
        if not wins:
            raise InputError(
                f"{' '.join(map(str, args.results))} has no successful candidate "
                "benchmarks (run scripts/tune_shapes.sh)"
            )
        sweep.emit(render(wins, "; ".join(sources)), args.out, args.dry_run)
        sweep.emit(render_times(times, "; ".join(sources), heldout), times_path(args.out), args.dry_run)
    except InputError as e:
        print(f"tune_shapes: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"tune_shapes: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    if args.dry_run:
        return 0
    for arith, shape, name, ms, _, anchor, anchor_ms in wins:
        share = f" {100.0 * anchor_ms / ms:.0f}% of {anchor}" if anchor else ""
        print(f"{arith} {Shape(*shape)}: {name}{share}")
    print(f"wrote {args.out} and {times_path(args.out)}")
    return 0


def run():
    return run_cli(main)
