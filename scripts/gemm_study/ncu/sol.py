"""The bottleneck account's limiter against Nsight Compute's Speed-of-Light breakdown.

ncu's SpeedOfLight section reports SM and memory throughput as the maximum of a breakdown of
underlying metrics, each a `pct_of_peak_sustained_elapsed` (its count over its peak rate times
the elapsed cycles); the section collects those breakdowns (`breakdown:sm__throughput...` and
`breakdown:gpu__compute_memory_throughput...`). The check maps every breakdown metric of a
benchmark to the account's unit it measures (unit_of), takes ncu's busiest unit, and compares it
with the account's limiter. The account's own counters, as ncu percentages (account_metrics),
are collected beside the section so that every unit has a value even where the breakdown names
it differently. A breakdown metric that maps to no unit (an LSU input queue, the branch unit)
is shown as ncu's top metric when it is the largest, not counted as a disagreement."""

from dataclasses import dataclass

from gemm_study.analysis import account
from gemm_study.data.catalogue import load_catalogue

PCT = ".pct_of_peak_sustained_elapsed"
# Metric name fragments -> account unit, first match wins (tensor and fp64 before fma: the
# tensor pipe's DMMA metrics name fp64, the FP64 pipe's none name the tensor pipe).
UNIT_OF = (
    ("tensor", "tensor"),
    ("fp64", "fp64"),
    ("pipe_fma", "fma"),
    ("lts__", "l2"),
    ("dram__", "dram"),
    ("fbpa__", "dram"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared", "shared"),
    ("l1tex__data_pipe_lsu_wavefronts", "l1"),
    ("l1tex__data_bank", "shared"),
    ("smsp__inst_executed.", "issue"),
    ("sm__inst_executed.", "issue"),
    ("smsp__issue_active", "issue"),
    ("sm__issue_active", "issue"),
)
# The sections' own roll-ups: the maxima of the breakdowns, not units.
ROLL_UPS = (
    "sm__throughput",
    "gpu__compute_memory_throughput",
    "gpu__dram_throughput",
    "l1tex__throughput",
    "lts__throughput",
    "dram__throughput",
)
NCU_SECTIONS = ("SpeedOfLight",)
BREAKDOWNS = (
    "breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
)


def account_metrics():
    """The ncu metrics of the account's units as % of their peak over the elapsed cycles: each
    unit's peak counter without its .peak_sustained (dram__bytes.sum for read + write)."""
    catalogue = load_catalogue()
    return [catalogue[unit.peak].cupti.replace(".peak_sustained", PCT) for unit in account.UNITS]


def unit_of(metric):
    """The account unit a ncu throughput metric measures, or None."""
    if "pct_of_peak_sustained" not in metric or metric.startswith(ROLL_UPS):
        return None
    return next((unit for fragment, unit in UNIT_OF if fragment in metric), None)


@dataclass
class Check:
    benchmark: str
    limiter: str  # the account's ('' without an account)
    share: float  # its time at peak over the measured time
    ncu_unit: str  # ncu's busiest unit
    ncu_pct: float
    top_metric: str  # ncu's largest throughput metric of any kind
    top_pct: float
    reason: str = ""  # why there is no comparison

    @property
    def agree(self):
        """The same unit, or one of them a part of the other's stage (shared memory's wavefronts
        are the L1 data stage's; results recorded before the stage's counter have shared memory
        as their unit, which ncu's L1 data stage then stands for)."""
        if self.reason:
            return None
        return (
            self.ncu_unit == self.limiter
            or self.ncu_unit == _covered(self.limiter)
            or self.limiter == _covered(self.ncu_unit)
        )


def _covered(unit):
    """The unit `unit` covers, or None (none, or an unknown key): never equal to an empty unit."""
    found = account.BY_KEY.get(unit)
    return found.covers if found and found.covers else None


def ncu_units(values):
    """({unit: the largest % of its metrics}, (top metric, its %)) of one benchmark's ncu values."""
    units, top = {}, ("", -1.0)
    for metric, value in values.items():
        if not isinstance(value, float) or "pct_of_peak_sustained" not in metric or metric.startswith(ROLL_UPS):
            continue
        if value > top[1]:
            top = (metric, value)
        unit = unit_of(metric)
        if unit:
            units[unit] = max(units.get(unit, 0.0), value)
    return units, top


def check(name, row, acc, values):
    """The Check of one benchmark: its row, its Account, ncu's values by metric."""
    units, (top_metric, top_pct) = ncu_units(values)
    if acc.reason:
        return Check(name, "", float("nan"), "", float("nan"), top_metric, top_pct, f"no account: {acc.reason}")
    if not units:
        return Check(
            name,
            acc.limiter,
            acc.share(acc.limiter),
            "",
            float("nan"),
            top_metric,
            top_pct,
            "no throughput metric of ncu maps to a unit (was the SpeedOfLight section collected?)",
        )
    ncu_unit = max(units, key=units.get)
    return Check(name, acc.limiter, acc.share(acc.limiter), ncu_unit, units[ncu_unit], top_metric, top_pct)


def markdown(checks):
    lines = [
        "| benchmark | account: limiter (time at peak / measured) | ncu: busiest unit (% of peak) | "
        "ncu: largest throughput metric | agree |",
        "|---|---|---|---|---|",
    ]
    for c in checks:
        agree = {True: "yes", False: "NO", None: "-"}[c.agree]
        ours = f"{account.BY_KEY[c.limiter].label} ({c.share:.0%})" if c.limiter else c.reason
        theirs = f"{account.BY_KEY[c.ncu_unit].label} ({c.ncu_pct:.0f}%)" if c.ncu_unit else "-"
        lines.append(f"| {c.benchmark} | {ours} | {theirs} | {c.top_metric} ({c.top_pct:.0f}%) | {agree} |")
    compared = [c for c in checks if c.agree is not None]
    lines.append(
        f"\n{sum(c.agree for c in compared)} of {len(compared)} limiters agree with ncu's "
        f"Speed-of-Light breakdown ({len(checks) - len(compared)} benchmarks not compared)."
    )
    return "\n".join(lines)
