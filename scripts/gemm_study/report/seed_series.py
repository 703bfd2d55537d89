"""Seed 001's scaling series: the grid-stride kernel launched with one thread per block and 1,
2, 4 ... blocks, against the serial CPU baseline of the same shape. Per block count (sorted as
numbers): the kernel time, the speedup over the CPU and the write-up's efficiency (speedup per
warp in use, seeds.enrich), each twice where the end-to-end benchmark ran: kernel only, and with
the host-device copies included, as the write-up measured. The series is the write-up kernels'
variants whose launch facts say one thread per block (threads_per_block = 1)."""

import numpy as np
import pandas as pd

from gemm_study.data.formatting import markdown_table
from gemm_study.data.manifest import TAGS
from gemm_study.data.results import has_tag, max_warps_per_sm, sm_count

COLUMNS = ["blocks", "median_ms", "speedup_vs_cpu", "efficiency", "e2e_ms", "e2e_speedup_vs_cpu", "e2e_efficiency"]
HEADERS = [
    "blocks (1 thread each)",
    "kernel ms",
    "speedup over the CPU, kernel only",
    "efficiency, kernel only",
    "end-to-end ms (copies included)",
    "speedup over the CPU, copies included",
    "efficiency, copies included",
]


def _one_thread_blocks(frame):
    threads = pd.to_numeric(frame.get("threads_per_block", pd.Series(np.nan, index=frame.index)), errors="coerce")
    return frame[has_tag(frame, TAGS.seed) & (threads == 1)]


def _blocks(row):
    params = row.get("param_values")
    if isinstance(params, dict) and "blocks" in params:
        return int(str(params["blocks"]).split("x")[0])
    return int(row["warps_launched"])  # one thread per block: a warp per block


def series(kernel, e2e, context):
    """{(precision, shape): DataFrame of COLUMNS, blocks ascending} for every shape the series ran at."""
    rows = _one_thread_blocks(kernel)
    if rows.empty:
        return {}
    cpu = kernel[has_tag(kernel, TAGS.cpu)].groupby(["precision", "shape"])["median_ms"].median()
    copies = {(r["precision"], r["variant"], r["shape"]): r["median_ms"] for _, r in e2e.iterrows()}
    capacity = sm_count(context) * max_warps_per_sm(context)
    out = {}
    for (precision, shape), group in rows.groupby(["precision", "shape"], sort=False):
        cpu_ms = cpu.get((precision, shape), np.nan)
        table = pd.DataFrame(
            {
                "blocks": [_blocks(r) for _, r in group.iterrows()],
                "median_ms": group.median_ms.to_numpy(),
                "e2e_ms": [copies.get((precision, v, shape), np.nan) for v in group.variant],
            }
        )
        warps = np.minimum(table.blocks.to_numpy(dtype=float), capacity)
        table["speedup_vs_cpu"] = cpu_ms / table.median_ms
        table["efficiency"] = table.speedup_vs_cpu / warps
        table["e2e_speedup_vs_cpu"] = cpu_ms / table.e2e_ms
        table["e2e_efficiency"] = table.e2e_speedup_vs_cpu / warps
        out[(precision, shape)] = table.sort_values("blocks").reset_index(drop=True)
    return out


def section(kernel, e2e, context):
    """Markdown lines of the series (empty when it did not run)."""
    found = series(kernel, e2e, context)
    if not found:
        return []
    lines = [
        "## Seed 001: one thread per block",
        "",
        "The grid-stride kernel with one thread per block, against the serial CPU baseline of the "
        "same shape. Speedup = CPU time / GPU time; efficiency = speedup / warps in use (one per "
        "block), the write-up's speedup per wavefront. Kernel only: CUDA events around the "
        "launches; copies included: the gemm_e2e benchmark of the same variant (host-device "
        "copies of A, B and C in the time), as the write-up measured.",
        "",
    ]
    for (precision, shape), table in sorted(found.items()):
        lines += [f"### {precision}, {shape}", "", markdown_table(table, COLUMNS, HEADERS), ""]
        if table.e2e_ms.isna().all():
            lines += [
                "No end-to-end benchmark of these variants ran (they are not tagged e2e), so only "
                "the kernel-only speedup is shown.",
                "",
            ]
        if table.speedup_vs_cpu.isna().all():
            lines += ["No serial CPU baseline ran at this shape, so no speedup is shown.", ""]
    return lines
