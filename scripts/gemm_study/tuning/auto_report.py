"""How well `auto` picks: per arithmetic and shape of a dispatcher sweep (scripts/tune_shapes.sh,
which times every candidate, the anchors and the dispatchers in one run), the kernel `auto`
ran, its share of the fastest candidate and of the best anchor, and the waves of its grid; the
suite's shapes and the held-out ones (tests/heldout_shapes.txt) apart, each with the targets:
`auto` within 5% of the fastest candidate on at least 90% of the shapes, a geometric mean of at
least 90% of the best anchor for FP32 and TF32 and 85% for FP64, no shape below 60%. Beside the
first target, the same count by the pick's own time as a candidate in the sweep: `auto` and its
pick are timed at different places of a shape's run, where the power drawn before them moves the
clock, so the two can straddle the 5% line; the second count says whether the choice was right,
the first what auto ran at. Where the sweep ran more than once (scripts/tune_shapes.sh: each
shape's benchmarks in the listed order, then reversed), every time is the median over the runs."""

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from gemm_study.data import results
from gemm_study.data.formatting import number
from gemm_study.data.shape import Shape
from gemm_study.tuning.shape_table import ARITHMETICS, collect, gflops, shape_of

# The dispatcher that serves each arithmetic: (family, compute of its variant).
DISPATCHERS = {"fp32": ("auto", "fp32"), "tf32": ("auto_tf32", "tf32"), "fp64": ("auto", "fp64")}
LABELS = {"fp32": "FP32 on the CUDA cores", "tf32": "TF32 (tensor cores or better)", "fp64": "FP64"}
NEAR_BEST = 0.05  # `auto` within 5% of the fastest candidate
TARGET_NEAR = 0.90  # ... on at least 90% of the shapes
TARGET_GEOMEAN = {"fp32": 90.0, "tf32": 90.0, "fp64": 85.0}  # % of the best anchor
FLOOR = 60.0  # no shape below 60% of the best anchor


@dataclass
class Row:
    arithmetic: str
    shape: tuple
    heldout: bool
    picked: str  # the variant auto ran
    rule: str  # why (the table, its nearest shape, or a rule of shape)
    auto_ms: float
    best: str  # the fastest candidate
    best_ms: float
    anchor: str
    anchor_ms: float
    waves: float = math.nan
    last_wave_fill: float = math.nan
    picked_ms: float = math.nan  # the pick's own time as a candidate (NaN: not one)

    @property
    def pct_of_best(self):
        return 100.0 * self.best_ms / self.auto_ms

    @property
    def pick_pct_of_best(self):
        return 100.0 * self.best_ms / self.picked_ms

    @property
    def pct_of_anchor(self):
        return 100.0 * self.anchor_ms / self.auto_ms if self.anchor else math.nan


def dispatcher_arithmetic(variant):
    """The arithmetic a dispatcher's entry serves, or None for every other benchmark."""
    family, compute = variant.get("family"), variant.get("compute")
    for arith, (fam, comp) in DISPATCHERS.items():
        if family == fam and compute == comp and not variant.get("end_to_end"):
            return arith
    return None


def collect_auto(benchmarks):
    """{(arith, shape): [(ms, choice, waves, last_wave_fill), ...]} of the dispatchers' entries."""
    out = defaultdict(list)
    for b in benchmarks:
        v = b.get("variant")
        if not isinstance(v, dict) or "shape" not in v or b.get("error_occurred"):
            continue
        if b.get("run_type") == "aggregate":
            continue
        arith = dispatcher_arithmetic(v)
        ms = b.get("median_ms")
        if arith is None or not results.is_number(ms) or ms <= 0:
            continue
        choice = b.get("choice") if isinstance(b.get("choice"), dict) else {}
        facts = (b.get("waves", math.nan), b.get("last_wave_fill", math.nan))
        out[(arith, shape_of(v))].append((float(ms), choice, *facts))
    return out


def rows(benchmarks, heldout):
    """One Row per (arithmetic, shape) where auto, a candidate and an anchor all ran."""
    times, anchors = collect(benchmarks)
    autos = collect_auto(benchmarks)
    out = []
    for (arith, shape), runs in autos.items():
        candidates = times.get((arith, shape), {})
        anchor = anchors.get((arith, shape), {})
        if not candidates or not anchor:
            continue
        best_ms, best = min((statistics.median(t), name) for name, t in candidates.items())
        anchor_ms, anchor_family = min((statistics.median(t), f) for f, t in anchor.items())
        ms = statistics.median(r[0] for r in runs)
        _, choice, waves, fill = min(runs, key=lambda r: abs(r[0] - ms))
        picked = str(choice.get("variant", ""))
        picked_ms = statistics.median(candidates[picked]) if picked in candidates else math.nan
        out.append(
            Row(
                arith,
                shape,
                shape in heldout,
                picked,
                str(choice.get("rule", "")),
                ms,
                best,
                best_ms,
                anchor_family,
                anchor_ms,
                float(waves) if results.is_number(waves) else math.nan,
                float(fill) if results.is_number(fill) else math.nan,
                picked_ms,
            )
        )
    return sorted(out, key=lambda r: (ARITHMETICS.index(r.arithmetic), r.heldout, r.shape))


def runs_note(runs):
    """A line on how many runs each time is the median of, per precision, with their orders:
    `runs` is [(context, benchmarks)] per file (gemm-bench --order; a file from before the
    option names none: it ran as listed)."""
    orders = defaultdict(list)
    for context, benchmarks in runs:
        precisions = sorted(
            {b["variant"].get("precision", "?") for b in benchmarks if isinstance(b.get("variant"), dict)}
        )
        orders["+".join(precisions) or "no benchmarks"].append(str(context.get("order", "listed")))
    parts = [
        f"{precision}: {len(o)} run{'s' if len(o) > 1 else ''} ({', '.join(o)})"
        for precision, o in sorted(orders.items())
    ]
    return (
        "Each time is the median over the runs of its precision, each run with a shape's benchmarks in "
        "the order named (listed: the anchors first and the dispatchers last; reversed: the opposite): "
        + "; ".join(parts)
        + ".\n\n"
    )


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


@dataclass
class Summary:
    shapes: int
    near_best: int  # within 5% of the fastest candidate
    pick_near_best: int  # the same by the pick's own time as a candidate
    geomean_anchor: float
    lowest_anchor: float
    below_floor: int

    def holds(self, arith):
        """(near, geomean, floor): whether each target holds."""
        return (
            self.near_best >= TARGET_NEAR * self.shapes,
            self.geomean_anchor >= TARGET_GEOMEAN[arith],
            self.below_floor == 0,
        )


def summary(group):
    anchors = [r.pct_of_anchor for r in group]
    return Summary(
        len(group),
        sum(r.pct_of_best >= 100.0 * (1 - NEAR_BEST) for r in group),
        sum(r.pick_pct_of_best >= 100.0 * (1 - NEAR_BEST) for r in group),
        geometric_mean(anchors),
        min(anchors, default=math.nan),
        sum(a < FLOOR for a in anchors),
    )


def _yes(flag):
    return "yes" if flag else "**no**"


def markdown(all_rows):
    """The summary per arithmetic and set, then every row, suite and held-out apart."""
    lines = [
        "| arithmetic | shapes | `auto` within 5% of the fastest candidate | its pick within 5%, by the pick's "
        "own time | geometric mean, % of the best anchor | lowest | below 60% "
        "| targets (5%: 90% of shapes; mean; none below 60%) |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for arith in ARITHMETICS:
        for heldout in (False, True):
            group = [r for r in all_rows if r.arithmetic == arith and r.heldout == heldout]
            if not group:
                continue
            s = summary(group)
            near, mean, floor = s.holds(arith)
            lines.append(
                f"| {LABELS[arith]} | {'held out' if heldout else 'suite'}: {s.shapes} "
                f"| {s.near_best} ({100.0 * s.near_best / s.shapes:.0f}%) "
                f"| {s.pick_near_best} ({100.0 * s.pick_near_best / s.shapes:.0f}%) | {number(s.geomean_anchor)}% "
                f"| {number(s.lowest_anchor)}% | {s.below_floor} "
                f"| {_yes(near)}, {_yes(mean)} (>= {TARGET_GEOMEAN[arith]:.0f}%), {_yes(floor)} |"
            )
    for arith in ARITHMETICS:
        for heldout in (False, True):
            group = [r for r in all_rows if r.arithmetic == arith and r.heldout == heldout]
            if not group:
                continue
            lines += [
                "",
                f"### {LABELS[arith]}, {'held-out shapes' if heldout else 'the suite'}",
                "",
                "| shape | `auto` ran | why | GFLOP/s | fastest candidate | GFLOP/s | % of it "
                "| best anchor | GFLOP/s | % of it | waves | last wave |",
                "|---|---|---|---:|---|---:|---:|---|---:|---:|---:|---:|",
            ]
            for r in group:
                lines.append(
                    f"| {Shape(*r.shape)} | {r.picked or '-'} | {r.rule or '-'} | {number(gflops(r.shape, r.auto_ms))} "
                    f"| {r.best} | {number(gflops(r.shape, r.best_ms))} | {number(r.pct_of_best)} "
                    f"| {r.anchor} | {number(gflops(r.shape, r.anchor_ms))} | {number(r.pct_of_anchor)} "
                    f"| {number(r.waves)} | {number(r.last_wave_fill)} |"
                )
    return "\n".join(lines) + "\n"
