#!/usr/bin/env python3
"""Compare two gemm-bench results files: noise-aware time verdicts and counter verdicts.

Exit status: 0 no regression, 1 regression (a SLOWER benchmark or a worse exact counter),
2 bad input (unreadable file, different GPU/driver/CUDA/clocks without --allow-context-mismatch).
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_study.compare import Settings, compare_files, to_markdown  # noqa: E402
from gemm_study.errors import EXIT_OK, EXIT_REGRESSION, InputError, run_cli  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", help="gemm-bench JSON (--benchmark_out) of the baseline")
    parser.add_argument("candidate", help="gemm-bench JSON of the candidate")
    parser.add_argument("--min-effect", type=float, default=0.03, help="relative time change that matters (0.03)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance of the one-sided U test (0.05)")
    parser.add_argument("--count-tolerance", type=float, default=0.001,
                        help="relative change of an exact count that is flagged (0.001)")
    parser.add_argument("--counter-effect", type=float, default=0.10,
                        help="relative change of a noisy counter that is flagged (0.10)")
    parser.add_argument("--allow-context-mismatch", action="store_true",
                        help="compare runs from different GPUs, drivers, CUDA versions or clocks")
    parser.add_argument("--alias", action="append", default=[], metavar="CAND=BASE",
                        help="treat the candidate's family CAND as the baseline's BASE, e.g. "
                             "shared_col=shared_col_padded (compare two variants of one run)")
    parser.add_argument("--time-only", action="store_true", help="compare times only, not counters")
    parser.add_argument("--markdown", type=Path, help="also write the markdown table here")
    parser.add_argument("--json", type=Path, help="write the full comparison as JSON here")
    args = parser.parse_args(argv)
    for name, value, low, high in [("--min-effect", args.min_effect, 0, 1), ("--alpha", args.alpha, 0, 1),
                                   ("--count-tolerance", args.count_tolerance, 0, 1),
                                   ("--counter-effect", args.counter_effect, 0, 1)]:
        if not low <= value < high:
            raise InputError(f"{name} {value}: expected a fraction in [{low}, {high})")
    aliases = {}
    for item in args.alias:
        if "=" not in item:
            raise InputError(f"--alias {item!r}: expected CANDIDATE_FAMILY=BASELINE_FAMILY")
        cand, base = item.split("=", 1)
        aliases[cand] = base
    settings = Settings(args.min_effect, args.alpha, args.count_tolerance, args.counter_effect,
                        args.allow_context_mismatch, aliases, args.time_only)
    result = compare_files(args.baseline, args.candidate, settings)
    shown = [Path(a).name if a.endswith(".json") else a for a in (argv if argv is not None else sys.argv[1:])]
    text = "Command: `scripts/compare.py " + " ".join(shown) + "`\n\n" + to_markdown(result)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return EXIT_REGRESSION if result["regressions"] else EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
