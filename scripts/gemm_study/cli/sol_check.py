"""The bottleneck account's limiter against Nsight Compute's Speed-of-Light breakdown, per
benchmark: the account's limiter (from gemm-bench's counters and time) and ncu's busiest unit
(from its SpeedOfLight section on the same benchmarks) side by side; exit status 1 when any
limiter disagrees, 2 for bad input.

On a GPU, at a shape that is not a study size (3000^3: no multiple of 128, 103 MB of FP32
operands, twice the H100's L2):

  S=3000x3000x3000; mkdir -p sol
  build/bench/gemm-bench --shapes=$S --tags=ladder,tensor_core,reference --end-to-end=off \\
      --benchmark_out=sol/results.json --benchmark_out_format=json
  ncu --nvtx --nvtx-include 'regex:gemm@gemm.*/timed/' --clock-control none --cache-control none \\
      --section SpeedOfLight --metrics "$(gemm-sol-check --print-metrics)" -o sol/sol -f \\
      build/bench/gemm-bench --profile --shapes=$S --tags=ladder,tensor_core,reference --end-to-end=off
  ncu -i sol/sol.ncu-rep --csv --page raw --print-units base > sol/sol.csv
  gemm-sol-check sol/results.json sol/sol.csv --out sol/sol_check.md

--clock-control none and --cache-control none: ncu sees the clocks and the warm L2 gemm-bench
timed in (docs/nsight-compute.md).
"""

from pathlib import Path

from gemm_study.analysis import account
from gemm_study.cli.common import command_parser
from gemm_study.data.errors import InputError, run_cli, writing
from gemm_study.data.names import strip_manual_time
from gemm_study.data.results import load_frame, one_row_per_benchmark
from gemm_study.ncu import session as ncu
from gemm_study.ncu import sol


def main(argv=None):
    parser = command_parser("gemm-sol-check", __doc__)
    parser.add_argument("results", type=Path, nargs="?", help="gemm-bench JSON of the benchmarks, counters on")
    parser.add_argument("ncu_csv", type=Path, nargs="?", help="ncu -i REP --csv --page raw --print-units base")
    parser.add_argument("--out", type=Path, help="also write the table here (markdown)")
    parser.add_argument(
        "--print-metrics",
        action="store_true",
        help="print the --metrics list for ncu (the breakdowns and the account's units) and exit",
    )
    args = parser.parse_args(argv)
    if args.print_metrics:
        print(",".join([*sol.BREAKDOWNS, *sol.account_metrics()]))
        return 0
    if not (args.results and args.ncu_csv):
        raise InputError("give the results JSON and the ncu CSV export (or --print-metrics)")
    if not args.ncu_csv.is_file():
        raise InputError(f"{args.ncu_csv}: no such file")
    context, frame = load_frame(args.results)
    frame = one_row_per_benchmark(frame)
    kernel = frame[~frame.end_to_end & frame.error.isna()]
    measured = ncu.sum_by_benchmark(ncu.parse_raw_csv(args.ncu_csv.read_text()))
    checks = []
    for _, row in kernel.iterrows():
        name = strip_manual_time(row["name"])
        if name in measured:
            checks.append(sol.check(name, row, account.account(row, context), measured[name]))
    if not checks:
        raise InputError(f"no benchmark of {args.results} is in {args.ncu_csv}")
    text = sol.markdown(checks)
    print(text)
    if args.out:
        with writing(args.out):
            args.out.write_text(text + "\n")
    return 1 if any(c.agree is False for c in checks) else 0


def run():
    return run_cli(main)
