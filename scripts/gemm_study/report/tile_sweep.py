"""The tile-size section of the report: families tagged tile_sweep across their tile or block
edges (the `tile` column, see results.sweep_edge), one generated sentence per step between
neighbouring edges naming the counter that moved most and its cause from the launch facts, and
the figures of GFLOP/s and counters against the edge. Which variants go where comes from their
tags, never from lists of family names."""

import math

import numpy as np

from gemm_study.analysis.footprint import compulsory_read_bytes, working_set_bytes
from gemm_study.data.formatting import number, save_figure
from gemm_study.data.manifest import TAGS
from gemm_study.data.results import has_tag, max_warps_per_sm, shapes_by_size

# Counters a tile-size step is explained by, in the order ties are broken.
STEP_COUNTERS = [
    "gld_sectors",
    "gld_sectors_per_request",
    "smem_ld_wavefronts_per_request",
    "achieved_occupancy",
    "theoretical_occupancy",
    "dram_read_bytes",
    "l2_hit_rate",
    "registers_per_thread",
]
# A coalesced warp-wide load touches at most 4 (FP32) or 8 (FP64) sectors per operand; more
# than this per request means the lanes walk rows, one sector each.
SCATTERED_SECTORS_PER_REQUEST = 8


def tile_sweep_families(frame):
    """Families tagged tile_sweep, in the order gemm-bench ran them (its registration order)."""
    return list(dict.fromkeys(frame[has_tag(frame, TAGS.tile_sweep)].family))


def _change_word(a, b):
    return "rises" if b > a else "falls"


def _finite(row, counter):
    """Whether the row has a finite number for counter (absent, NaN or non-numeric: False)."""
    try:
        return bool(np.isfinite(float(row.get(counter))))
    except (TypeError, ValueError):
        return False


def _largest_move(a, b):
    best, best_change = None, 0.0
    for counter in STEP_COUNTERS:
        if not (_finite(a, counter) and _finite(b, counter)):
            continue
        x, y = a[counter], b[counter]
        if max(abs(x), abs(y)) == 0:
            continue
        change = abs(y - x) / max(abs(x), abs(y))
        if counter == "dram_read_bytes" and max(x, y) < 0.5 * compulsory_read_bytes(a):
            continue  # inputs resident in L2: DRAM traffic is noise here
        if counter == "l2_hit_rate":
            change /= 4  # a ratio near 100% moves a few points without meaning much
        if change > best_change:
            best, best_change = counter, change
    return best, best_change


def explain_step(a, b, context):
    """One sentence for the step between neighbouring rows a -> b of one family (tile order):
    the counter that moved most, with its cause computed from the launch facts."""
    best, best_change = _largest_move(a, b)
    head = (
        f"{a['family']} {a['params']} -> {b['params']} ({a['precision']}, {a['shape']}): "
        f"{number(a['gflops'])} -> {number(b['gflops'])} GFLOP/s"
    )
    missing = [row["params"] for row in (a, b) if not any(_finite(row, c) for c in STEP_COUNTERS)]
    if missing:
        capped = any(row.get("counters_capped") == 1 for row in (a, b))
        why = "above the counters cap (gemm-bench --counters-cap)" if capped else "not collected"
        return head + f"; counters {why} for {' and '.join(missing)}, so no counter explains the step."
    if best is None or best_change < 0.01:
        return head + "; no counter moved by more than 1%."
    x, y = a[best], b[best]
    unit = "%" if "occupancy" in best or best == "l2_hit_rate" else ""
    text = f"{head}; {best} {_change_word(x, y)} from {number(x)}{unit} to {number(y)}{unit}"
    return text + _cause(best, a, b, context) + "."


def _cause(counter, a, b, context):
    """Why `counter` moved, from the variant facts (threads per block, tile edge) of a and b."""
    x, y = a[counter], b[counter]
    if "occupancy" in counter and _finite(b, "theoretical_occupancy") and _finite(b, "threads_per_block"):
        max_warps = max_warps_per_sm(context)
        if not np.isfinite(max_warps):
            return ""
        threads = int(b["threads_per_block"])
        resident = round(b["theoretical_occupancy"] / 100 * max_warps / math.ceil(threads / 32))
        registers = int(b["registers_per_thread"]) if _finite(b, "registers_per_thread") else 0
        return f": {threads}-thread blocks, at most {resident} per SM ({registers} registers per thread)"
    if (
        counter == "gld_sectors"
        and _finite(a, "smem_ld_requests")
        and a["smem_ld_requests"] > 0
        and _finite(a, "tile")
        and _finite(b, "tile")
    ):
        return (
            f": each element of A and B is fetched once per tile of the other operand, "
            f"{a['n'] / a['tile']:.0f} -> {b['n'] / b['tile']:.0f} times"
        )
    if counter == "gld_sectors_per_request" and _finite(b, "tile"):
        edge = int(b["tile"])
        if y > SCATTERED_SECTORS_PER_REQUEST:
            return f": threadIdx.x walks rows, so a warp reads {min(32, edge)} rows of A, one sector each"
        return f": a warp covers {max(1, 32 // edge)} row(s) of C and {min(32, edge)} consecutive columns"
    if counter == "smem_ld_wavefronts_per_request":
        return (
            ": shared loads need more passes (bank conflicts or wider loads)"
            if y > x
            else ": fewer passes per shared load"
        )
    if counter == "dram_read_bytes":
        compulsory = compulsory_read_bytes(a)
        return f" ({x / compulsory:.1f}x -> {y / compulsory:.1f}x the compulsory A+B traffic)"
    return ""


def step_sentences(frame, context):
    out = []
    sweep = frame[has_tag(frame, TAGS.tile_sweep)]
    for _, group in sweep.groupby(["family", "precision", "shape"], sort=False):
        rows = [r for _, r in group.sort_values("tile").iterrows()]
        out += [explain_step(a, b, context) for a, b in zip(rows, rows[1:])]
    return out


# ----------------------------------------------------------------------------- figures


def twin_families(frame):
    """family -> the earlier tile_sweep family it duplicates: same exact counters at every
    common tile and shape (the same instructions, e.g. the write-up's 'register' variant).
    Twins are drawn dashed over their original so both stay visible."""
    exact = [
        c
        for c in ("gld_sectors", "gld_requests", "smem_ld_wavefronts", "smem_ld_requests", "registers_per_thread")
        if c in frame
    ]
    if not exact:
        return {}
    families = tile_sweep_families(frame)
    signature = {}
    for family in families:
        rows = frame[frame.family == family].sort_values(["precision", "shape", "tile"])
        signature[family] = tuple(map(tuple, rows[["precision", "shape", "tile", *exact]].astype(str).values))
    twins = {}
    for i, family in enumerate(families):
        for earlier in families[:i]:
            if signature[family] and signature[family] == signature[earlier]:
                twins[family] = earlier
                break
    return twins


# The counters figure: these, and memory_counter's choice.
FIGURE_COUNTERS = ["gld_sectors", "smem_ld_wavefronts_per_request", "achieved_occupancy"]


def memory_counter(rows, l2_bytes):
    """The memory counter of the counters figure: DRAM bytes read where the working set A+B+C
    is larger than L2 (where it fits, a warm launch reads a residue of what the previous launch
    left, not the kernel's traffic), else the sectors the SMs read from L2."""
    fits = [working_set_bytes(r) <= l2_bytes for _, r in rows.iterrows()]
    return "l2_read_sectors" if all(fits) and "l2_read_sectors" in rows else "dram_read_bytes"


def figures(frame, out, precisions, l2_bytes=math.inf):
    """The tile figures: GFLOP/s against the tile edge at every shape, and the counters against
    it at the largest shape where the most variants have counters. `l2_bytes`: the GPU's L2."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    kernel = frame[~frame.end_to_end & has_tag(frame, TAGS.tile_sweep)]
    families = tile_sweep_families(kernel)
    twins = twin_families(kernel)
    colour = {f: matplotlib.colormaps["tab10"](i % 10) for i, f in enumerate(families)}
    style = {f: "--" if f in twins else "-" for f in families}
    edges = sorted({int(t) for t in kernel.tile.dropna()})
    for precision in precisions:
        data = kernel[kernel.precision == precision]
        if data.empty:
            continue
        shapes = shapes_by_size(data)
        fig, axes = plt.subplots(1, len(shapes), figsize=(4.2 * len(shapes), 3.8), squeeze=False)
        for ax, shape in zip(axes[0], shapes):
            for family, group in data[data["shape"] == shape].groupby("family", sort=False):
                group = group.sort_values("tile")
                ax.plot(
                    group.tile, group.gflops, marker="o", label=family, color=colour[family], linestyle=style[family]
                )
            ax.set(title=f"{precision} {shape}", xlabel="tile / block edge", ylabel="GFLOP/s")
            _tile_axis(ax, edges)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        written += save_figure(fig, out / f"gflops_vs_tile_{precision}")
        plt.close(fig)

        # The largest shape at which the most variants have every counter of the figure: the
        # SASS-instrumented ones (wavefronts per request) stop at the counter cap.
        complete = all(c in data for c in FIGURE_COUNTERS)
        with_counters = data[data[FIGURE_COUNTERS].notna().all(axis=1)] if complete else data.iloc[0:0]
        if not with_counters.empty:
            counts = with_counters.groupby("shape").size()
            shape = max(reversed(shapes_by_size(with_counters)), key=lambda s: counts[s])
            sub = with_counters[with_counters["shape"] == shape]
            counters = [*FIGURE_COUNTERS, memory_counter(sub, l2_bytes)]
            fig, axes = plt.subplots(1, len(counters), figsize=(4.2 * len(counters), 3.8))
            for ax, counter in zip(axes, counters):
                for family, group in sub.groupby("family", sort=False):
                    if counter in group and group[counter].notna().any():
                        group = group.sort_values("tile")
                        ax.plot(
                            group.tile,
                            group[counter],
                            marker="o",
                            label=family,
                            color=colour[family],
                            linestyle=style[family],
                        )
                ax.set_title(f"{counter}\n({precision} {shape})", fontsize=9)
                ax.set(xlabel="tile / block edge")
                _tile_axis(ax, edges)
            handles = [
                plt.Line2D([], [], color=colour[f], linestyle=style[f], marker="o", label=f)
                for f in families
                if f in set(sub.family)
            ]
            fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=7)
            fig.tight_layout(rect=(0, 0.12, 1, 1))
            written += save_figure(fig, out / f"counters_vs_tile_{precision}")
            plt.close(fig)

    return written


def _tile_axis(ax, edges):
    ax.set_xscale("log", base=2)
    ax.set_xticks(edges, [str(e) for e in edges])
    ax.minorticks_off()
