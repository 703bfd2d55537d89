"""How well `auto` picks, from a dispatcher sweep (scripts/tune_shapes.sh writes it): per
arithmetic, the suite's shapes and the held-out ones (tests/heldout_shapes.txt) apart, how many
shapes `auto` runs within 5% of the fastest candidate, the geometric mean and the lowest of its
share of the best anchor (the faster of cuBLAS and cuBLASLt of the arithmetic, same run), against
the targets; then per shape the kernel `auto` ran and why, the fastest candidate, the best anchor
and the waves of `auto`'s grid.

  gemm-auto-report tune_shapes_fp32_listed.json tune_shapes_fp32_reversed.json ... [--out auto.md]

Exit status: 0 every target holds, 1 one does not, 2 bad input (no dispatcher entries).
"""

import sys
from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import InputError, run_cli
from gemm_study.data.results import load_results
from gemm_study.tuning import auto_report
from gemm_study.tuning.shape_table import heldout_shapes


def main(argv=None):
    parser = command_parser("gemm-auto-report", __doc__, first_line_only=True)
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, help="write the markdown there (default: print it)")
    args = parser.parse_args(argv)
    benchmarks, runs = [], []
    for path in args.results:
        context, entries = load_results(path)
        runs.append((context, entries))
        benchmarks += entries
    rows = auto_report.rows(benchmarks, heldout_shapes())
    if not rows:
        raise InputError(
            f"{' '.join(map(str, args.results))}: no shape where auto, a candidate and an anchor "
            "all ran (run scripts/tune_shapes.sh)"
        )
    sources = ", ".join(f"`{p}`" for p in args.results)
    text = f"# `auto` against the fastest candidate and the best anchor\n\nFrom {sources}; written by `gemm-auto-report {' '.join(map(str, args.results))}`.\n\n"
    text += auto_report.runs_note(runs)
    text += auto_report.markdown(rows)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    holds = all(
        all(auto_report.summary(group).holds(arith))
        for arith in auto_report.ARITHMETICS
        for heldout in (False, True)
        if (group := [r for r in rows if r.arithmetic == arith and r.heldout == heldout])
    )
    return 0 if holds else 1


def run():
    return run_cli(main)
