"""The cross-GPU page: the same variant at the same shape on two GPUs, A (the baseline) and B.

For each benchmark both ran: the speedup of B over A (kernel times: each file's median_ms, the
median over every sample in files that keep the clock-flagged ones, over the unflagged ones in
older files), and the two ratios a GEMM
can move with: the SM clock ratio (SMs x the SM clock each benchmark ran at, B over A: its
measured sm_clock_mhz, else the GPUs' maximum clocks) and the HBM bandwidth ratio (peak_dram_gbs,
B over A). The speedup moved with the ratio it is within 10% of (MOVED_WITHIN; nearest first);
where the two ratios are themselves that close, the speedup cannot tell them apart.

The prediction comes from A's counters alone: the bottleneck account's limiter (account.py)
where the row has the account's counters -- DRAM predicts the bandwidth ratio, the L2 the L2
clock ratio where both rows measured it, any SM unit (a pipe, the issue slots, shared memory)
the SM clock ratio; without them, the larger of the DRAM utilization (bytes over time over the
peak bandwidth) and the busiest pipe's utilization, where it is at least half of peak; without
pipe counters either (older files), DRAM at half its peak bandwidth or more. A prediction holds
where the speedup is within 10% of the predicted ratio, even if another ratio lies nearer (on one
SM design the SM and L2 clock ratios are both near 1)."""

import math

import numpy as np

from gemm_study.analysis import account as bottleneck
from gemm_study.analysis.footprint import working_set_bytes
from gemm_study.data.formatting import markdown_table, number
from gemm_study.data.manifest import TAGS
from gemm_study.data.results import context_value, has_tag
from gemm_study.data.shape import shape_order

MOVED_WITHIN = 0.10
BUSY_SHARE = 0.5
PIPE_UTILIZATION = ("fma_pipe_util_pct", "fp64_pipe_util_pct", "tensor_pipe_util_pct")
SM_UNITS = ("fma", "fp64", "tensor", "issue", "shared")
BANDWIDTH, SM_CLOCK, L2_CLOCK = "HBM bandwidth", "SM clock", "L2 clock"
# (label, context keys in the order they are looked up, unit)
CONTEXT_ROWS = [
    ("SMs", ("gpu_sm_count", "sm_count"), ""),
    ("max SM clock", ("gpu_max_sm_clock_mhz", "max_sm_clock_mhz"), "MHz"),
    ("L2", ("gpu_l2_bytes", "l2_bytes"), "bytes"),
    ("peak DRAM bandwidth", ("peak_dram_gbs",), "GB/s"),
    ("peak FP32", ("peak_fp32_gflops",), "GFLOP/s"),
    ("peak TF32", ("peak_tf32_gflops",), "GFLOP/s"),
    ("peak FP64", ("peak_fp64_gflops",), "GFLOP/s"),
    ("power limit", ("power_limit_w",), "W"),
]
TEXT_ROWS = [
    ("driver", "cuda_driver_version"),
    ("CUDA runtime", "cuda_runtime_version"),
    ("L2 state", "l2_state"),
    ("power state", "power_state"),
    ("revision", "git_revision"),
]


class Gpu:
    """One side of the comparison: its context and its kernel rows by benchmark name."""

    def __init__(self, context, frame):
        self.context = context
        self.name = context.get("gpu_name", "unknown GPU")
        # Host-timed rows (the CPU baseline) say nothing about the GPUs.
        kernel = frame[~frame.end_to_end & frame.error.isna() & ~has_tag(frame, TAGS.cpu)]
        self.rows = {r["name"]: r for _, r in kernel.iterrows()}
        # The time of each row (results.read_rows): the median launch time, or Google
        # Benchmark's mean real_time in a file written before gemm-bench recorded median_ms.
        self.time_fields = sorted(set(kernel["time_field"])) if "time_field" in kernel else []

    def value(self, *keys):
        return context_value(self.context, *keys)

    @property
    def sms(self):
        return self.value("gpu_sm_count", "sm_count")

    @property
    def max_clock(self):
        return self.value("gpu_max_sm_clock_mhz", "max_sm_clock_mhz")

    @property
    def dram_gbs(self):
        return self.value("peak_dram_gbs")

    @property
    def l2_bytes(self):
        return self.value("gpu_l2_bytes", "l2_bytes")


def _number(row, key):
    return bottleneck.value(row, key)


def context_table(a, b):
    lines = [f"| | {a.name} | {b.name} | B / A |", "|---|---:|---:|---:|"]
    for label, keys, unit in CONTEXT_ROWS:
        x, y = a.value(*keys), b.value(*keys)
        if not (math.isfinite(x) or math.isfinite(y)):
            continue
        ratio = y / x if math.isfinite(x) and math.isfinite(y) and x else math.nan
        suffix = f" {unit}" if unit else ""
        lines.append(f"| {label} | {number(x)}{suffix} | {number(y)}{suffix} | {number(ratio)} |")
    for label, key in TEXT_ROWS:
        if key in a.context or key in b.context:
            lines.append(f"| {label} | {a.context.get(key, '?')} | {b.context.get(key, '?')} | |")
    return "\n".join(lines)


def clock_of(row, gpu):
    """The SM clock the row ran at (MHz), or the GPU's maximum where the row has none."""
    clock = _number(row, "sm_clock_mhz")
    return clock if clock > 0 else gpu.max_clock


def ratios(row_a, row_b, a, b):
    """{mover: the ratio B over A it predicts} for one benchmark."""
    out = {SM_CLOCK: b.sms * clock_of(row_b, b) / (a.sms * clock_of(row_a, a)), BANDWIDTH: b.dram_gbs / a.dram_gbs}
    l2_a, l2_b = _number(row_a, "l2_clock_hz"), _number(row_b, "l2_clock_hz")
    if l2_a > 0 and l2_b > 0:
        out[L2_CLOCK] = l2_b / l2_a
    return out


def predicted(row, gpu):
    """(the ratio A's counters say the benchmark moves with, from what)."""
    acc = bottleneck.account(row, gpu.context)
    if not acc.reason:
        if acc.limiter == "dram":
            return BANDWIDTH, "account: DRAM"
        if acc.limiter == "l2":
            return L2_CLOCK, "account: L2"
        return SM_CLOCK, f"account: {bottleneck.BY_KEY[acc.limiter].label}"
    seconds = row["time_ms"] / 1e3
    dram = (_number(row, "dram_read_bytes") + _number(row, "dram_write_bytes")) / seconds / 1e9 / gpu.dram_gbs
    pipes = [_number(row, key) / 100 for key in PIPE_UTILIZATION]
    pipe = max((p for p in pipes if math.isfinite(p)), default=math.nan)
    if math.isfinite(dram) and math.isfinite(pipe):
        if dram >= BUSY_SHARE and dram >= pipe:
            return BANDWIDTH, f"DRAM {dram:.0%} of peak, pipes {pipe:.0%}"
        return SM_CLOCK, f"pipes {pipe:.0%} of peak, DRAM {dram:.0%}"
    if math.isfinite(dram):
        return (BANDWIDTH if dram >= BUSY_SHARE else SM_CLOCK), f"DRAM {dram:.0%} of peak (no pipe counters)"
    return SM_CLOCK, "no DRAM or pipe counters"


def moved_with(speedup, by_mover):
    """The mover whose ratio the speedup is within MOVED_WITHIN of (nearest first), 'either' where
    the SM clock and bandwidth ratios are that close themselves, or 'neither'."""
    clock, bandwidth = by_mover[SM_CLOCK], by_mover[BANDWIDTH]
    if abs(math.log(clock / bandwidth)) <= math.log1p(MOVED_WITHIN):
        return "either"
    gaps = {
        mover: abs(math.log(speedup / ratio)) for mover, ratio in by_mover.items() if math.isfinite(ratio) and ratio > 0
    }
    nearest = min(gaps, key=gaps.get)
    return nearest if gaps[nearest] <= math.log1p(MOVED_WITHIN) else "neither"


def within(speedup, by_mover):
    """Every mover whose ratio the speedup is within MOVED_WITHIN of: on two GPUs of one SM
    design the SM and L2 clock ratios are both near 1, and a speedup near 1 moved with either."""
    return {
        mover
        for mover, ratio in by_mover.items()
        if math.isfinite(ratio) and ratio > 0 and abs(math.log(speedup / ratio)) <= math.log1p(MOVED_WITHIN)
    }


def compare(row_a, row_b, a, b):
    """One benchmark on both GPUs: the measured speedup, the ratios, the prediction and verdict."""
    speedup = row_a["time_ms"] / row_b["time_ms"]
    by_mover = ratios(row_a, row_b, a, b)
    mover, source = predicted(row_a, a)
    moved = moved_with(speedup, by_mover)
    # The prediction holds where the speedup is within the tolerance of the predicted ratio, even
    # if another ratio (the L2 clock's, next to the SM clock's) lies nearer.
    holds = None if moved == "either" else mover in within(speedup, by_mover)
    return {
        "variant": row_a["variant"],
        "precision": row_a["precision"],
        "shape": row_a["shape"],
        "rung": _number(row_a, "rung"),
        "ms A": row_a["time_ms"],
        "ms B": row_b["time_ms"],
        "B speedup": speedup,
        "SM clock A": clock_of(row_a, a),
        "SM clock B": clock_of(row_b, b),
        "SM clock ratio": by_mover[SM_CLOCK],
        "bandwidth ratio": by_mover[BANDWIDTH],
        "L2 clock ratio": by_mover.get(L2_CLOCK, math.nan),
        "state A": _state(row_a),
        "state B": _state(row_b),
        "counters on A predict": mover,
        "from": source,
        "moved with": moved,
        "holds": {True: "yes", False: "no", None: "-"}[holds],
        "resident": working_set_bytes(row_a) <= min(a.l2_bytes, b.l2_bytes),
    }


def _state(row):
    sustained = _number(row, "sustained")
    return "-" if math.isnan(sustained) else ("sustained" if sustained else "burst")


def pairs(a, b):
    """(row on A, row on B) of every benchmark both GPUs ran, by precision, shape and variant."""
    common = [name for name in a.rows if name in b.rows]
    key = lambda n: (a.rows[n]["precision"], a.rows[n]["m"], a.rows[n]["n"], a.rows[n]["k"], a.rows[n]["variant"])
    return [(a.rows[n], b.rows[n]) for n in sorted(common, key=key)]


def is_ladder(row):
    """A rung of a ladder, or one of the cuBLAS references it is measured against."""
    return math.isfinite(_number(row, "rung")) or TAGS.reference in tuple(row.get("tags") or ())


def ladder_rows(compared):
    """The ladder at the largest shape of each precision where a rung ran on both GPUs."""
    out = []
    for precision in dict.fromkeys(c["precision"] for c in compared):
        rungs = [c for c in compared if c["precision"] == precision and math.isfinite(c["rung"])]
        if not rungs:
            continue
        largest = max((c["shape"] for c in rungs), key=shape_order)
        out += sorted(
            (c for c in compared if c["precision"] == precision and c["shape"] == largest and c["is_ladder"]),
            key=lambda c: c["rung"] if math.isfinite(c["rung"]) else 99,
        )
    return out


def verdict(compared, a, b):
    """Sentences: per predicted mover, how many benchmarks moved with it, and the median speedup."""
    out = []
    for mover in (SM_CLOCK, BANDWIDTH, L2_CLOCK):
        group = [c for c in compared if c["counters on A predict"] == mover]
        if not group:
            continue
        told = [c for c in group if c["holds"] != "-"]
        held = sum(c["holds"] == "yes" for c in told)
        column = {SM_CLOCK: "SM clock ratio", BANDWIDTH: "bandwidth ratio", L2_CLOCK: "L2 clock ratio"}[mover]
        ratio = float(np.median([c[column] for c in group]))
        text = (
            f"{len(group)} predicted to move with the {mover} ratio (median {number(ratio)}x) by the counters "
            f"on {a.name}: median speedup on {b.name} {float(np.median([c['B speedup'] for c in group])):.2f}x; "
        )
        text += f"the prediction held for {held} of {len(told)}" if told else "none could be told apart"
        untold = len(group) - len(told)
        out.append(
            text
            + (
                f" ({untold} where the two ratios are within {MOVED_WITHIN:.0%} of each other)."
                if untold and told
                else "."
            )
        )
    return out


LADDER_COLUMNS = [
    "rung",
    "variant",
    "ms A",
    "ms B",
    "B speedup",
    "SM clock A",
    "SM clock B",
    "SM clock ratio",
    "bandwidth ratio",
    "state A",
    "state B",
    "counters on A predict",
    "from",
    "moved with",
    "holds",
]
ALL_COLUMNS = [
    "variant",
    "ms A",
    "ms B",
    "B speedup",
    "SM clock ratio",
    "bandwidth ratio",
    "counters on A predict",
    "moved with",
    "holds",
    "L2-resident",
]


def page(context_a, frame_a, context_b, frame_b, label_a="A", label_b="B"):
    """The cross-GPU page as markdown."""
    import pandas as pd

    a, b = Gpu(context_a, frame_a), Gpu(context_b, frame_b)
    compared = [compare(x, y, a, b) for x, y in pairs(a, b)]
    for c, (x, _) in zip(compared, pairs(a, b)):
        c.update(is_ladder=is_ladder(x), **{"L2-resident": "yes" if c["resident"] else "no"})
    md = [
        f"# Cross-GPU: {a.name} (A, `{label_a}`) vs {b.name} (B, `{label_b}`)",
        "",
        __doc__.split("\n\n", 1)[1].replace("\n", " "),
        "",
    ]
    for gpu, label in ((a, "A"), (b, "B")):
        if "real_time" in gpu.time_fields:
            md += [f"Note: {label}'s file has no median_ms: its times are Google Benchmark's mean real_time.", ""]
    md += ["## The two contexts", "", context_table(a, b), ""]
    if not compared:
        return "\n".join(md + ["No benchmark ran on both GPUs (same variant, precision and shape)."]) + "\n"
    ladder = ladder_rows(compared)
    md += ["## The ladder", ""]
    if ladder:
        for precision in dict.fromkeys(c["precision"] for c in ladder):
            rows = pd.DataFrame([c for c in ladder if c["precision"] == precision])
            md += [f"{precision}, {rows['shape'].iloc[0]}:", "", markdown_table(rows, LADDER_COLUMNS), ""]
        md += [f"- {s}" for s in verdict(ladder, a, b)] + [""]
    else:
        md += ["No rung of the ladder ran on both GPUs.", ""]
    md += ["## Every benchmark both ran", ""] + [f"- {s}" for s in verdict(compared, a, b)]
    resident = [c for c in compared if c["resident"]]
    if resident:
        md.append(
            f"- {len(resident)} have A+B+C within both L2s ({number(min(a.l2_bytes, b.l2_bytes))} bytes): "
            f"median speedup {float(np.median([c['B speedup'] for c in resident])):.2f}x."
        )
    md.append("")
    for precision in dict.fromkeys(c["precision"] for c in compared):
        for shape in dict.fromkeys(c["shape"] for c in compared if c["precision"] == precision):
            rows = pd.DataFrame([c for c in compared if c["precision"] == precision and c["shape"] == shape])
            md += [f"### {precision}, {shape}", "", markdown_table(rows, ALL_COLUMNS), ""]
    return "\n".join(md) + "\n"
