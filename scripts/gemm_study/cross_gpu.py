"""The cross-GPU page: the same variant at the same shape on two GPUs, time and counters side
by side, the differences of the two contexts (DRAM bandwidth, L2 size, clocks, SM count) and
generated sentences on which difference explains each ratio.

The rule behind the sentences (a roofline argument): on GPU A, a kernel that moves DRAM bytes at
>= 50% of A's peak bandwidth is memory-bound and should scale with the bandwidth ratio; one at
>= 50% of its arithmetic's peak is compute-bound and should scale with the peak ratio; anything
else is latency/issue-bound and should scale with SMs x SM clock. A shape whose A+B+C fits in
both L2s is L2-resident: DRAM bandwidth cannot explain its ratio. A measured ratio within 15% of
the expected one counts as explained."""
import math

import numpy as np

from .ladder import PEAK_KEYS, compute_of
from .footprint import working_set_bytes
from .formatting import markdown_table, number
from .manifest import TAGS
from .results import context_value, has_tag

MEMORY_BOUND_SHARE = 0.5
COMPUTE_BOUND_SHARE = 0.5
EXPLAINED_WITHIN = 0.15
# (label, context keys in the order they are looked up, unit)
CONTEXT_ROWS = [
    ("SMs", ("gpu_sm_count", "sm_count"), ""),
    ("max SM clock", ("gpu_max_sm_clock_mhz", "max_sm_clock_mhz"), "MHz"),
    ("L2", ("gpu_l2_bytes", "l2_bytes"), "bytes"),
    ("peak DRAM bandwidth", ("peak_dram_gbs",), "GB/s"),
    ("peak FP32", ("peak_fp32_gflops",), "GFLOP/s"),
    ("peak TF32", ("peak_tf32_gflops",), "GFLOP/s"),
    ("peak FP64", ("peak_fp64_gflops",), "GFLOP/s"),
]
SIDE_BY_SIDE_COUNTERS = ["dram_read_bytes", "l2_hit_rate", "achieved_occupancy", "sm_clock_mhz"]


class Gpu:
    """One side of the comparison: its context numbers and its kernel rows by benchmark."""

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
    def sm_throughput(self):
        """SMs x max SM clock: what scales a kernel bound by neither memory nor arithmetic peak."""
        return self.value("gpu_sm_count", "sm_count") * self.value("gpu_max_sm_clock_mhz", "max_sm_clock_mhz")

    @property
    def dram_gbs(self):
        return self.value("peak_dram_gbs")

    @property
    def l2_bytes(self):
        return self.value("gpu_l2_bytes", "l2_bytes")

    def peak(self, compute):
        return self.value(PEAK_KEYS.get(compute, ""))


def context_table(a, b):
    lines = [f"| | {a.name} | {b.name} | B / A |", "|---|---:|---:|---:|"]
    for label, keys, unit in CONTEXT_ROWS:
        x, y = a.value(*keys), b.value(*keys)
        if not (math.isfinite(x) or math.isfinite(y)):
            continue
        ratio = y / x if math.isfinite(x) and math.isfinite(y) and x else math.nan
        suffix = f" {unit}" if unit else ""
        lines.append(f"| {label} | {number(x)}{suffix} | {number(y)}{suffix} | {number(ratio)} |")
    for label, key in (("driver", "cuda_driver_version"), ("CUDA runtime", "cuda_runtime_version"),
                       ("L2 state", "l2_state"), ("revision", "git_revision")):
        lines.append(f"| {label} | {a.context.get(key, '?')} | {b.context.get(key, '?')} | |")
    return "\n".join(lines)


def bound_on(row, gpu):
    """'memory', 'compute' or 'latency': what limits this run on `gpu` (see the module doc)."""
    seconds = row["time_ms"] / 1e3
    try:
        dram = float(row.get("dram_read_bytes")) + float(row.get("dram_write_bytes"))
    except (TypeError, ValueError):
        dram = math.nan
    if math.isfinite(dram) and dram / seconds / 1e9 >= MEMORY_BOUND_SHARE * gpu.dram_gbs:
        return "memory"
    if row["gflops"] >= COMPUTE_BOUND_SHARE * gpu.peak(compute_of(row)):
        return "compute"
    return "latency"


def expected_speedup(bound, row, a, b):
    """(ratio B over A that the bound predicts, what the ratio is)."""
    if bound == "memory":
        return b.dram_gbs / a.dram_gbs, "the DRAM bandwidth ratio"
    if bound == "compute":
        compute = compute_of(row)
        return b.peak(compute) / a.peak(compute), f"the {compute.upper()} peak ratio"
    return b.sm_throughput / a.sm_throughput, "the SMs x SM clock ratio"


def explain(row_a, row_b, a, b):
    """One sentence: the measured speedup of B over A and the context difference behind it."""
    speedup = row_a["time_ms"] / row_b["time_ms"]
    bound = bound_on(row_a, a)
    expected, what = expected_speedup(bound, row_a, a, b)
    head = (f"{row_a['variant']} ({row_a['precision']}, {row_a['shape']}): {b.name} takes "
            f"{speedup:.2f}x less time than {a.name}" if speedup >= 1 else
            f"{row_a['variant']} ({row_a['precision']}, {row_a['shape']}): {b.name} takes "
            f"{1 / speedup:.2f}x more time than {a.name}")
    resident = working_set_bytes(row_a) <= min(a.l2_bytes, b.l2_bytes)
    cause = {"memory": "memory-bound on A", "compute": "compute-bound on A",
             "latency": "bound by neither DRAM nor arithmetic peak on A"}[bound]
    if resident and bound == "memory":
        cause += ", yet its A+B+C fits in both L2s (DRAM bytes are write-back and noise)"
    if not math.isfinite(expected):
        return f"{head}; {cause}; the contexts lack the numbers for {what}."
    verdict = "explained by" if abs(speedup / expected - 1) <= EXPLAINED_WITHIN else "not explained by"
    text = f"{head}; {cause}, so {verdict} {what} ({expected:.2f}x)"
    if resident and bound != "memory":
        text += "; L2-resident on both GPUs, so DRAM bandwidth plays no part"
    return text + "."


def pairs(a, b):
    """(row on A, row on B) of every benchmark both GPUs ran, by precision, shape and variant."""
    common = [name for name in a.rows if name in b.rows]
    key = lambda n: (a.rows[n]["precision"], a.rows[n]["m"], a.rows[n]["n"], a.rows[n]["k"], a.rows[n]["variant"])
    return [(a.rows[n], b.rows[n]) for n in sorted(common, key=key)]


def side_by_side(matched, a, b):
    import pandas as pd

    records = []
    for row_a, row_b in matched:
        record = {"variant": row_a["variant"], "ms A": row_a["time_ms"], "ms B": row_b["time_ms"],
                  "B speedup": row_a["time_ms"] / row_b["time_ms"],
                  "bound on A": bound_on(row_a, a)}
        for counter in SIDE_BY_SIDE_COUNTERS:
            if counter in row_a or counter in row_b:
                record[f"{counter} A"] = row_a.get(counter, np.nan)
                record[f"{counter} B"] = row_b.get(counter, np.nan)
        records.append(record)
    return pd.DataFrame(records)


def summary_sentences(matched, a, b):
    """Per bound: how many kernels, their median speedup, and the ratio that should explain it."""
    out = []
    for bound in ("memory", "compute", "latency"):
        group = [(x, y) for x, y in matched if bound_on(x, a) == bound]
        if not group:
            continue
        speedups = [x["time_ms"] / y["time_ms"] for x, y in group]
        expected, what = expected_speedup(bound, group[0][0], a, b)
        out.append(f"{len(group)} {bound}-bound benchmark(s) on {a.name}: median speedup on {b.name} "
                   f"{float(np.median(speedups)):.2f}x against {what} {number(expected)}x.")
    resident = [(x, y) for x, y in matched if working_set_bytes(x) <= min(a.l2_bytes, b.l2_bytes)]
    if resident:
        speedups = [x["time_ms"] / y["time_ms"] for x, y in resident]
        out.append(f"{len(resident)} benchmark(s) have A+B+C within both L2s "
                   f"({number(min(a.l2_bytes, b.l2_bytes))} bytes): median speedup "
                   f"{float(np.median(speedups)):.2f}x, where DRAM bandwidth "
                   f"(ratio {number(b.dram_gbs / a.dram_gbs)}x) cannot be the reason.")
    return out


def page(context_a, frame_a, context_b, frame_b, label_a="A", label_b="B"):
    """The cross-GPU page as markdown."""
    a, b = Gpu(context_a, frame_a), Gpu(context_b, frame_b)
    matched = pairs(a, b)
    md = [f"# Cross-GPU: {a.name} (A, `{label_a}`) vs {b.name} (B, `{label_b}`)", "",
          "Same variant, same shape, kernel-only median times. " + __doc__.split("\n\n", 1)[1].replace("\n", " "),
          ""]
    for gpu, label in ((a, "A"), (b, "B")):
        if "real_time" in gpu.time_fields:
            md += [f"Note: {label}'s file has no median_ms: its times are Google Benchmark's mean real_time.", ""]
    md += ["## The two contexts", "", context_table(a, b), ""]
    if not matched:
        return "\n".join(md + ["No benchmark ran on both GPUs (same variant, precision and shape)."]) + "\n"
    md += ["## What explains the ratios", ""] + [f"- {s}" for s in summary_sentences(matched, a, b)] + [""]
    for precision in dict.fromkeys(x["precision"] for x, _ in matched):
        for shape in dict.fromkeys(x["shape"] for x, _ in matched if x["precision"] == precision):
            group = [(x, y) for x, y in matched if x["precision"] == precision and x["shape"] == shape]
            table = side_by_side(group, a, b)
            md += [f"## {precision}, {shape}", "", markdown_table(table, list(table.columns)), ""]
            md += [f"- {explain(x, y, a, b)}" for x, y in group] + [""]
    return "\n".join(md) + "\n"
