"""The ladder figure of a precision: one panel per ladder of that storage precision (CUDA cores,
then tensor cores), the rungs in manifest order as bars at the headline shape, each bar coloured
by its limiter (the bottleneck account) and labelled with its % of cuBLAS of the same
arithmetic, the libraries as horizontal lines. Panels have their own axes, so the CUDA-core
rungs are not slivers under the tensor-core ones."""

import numpy as np

from gemm_study.analysis import ladder
from gemm_study.data.formatting import number, save_figure
from gemm_study.report.ladder_report import ShapeLadder, headline_shape, ladders_present

LIBRARY_STYLES = ("-", "--", ":")


def _unit_label(limiter):
    """'L1 data stage' of 'L1 data stage (shared memory 96%)': the unit, for its colour."""
    return limiter.split(" (")[0] if limiter.endswith("%)") else limiter


def _tick(row):
    return f"{int(row['rung'])}\n{row['variant'] if row['start'] else row['family']}"


def figure(kernel, context, out, precision, table):
    """Writes ladder_<precision>.png/.svg; returns the paths ([] without a ladder of the precision)."""
    lads = [lad for lad in ladders_present(kernel) if lad.precision == precision]
    if not lads:
        return []
    families = {f.family for lad in lads for f in ladder.ladder_families(kernel, lad)}
    data = kernel[(kernel.precision == precision) & kernel.family.isin(families)]
    shape = headline_shape(data)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    views = [ShapeLadder(kernel, lad, shape, context, table) for lad in lads]
    widths = [max(len(v.rows), 2) for v in views]
    fig, axes = plt.subplots(
        1, len(views), figsize=(1.0 * sum(widths) + 2.5, 5.2), squeeze=False, gridspec_kw={"width_ratios": widths}
    )
    # One colour per limiting unit (its label without the part a covering unit names in brackets).
    limiters = sorted(
        {_unit_label(lim) for v in views for lim in v.rows.get("account_limiter", []) if isinstance(lim, str)}
    )
    colours = {lim: matplotlib.colormaps["tab10"](i % 10) for i, lim in enumerate(limiters)}
    for ax, view in zip(axes[0], views):
        rows = view.rows
        heights = np.nan_to_num(rows.gflops.to_numpy(dtype=float))
        bar_colours = [
            colours.get(_unit_label(lim), "tab:gray") if isinstance(lim, str) else "tab:gray"
            for lim in rows.get("account_limiter", [""] * len(rows))
        ]
        bars = ax.bar(range(len(rows)), heights, color=bar_colours, edgecolor="k", linewidth=0.4)
        for bar, (_, row) in zip(bars, rows.iterrows()):
            text = (
                "not run"
                if not np.isfinite(row["gflops"])
                else (
                    f"{number(row['pct_of_reference'])}%"
                    if np.isfinite(row["pct_of_reference"])
                    else number(row["gflops"])
                )
            )
            ax.annotate(
                text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=7
            )
        for (_, ref), style in zip(view.references.iloc[::-1].iterrows(), LIBRARY_STYLES):
            ax.axhline(
                ref["gflops"],
                color="k",
                linestyle=style,
                linewidth=1,
                label=f"{ladder.library_name(ref)} {ladder.compute_of(ref).upper()}: {number(ref['gflops'])}",
            )
        ax.set_xticks(range(len(rows)), [_tick(r) for _, r in rows.iterrows()], fontsize=7, rotation=60, ha="right")
        ax.set(ylabel="GFLOP/s", title=f"{view.ladder.title}, {shape}")
        ax.title.set_fontsize(9)
        if len(view.references):
            ax.legend(fontsize=7, loc="upper left")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c, label=lim) for lim, c in colours.items()]
    if handles:
        fig.legend(
            handles=handles, loc="upper right", fontsize=7, title="limiter (bottleneck account)", title_fontsize=7
        )
    fig.suptitle(
        f"The ladders, {precision.upper()} storage, {context.get('gpu_name', '')}: rungs in order, "
        "bar labels % of cuBLAS of the same arithmetic",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0, 1 - 2.2 / (1.0 * sum(widths) + 2.5), 0.94))
    paths = save_figure(fig, out / f"ladder_{precision}")
    plt.close(fig)
    return paths
