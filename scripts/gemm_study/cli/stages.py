"""Where a study's wall time went: the script's own stages (build, gemm-bench, cross-check,
report) and, inside gemm-bench, verification, timing and counter replay (the per-benchmark
stage_*_s counters, summed). Written to stages.json next to the results.

  gemm-stages --results R.json --stage build=12.5 --stage bench=201 --out stages.json
"""

import json
import math
from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import InputError, run_cli, writing
from gemm_study.data.results import load_results
from gemm_study.report.stages import BENCH_STAGES, INNER_STAGES, bench_stage_seconds, breakdown, text


def _stage_argument(text_value):
    name, _, seconds = text_value.partition("=")
    try:
        value = float(seconds)
    except ValueError:
        raise InputError(f"--stage {text_value!r}: expected NAME=SECONDS, e.g. build=12.5") from None
    if not name or not math.isfinite(value) or value < 0:
        raise InputError(f"--stage {text_value!r}: expected NAME=SECONDS with SECONDS >= 0")
    return name, value


def main(argv=None):
    parser = command_parser("gemm-stages", __doc__)
    parser.add_argument("--results", type=Path, help="gemm-bench JSON with stage_*_s counters")
    parser.add_argument("--stage", action="append", default=[], help="NAME=SECONDS of a script stage (repeatable)")
    parser.add_argument("--setting", action="append", default=[], help="NAME=VALUE of the study (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="stages.json (updated if it exists)")
    args = parser.parse_args(argv)
    recorded = {"stages": {}, "settings": {}}
    if args.out.is_file():
        try:
            recorded.update(json.loads(args.out.read_text()))
        except json.JSONDecodeError:
            raise InputError(f"{args.out}: not valid JSON") from None
    walls = {k: v for k, v in recorded["stages"].items() if k not in INNER_STAGES}
    walls.update(_stage_argument(s) for s in args.stage)
    recorded["settings"].update(s.partition("=")[::2] for s in args.setting)
    if args.results:
        bench_stages = bench_stage_seconds(load_results(args.results)[1])
    else:  # an update of the script's stages keeps what the results said before
        bench_stages = {k: v for k, v in recorded["stages"].items() if k in set(BENCH_STAGES.values())}
    recorded["stages"] = breakdown(walls, bench_stages)
    with writing(args.out):
        args.out.write_text(json.dumps(recorded, indent=2) + "\n")
    print(text(recorded["stages"]))
    return 0


def run():
    return run_cli(main)
