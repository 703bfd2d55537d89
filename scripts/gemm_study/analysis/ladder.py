"""The study's four ladders and their rows at one shape.

A ladder is a level of the family manifest (kernels/manifest.inc: `ladder`, the CUDA-core rungs,
or `tensor_core`) in one storage precision and one arithmetic (the rows' `compute` fact): FP32
and FP64 on the CUDA cores, TF32 (FP32 storage) and FP64 on the tensor cores. Its rungs are the
manifest's families of that level in manifest order, numbered by the manifest
(manifest.load_families), never by the rows' own `rung` fact, so two families can never share a
rung and a family without rows at a shape is shown as not run, not dropped. The CUDA-core ladders
start with the write-ups' own steps (the manifest's GEMM_LADDER_SEED variants, rungs -3 to -1:
column-mapped threads, 1-D blocks of row-major threads, 2-D blocks) and rung 0, the write-ups'
best kernel (shared/tile:32); the tensor-core ladders start at the top of the CUDA-core ladder of
their precision.

Each rung shows its representative variant (the one tagged `summary`, which the registry gives
each family's representative configuration; the fastest where none is tagged; a seed rung and
rung 0 the variant the manifest names), its % of cuBLAS
of the same arithmetic (TF32 rungs against cublas_tf32, FP64 tensor rungs against cuBLAS DGEMM),
its % of the best library (the faster of cuBLAS and cuBLASLt of that arithmetic, named), its % of
its own ceiling (ceilings.ceiling_key) and its bottleneck account (account.py)."""

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gemm_study.analysis import sass_loop
from gemm_study.analysis.ceilings import peak_of
from gemm_study.data import names
from gemm_study.data.manifest import TAGS, ladder_seeds, ladder_start, load_families
from gemm_study.data.names import strip_manual_time
from gemm_study.data.results import cycles_ratio, has_tag

LADDER_TAGS = (TAGS.ladder, TAGS.tensor_core)
# The write-ups' best kernel: rung 0 of the CUDA-core ladders, above their seed rungs (kernels/manifest.inc).
LADDER_START = ladder_start()
START_RUNG_NAME = "the write-ups' best (shared-memory tiling)"
# Peak GFLOP/s of the arithmetic a variant does (its `compute` fact), from the context.
PEAK_KEYS = {"fp32": "peak_fp32_gflops", "tf32": "peak_tf32_gflops", "fp64": "peak_fp64_gflops"}
NCU_COMMAND = "build/bench/gemm-bench --ncu-command={name}"


@dataclass(frozen=True)
class Ladder:
    key: str
    title: str
    precision: str
    level: str  # the manifest level of its rungs
    compute: str  # the rows' arithmetic


LADDERS = (
    Ladder("fp32", "FP32 on the CUDA cores", "fp32", "ladder", "fp32"),
    Ladder("fp64", "FP64 on the CUDA cores", "fp64", "ladder", "fp64"),
    Ladder("tf32", "TF32 on the tensor cores", "fp32", "tensor_core", "tf32"),
    Ladder("fp64_tensor", "FP64 on the tensor cores", "fp64", "tensor_core", "fp64"),
)


def compute_of(row):
    compute = row.get("compute")
    return compute if isinstance(compute, str) and compute else row["precision"]


def _computes(frame):
    return [compute_of(row) for _, row in frame.iterrows()]


def _of_compute(frame, compute):
    """Boolean mask: rows doing `compute` arithmetic."""
    return pd.Series([c == compute for c in _computes(frame)], index=frame.index, dtype=bool)


def ladder_families(kernel, ladder):
    """The manifest families (Family) of the ladder that have rows in its precision and arithmetic."""
    data = kernel[kernel.precision == ladder.precision]
    present = {(f, c) for f, c in zip(data.family, _computes(data))}
    return [f for f in load_families() if f.level == ladder.level and (f.family, ladder.compute) in present]


def families_without_rows(kernel):
    """Manifest rung families with no row in the results at all (their ladder is unknown)."""
    present = set(kernel.family)
    return [f for f in load_families() if f.rung and f.family not in present]


def representative(rows):
    """The row tagged summary (the family's representative configuration), else the fastest."""
    tagged = rows[has_tag(rows, TAGS.summary)]
    pool = tagged if len(tagged) else rows
    return pool.sort_values("gflops").iloc[-1]


def skipped_reasons(context):
    """{benchmark name: reason} of the context's `skipped` list (refused or capped benchmarks)."""
    try:
        listed = json.loads(context.get("skipped") or "[]")
    except (TypeError, ValueError):
        return {}
    return {
        item["benchmark"]: item.get("reason", "")
        for item in listed
        if isinstance(item, dict) and isinstance(item.get("benchmark"), str)
    }


def _not_run(family, ladder, shape, context, variant=None):
    """The row of a rung without a benchmark at the shape: a family's (its name), or one
    variant's (a seed rung), with the reason the run's skipped list gives."""
    suffix = "/" + names.shape_suffix(shape)
    prefix = names.benchmark_name(ladder.precision, variant or family, shape).removesuffix(suffix)
    reasons = [r for name, r in skipped_reasons(context).items() if name.startswith(prefix) and name.endswith(suffix)]
    return {
        "variant": "not run",
        "family": family,
        "precision": ladder.precision,
        "shape": shape,
        "gflops": np.nan,
        "not_run": reasons[0] if reasons else "no benchmark at this shape",
    }


def _seed_rows(kernel, ladder, shape, context):
    """The write-ups' rungs below rung 0 of a CUDA-core ladder (none on a tensor ladder), each
    its variant's row or a 'not run' row, with rung, rung_name and `start` set."""
    if ladder.level != "ladder":
        return []
    data = kernel[(kernel.precision == ladder.precision) & (kernel["shape"] == shape)]
    rows = []
    for seed in ladder_seeds():
        found = data[data.variant == seed.variant]
        family = seed.variant.split("/")[0]
        row = (
            found.iloc[0].to_dict()
            if len(found)
            else _not_run(family, ladder, shape, context or {}, variant=seed.variant)
        )
        rows.append(row | {"rung": seed.rung, "rung_name": seed.rung_name, "start": True})
    return rows


def _start_row(kernel, ladder, shape):
    """Rung 0 of a CUDA-core ladder, or the top CUDA-core rung that starts a tensor ladder."""
    data = kernel[(kernel.precision == ladder.precision) & (kernel["shape"] == shape)]
    if ladder.level == "ladder":
        start = data[data.variant == LADDER_START]
        return (start.iloc[0].copy() if len(start) else None), 0, START_RUNG_NAME
    cuda_core = next(l for l in LADDERS if l.level == "ladder" and l.precision == ladder.precision)
    families = ladder_families(kernel, cuda_core)
    for family in reversed(families):
        rows = data[(data.family == family.family) & _of_compute(data, cuda_core.compute)]
        if len(rows):
            return representative(rows).copy(), family.rung, f"start: {family.rung_name}"
    return None, None, ""


def ladder_rows(kernel, ladder, shape, context=None):
    """The ladder's rows at a shape: its seed rungs (CUDA-core ladders) and its start, then one per
    rung family (a 'not run' row where a seed or family has no benchmark at this shape), with rung,
    rung_name and `start` set, and each
    kernel's main loop in SASS (`sass_loop`) where the context has the build's SASS."""
    data = kernel[(kernel.precision == ladder.precision) & (kernel["shape"] == shape)]
    rows = _seed_rows(kernel, ladder, shape, context)
    start, rung, name = _start_row(kernel, ladder, shape)
    if start is not None:
        rows.append(start.to_dict() | {"rung": rung, "rung_name": name, "start": True})
    for family in ladder_families(kernel, ladder):
        mine = data[(data.family == family.family) & _of_compute(data, ladder.compute)]
        row = representative(mine).to_dict() if len(mine) else _not_run(family.family, ladder, shape, context or {})
        rows.append(row | {"rung": family.rung, "rung_name": family.rung_name, "start": False})
    sass = (context or {}).get("sass")
    for row in rows:
        row["sass_loop"] = sass_loop.loop_of(sass, ladder.precision, row.get("variant"), shape) if sass else None
    return pd.DataFrame(rows)


def references(kernel, ladder, shape):
    """cuBLAS and cuBLASLt rows of the ladder's precision and arithmetic at the shape, slowest first."""
    data = kernel[(kernel.precision == ladder.precision) & (kernel["shape"] == shape) & has_tag(kernel, TAGS.reference)]
    same = data[_of_compute(data, ladder.compute)]
    return same.sort_values("gflops")


def library_name(row):
    return "cuBLASLt" if str(row["family"]).startswith("cublaslt") else "cuBLAS"


def reference_row(refs):
    """The cuBLAS (not cuBLASLt) row: what `% of cuBLAS` is against."""
    plain = refs[[library_name(r) == "cuBLAS" for _, r in refs.iterrows()]]
    return plain.iloc[-1] if len(plain) else None


def annotate(rows, refs, table):
    """rows with % of cuBLAS, % of the best library (and its name), % of their own ceiling and
    the ncu command. `table`: ceilings.ceilings()."""
    out = rows.copy()
    cublas = reference_row(refs)
    best = refs.iloc[-1] if len(refs) else None
    out["pct_of_reference"] = [100 * g / cublas["gflops"] if cublas is not None else np.nan for g in rows.gflops]
    # The same comparison in SM cycles (time x the SMs' clock): under tensor-core load an H100's
    # clock moves by a tenth between runs, and cuBLAS and the kernel need not run at the same one.
    out["pct_of_reference_cycles"] = [
        100 * cycles_ratio(cublas, r) if cublas is not None else np.nan for _, r in rows.iterrows()
    ]
    out["pct_of_best_library"] = [100 * g / best["gflops"] if best is not None else np.nan for g in rows.gflops]
    out["best_library"] = library_name(best) if best is not None else ""
    out["pct_of_peak"] = [
        100 * r["gflops"] / peak_of(r, table) if isinstance(r.get("name"), str) else np.nan for _, r in rows.iterrows()
    ]
    out["ncu"] = [
        f"`{NCU_COMMAND.format(name=strip_manual_time(r['name']))}`" if isinstance(r.get("name"), str) else ""
        for _, r in rows.iterrows()
    ]
    return out


def pct_of_same_arithmetic(kernel):
    """Each row's GFLOP/s over cuBLAS's (not cuBLASLt's) of the same precision, arithmetic and
    shape, in %: TF32 kernels against cuBLAS TF32, never against FP32 SGEMM. NaN without it."""
    refs = kernel[has_tag(kernel, TAGS.reference)]
    cublas = {
        (r["precision"], compute_of(r), r["shape"]): r["gflops"]
        for _, r in refs.iterrows()
        if library_name(r) == "cuBLAS"
    }
    return pd.Series(
        [
            100 * r["gflops"] / cublas.get((r["precision"], compute_of(r), r["shape"]), np.nan)
            for _, r in kernel.iterrows()
        ],
        index=kernel.index,
        dtype=float,
    )
