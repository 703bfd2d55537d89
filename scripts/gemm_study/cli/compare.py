"""Compare two gemm-bench tracking runs (scripts/track.sh): drift-aware time verdicts, failed
benchmarks, and exact-counter changes with their direction.

Per benchmark, from the per-repetition rows: the statistic is cycles (each repetition's time x
its SM clock; from each sample's clock where gemm-bench recorded samples) where both files have
clocks, else median_ms (the median launch time of a repetition; real_time, Google Benchmark's
mean, only where median_ms is absent; the output says when a side differs). SLOWER needs all of
  (a) change of the medians > max(--min-effect, --noise-factor x noise), where
      noise = sqrt(spread_base^2 + spread_cand^2 + 2 x --drift^2), spread = IQR/median/1.349;
  (b) one-sided Mann-Whitney p < --alpha;
  (c) at least 4 repetitions per side, and sizes whose rank test can reach p < --alpha, else TOO_FEW.
Verdicts: SAME, SLOWER, FASTER, UNSURE (beyond the threshold, not significant), TOO_FEW, FAILED
(a candidate repetition errored, or a new benchmark errored), BASE_FAILED, MISSING, NEW. Every
counter that changed is reported with its direction; a counter is a regression where it is
guarded for the family (gemm_study/regression/guards.tsv) and got worse, or is an exact count (catalogue
stability "exact") that got worse while the time did not get faster. stage_*_s bookkeeping is
never compared. docs/regression.md has the reasons and the simulation behind the defaults.

Exit status: 0 no regression; 1 regression (SLOWER, FAILED or a counter regression; with --strict
also UNSURE, TOO_FEW and MISSING); 2 bad input (unreadable file, impossible times or clocks,
duplicate benchmarks, aggregate-only or foreign files, an --alias that matches nothing, an
unwritable output, a different GPU/driver/CUDA/clocks without --allow-context-mismatch).
"""

import json
import sys
from pathlib import Path

from gemm_study.cli.common import command_parser, fraction
from gemm_study.data.errors import EXIT_OK, EXIT_REGRESSION, InputError, run_cli, writing
from gemm_study.regression.compare import Settings, compare_files, to_markdown


def write(path, text):
    with writing(path):
        Path(path).write_text(text)


def parse_aliases(items):
    aliases = {}
    for item in items:
        cand, _, base = item.partition("=")
        if not cand or not base:
            raise InputError(f"--alias {item!r}: expected CANDIDATE_FAMILY=BASELINE_FAMILY")
        aliases[cand] = base
    return aliases


def main(argv=None):
    parser = command_parser("gemm-compare", __doc__)
    d = Settings()  # the defaults live in one place
    parser.add_argument("baseline", help="gemm-bench JSON (--benchmark_out) of the baseline")
    parser.add_argument("candidate", help="gemm-bench JSON of the candidate")
    parser.add_argument(
        "--min-effect", type=str, default=str(d.min_effect), help=f"relative change that matters ({d.min_effect:g})"
    )
    parser.add_argument(
        "--alpha", type=str, default=str(d.alpha), help=f"significance of the one-sided U test ({d.alpha:g})"
    )
    parser.add_argument(
        "--noise-factor",
        type=str,
        default=str(d.noise_factor),
        help=f"k: change must exceed k x noise ({d.noise_factor:g})",
    )
    parser.add_argument(
        "--drift",
        type=str,
        default=str(d.drift),
        help=f"between-run drift allowance, relative SD of one run's level ({d.drift:g})",
    )
    parser.add_argument(
        "--statistic",
        choices=["auto", "cycles", "time"],
        default="auto",
        help="auto: cycles where both sides recorded sm_clock_mhz, else time (auto)",
    )
    parser.add_argument(
        "--count-tolerance",
        type=str,
        default=str(d.count_tolerance),
        help=f"relative change of an exact count that is flagged ({d.count_tolerance:g})",
    )
    parser.add_argument(
        "--counter-effect",
        type=str,
        default=str(d.counter_effect),
        help=f"relative change of a noisy counter that is flagged ({d.counter_effect:g})",
    )
    parser.add_argument("--strict", action="store_true", help="UNSURE, TOO_FEW and MISSING fail too")
    parser.add_argument(
        "--allow-context-mismatch",
        action="store_true",
        help="compare runs from different GPUs, drivers, CUDA versions or clocks",
    )
    parser.add_argument(
        "--alias",
        action="append",
        default=[],
        metavar="CAND=BASE",
        help="treat the candidate's family CAND as the baseline's BASE, e.g. "
        "shared_col=shared_col_padded (compare two variants of one run)",
    )
    parser.add_argument("--time-only", action="store_true", help="compare times only, not counters")
    parser.add_argument("--markdown", help="also write the markdown table here")
    parser.add_argument("--json", help="write the full comparison as JSON here")
    args = parser.parse_args(argv)
    settings = Settings(
        min_effect=fraction("--min-effect")(args.min_effect),
        alpha=fraction("--alpha", 1e-9)(args.alpha),
        noise_factor=fraction("--noise-factor", 0, 100)(args.noise_factor),
        drift=fraction("--drift")(args.drift),
        statistic=args.statistic,
        count_tolerance=fraction("--count-tolerance")(args.count_tolerance),
        counter_effect=fraction("--counter-effect")(args.counter_effect),
        allow_context_mismatch=args.allow_context_mismatch,
        family_aliases=parse_aliases(args.alias),
        time_only=args.time_only,
        strict=args.strict,
    )
    result = compare_files(args.baseline, args.candidate, settings)
    shown = [
        Path(a).name if a.endswith((".json", ".json.gz")) else a for a in (argv if argv is not None else sys.argv[1:])
    ]
    text = "Command: `gemm-compare " + " ".join(shown) + "`\n\n" + to_markdown(result)
    if args.markdown:
        write(args.markdown, text)
    if args.json:
        write(args.json, json.dumps(result, indent=2))
    print(text)
    return EXIT_REGRESSION if result["regressions"] else EXIT_OK


def run():
    return run_cli(main)
