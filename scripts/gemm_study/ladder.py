"""The ladder section of the report: per precision and shape, the best variant of each rung
(tags ladder / tensor_core, rung numbers from the variant's facts), from the seeds' best kernel
up to cuBLAS, with % of cuBLAS, % of peak, the counters that moved at each step and the ncu
command that opens the row."""
import numpy as np
import pandas as pd

from .catalogue import load_catalogue
from .names import strip_manual_time
from .footprint import compulsory_read_bytes
from .formatting import markdown_table, number
from .manifest import TAGS
from .results import context_value, has_tag, shapes_by_size

LADDER_TAGS = (TAGS.ladder, TAGS.tensor_core)
# The write-ups' best kernel: rung 0, where the ladder starts.
LADDER_START = "shared/tile:32"
START_RUNG_NAME = "seeds' best (shared-memory tiling)"
# Peak GFLOP/s of the arithmetic a variant does (its `compute` fact), from the context.
PEAK_KEYS = {"fp32": "peak_fp32_gflops", "tf32": "peak_tf32_gflops", "fp64": "peak_fp64_gflops"}
NCU_COMMAND = "build/bench/gemm-bench --ncu-command={name}"
# A step's sentence names at most this many counters, each moved by at least MIN_MOVE.
COUNTERS_PER_STEP = 3
MIN_MOVE = 0.05
# Counters that measure the time itself, not a cause of it.
NOT_CAUSES = {"gpu_time_ns"}
# A stall reason below this many warps per issued instruction on both sides costs next to
# nothing, however large its ratio: 1.5e-07 -> 0.12 is not a cause.
MIN_STALL = 0.1
# Tensor-pipe instruction counts explain only steps that involve a tensor-core rung: on sm_90 the
# HMMA pipe counter also ticks on some CUDA-core kernels (ncu reads the same).
TENSOR_COUNTS = ("tensor_hmma_inst", "tensor_dmma_inst", "tensor_gmma_inst")


def compute_of(row):
    compute = row.get("compute")
    return compute if isinstance(compute, str) and compute else row["precision"]


def peak_gflops(context, compute):
    return context_value(context, PEAK_KEYS.get(compute, ""))


def ladder_rows(kernel, precision, shape):
    """The start, the best variant of each rung (ascending) and the references, at one shape."""
    data = kernel[(kernel.precision == precision) & (kernel["shape"] == shape) & kernel.error.isna()]
    start = data[data.variant == LADDER_START].assign(rung=0, rung_name=START_RUNG_NAME)
    rungs = data[has_tag(data, *LADDER_TAGS)]
    if "rung" in rungs:
        rungs = rungs[pd.to_numeric(rungs["rung"], errors="coerce").notna()]
        best = rungs.sort_values("gflops").groupby("rung").tail(1).sort_values("rung")
    else:
        best = rungs.iloc[0:0]
    references = data[has_tag(data, TAGS.reference)].sort_values("gflops")
    return pd.concat([start, best]), references


def reference_for(row, references):
    """cuBLAS of the same precision and the same arithmetic (TF32 rungs: cublas_tf32)."""
    same = references[[compute_of(r) == compute_of(row) for _, r in references.iterrows()]]
    return same.iloc[-1] if len(same) else None


SECTOR_BYTES = 32


def traffic_bytes(row, level):
    """Bytes read plus written at `level` ('dram' or 'l2'): from {level}_read/write_bytes, or
    from {level}_read/write_sectors (32 bytes each); NaN where the counters are absent."""
    for unit, scale in (("bytes", 1), ("sectors", SECTOR_BYTES)):
        try:
            moved = (float(row.get(f"{level}_read_{unit}")) + float(row.get(f"{level}_write_{unit}"))) * scale
        except (TypeError, ValueError):
            continue
        if np.isfinite(moved):
            return moved
    return np.nan


def flop_per_byte(row, level):
    """FLOP per byte moved at `level` ('dram' or 'l2'), NaN where the counters are absent."""
    moved = traffic_bytes(row, level)
    return 2.0 * row["m"] * row["n"] * row["k"] / moved if moved > 0 else np.nan


def annotate(rows, references, context):
    out = rows.copy()
    out["pct_of_reference"] = [
        100 * r["gflops"] / ref["gflops"] if (ref := reference_for(r, references)) is not None else np.nan
        for _, r in rows.iterrows()]
    out["pct_of_peak"] = [100 * r["gflops"] / peak_gflops(context, compute_of(r)) for _, r in rows.iterrows()]
    out["flop_per_dram_byte"] = [flop_per_byte(r, "dram") for _, r in rows.iterrows()]
    out["ncu"] = [f"`{NCU_COMMAND.format(name=strip_manual_time(r['name']))}`" for _, r in rows.iterrows()]
    return out


# ----------------------------------------------------------------------------- steps

def counter_moves(a, b, catalogue=None):
    """(counter, before, after, size of the move) for every catalogue counter both rows have,
    largest move first. Percentages move by points/100, counts by their relative change."""
    catalogue = catalogue or load_catalogue()
    moves = []
    for name, metric in catalogue.items():
        if metric.kind == "timing" or name in NOT_CAUSES:
            continue
        try:
            x, y = float(a.get(name)), float(b.get(name))
        except (TypeError, ValueError):
            continue
        if not (np.isfinite(x) and np.isfinite(y)) or max(abs(x), abs(y)) == 0:
            continue
        if name.startswith("dram_") and max(x, y) < 0.5 * compulsory_read_bytes(a):
            continue  # inputs resident in L2: DRAM bytes are noise here
        if not explains(name, metric, x, y, a, b):
            continue
        size = abs(y - x) / 100 if metric.is_percent else abs(y - x) / max(abs(x), abs(y))
        moves.append((name, x, y, size))
    return sorted(moves, key=lambda move: -move[3])


def _tensor_core(row):
    tags = row.get("tags")
    return isinstance(tags, (list, tuple)) and TAGS.tensor_core in tags


def explains(name, metric, x, y, a, b):
    """Whether a move of this counter between rows a and b can be a cause worth naming: not a
    stall too small to matter, not the hardware conflict counter's residue (wavefronts are the
    evidence for conflicts), not a tensor count between two CUDA-core kernels."""
    if name.startswith("stall_") and max(abs(x), abs(y)) < MIN_STALL:
        return False
    if "bank_conflicts" in name or name == "smem_ld_conflicts_per_request":
        return False
    if name in TENSOR_COUNTS and not (_tensor_core(a) or _tensor_core(b)):
        return False
    return True


def judgement(better, before, after):
    if better not in ("lower", "higher") or before == after:
        return ""
    improved = (after < before) == (better == "lower")
    return " (better)" if improved else " (worse)"


def describe_move(name, before, after, catalogue):
    metric = catalogue[name]
    verb = "rises" if after > before else "falls"
    if metric.is_percent:
        text = f"{name} {verb} from {number(before)}% to {number(after)}%"
    elif min(abs(before), abs(after)) > 1e-3 * max(abs(before), abs(after)):
        factor = max(before, after) / min(before, after)
        text = f"{name} {verb} {factor:.2f}x ({number(before)} -> {number(after)})"
    else:
        text = f"{name} {verb} from {number(before)} to {number(after)}"
    return text + judgement(metric.better, before, after)


def step_sentence(a, b, catalogue=None):
    """'rung 1 -> rung 2 (...)': GFLOP/s ratio and the counters that moved most."""
    catalogue = catalogue or load_catalogue()
    head = (f"rung {int(a['rung'])} ({a['variant']}) -> rung {int(b['rung'])} {b.get('rung_name') or ''} "
            f"({b['variant']}), {a['precision']} {a['shape']}: {number(a['gflops'])} -> {number(b['gflops'])} "
            f"GFLOP/s (x{b['gflops'] / a['gflops']:.2f})")
    moves = [m for m in counter_moves(a, b, catalogue) if m[3] >= MIN_MOVE][:COUNTERS_PER_STEP]
    if not moves:
        return head + "; no counter moved by more than 5%."
    return head + "; " + "; ".join(describe_move(n, x, y, catalogue) for n, x, y, _ in moves) + "."


def step_sentences(rows, catalogue=None):
    ordered = [r for _, r in rows.iterrows()]
    return [step_sentence(a, b, catalogue) for a, b in zip(ordered, ordered[1:])]


# ----------------------------------------------------------------------------- markdown

TABLE_COLUMNS = ["rung", "rung_name", "variant", "gflops", "pct_of_reference", "pct_of_peak",
                 "flop_per_dram_byte", "ncu"]
TABLE_HEADERS = ["rung", "rung name", "best variant", "GFLOP/s", "% of cuBLAS (same arithmetic)",
                 "% of peak", "FLOP per DRAM byte", "open in Nsight Compute"]


def section(kernel, context, precision):
    """Markdown lines of the ladder for one precision (empty when it has no rung)."""
    data = kernel[kernel.precision == precision]
    if not has_tag(data, *LADDER_TAGS).any():
        return []
    lines = [f"## The ladder, {precision}", "",
             "Rung 0 is the write-ups' best kernel; each rung shows its best variant; % of cuBLAS is "
             "against cuBLAS with the same arithmetic (TF32 rungs against cublas_tf32), % of peak "
             "against the peak of that arithmetic in the context.", ""]
    catalogue = load_catalogue()
    for shape in shapes_by_size(data):
        rows, references = ladder_rows(kernel, precision, shape)
        if rows.empty:
            continue
        table = pd.concat([annotate(rows, references, context),
                           annotate(references, references, context).assign(rung_name="reference")])
        table["rung"] = table["rung"].map(lambda r: str(int(r)) if pd.notna(r) and r != "" else "")
        lines += [f"### {precision}, {shape}", "", markdown_table(table, TABLE_COLUMNS, TABLE_HEADERS), ""]
        lines += [f"- {s}" for s in step_sentences(rows, catalogue)] + [""]
    return lines
