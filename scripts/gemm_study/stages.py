"""Where a study's wall time went: the script's own stages (build, gemm-bench, cross-check,
report) and, inside gemm-bench, input generation, verification, warm-up, timing, the cuBLAS
reference's timing and counter replay (the per-benchmark stage_*_s counters, summed). Written to stages.json next to the results.

  python3 -m gemm_study.stages --results R.json --stage build=12.5 --stage bench=201 --out stages.json
"""
import argparse
import json
import math
import sys
from pathlib import Path

from .errors import InputError, run_cli, writing
from .results import load_results

STAGES_FILE = "stages.json"
# gemm-bench's per-benchmark bookkeeping counters -> the stage they measure.
BENCH_STAGES = {"stage_inputs_s": "inputs", "stage_verify_s": "verify", "stage_warmup_s": "warmup",
                "stage_timing_s": "timing", "stage_reference_s": "reference",
                "stage_counters_s": "counters"}
# Stages inside gemm-bench's wall time ('bench'): shown indented, never added to the total.
INNER_STAGES = set(BENCH_STAGES.values()) | {"bench other"}
# Order of the breakdown; stages not listed come after, in the order they were recorded.
ORDER = ["prerequisites", "build", "bench", "inputs", "verify", "warmup", "timing", "reference", "counters",
         "bench other", "crosscheck", "report"]


def bench_stage_seconds(entries):
    """Seconds gemm-bench spent in each of its stages, summed over the iteration entries (an
    aggregate row repeats its repetitions' numbers); only the stages the entries record (older
    files have verify, timing and counters alone)."""
    totals = {}
    for entry in entries:
        if entry.get("run_type") == "aggregate":
            continue
        for key, stage in BENCH_STAGES.items():
            value = entry.get(key)
            if isinstance(value, (int, float)) and math.isfinite(value):
                totals[stage] = totals.get(stage, 0.0) + float(value)
    return {stage: totals[stage] for stage in BENCH_STAGES.values() if stage in totals}


def breakdown(walls, bench_stages):
    """stage -> seconds: the script's wall times, gemm-bench's inner stages, and what of
    gemm-bench's wall time its stages do not cover (start-up, allocation, JSON)."""
    out = dict(walls)
    out.update(bench_stages)
    if "bench" in walls and bench_stages:
        out["bench other"] = max(0.0, walls["bench"] - sum(bench_stages.values()))
    return out


def total_wall(stages):
    """Wall time of the study: the script's stages only (gemm-bench's inner ones are inside 'bench')."""
    return sum(seconds for stage, seconds in stages.items() if stage not in INNER_STAGES)


def ordered(stages):
    return sorted(stages.items(), key=lambda item: ORDER.index(item[0]) if item[0] in ORDER else len(ORDER))


def text(stages):
    label = lambda stage: f"  {stage}" if stage in INNER_STAGES else stage
    lines = [f"{label(stage):<16}{seconds:8.1f} s" for stage, seconds in ordered(stages)]
    return "\n".join(lines + [f"{'total':<16}{total_wall(stages):8.1f} s"])


def markdown(recorded):
    stages = recorded.get("stages", {})
    lines = ["| stage | seconds |", "|---|---:|"]
    lines += [f"| {stage} | {seconds:.1f} |" for stage, seconds in ordered(stages)]
    lines.append(f"| total (script stages) | {total_wall(stages):.1f} |")
    if recorded.get("settings"):
        lines.append("\nSettings: " + ", ".join(f"{k}={v}" for k, v in recorded["settings"].items()) + ".")
    return "\n".join(lines)


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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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


if __name__ == "__main__":
    sys.exit(run_cli(main))
