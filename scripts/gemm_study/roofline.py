"""The roofline figure of the ladder: achieved GFLOP/s against FLOP per DRAM byte (and per L2
byte where gemm-bench recorded L2 traffic), under the ceilings the context gives."""
import numpy as np

from .ladder import LADDER_TAGS, PEAK_KEYS, compute_of, flop_per_byte, ladder_rows, traffic_bytes
from .formatting import save_figure
from .manifest import TAGS
from .results import context_value, has_tag, shapes_by_size

# level -> (context key of its bandwidth in GB/s, axis label). A level is drawn when its
# counters exist; its bandwidth ceiling when the context has the key.
LEVELS = {"dram": ("peak_dram_gbs", "FLOP per DRAM byte"),
          "l2": ("peak_l2_gbs", "FLOP per L2 byte")}
# Which compute peaks bound a precision's kernels (FP32 storage also runs TF32 tensor cores).
CEILINGS = {"fp32": ("fp32", "tf32"), "fp64": ("fp64",)}


def roofline_points(kernel, precision):
    """The ladder's rows (start, rungs, references) at every shape, one row per benchmark."""
    import pandas as pd

    parts = []
    for shape in shapes_by_size(kernel[kernel.precision == precision]):
        rows, references = ladder_rows(kernel, precision, shape)
        parts += [rows, references]
    return pd.concat(parts) if parts else kernel.iloc[0:0]


def levels_present(points):
    """The memory levels whose traffic counters at least one point has."""
    return [level for level in LEVELS
            if any(np.isfinite(traffic_bytes(row, level)) for _, row in points.iterrows())]


def compute_ceilings(context, precision):
    """[(label, GFLOP/s)] of the peaks the context has for this precision."""
    out = []
    for compute in CEILINGS.get(precision, (precision,)):
        peak = context_value(context, PEAK_KEYS[compute])
        if np.isfinite(peak):
            out.append((f"{compute.upper()} peak", peak))
    return out


def figure(kernel, context, out, precision):
    """Writes roofline_<precision>.png/.svg; returns the paths ([] when nothing to draw)."""
    if not has_tag(kernel[kernel.precision == precision], *LADDER_TAGS).any():
        return []
    points = roofline_points(kernel, precision)
    levels = levels_present(points)
    if points.empty or not levels:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(levels), figsize=(6.5 * len(levels), 4.8), squeeze=False)
    shapes = shapes_by_size(points)
    markers = dict(zip(shapes, "os^Dvp*h"))
    for ax, level in zip(axes[0], levels):
        intensity = np.array([flop_per_byte(r, level) for _, r in points.iterrows()])
        finite = np.isfinite(intensity)
        if not finite.any():
            continue
        _draw_ceilings(ax, context, precision, level, intensity[finite])
        for (_, row), x in zip(points.iterrows(), intensity):
            if not np.isfinite(x):
                continue
            reference = TAGS.reference in (row["tags"] or ())
            ax.scatter(x, row["gflops"], marker=markers.get(row["shape"], "o"),
                       color="tab:gray" if reference else matplotlib.colormaps["viridis"](_rung_share(row, points)))
            if row["shape"] == shapes[-1]:
                label = row["variant"] if reference else f"{int(row['rung'])}"
                ax.annotate(label, (x, row["gflops"]), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.set(xscale="log", yscale="log", xlabel=LEVELS[level][1], ylabel="GFLOP/s",
               title=f"Roofline, {precision} ({compute_of(points.iloc[0])} rungs; labels: rung at {shapes[-1]})")
        handles = [plt.Line2D([], [], marker=markers[s], linestyle="", color="k", label=s) for s in shapes]
        ax.legend(handles=handles + ax.get_legend_handles_labels()[0], fontsize=7, loc="lower right")
    fig.tight_layout()
    paths = save_figure(fig, out / f"roofline_{precision}")
    plt.close(fig)
    return paths


def _rung_share(row, points):
    top = max(float(points["rung"].max()), 1.0)
    return float(row["rung"]) / top if np.isfinite(float(row["rung"])) else 0.0


def _draw_ceilings(ax, context, precision, level, intensities):
    xs = np.logspace(np.log10(intensities.min() / 4), np.log10(intensities.max() * 4), 100)
    peaks = compute_ceilings(context, precision)
    bandwidth = context_value(context, LEVELS[level][0])
    for label, peak in peaks:
        roof = np.minimum(peak, bandwidth * xs) if np.isfinite(bandwidth) else np.full_like(xs, peak)
        ax.plot(xs, roof, linestyle="--", linewidth=1, label=label)
    if np.isfinite(bandwidth):
        ax.plot(xs, bandwidth * xs, linestyle=":", color="k", linewidth=1,
                label=f"{level.upper()} {bandwidth:,.0f} GB/s")
