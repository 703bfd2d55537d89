"""The tile-size report: tables, figures and generated explanations from one gemm-bench
results file. Which variants go where comes from their tags (tile_sweep, reference, cpu), never
from lists of family names."""
import math
from pathlib import Path

import numpy as np
import pandas as pd

from . import seed_tables
from .results import context_value, has_tag, shapes_by_size

# Counters a tile-size step is explained by, in the order ties are broken.
STEP_COUNTERS = ["gld_sectors", "gld_sectors_per_request", "smem_ld_wavefronts_per_request",
                 "achieved_occupancy", "theoretical_occupancy", "dram_read_bytes", "l2_hit_rate",
                 "registers_per_thread"]
# The seeds' "speedup over the naive kernel": naive_row with the same block edge.
NAIVE_BASELINE = "naive_row/block:{edge}x{edge}"
NAIVE_DEFAULT_EDGE = 16
# A coalesced warp-wide load touches at most 4 (FP32) or 8 (FP64) sectors per operand; more
# than this per request means the lanes walk rows, one sector each.
SCATTERED_SECTORS_PER_REQUEST = 8


def tile_sweep_families(frame):
    """Families tagged tile_sweep, in the order gemm-bench ran them (its registration order)."""
    return list(dict.fromkeys(frame[has_tag(frame, "tile_sweep")].family))


def max_warps_per_sm(context):
    return context_value(context, "gpu_max_threads_per_sm", "max_threads_per_sm") / 32


def sm_count(context):
    return context_value(context, "gpu_sm_count", "sm_count")


def enrich(frame, context):
    """Adds speedups and seed 001's efficiency to kernel (not end-to-end) rows, one per
    benchmark. Efficiency = speedup over the serial CPU / min(warps launched, SMs x max warps
    per SM), with warps_launched from the variant's facts."""
    f = frame.copy()
    key = ["precision", "shape"]
    cpu = f[has_tag(f, "cpu")].groupby(key)["median_ms"].median()
    f["speedup_vs_cpu"] = [cpu.get((p, s), np.nan) / t for p, s, t in zip(f.precision, f["shape"], f.median_ms)]
    naive = f.groupby(["variant", "precision", "shape"])["median_ms"].median()

    def naive_time(row):
        in_sweep = "tile_sweep" in (row["tags"] or ()) and row["tile"]
        edge = int(row["tile"]) if in_sweep else NAIVE_DEFAULT_EDGE
        return naive.get((NAIVE_BASELINE.format(edge=edge), row["precision"], row["shape"]), np.nan)

    f["speedup_vs_naive"] = [naive_time(r) / r["median_ms"] for _, r in f.iterrows()]
    capacity = sm_count(context) * max_warps_per_sm(context)
    warps = f["warps_launched"] if "warps_launched" in f else pd.Series(np.nan, index=f.index)
    f["warps_launched"] = pd.to_numeric(warps, errors="coerce")
    f["efficiency"] = f.speedup_vs_cpu / np.minimum(f.warps_launched, capacity)
    return f


def _fmt(value, digits=3):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    if abs(value) >= 1e6 or (abs(value) < 1e-3 and value != 0):
        return f"{value:.{digits}e}"
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def markdown_table(frame, columns, headers=None):
    headers = headers or columns
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(columns)]
    for _, row in frame.iterrows():
        cells = [row[c] if isinstance(row[c], str) else _fmt(row[c]) for c in columns]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def _change_word(a, b):
    return "rises" if b > a else "falls"


def element_bytes(precision):
    return 4 if precision == "fp32" else 8


def working_set_bytes(row):
    """A, B and C once each: the bytes a GEMM of this shape touches (row: m, n, k, precision)."""
    return (row["m"] * row["k"] + row["k"] * row["n"] + row["m"] * row["n"]) * element_bytes(row["precision"])


def compulsory_bytes(row):
    """A and B read once: the least DRAM traffic a GEMM of this shape can have."""
    return (row["m"] * row["k"] + row["k"] * row["n"]) * element_bytes(row["precision"])


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
        if counter == "dram_read_bytes" and max(x, y) < 0.5 * compulsory_bytes(a):
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
    head = (f"{a['family']} {a['params']} -> {b['params']} ({a['precision']}, {a['shape']}): "
            f"{_fmt(a['gflops'])} -> {_fmt(b['gflops'])} GFLOP/s")
    if best is None or best_change < 0.01:
        return head + "; no counter moved by more than 1%."
    x, y = a[best], b[best]
    unit = "%" if "occupancy" in best or best == "l2_hit_rate" else ""
    text = f"{head}; {best} {_change_word(x, y)} from {_fmt(x)}{unit} to {_fmt(y)}{unit}"
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
        return (f": {threads}-thread blocks, at most {resident} per SM "
                f"({registers} registers per thread)")
    if counter == "gld_sectors" and _finite(a, "smem_ld_requests") and a["smem_ld_requests"] > 0 \
            and a["tile"] and b["tile"]:
        return (f": each element of A and B is fetched once per tile of the other operand, "
                f"{a['n'] / a['tile']:.0f} -> {b['n'] / b['tile']:.0f} times")
    if counter == "gld_sectors_per_request" and b["tile"]:
        edge = int(b["tile"])
        if y > SCATTERED_SECTORS_PER_REQUEST:
            return f": threadIdx.x walks rows, so a warp reads {min(32, edge)} rows of A, one sector each"
        return f": a warp covers {max(1, 32 // edge)} row(s) of C and {min(32, edge)} consecutive columns"
    if counter == "smem_ld_wavefronts_per_request":
        return ": shared loads need more passes (bank conflicts or wider loads)" if y > x else \
            ": fewer passes per shared load"
    if counter == "dram_read_bytes":
        compulsory = compulsory_bytes(a)
        return f" ({x / compulsory:.1f}x -> {y / compulsory:.1f}x the compulsory A+B traffic)"
    return ""


def step_sentences(frame, context):
    out = []
    sweep = frame[has_tag(frame, "tile_sweep")]
    for _, group in sweep.groupby(["family", "precision", "shape"], sort=False):
        rows = [r for _, r in group.sort_values("tile").iterrows()]
        out += [explain_step(a, b, context) for a, b in zip(rows, rows[1:])]
    return out


def seed_comparisons(frame, context):
    """The write-ups' headline tables next to this GPU's numbers for the same kernels."""
    gpu = context.get("gpu_name", "this GPU")
    kernel = frame[~frame.end_to_end]
    t = {(r.precision, r.variant, r.n): r.median_ms for r in kernel.itertuples()}
    g = {(r.precision, r.variant, r.n): r.gflops for r in kernel.itertuples()}
    sections = []
    for mapping, table in seed_tables.SEED000.items():
        lines = [f"**Seed 000, table '{mapping}' (ms, FP32): write-up vs {gpu}**", "",
                 "| N | block | naive (seed) | naive | shared (seed) | shared | register (seed) | register |",
                 "|---|---|---:|---:|---:|---:|---:|---:|"]
        for n, by_tile in table.items():
            for tile, seed_ms in by_tile.items():
                ours = [t.get(("fp32", v.format(t=tile), n)) for v in seed_tables.SEED000_VARIANTS[mapping]]
                cells = [f"{s:.3f} | {_fmt(o, 4) if o else 'not run'}" for s, o in zip(seed_ms, ours)]
                lines.append(f"| {n} | {tile}x{tile} | " + " | ".join(cells) + " |")
        sections.append("\n".join(lines))
    lines = [f"**Seed 002 (Tesla T4) tile sweep vs {gpu} (FP32, ms; naive = naive_row with the same "
             "block, shared = shared_dynamic)**", "",
             "| N | TILE | naive (T4) | naive | shared (T4) | shared | speedup (T4) | speedup |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for n, by_tile in seed_tables.SEED002.items():
        for tile, (naive, shared) in by_tile.items():
            on = t.get(("fp32", f"naive_row/block:{tile}x{tile}", n))
            os_ = t.get(("fp32", f"shared_dynamic/tile:{tile}", n))
            sp = on / os_ if on and os_ else None
            lines.append(f"| {n} | {tile} | {naive:.3f} | {_fmt(on, 4) if on else 'not run'} | {shared:.3f} | "
                         f"{_fmt(os_, 4) if os_ else 'not run'} | {naive / shared:.3f} | {_fmt(sp, 3) if sp else ''} |")
        lines.append(f"| {n} | 64 | SKIP | refused: 64x64 = 4096 threads per block | | | | |")
    sections.append("\n".join(lines))
    peak = context_value(context, "peak_fp64_gflops")
    lines = [f"**Seed 001 (Hygon DCU, FP64 peak 10.1 TFLOP/s) shared-memory kernel vs {gpu} "
             f"(FP64 shared/tile:32, FP64 peak {_fmt(peak / 1000)} TFLOP/s), GFLOP/s**", "",
             "| N | DCU | this GPU | this GPU, % of FP64 peak |", "|---|---:|---:|---:|"]
    for n, seed in seed_tables.SEED001_FP64_SHARED_GFLOPS.items():
        ours = g.get(("fp64", "shared/tile:32", n))
        if ours:
            lines.append(f"| {n} | {seed:.1f} | {ours:.1f} | {100 * ours / peak:.1f}% |")
    sections.append("\n".join(lines))
    sections.append(seed_differences(t, g, context, kernel))
    on, os_ = t.get(("fp32", "naive_row/block:32x32", 1024)), t.get(("fp32", "shared/tile:32", 1024))
    if on and os_:
        sections.append(
            f"**Seed 003 (NVIDIA L20), N = 1024, FP32, 32x32:** naive {seed_tables.SEED003['naive']:.3f} ms, "
            f"shared {seed_tables.SEED003['shared']:.3f} ms (x{seed_tables.SEED003['naive'] / seed_tables.SEED003['shared']:.2f}); "
            f"{gpu}: naive {on:.4f} ms, shared {os_:.4f} ms (x{on / os_:.2f}).")
    return sections


def seed_differences(t, g, context, kernel):
    """What differs between the write-ups' numbers and this GPU's, with the numbers that show it."""
    gpu = context.get("gpu_name", "this GPU")
    notes = ["**What differs, and why** (ratios computed from the tables above):", ""]
    ratios = []
    for mapping, table in seed_tables.SEED000.items():
        for n, by_tile in table.items():
            for tile, seed_ms in by_tile.items():
                for variant, s_ms in zip(seed_tables.SEED000_VARIANTS[mapping], seed_ms):
                    ours = t.get(("fp32", variant.format(t=tile), n))
                    if ours:
                        ratios.append(s_ms / ours)
    if ratios:
        notes.append(f"- Seed 000: the write-up's times are {min(ratios):.0f}x to {max(ratios):.0f}x "
                     f"{gpu}'s (median {float(np.median(ratios)):.0f}x); its GPU is not named, so only the "
                     "shape of each table can be compared, not the times.")
    col_reg = t.get(("fp32", "shared_register_col/tile:32", 1024))
    col_sh = t.get(("fp32", "shared_col/tile:32", 1024))
    row_reg = t.get(("fp32", "shared_register/tile:32", 1024))
    if col_reg and col_sh and row_reg:
        notes.append(f"- Seed 000 table 2 shows the column-mapped register variant as fast as the row-mapped "
                     f"one (7.093 vs 6.522 ms at 1024, 32x32) while its shared variant is 6x slower. Here the "
                     f"column-mapped register variant runs like the column-mapped shared one ({col_reg:.3f} vs "
                     f"{col_sh:.3f} ms) and {col_reg / row_reg:.1f}x slower than the row-mapped one: the two "
                     "kernels are the same instructions (same counters), and the column mapping's conflicts on "
                     "tile_a and uncoalesced tile loads remain. The write-up's column register kernel was "
                     "probably launched with the row mapping; its listing is not shown.")
    t4 = [(n, tile, naive / shared) for n, by in seed_tables.SEED002.items() for tile, (naive, shared) in by.items()]
    ours = [(n, tile, t[("fp32", f"naive_row/block:{tile}x{tile}", n)] / t[("fp32", f"shared_dynamic/tile:{tile}", n)])
            for n, tile, _ in t4 if ("fp32", f"naive_row/block:{tile}x{tile}", n) in t
            and ("fp32", f"shared_dynamic/tile:{tile}", n) in t]
    if ours:
        notes.append(f"- Seed 002: the T4 gains {min(x[2] for x in t4):.2f}x to {max(x[2] for x in t4):.2f}x from "
                     f"shared memory, this GPU {min(x[2] for x in ours):.2f}x to {max(x[2] for x in ours):.2f}x: "
                     "on both the gain shrinks as the tile grows, because the naive kernel's L1/L2 hits already "
                     "provide much of the reuse that the tile makes explicit (the naive kernels' L2 hit rate is "
                     "in the counter tables). Tile 64 is refused before launch on both GPUs.")
    dcu = seed_tables.SEED001_FP64_SHARED_GFLOPS
    mine = [(n, g[("fp64", "shared/tile:32", n)]) for n in dcu if ("fp64", "shared/tile:32", n) in g]
    if mine:
        n_big, ours_big = mine[-1]
        peak = context_value(context, "peak_fp64_gflops")
        line = (f"- Seed 001: at {n_big} the DCU reaches {100 * dcu[n_big] / 10100:.1f}% of its FP64 peak and "
                f"{gpu} {100 * ours_big / peak:.1f}% of its FP64 FMA peak with the same 32x32 shared kernel.")
        row = kernel[(kernel.variant == "shared/tile:32") & (kernel.precision == "fp64") & (kernel.n == n_big)]
        if len(row) and "smem_ld_wavefronts" in row and np.isfinite(row.smem_ld_wavefronts.iloc[0]):
            r = row.iloc[0]
            per_fma = r.smem_ld_wavefronts / (r.m * r.n * r.k / 32)  # wavefronts per warp-level DFMA
            line += (f" Here the counters say why: {per_fma:.2f} shared-load wavefronts per warp-level FMA, at "
                     f"one wavefront per clock per SM against two warp-level FP64 FMAs per clock, cap the kernel "
                     f"at {100 / (2 * per_fma):.1f}% of the FP64 peak: shared-memory bandwidth, not FP64 "
                     "throughput, is the limit.")
        notes.append(line)
    return "\n".join(notes)


# ----------------------------------------------------------------------------- figures

def twin_families(frame):
    """family -> the earlier tile_sweep family it duplicates: same exact counters at every
    common tile and shape (the same instructions, e.g. the write-up's 'register' variant).
    Twins are drawn dashed over their original so both stay visible."""
    exact = [c for c in ("gld_sectors", "gld_requests", "smem_ld_wavefronts", "smem_ld_requests",
                         "registers_per_thread") if c in frame]
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


def figures(frame, out, precisions):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    kernel = frame[~frame.end_to_end & has_tag(frame, "tile_sweep")]
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
                ax.plot(group.tile, group.gflops, marker="o", label=family, color=colour[family], linestyle=style[family])
            ax.set(title=f"{precision} {shape}", xlabel="tile / block edge", ylabel="GFLOP/s")
            _tile_axis(ax, edges)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        written += save_figure(fig, out / f"gflops_vs_tile_{precision}")
        plt.close(fig)

        available = data.get("counters_available", pd.Series(0, index=data.index)) == 1
        with_counters = data[available]
        if not with_counters.empty:
            # The largest shape at which the most variants have counters: the default study
            # caps the write-ups' counters below its largest size, all but the ladder's start.
            counts = with_counters.groupby("shape").size()
            shape = max(reversed(shapes_by_size(with_counters)), key=lambda s: counts[s])
            sub = with_counters[with_counters["shape"] == shape]
            counters = ["gld_sectors", "smem_ld_wavefronts_per_request", "achieved_occupancy", "dram_read_bytes"]
            fig, axes = plt.subplots(1, len(counters), figsize=(4.2 * len(counters), 3.8))
            for ax, counter in zip(axes, counters):
                for family, group in sub.groupby("family", sort=False):
                    if counter in group and group[counter].notna().any():
                        group = group.sort_values("tile")
                        ax.plot(group.tile, group[counter], marker="o", label=family, color=colour[family],
                                linestyle=style[family])
                ax.set_title(f"{counter}\n({precision} {shape})", fontsize=9)
                ax.set(xlabel="tile / block edge")
                _tile_axis(ax, edges)
            handles = [plt.Line2D([], [], color=colour[f], linestyle=style[f], marker="o", label=f)
                       for f in families if f in set(sub.family)]
            fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=7)
            fig.tight_layout(rect=(0, 0.12, 1, 1))
            written += save_figure(fig, out / f"counters_vs_tile_{precision}")
            plt.close(fig)

    everything = frame[~frame.end_to_end & ~has_tag(frame, "cpu")]
    for precision in precisions:
        data = everything[everything.precision == precision]
        if data.empty:
            continue
        shape = shapes_by_size(data)[-1]
        best = data[data["shape"] == shape].sort_values("gflops").groupby("family").tail(1).sort_values("gflops")
        fig, ax = plt.subplots(figsize=(8, 0.35 * len(best) + 1.5))
        reference = has_tag(best, "reference")
        ax.barh(best.variant, best.gflops, color=["tab:gray" if r else "tab:blue" for r in reference])
        ax.set(xlabel="GFLOP/s", title=f"Every family, {precision} {shape} (best of each; grey: cuBLAS)")
        fig.tight_layout()
        written += save_figure(fig, out / f"ladder_{precision}")
        plt.close(fig)
    return written


def _tile_axis(ax, edges):
    ax.set_xscale("log", base=2)
    ax.set_xticks(edges, [str(e) for e in edges])
    ax.minorticks_off()


def save_figure(fig, stem):
    paths = []
    for ext in ("png", "svg"):
        path = Path(f"{stem}.{ext}")
        fig.savefig(path, dpi=110)
        paths.append(path)
    return paths
