"""Where a warp state is sampled in a kernel: the opcodes of the SASS lines that Nsight Compute's
source page (`ncu -i R --csv --page source --print-source sass`, as gemm-source-counters keeps it)
gives the state's samples, each with its share of them.

  gemm-source-states reports/h100-80gb-hbm3/source/rungs_329c4da/fp32.warptile.*.csv.gz --state dispatch

--state is the page's name without `stall_` (dispatch, long_sb, short_sb, math, mio, wait,
barrier, not_selected, ...). Exit status: 0, or 2 on bad input (no such page, no such state).
"""

from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import InputError, run_cli
from gemm_study.data.results import read_text
from gemm_study.ncu import source_page


def main(argv=None):
    parser = command_parser("gemm-source-states", __doc__)
    parser.add_argument("pages", type=Path, nargs="+", help="source-page CSV exports (.csv or .csv.gz)")
    parser.add_argument("--state", required=True)
    parser.add_argument("--top", type=int, default=5, help="opcodes shown per page")
    args = parser.parse_args(argv)
    if args.top < 1:
        raise InputError(f"--top {args.top}: expected a whole number >= 1")
    for path in args.pages:
        lines = source_page.parse_source_csv(read_text(path, "a source page"))
        if not any(args.state in states for _, _, _, states in lines):
            raise InputError(f"{path}: no state {args.state!r} on the page")
        shares, of_all = source_page.samples_by_opcode(lines, args.state)
        where = ", ".join(f"{op} {100 * s:.0f}%" for op, s in list(shares.items())[: args.top]) or "never sampled"
        print(f"{path.name}: {args.state} {100 * of_all:.1f}% of the samples; on {where}")
    return 0


def run():
    return run_cli(main)
