"""The study's report: from one gemm-bench results JSON to report.md, CSV and JSON tables and
figures.

report.md opens with a summary (each ladder at the headline shape: GFLOP/s, % of the libraries
of the same arithmetic, the limiter and explained share of the bottleneck account, the tally of
predicted steps) and a table of contents; then the ladders at every shape (rungs from the family
manifest, the account of each, every step predicted and checked), the GPU's ceilings and the
roofline, every variant at the largest shape, the write-ups' tile sweeps, seed 001's series, the
end-to-end times, the write-ups' tables on this GPU, the CUPTI-vs-ncu cross-check (its table in
ncu/, linked) and the study's time breakdown. Beside it: results.csv (every benchmark, every
field, the account's columns), account.json (per benchmark: each unit's time at peak, the
limiter, explained, or the reason there is no account), ladder_steps.csv (every step: measured,
predicted, verdict, sentence) and the figures. Runs with repetitions show the median.

Example: gemm-report reports/h100/results.json --out reports/h100
"""

from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import InputError, run_cli, writing
from gemm_study.report.study_report import load_kernel_runs, write_report


def main(argv=None):
    parser = command_parser("gemm-report", __doc__)
    parser.add_argument("results", type=Path, help="gemm-bench JSON (--benchmark_out)")
    parser.add_argument("--out", type=Path, required=True, help="folder for report.md, CSV and figures")
    parser.add_argument("--ncu-crosscheck", type=Path, help="ncu_crosscheck.md to link (copied to OUT/ncu/)")
    parser.add_argument(
        "--ncu",
        type=Path,
        action="append",
        default=[],
        help="an ncu raw CSV export (ncu -i R --csv --page raw) of the same benchmarks: "
        "adds a CUPTI-vs-ncu agreement table in OUT/ncu/agreement.md (repeatable)",
    )
    parser.add_argument("--command", default="", help="the command that produced the results, for the report")
    args = parser.parse_args(argv)
    context, kernel, e2e, errors = load_kernel_runs(args.results)
    if args.ncu_crosscheck and not args.ncu_crosscheck.is_file():
        raise InputError(f"{args.ncu_crosscheck}: no such file")
    with writing(args.out):
        write_report(args, context, kernel, e2e, errors)
    return 0


def run():
    return run_cli(main)
