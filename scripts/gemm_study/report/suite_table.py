"""The shape suite's table: per arithmetic, `auto` against the best anchor of the same arithmetic
(the faster of cuBLAS and cuBLASLt, timed in the same run) at every shape of the suite, with the
kernel `auto` picked there; the geometric mean of its share and the shapes where it is lowest."""

import math

import pandas as pd

from gemm_study.data.formatting import markdown_table, number

# (label, storage precision, dispatcher, anchors of the same arithmetic)
ARITHMETICS = (
    ("FP32 on the CUDA cores", "fp32", "auto", ("cublas", "cublaslt")),
    ("TF32 on the tensor cores", "fp32", "auto_tf32", ("cublas_tf32", "cublaslt_tf32")),
    ("FP64", "fp64", "auto", ("cublas", "cublaslt")),
)


def choices(entries):
    """Benchmark name (without /manual_time) -> the variant `auto` ran there, from each entry's
    `choice` object (gemm-bench records it for the dispatchers)."""
    out = {}
    for entry in entries:
        choice = entry.get("choice")
        if isinstance(choice, dict) and choice.get("variant"):
            name = str(entry.get("run_name", entry.get("name", "")))
            out[name.removesuffix("/manual_time")] = str(choice["variant"])
    return out


def rows(kernel, picked=None):
    """label -> [{shape, auto, anchor, anchor_gflops, pct, picked}] over the shapes where the
    dispatcher and at least one anchor ran without error."""
    picked = picked or {}
    ok = kernel[kernel.error.isna()] if "error" in kernel else kernel
    out = {}
    for label, precision, dispatcher, anchors in ARITHMETICS:
        these = ok[ok.precision == precision]
        table = []
        for shape, at_shape in these.groupby("shape", sort=False):
            mine = at_shape[at_shape.variant == dispatcher]
            refs = at_shape[at_shape.variant.isin(anchors)]
            if mine.empty or refs.empty:
                continue
            best = refs.loc[refs.gflops.idxmax()]
            gflops = float(mine.gflops.iloc[0])
            name = str(mine.name.iloc[0]).removesuffix("/manual_time")
            table.append(
                {
                    "shape": shape,
                    "auto": gflops,
                    "anchor": best.variant,
                    "anchor_gflops": float(best.gflops),
                    "pct": 100.0 * gflops / float(best.gflops),
                    "picked": picked.get(name, ""),
                }
            )
        if table:
            out[label] = table
    return out


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def markdown(by_arithmetic, worst=5):
    """Per arithmetic: the geometric mean of auto's share of the best anchor, how many shapes are
    below 60%, and the `worst` shapes."""
    lines = [
        "| arithmetic | shapes | geometric mean, % of the best anchor | shapes below 60% |",
        "|---|---:|---:|---:|",
    ]
    for label, table in by_arithmetic.items():
        pcts = [row["pct"] for row in table]
        below = sum(p < 60 for p in pcts)
        lines.append(f"| {label} | {len(table)} | {number(geometric_mean(pcts))}% | {below} |")
    for label, table in by_arithmetic.items():
        lowest = sorted(table, key=lambda row: row["pct"])[:worst]
        lines += ["", f"{label}, the {len(lowest)} shapes where `auto` is furthest behind:", ""]
        cells = pd.DataFrame(
            {
                "shape": row["shape"],
                "auto picked": row["picked"] or "-",
                "auto GFLOP/s": row["auto"],
                "best anchor": row["anchor"],
                "anchor GFLOP/s": row["anchor_gflops"],
                "% of the anchor": row["pct"],
            }
            for row in lowest
        )
        lines.append(markdown_table(cells, list(cells.columns)))
    return "\n".join(lines)
