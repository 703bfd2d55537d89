#!/usr/bin/env python3
"""Regression history over tracking runs of successive revisions (one scripts/track.sh run per
revision): GFLOP/s and chosen counters of every tracked benchmark across revisions with their
noise bands, the revisions where a verdict changed marked, and history.md naming the first
revision of each regression. Each run is compared with the run before it by compare.py's rule.

Order of the runs (oldest first): by default the order of the arguments, where a folder gives
its *.json files in file-name order (name them 01_<rev>.json, 02_<rev>.json, ...). With
--order-by FIELD the runs are sorted by that field of their context instead, as numbers when
every value is one, else as text (e.g. --order-by date: Google Benchmark's ISO-8601 run time).
A run is labelled by context["git_revision"] (12 characters), or by its file name where the
revision is "unknown".

Example: scripts/history.py reports/h200/regression/history --out reports/h200/regression/history
(a folder given as a run source skips history.json, so the output may live beside the runs)

Writes OUT/history.md, OUT/history.json and OUT/history_<family>.png. Exit status: 0 written
(regressions are reported, not failed: use compare.py to gate a change), 2 bad input.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import fraction  # noqa: E402
from gemm_study.catalogue import load_catalogue  # noqa: E402
from gemm_study.compare import Settings  # noqa: E402
from gemm_study.errors import EXIT_OK, InputError, run_cli  # noqa: E402
from gemm_study.history import build, load_history, write_all  # noqa: E402

DEFAULT_COUNTERS = "smem_ld_wavefronts_per_request,gld_sectors_per_request"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="tracking runs (gemm-bench JSON) or folders of them, oldest first")
    parser.add_argument("--out", required=True, help="folder for history.md, history.json and the figures")
    parser.add_argument("--order-by", default="args", metavar="FIELD",
                        help="'args' (the order given, the default) or a context field to sort by")
    parser.add_argument("--counters", default=DEFAULT_COUNTERS,
                        help=f"catalogue counters drawn beside GFLOP/s, comma-separated ({DEFAULT_COUNTERS})")
    parser.add_argument("--min-effect", default="0.03", help="as compare.py (0.03)")
    parser.add_argument("--alpha", default="0.05", help="as compare.py (0.05)")
    parser.add_argument("--noise-factor", default="3", help="as compare.py (3)")
    parser.add_argument("--drift", default="0.01", help="as compare.py (0.01)")
    parser.add_argument("--statistic", choices=["auto", "cycles", "time"], default="auto", help="as compare.py")
    parser.add_argument("--allow-context-mismatch", action="store_true", help="as compare.py")
    args = parser.parse_args(argv)
    counters = [c for c in args.counters.split(",") if c]
    unknown = [c for c in counters if c not in load_catalogue()]
    if unknown:
        raise InputError(f"--counters: {', '.join(unknown)} not in the metric catalogue")
    settings = Settings(min_effect=fraction("--min-effect")(args.min_effect),
                        alpha=fraction("--alpha", 1e-9)(args.alpha),
                        noise_factor=fraction("--noise-factor", 0, 100)(args.noise_factor),
                        drift=fraction("--drift")(args.drift), statistic=args.statistic,
                        allow_context_mismatch=args.allow_context_mismatch)
    history = build(load_history(args.runs, args.order_by), settings, counters)
    shown = " ".join(argv if argv is not None else sys.argv[1:])
    path = write_all(history, args.out, counters, "scripts/history.py " + shown)
    print(f"wrote {path}: {len(history['runs'])} revisions, {len(history['regressions'])} regressions")
    for entry in history["regressions"]:
        print(f"  {entry['benchmark']}: first at {entry['first_revision']}: {entry['what']}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
