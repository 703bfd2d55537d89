"""Do a study's numbers come back? Two results files of one study on one GPU, run back to back
(scripts/reproducibility.sh runs them): every benchmark above 1 ms SAME by compare.py's rule on
times (one missing from the second run, or failed in either, fails at any length), and the
README's headline figures (the fastest rung of each ladder at the largest square,
its GFLOP/s and its % of cuBLAS) within 2%. gemm_study/regression/reproducibility.py has the rule.

Exit status: 0 reproducible; 1 not (the page says which benchmarks or figures moved); 2 bad input.

Example: gemm-reproducibility first/results.json second/results.json --out reproducibility.md
"""

import math
import sys
from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import EXIT_OK, EXIT_REGRESSION, InputError, run_cli, writing
from gemm_study.regression import reproducibility
from gemm_study.regression.compare import Settings


def milliseconds(text):
    """--min-ms: a finite time >= 0 (-0 is 0); InputError (one line, exit status 2) otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value < 0:
        raise InputError(f"--min-ms {text}: expected a finite time in ms, >= 0")
    return value + 0.0


def main(argv=None):
    parser = command_parser("gemm-reproducibility", __doc__)
    parser.add_argument("first", type=Path, help="results JSON of the first run")
    parser.add_argument("second", type=Path, help="results JSON of the second run (counters may be off)")
    parser.add_argument("--out", type=Path, help="markdown page to write (default: print it)")
    parser.add_argument(
        "--min-ms",
        default=str(reproducibility.MIN_MS),
        help="the benchmarks that decide: first-run median launch above this, in ms "
        "(default %(default)s; missing or failed ones decide at any length)",
    )
    parser.add_argument(
        "--allow-context-mismatch",
        action="store_true",
        help="compare runs whose GPU, driver or clocks differ (the page warns)",
    )
    args = parser.parse_args(argv)
    settings = Settings(time_only=True, allow_context_mismatch=args.allow_context_mismatch)
    outcome = reproducibility.check(args.first, args.second, settings, milliseconds(args.min_ms))
    command = "gemm-reproducibility " + " ".join(str(a) for a in (argv if argv is not None else sys.argv[1:]))
    text = reproducibility.to_markdown(outcome, args.first, args.second, command)
    if args.out:
        with writing(args.out):
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    _, _, rest = reproducibility.summary_line(outcome).partition(": ")
    print(f"{'reproducible' if outcome['reproducible'] else 'NOT reproducible'}: {rest}", file=sys.stderr)
    return EXIT_OK if outcome["reproducible"] else EXIT_REGRESSION


def run():
    return run_cli(main)
