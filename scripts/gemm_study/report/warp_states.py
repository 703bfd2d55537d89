"""Where each rung's warps spend their time: every warp state the scheduler reports, in warp cycles
per issued instruction, per rung of each ladder at its headline shape.

CUPTI's smsp__average_warps_issue_stalled_<state>_per_issue_active is the number of warps in that
state per cycle in which an instruction issued. A scheduler issues one instruction in such a
cycle, so the value is also the warp cycles spent in the state per issued instruction, and the
states add up to the warp cycles between two instructions of a warp (ncu's "Warp Cycles Per
Issued Instruction"); `selected` is the one cycle of the issue itself."""

import json

import numpy as np
import pandas as pd

from gemm_study.analysis import ladder
from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.formatting import markdown_table, number, save_figure
from gemm_study.report.ladder_report import ShapeLadder, headline_shape, ladders_present

PREFIX = "stall_"
# States under this many cycles per issued instruction on every rung of a ladder are left out of
# its table (they stay in the figure and the JSON).
SHOWN_FROM = 0.05


def states():
    """The catalogue's warp states, in its order (short names without the stall_ prefix)."""
    return [name for name, m in load_catalogue().items() if m.kind == "metric" and name.startswith(PREFIX)]


def _rows(kernel, context, table, lad):
    families = {f.family for f in ladder.ladder_families(kernel, lad)}
    data = kernel[(kernel.precision == lad.precision) & kernel.family.isin(families)]
    view = ShapeLadder(kernel, lad, headline_shape(data), context, table)
    rows = view.rows[np.isfinite(view.rows.get("gflops", pd.Series(dtype=float)))]
    return view, rows


def cycles(rows):
    """rows x states: warp cycles per issued instruction (NaN where a state was not collected)."""
    names = [s for s in states() if s in rows]
    out = rows[names].astype(float).copy()
    out.columns = [s.removeprefix(PREFIX) for s in names]
    return out


def _label(row):
    return f"{int(row['rung'])} {row['variant'] if row['start'] else row['family']}"


def section(kernel, context, table):
    """Markdown: per ladder, the states that matter per rung and their total."""
    lines = [
        "## Warp states per rung",
        "",
        "Every warp state the scheduler reports, in warp cycles per issued instruction (the states add "
        "up to the cycles between two instructions of a warp; `selected` is the issue itself), at each "
        f"ladder's headline shape. States below {SHOWN_FROM} cycles on every rung are left out here; "
        "`warp_states.json` and the figures have them all.",
        "",
    ]
    for lad in ladders_present(kernel):
        view, rows = _rows(kernel, context, table, lad)
        per_state = cycles(rows)
        if per_state.empty or per_state.isna().all().all():
            continue
        shown = [c for c in per_state if np.nanmax(per_state[c].to_numpy()) >= SHOWN_FROM]
        frame = per_state[shown].assign(total=per_state.sum(axis=1, min_count=1))
        frame.insert(0, "rung", [_label(r) for _, r in rows.iterrows()])
        lines += [f"**{lad.title}, {view.shape}**", "", markdown_table(frame, list(frame.columns)), ""]
    return lines


def write_json(kernel, out):
    """warp_states.json: benchmark -> state -> warp cycles per issued instruction, and the total."""
    per_state = cycles(kernel)
    table = {}
    for (_, row), (_, values) in zip(kernel.iterrows(), per_state.iterrows()):
        # Six significant digits: the counters carry fewer, and the last bits of a float depend on
        # the numpy that computed it, which would make the file differ between machines.
        found = {state: float(f"{v:.6g}") for state, v in values.items() if np.isfinite(v)}
        if found:
            table[str(row["name"])] = {**found, "total": float(f"{sum(found.values()):.6g}")}
    (out / "warp_states.json").write_text(json.dumps(table, indent=1) + "\n")


# A rung's bar longer than this many times the longest of the register-blocked rungs (rung 1 up)
# is cut at the axis: the write-ups' kernels wait tens to hundreds of cycles per instruction
# (naive_col's full LSU queue, shared/tile:32's MIO queue), which would flatten the others' bars
# into slivers. A cut bar is labelled with its total.
CUT_FACTOR = 3.0


def _axis_limit(totals, rungs):
    """The x-axis limit that keeps the register-blocked rungs' bars readable, or None where no bar
    needs cutting."""
    if rungs is None:
        return None
    tiled = [t for t, r in zip(totals, rungs) if isinstance(r, (int, float)) and r >= 1 and t > 0]
    if not tiled or max(totals) <= CUT_FACTOR * max(tiled):
        return None
    return CUT_FACTOR * max(tiled)


def figures(kernel, context, out, table):
    """warp_states_<precision>.png/.svg: a panel per ladder, a stacked bar per rung."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    all_states = [s.removeprefix(PREFIX) for s in states()]
    colours = {s: matplotlib.colormaps["tab20"](i % 20) for i, s in enumerate(all_states)}
    for precision in ("fp32", "fp64"):
        lads = [lad for lad in ladders_present(kernel) if lad.precision == precision]
        panels = [(lad, *_rows(kernel, context, table, lad)) for lad in lads]
        panels = [(lad, view, rows) for lad, view, rows in panels if not cycles(rows).isna().all().all()]
        if not panels:
            continue
        fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 5.5), squeeze=False)
        for ax, (lad, view, rows) in zip(axes[0], panels):
            per_state = cycles(rows).fillna(0.0)
            left = np.zeros(len(per_state))
            labels = [_label(r) for _, r in rows.iterrows()]
            for state in per_state:
                widths = per_state[state].to_numpy()
                if widths.max() <= 0:
                    continue
                ax.barh(range(len(labels)), widths, left=left, color=colours[state], label=state)
                left += widths
            limit = _axis_limit(left, rows.get("rung"))
            for y, total in enumerate(left):
                shown = min(total, limit) if limit else total
                text = f"{number(total)} (cut)" if limit and total > limit else number(total)
                ax.annotate(text, (shown, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
            if limit:
                ax.set_xlim(0, limit * 1.15)
            ax.set_yticks(range(len(labels)), labels, fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel("warp cycles per issued instruction")
            ax.set_title(f"{lad.title}, {view.shape}", fontsize=9)
        handles, names = [], []
        for ax in axes[0]:
            for handle, name in zip(*ax.get_legend_handles_labels()):
                if name not in names:
                    handles.append(handle)
                    names.append(name)
        fig.legend(handles, names, loc="lower center", ncol=min(len(names), 9), fontsize=7)
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        paths += save_figure(fig, out / f"warp_states_{precision}")
        plt.close(fig)
    return paths
