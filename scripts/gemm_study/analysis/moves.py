"""The counters that moved between two benchmark rows, largest move first, each with its
direction from the catalogue (better or worse): what a step sentence names when it has no
prediction, or when its prediction misses."""

import numpy as np

from gemm_study.analysis.footprint import compulsory_read_bytes
from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.formatting import number
from gemm_study.data.manifest import TAGS

# Counters that measure the time itself, or the chip rather than the kernel: not causes.
NOT_CAUSES = {"gpu_time_ns", "sm_cycles_elapsed", "sm_clock_hz", "l2_clock_hz", "dram_clock_hz"}
# A stall reason below this many warps per issued instruction on both sides costs next to
# nothing, however large its ratio: 1.5e-07 -> 0.12 is not a cause.
MIN_STALL = 0.1
# Tensor-pipe counts explain only steps that involve a tensor-core rung: on sm_90 the HMMA pipe
# counter also ticks on some CUDA-core kernels (ncu reads the same), and so do the pipe's busy
# cycles (about 1e6 on the write-ups' naive kernels at 4096^3, next to 5e10 SM cycles).
TENSOR_COUNTS = (
    "tensor_hmma_inst",
    "tensor_dmma_inst",
    "tensor_gmma_inst",
    "tensor_pipe_cycles",
    "tensor_pipe_util_pct",
)
# A move smaller than this is not named.
MIN_MOVE = 0.05


def counter_moves(a, b, catalogue=None):
    """(counter, before, after, size of the move) for every catalogue counter both rows have,
    largest move first. Percentages move by points/100, counts by their relative change."""
    catalogue = catalogue or load_catalogue()
    moves = []
    for name, metric in catalogue.items():
        if metric.kind == "timing" or name in NOT_CAUSES or name.endswith("_peak_per_cycle"):
            continue
        try:
            x, y = float(a.get(name)), float(b.get(name))
        except (TypeError, ValueError):
            continue
        if not (np.isfinite(x) and np.isfinite(y)) or max(abs(x), abs(y)) == 0:
            continue
        if name.startswith("dram_") and max(x, y) < 0.5 * compulsory_read_bytes(a):
            continue  # inputs resident in L2: DRAM bytes are noise here
        if not explains(name, x, y, a, b):
            continue
        size = abs(y - x) / 100 if metric.is_percent else abs(y - x) / max(abs(x), abs(y))
        moves.append((name, x, y, size))
    return sorted(moves, key=lambda move: -move[3])


def _tensor_core(row):
    tags = row.get("tags")
    return isinstance(tags, (list, tuple)) and TAGS.tensor_core in tags


def explains(name, x, y, a, b):
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


def describe_move(name, before, after, catalogue=None):
    catalogue = catalogue or load_catalogue()
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


def largest_moves(a, b, count=3, catalogue=None):
    """'; '-joined descriptions of the `count` largest moves of at least MIN_MOVE, or ''."""
    catalogue = catalogue or load_catalogue()
    moves = [m for m in counter_moves(a, b, catalogue) if m[3] >= MIN_MOVE][:count]
    return "; ".join(describe_move(n, x, y, catalogue) for n, x, y, _ in moves)
