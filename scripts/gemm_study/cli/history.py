"""Regression history over tracking runs of many revisions (one scripts/track.sh run each): per
benchmark, the change points of its whole series (Apache Otava's e-divisive search with
compare.py's step test, merged as Otava does), the regressions they add up to with the first bad
revision, the step and the counters that stepped with it, and failures; history.md,
history.json, one figure per family and, with --dashboard, the dashboard page.

Order of the runs (oldest first): by date, the default: the commit date where every run's context
has git_commit_date, ties and all other runs by the run date (context date); --order-by args keeps
the order given (a folder gives its *.json files in name order); --order-by FIELD sorts by another
context field. The output says which. A run is labelled by context git_revision (12 characters
and what follows, e.g. +unpadded), or by its file name where the revision is "unknown".

Statistic: cycles (time x SM clock, per repetition; from each sample's clock where gemm-bench
recorded them) where every revision of the benchmark has clocks, else time. Defaults (docs/
regression.md, drift_sim): a step must exceed max(1.5%, 3 x noise), noise with a 0.4% drift
allowance per run in cycles (1% in time), one-sided Mann-Whitney p < 0.05, 4 repetitions a side.

Example: gemm-history runs/ --out runs/ --dashboard runs/dashboard.html
Exit status: 0 written, no open regression; 1 written, an open regression (the latest revision is
slower than its last good level, fails, or has a guarded counter worse); 2 bad input.
"""

import sys
from pathlib import Path

from gemm_study.cli.common import command_parser, fraction
from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.errors import EXIT_OK, EXIT_REGRESSION, InputError, run_cli, writing
from gemm_study.regression.compare import Settings
from gemm_study.regression.history import build, load_history, write_all
from gemm_study.regression.series import HISTORY_DEFAULTS, require_change_point_search

DEFAULT_COUNTERS = "smem_ld_wavefronts_per_request,gld_sectors_per_request"


def settings_from(args):
    return Settings(
        min_effect=fraction("--min-effect")(args.min_effect),
        alpha=fraction("--alpha", 1e-9)(args.alpha),
        noise_factor=fraction("--noise-factor", 0, 100)(args.noise_factor),
        drift=fraction("--drift")(args.drift),
        time_drift=fraction("--time-drift")(args.time_drift),
        statistic=args.statistic,
        allow_context_mismatch=args.allow_context_mismatch,
    )


def add_rule_options(parser):
    d = HISTORY_DEFAULTS
    parser.add_argument(
        "--min-effect", default=str(d["min_effect"]), help=f"smallest step that counts ({d['min_effect']:g})"
    )
    parser.add_argument("--alpha", default="0.05", help="one-sided Mann-Whitney significance (0.05)")
    parser.add_argument("--noise-factor", default="3", help="k: a step must exceed k x noise (3)")
    parser.add_argument(
        "--drift", default=str(d["drift"]), help=f"between-run drift allowance per run, cycles ({d['drift']:g})"
    )
    parser.add_argument(
        "--time-drift",
        default=str(d["time_drift"]),
        help=f"the same for series without clocks, compared in time ({d['time_drift']:g})",
    )
    parser.add_argument(
        "--statistic",
        choices=["auto", "cycles", "time"],
        default="auto",
        help="auto: cycles where every revision recorded clocks, else time",
    )
    parser.add_argument("--allow-context-mismatch", action="store_true", help="as compare.py")


def main(argv=None):
    parser = command_parser("gemm-history", __doc__)
    parser.add_argument("runs", nargs="+", help="tracking runs (gemm-bench JSON) or folders of them")
    parser.add_argument("--out", required=True, help="folder for history.md, history.json and the figures")
    parser.add_argument(
        "--order-by",
        default="date",
        metavar="FIELD",
        help="date (default: commit date, then run date), args, or a context field",
    )
    parser.add_argument(
        "--counters",
        default=DEFAULT_COUNTERS,
        help=f"catalogue counters drawn beside the time, comma-separated ({DEFAULT_COUNTERS})",
    )
    parser.add_argument("--dashboard", type=Path, help="also write the dashboard page (one HTML file) here")
    parser.add_argument("--no-figures", action="store_true", help="skip the PNG figures (the dashboard draws its own)")
    add_rule_options(parser)
    args = parser.parse_args(argv)
    require_change_point_search()
    counters = [c for c in args.counters.split(",") if c]
    unknown = [c for c in counters if c not in load_catalogue()]
    if unknown:
        raise InputError(f"--counters: {', '.join(unknown)} not in the metric catalogue")
    settings = settings_from(args)
    runs, how = load_history(args.runs, args.order_by, settings.allow_context_mismatch)
    history = build(runs, settings, counters, how)
    shown = " ".join(argv if argv is not None else sys.argv[1:])
    path = write_all(history, args.out, counters, "gemm-history " + shown, figures=not args.no_figures)
    if args.dashboard:
        from gemm_study.regression.dashboard import page

        with writing(args.dashboard):
            args.dashboard.parent.mkdir(parents=True, exist_ok=True)
            args.dashboard.write_text(page(history))
    open_ones = [e for e in history["regressions"] if e["open"]]
    print(
        f"wrote {path}: {len(history['runs'])} revisions ordered {how}; "
        f"{len(history['regressions'])} regressions, {len(open_ones)} open"
    )
    for entry in history["regressions"]:
        state = "open" if entry["open"] else f"recovered at {entry['recovered']}"
        print(f"  {entry['benchmark']}: first bad {entry['first_revision']}: {entry['what']} ({state})")
    return EXIT_REGRESSION if open_ones else EXIT_OK


def run():
    return run_cli(main)
