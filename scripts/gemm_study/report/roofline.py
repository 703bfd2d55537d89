"""The roofline of each precision at the headline shape: every rung of the precision's ladders
(CUDA-core and tensor-core) and the libraries, under every ceiling of the GPU (ceilings.py).

One panel per memory level whose traffic the results measure:
  DRAM    intensity from the compulsory traffic (A and B read once, C written once:
          footprint.working_set_bytes), the same for every kernel of a shape; where the counters
          were collected with a cold L2 (context l2_state 'cold'), also from the measured DRAM
          bytes (hollow markers). A warm L2 makes measured DRAM bytes a residue, so they are not used.
  L2      FLOP per byte of L2 traffic (l2_sectors x 32, or the SMs' read + write sectors in files
          recorded before l2_sectors).
  shared  FLOP per byte of shared-memory wavefronts (smem_wavefronts x 128: the hardware count,
          wgmma's shared operands included).
Each compute ceiling is drawn as a clipped roof min(peak, bandwidth x intensity); the key names
every point; `above_ceiling` lists any point above its own roof (the peak of the unit it runs on,
ceilings.ceiling_key, and the level's bandwidth), which the report prints and the tests forbid."""

import math

import numpy as np

from gemm_study.analysis import ceilings, ladder
from gemm_study.analysis.account import value
from gemm_study.analysis.ceilings import SECTOR_BYTES, WAVEFRONT_BYTES
from gemm_study.analysis.footprint import flop, working_set_bytes
from gemm_study.data.formatting import number, save_figure
from gemm_study.data.manifest import TAGS
from gemm_study.data.results import has_tag
from gemm_study.report.ladder_report import headline_shape

# level -> (axis label, bandwidth ceiling key)
LEVELS = {
    "dram": ("FLOP per DRAM byte (compulsory: A, B read once, C written once)", "dram"),
    "l2": ("FLOP per L2 byte (measured sectors x 32 B)", "l2"),
    "shared": ("FLOP per shared-memory byte (measured wavefronts x 128 B)", "shared"),
}


def traffic_bytes(row, level):
    """Measured bytes at a level ('l2', 'shared', 'dram'); NaN where the counters are absent."""
    if level == "l2":
        sectors = value(row, "l2_sectors")
        if math.isnan(sectors):
            sectors = value(row, "l2_read_sectors") + value(row, "l2_write_sectors")
        return sectors * SECTOR_BYTES
    if level == "shared":
        return value(row, "smem_wavefronts") * WAVEFRONT_BYTES
    return value(row, "dram_read_bytes") + value(row, "dram_write_bytes")


def intensity(row, level):
    """FLOP per byte at the level: DRAM from the compulsory traffic, the others measured."""
    moved = working_set_bytes(row) if level == "dram" else traffic_bytes(row, level)
    return flop(row) / moved if moved > 0 else math.nan


def cold_l2(context):
    return str(context.get("l2_state", "")).lower().startswith("cold")


def points(kernel, precision, shape, context, table):
    """The rows drawn: every rung that ran and the libraries, with `label` and `ceiling`."""
    import pandas as pd

    parts = []
    for lad in ladder.LADDERS:
        if lad.precision != precision or not ladder.ladder_families(kernel, lad):
            continue
        rows = ladder.ladder_rows(kernel, lad, shape, context)
        rows = rows[[isinstance(n, str) for n in rows.get("name", [None] * len(rows))]]
        if lad.level != "ladder":
            rows = rows[~rows.start.astype(bool)]  # the start is the CUDA-core ladder's top rung
        parts.append(
            rows.assign(
                label=[f"{int(r['rung'])} {r['variant'] if r['start'] else r['family']}" for _, r in rows.iterrows()],
                tensor=lad.level != "ladder",
            )
        )
        parts.append(ladder.references(kernel, lad, shape).assign(tensor=False))
    if not parts:
        return kernel.iloc[0:0]
    frame = pd.concat(parts, ignore_index=True).drop_duplicates("name")
    frame["label"] = [
        lab if isinstance(lab, str) else f"{ladder.library_name(r)} {ladder.compute_of(r).upper()}"
        for lab, (_, r) in zip(frame.get("label", [None] * len(frame)), frame.iterrows())
    ]
    frame["ceiling"] = [ceilings.ceiling_key(r) for _, r in frame.iterrows()]
    return frame


def levels_present(frame, table):
    """Levels to draw: DRAM always; L2 and shared memory where some point has their traffic."""
    found = ["dram"]
    for level in ("l2", "shared"):
        if any(np.isfinite(intensity(r, level)) for _, r in frame.iterrows()):
            found.append(level)
    return found


def own_roof(row, level, x, table):
    """The point's roof at intensity x: its unit's peak, clipped by the level's bandwidth."""
    peak = ceilings.peak_of(row, table)
    bandwidth = table.get(LEVELS[level][1])
    return min(peak, bandwidth.value * x) if bandwidth else peak


def above_ceiling(frame, table, context, tolerance=0.01):
    """[(label, level, GFLOP/s, roof)] of the points above their own roof."""
    out = []
    for level in levels_present(frame, table):
        for _, row in frame.iterrows():
            xs = [intensity(row, level)]
            if level == "dram" and cold_l2(context):
                xs.append(flop(row) / traffic_bytes(row, "dram"))
            for x in xs:
                if not np.isfinite(x):
                    continue
                roof = own_roof(row, level, x, table)
                if np.isfinite(roof) and row["gflops"] > roof * (1 + tolerance):
                    out.append((row["label"], level, row["gflops"], roof))
    return out


def _style(frame):
    """label -> (colour, marker): CUDA-core rungs in blues, tensor rungs in reds, libraries black."""
    import matplotlib

    cuda = frame[~frame.tensor.astype(bool) & ~has_tag(frame, TAGS.reference)]
    tensor = frame[frame.tensor.astype(bool)]
    style = {}
    for group, cmap in ((cuda, "Blues"), (tensor, "Reds")):
        for i, label in enumerate(group.label):
            style[label] = (matplotlib.colormaps[cmap](0.35 + 0.65 * i / max(len(group) - 1, 1)), "o")
    for label, marker in zip(frame[has_tag(frame, TAGS.reference)].label, "XPD*sv"):
        style[label] = ("black", marker)
    return style


def _draw_roofs(ax, level, table, precision, xs):
    """Each compute ceiling from the point where the bandwidth line meets it (clipped), and the
    bandwidth line up to the highest ceiling."""
    bandwidth = table.get(LEVELS[level][1])
    peaks = [table[key] for key in ceilings.OF_PRECISION[precision] if key in table]
    for ceiling, colour in zip(peaks, ("tab:blue", "tab:red")):
        ridge = ceiling.value / bandwidth.value if bandwidth else xs[0]
        right = xs[xs >= ridge]
        ax.plot(right, np.full_like(right, ceiling.value), color=colour, linewidth=1.2, linestyle="--")
        ax.annotate(
            f"{ceiling.label}: {number(ceiling.value / 1e3)} TFLOP/s",
            (xs[-1], ceiling.value),
            fontsize=7,
            ha="right",
            va="bottom",
            color=colour,
        )
    if bandwidth and peaks:
        top = max(p.value for p in peaks)
        left = xs[xs <= top / bandwidth.value]
        ax.plot(left, bandwidth.value * left, color="k", linewidth=1.0)
        middle = left[len(left) // 3]
        ax.annotate(
            f"{bandwidth.label} {number(bandwidth.value)} GB/s",
            (middle, bandwidth.value * middle),
            fontsize=7,
            ha="left",
            va="top",
        )


def shape_of(kernel, precision):
    """The shape the roofline of a precision shows (the headline shape of its rungs), or None."""
    data = kernel[kernel.precision == precision]
    rungs = data[has_tag(data, *ladder.LADDER_TAGS)]
    return headline_shape(rungs) if len(rungs) else None


def figure(kernel, context, out, precision, table):
    """Writes roofline_<precision>.png/.svg; returns the paths ([] when the precision has no rung)."""
    shape = shape_of(kernel, precision)
    if shape is None:
        return []
    frame = points(kernel, precision, shape, context, table)
    if frame.empty:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = levels_present(frame, table)
    style = _style(frame)
    fig, axes = plt.subplots(1, len(levels), figsize=(5.2 * len(levels) + 2.6, 5.0), squeeze=False)
    for ax, level in zip(axes[0], levels):
        xs_points = np.array([intensity(r, level) for _, r in frame.iterrows()])
        finite = xs_points[np.isfinite(xs_points)]
        bandwidth = table.get(LEVELS[level][1])
        ridges = [
            table[k].value / bandwidth.value for k in ceilings.OF_PRECISION[precision] if k in table and bandwidth
        ]
        lo, hi = min([*finite, *ridges]) / 4, max([*finite, *ridges]) * 4
        _draw_roofs(ax, level, table, precision, np.logspace(np.log10(lo), np.log10(hi), 200))
        for (_, row), x in zip(frame.iterrows(), xs_points):
            colour, marker = style[row["label"]]
            if np.isfinite(x):
                ax.scatter(x, row["gflops"], color=colour, marker=marker, edgecolor="k", linewidth=0.4, zorder=3)
            if level == "dram" and cold_l2(context):
                measured = flop(row) / traffic_bytes(row, "dram")
                if np.isfinite(measured):
                    ax.scatter(measured, row["gflops"], facecolor="none", edgecolor=colour, marker=marker, zorder=3)
        ax.set(xscale="log", yscale="log", xlabel=LEVELS[level][0], ylabel="GFLOP/s")
        roof_note = "" if bandwidth else f" (no {level} bandwidth in these counters)"
        ax.set_title(f"{level.upper() if level != 'shared' else 'Shared memory'}{roof_note}", fontsize=9)
    clock = next((c.clock_mhz for c in table.values() if c.unit == "GFLOP/s"), math.nan)
    fig.suptitle(
        f"Roofline, {precision.upper()} storage, {shape}: every rung and the libraries "
        f"(ceilings at {number(clock)} MHz)",
        fontsize=10,
    )
    handles = [
        plt.Line2D(
            [],
            [],
            color=style[lab][0],
            marker=style[lab][1],
            linestyle="",
            markeredgecolor="k",
            markeredgewidth=0.4,
            label=lab,
        )
        for lab in frame.label
    ]
    fig.legend(handles=handles, loc="center right", fontsize=7, title="rung family / library", title_fontsize=7)
    fig.tight_layout(rect=(0, 0, 1 - 2.4 / (5.2 * len(levels) + 2.6), 0.95))
    paths = save_figure(fig, out / f"roofline_{precision}")
    plt.close(fig)
    return paths
