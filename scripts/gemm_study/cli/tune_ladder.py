"""Picks the fastest tuning instance of the ladder's `tuned` family per precision and problem size
from gemm-bench JSON files, and writes them as kernels/ladder/tuned_configs.inc.

  tune_ladder.py RESULTS.json [MORE.json ...] [--out kernels/ladder/tuned_configs.inc] [--dry-run]

With several files, a (precision, size) measured in a later file replaces the earlier files' results
for it (e.g. a re-sweep of FP64 after a change to its kernel on top of a full sweep).

Only benchmarks of family `tuned` tagged `tuning` count; failed ones are ignored (a configuration
that fails or is refused at a size cannot win there). With repetitions, a configuration's speed is
the median of its repetitions' GFLOP/s. A non-cubic shape counts at the cube edge of its M*N*K.
A configuration is the variant's parameter fields as gemm-bench recorded them (in the kernel
configuration's field order; `mbar` only where set), written back as a designated initializer of
PipelinedConfig (kernels/ladder/pipelined_kernel.cuh).
Exit status: 0 written, 2 bad input (no tuning results, unreadable JSON).
"""

import sys

from gemm_study.cli.common import sweep_parser
from gemm_study.data.errors import InputError, run_cli
from gemm_study.tuning import sweep
from gemm_study.tuning.ladder_configs import DEFAULT_OUT, PRECISIONS, collect, render, winners


def main(argv=None):
    args = sweep_parser("gemm-tune-ladder", __doc__, DEFAULT_OUT, "file").parse_args(argv)
    try:
        (speeds,), sources = sweep.read_sweeps(args.results, collect)
    except InputError as e:
        print(f"tune_ladder: {e}", file=sys.stderr)
        return 2
    wins = winners(speeds)
    shown = " ".join(str(p) for p in args.results)
    if not wins:
        print(
            f"tune_ladder: {shown} has no successful `tuned` tuning benchmarks (run gemm-bench --tags=tuning)",
            file=sys.stderr,
        )
        return 2
    missing = set(PRECISIONS) - {w[0] for w in wins}
    if missing:
        print(
            f"tune_ladder: no results for {', '.join(sorted(missing))}: the tuned rung needs both precisions",
            file=sys.stderr,
        )
        return 2
    text = render(wins, "; ".join(sources))
    try:
        sweep.emit(text, args.out, args.dry_run)
    except OSError as e:
        print(f"tune_ladder: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    if not args.dry_run:
        for precision, size, config, best, _ in wins:
            print(f"{precision} {size}^3: {dict(config)} {best:.0f} GFLOP/s")
        print(f"wrote {args.out}")
    return 0


def run():
    return run_cli(main)
