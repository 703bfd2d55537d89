"""The ladders in the report: per ladder and shape the rung table (GFLOP/s, % of cuBLAS of the
same arithmetic, % of the best library, % of the rung's own ceiling, limiter and explained, the
ncu command) and the steps (measured against predicted speedup, the generated sentence); and
the summary at the top of the report (the headline shape's tables and the tally of steps)."""

import pandas as pd

from gemm_study.analysis import account, ladder, latency, prediction, schedule
from gemm_study.data.formatting import markdown_table
from gemm_study.data.shape import shape_order

COLUMNS = [
    "rung",
    "rung_name",
    "variant",
    "gflops",
    "pct_of_reference",
    "pct_of_best_library",
    "pct_of_peak",
    "account_limiter",
    "account_explained",
    "ncu",
]
SUMMARY_COLUMNS = [
    "rung",
    "rung_name",
    "variant",
    "gflops",
    "pct_of_reference",
    "pct_of_best_library",
    "account_limiter",
    "account_explained",
]


def headers(best_library, columns):
    names = {
        "rung": "rung",
        "rung_name": "rung name",
        "variant": "variant",
        "gflops": "GFLOP/s",
        "pct_of_reference": "% of cuBLAS",
        "pct_of_best_library": f"% of best library ({best_library or '-'})",
        "pct_of_peak": "% of its ceiling",
        "account_limiter": "limiter",
        "account_explained": "explained",
        "ncu": "open in Nsight Compute",
    }
    return [names[c] for c in columns]


def headline_shape(frame):
    """The shape the summary shows: the largest square by M·N·K, else the largest shape."""
    shapes = list(dict.fromkeys(frame["shape"]))
    if not shapes:
        return None
    dims = {s: shape_order(s) for s in shapes}
    squares = [s for s in shapes if len(set(dims[s])) == 1]
    return max(squares or shapes, key=lambda s: dims[s][0] * dims[s][1] * dims[s][2])


def ladder_headline_shape(kernel):
    """headline_shape over the ladders' rungs alone: a reference or a write-up kernel run at a
    larger square does not move it. None without a rung."""
    return headline_shape(
        kernel[kernel.family.isin({f.family for lad in ladder.LADDERS for f in ladder.ladder_families(kernel, lad)})]
    )


def shapes_of(kernel, lad):
    data = kernel[kernel.precision == lad.precision]
    families = {f.family for f in ladder.ladder_families(kernel, lad)}
    shapes = data[data.family.isin(families)]["shape"].unique()
    return sorted(shapes, key=shape_order)


class ShapeLadder:
    """One ladder at one shape: its annotated rung rows, its references and its steps."""

    def __init__(self, kernel, lad, shape, context, table):
        self.ladder, self.shape = lad, shape
        rows = ladder.ladder_rows(kernel, lad, shape, context)
        self.refs = ladder.references(kernel, lad, shape)
        self.rows = ladder.annotate(rows, self.refs, table)
        self.references = ladder.annotate(self.refs, self.refs, table)
        self.steps = prediction.ladder_steps(rows, lad.key, shape)

    @property
    def best_library(self):
        return self.rows["best_library"].iloc[0] if len(self.rows) else ""

    def table(self, columns):
        refs = self.references.assign(
            rung="", rung_name=[f"reference: {ladder.library_name(r)}" for _, r in self.references.iterrows()]
        )
        frame = pd.concat([self.rows, refs], ignore_index=True)
        frame["rung"] = [str(int(r)) if str(r) not in ("", "nan") else "" for r in frame["rung"]]
        reasons = frame["not_run"] if "not_run" in frame else pd.Series([None] * len(frame))
        frame["variant"] = [f"{v} ({why})" if isinstance(why, str) else v for v, why in zip(frame["variant"], reasons)]
        for column in columns:
            if column not in frame:
                frame[column] = ""
        frame["account_limiter"] = [lim if isinstance(lim, str) and lim else "" for lim in frame["account_limiter"]]
        return markdown_table(frame, columns, headers(self.best_library, columns))

    def no_account_note(self):
        """One line per distinct reason rows of this table have no account, or []."""
        frame = pd.concat([self.rows, self.references], ignore_index=True)
        reasons = frame.get("account_reason", pd.Series(dtype=object))
        found = reasons[[isinstance(r, str) and r != "" for r in reasons]].value_counts()
        lines = [f"No account for {n} of these rows: {reason}." for reason, n in found.items()]
        return lines + [""] if lines else []

    def step_lines(self):
        if not self.steps:
            return []
        lines = ["| step | measured | predicted | off by | verdict |", "|---|---:|---:|---:|---|"]
        for s in self.steps:
            predicted = f"x{s.predicted:.2f}" if s.predicted == s.predicted else ""
            off = f"{s.off:+.0%}" if s.off == s.off else ""
            lines.append(f"| {s.label} | x{s.measured:.2f} | {predicted} | {off} | {s.verdict} |")
        lines.append("")
        lines += [f"- **{s.label}**: {s.sentence}" for s in self.steps]
        return lines


def ladders_present(kernel):
    return [lad for lad in ladder.LADDERS if ladder.ladder_families(kernel, lad)]


def _order_time_note(context):
    """What stands in for the schedule where the pipe peaks lack the simulation's inputs."""
    if schedule.machine_inputs(context)[0]:
        return ""
    if latency.latencies(context):
        return (
            " No rung has a simulated schedule: the pipe peaks beside these results hold no "
            "dependent latencies of the pipes (a study before pipe-peaks measured them); where a "
            "block waits on its own global loads, a latency time (round trips and barriers per "
            "k-tile at the idle latencies, the other resident blocks to fill them) stands in."
        )
    return (
        " No rung has a simulated schedule or a latency time: the pipe peaks beside these results "
        "hold no latencies and L2 bandwidth (a study before pipe-peaks measured them)."
    )


def section(kernel, context, table):
    """(markdown lines of every ladder at every shape, every Step)."""
    lines, steps = (
        [
            "## The ladders",
            "",
            "Each rung is its family's representative variant at the shape, numbered by "
            "`kernels/manifest.inc` (rungs -3 to 0 of the CUDA-core ladders: the write-ups' kernels "
            "it names, each a new mapping of threads to C, then shared-memory tiling). % of cuBLAS is against cuBLAS of the same arithmetic (TF32 "
            "rungs against cuBLAS TF32, FP64 tensor rungs against DGEMM); % of its ceiling against "
            "the peak of the unit the rung runs on (see Ceilings). Limiter and explained are the "
            "bottleneck account: the unit whose work takes longest at its peak rate, or the SM's "
            "schedule where that takes longer (the kernel's main loop in SASS played out cycle by "
            "cycle on one SM: its resident warps issue in order, each waiting for its operands at "
            "the pipes' measured latencies, for its pipe at the measured rates, for barriers and "
            "for cp.async or mbarrier stages; the simulated warp states are shown beside the "
            "measured ones), "
            f"and that time over the measured one. A step is predicted by the change of the limiter's work "
            f"(bound before / bound after) and is unexplained when the measured speedup differs "
            f"by more than {prediction.TOLERANCE:.0%}. "
            + (
                "The tensor pipe's work is its instructions at their forms' measured peaks "
                "(`pipe_peaks.json`, see Ceilings) where the kernel names its form, else its busy cycles."
                if account.form_rates(context)
                else "The tensor pipe's work is its busy cycles (no `pipe_peaks.json` beside the results)."
            )
            + _order_time_note(context),
            "",
        ],
        [],
    )
    for lad in ladders_present(kernel):
        lines += [f"### {lad.title}", ""]
        for shape in shapes_of(kernel, lad):
            view = ShapeLadder(kernel, lad, shape, context, table)
            lines += [f"#### {lad.title}, {shape}", "", view.table(COLUMNS), ""] + view.no_account_note()
            lines += view.step_lines() + [""]
            steps += view.steps
    missing = ladder.families_without_rows(kernel)
    if missing:
        lines += [
            "Rungs of the manifest with no benchmark in these results: "
            + ", ".join(f"{f.rung} `{f.family}`" for f in missing)
            + ".",
            "",
        ]
    return lines, steps


def summary(kernel, context, table, steps):
    """The report's top: each ladder at the headline shape with its limiters, and the tally."""
    shape = ladder_headline_shape(kernel)
    lines = ["## Summary", ""]
    if shape is None:
        return lines + ["No ladder rung in these results.", ""]
    lines += [
        f"Each ladder at {shape}: the rung's representative variant, its GFLOP/s, its share "
        "of the libraries of the same arithmetic, and its bottleneck account (the limiter, and "
        "the share of the measured time its work explains at peak). Every shape and every step "
        "is under [The ladders](#the-ladders).",
        "",
    ]
    for lad in ladders_present(kernel):
        view = ShapeLadder(kernel, lad, shape, context, table)
        lines += [
            f"**{lad.title}, {shape}** ({prediction.tally_sentence(view.steps)})",
            "",
            view.table(SUMMARY_COLUMNS),
            "",
        ] + view.no_account_note()
    lines += [f"Every ladder at every shape: {prediction.tally_sentence(steps)}", ""]
    return lines


def steps_table(steps):
    """Every step of every ladder and shape as one table (for the closing note and the CSV)."""
    return pd.DataFrame(
        [
            {
                "ladder": s.ladder,
                "shape": s.shape,
                "step": s.label,
                "measured": s.measured,
                "predicted": s.predicted,
                "off": s.off,
                "verdict": s.verdict,
                "sentence": s.sentence,
            }
            for s in steps
        ]
    )


def best_rungs(kernel, context, table, shape):
    """[(Ladder, its fastest rung at the shape, annotated)] for the ladders present at the shape
    (the tensor ladders' start, a CUDA-core rung, is not theirs)."""
    out = []
    for lad in ladders_present(kernel):
        view = ShapeLadder(kernel, lad, shape, context, table)
        own = view.rows[~view.rows.start.astype(bool) & view.rows.gflops.notna()]
        if len(own):
            out.append((lad, own.sort_values("gflops").iloc[-1]))
    return out
