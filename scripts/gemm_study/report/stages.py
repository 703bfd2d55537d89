"""Where a study's wall time went: the script's own stages (build, gemm-bench, cross-check,
report) and, inside gemm-bench, input generation, verification, warm-up, timing, the cuBLAS
reference's timing and counter replay (the per-benchmark stage_*_s counters, summed). Written to stages.json next to the results.

  gemm-stages --results R.json --stage build=12.5 --stage bench=201 --out stages.json
"""

import math

STAGES_FILE = "stages.json"
# gemm-bench's per-benchmark bookkeeping counters -> the stage they measure.
BENCH_STAGES = {
    "stage_inputs_s": "inputs",
    "stage_verify_s": "verify",
    "stage_warmup_s": "warmup",
    "stage_timing_s": "timing",
    "stage_reference_s": "reference",
    "stage_counters_s": "counters",
}
# Stages inside gemm-bench's wall time ('bench'): shown indented, never added to the total.
INNER_STAGES = set(BENCH_STAGES.values()) | {"bench other"}
# Order of the breakdown; stages not listed come after, in the order they were recorded.
ORDER = [
    "prerequisites",
    "build",
    "bench",
    "inputs",
    "verify",
    "warmup",
    "timing",
    "reference",
    "counters",
    "bench other",
    "pipe peaks",
    "sass",
    "source counters",
    "crosscheck",
    "report",
]


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
    # Microseconds: the sum's last bits depend on the order and the numpy that added them.
    return {stage: round(totals[stage], 6) for stage in BENCH_STAGES.values() if stage in totals}


def breakdown(walls, bench_stages):
    """stage -> seconds: the script's wall times, gemm-bench's inner stages, and what of
    gemm-bench's wall time its stages do not cover (start-up, allocation, JSON)."""
    out = dict(walls)
    out.update(bench_stages)
    if "bench" in walls and bench_stages:
        out["bench other"] = round(max(0.0, walls["bench"] - sum(bench_stages.values())), 6)
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
