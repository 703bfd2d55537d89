"""A ladder step in warp states: where the time went, beside the account's prediction.

A scheduler issues at most one instruction per cycle. CUPTI's stall_<state> (warps in that state
per cycle in which an instruction issued) add up to the warp cycles between two instructions of a
warp, its cycles per issued instruction (CPI). With W warps resident per scheduler, a scheduler
that issues I instructions is busy I x CPI / W cycles, so from rung a to rung b

    time b / time a  ~  (I_b / I_a) x (CPI_b / CPI_a) x (W_a / W_b)   (the speedup is its inverse)

with W in proportion to the achieved occupancy. This is a decomposition, not a prediction: it
says which factor the step moved (more instructions, longer waits between them, fewer warps to
hide them) and, inside CPI, which states. It holds where the work is the issued instructions; it
does not where work runs outside them (wgmma runs asynchronously, a grid's tail idles SMs), and
where it misses the measured speedup by more than HOLDS the sentence says so and names what the
rows record of those."""

import math
from dataclasses import dataclass

from gemm_study.analysis.account import value
from gemm_study.data.results import cycles_ratio

PREFIX = "stall_"
HOLDS = 0.10  # the decomposition "holds" within this of the measured time ratio
TOP = 3  # states named per step, by the size of their move
MIN_STATES = 10  # fewer states on a row: not the full set, no decomposition
TAIL_MOVE = 0.05  # a change of the grid's tail named where the decomposition misses


@dataclass
class Decomposition:
    instructions: float  # I_b / I_a
    cpi: tuple  # (CPI_a, CPI_b)
    occupancy: tuple  # achieved occupancy % (a, b)
    moves: list  # [(state, CPI_b - CPI_a)], largest |move| first

    @property
    def product(self):
        """The time ratio b / a the three factors give."""
        return self.instructions * (self.cpi[1] / self.cpi[0]) * (self.occupancy[0] / self.occupancy[1])


def states(row):
    """{state: warp cycles per issued instruction} of a row's finite stall_* fields."""
    out = {}
    for key in row.keys():
        if isinstance(key, str) and key.startswith(PREFIX):
            v = value(row, key)
            if math.isfinite(v):
                out[key.removeprefix(PREFIX)] = v
    return out


def decompose(a, b):
    """The Decomposition of the step a -> b, or None without the warp states, instruction counts
    or occupancy on both sides."""
    sa, sb = states(a), states(b)
    common = sorted(set(sa) & set(sb))
    inst = value(a, "warp_inst"), value(b, "warp_inst")
    occ = value(a, "achieved_occupancy"), value(b, "achieved_occupancy")
    if len(common) < MIN_STATES or not all(x > 0 for x in (*inst, *occ)):
        return None
    cpi = sum(sa[s] for s in common), sum(sb[s] for s in common)
    if not all(c > 0 for c in cpi):
        return None
    moves = sorted(((s, sb[s] - sa[s]) for s in common), key=lambda m: -abs(m[1]))
    return Decomposition(inst[1] / inst[0], cpi, occ, moves)


def holds(d, measured_speedup):
    """Whether the decomposition's speedup (1 / product) is within HOLDS of the measured one (in
    SM cycles: measured_in_cycles)."""
    return abs(1 / d.product / measured_speedup - 1) <= HOLDS


def measured_in_cycles(a, b):
    """The step's speedup in SM cycles (time x the benchmark's clock, results.cycles_ratio): the
    decomposition counts cycles, and two rungs can run at different clocks. Time alone where a
    clock is missing."""
    ratio = cycles_ratio(a, b)
    return ratio if ratio > 0 else value(a, "time_ms") / value(b, "time_ms")


def sentence(a, b):
    """'in warp states: ...' for the step a -> b, or '' without a decomposition."""
    d = decompose(a, b)
    measured = measured_in_cycles(a, b)
    if d is None or not measured > 0:
        return ""
    moved = ", ".join(f"{state} {delta:+.2f}" for state, delta in d.moves[:TOP])
    text = (
        f"in warp states: instructions x{d.instructions:.3f}, cycles per issued instruction "
        f"{d.cpi[0]:.2f} -> {d.cpi[1]:.2f} ({moved}), occupancy {d.occupancy[0]:.1f}% -> "
        f"{d.occupancy[1]:.1f}%, together x{1 / d.product:.2f}"
    )
    if not holds(d, measured):
        text += f", which does not hold here (measured x{measured:.2f} in SM cycles): " + _outside(a, b)
    return text


def _outside(a, b):
    """What the rows record that the three factors do not carry, for a decomposition that misses."""
    found = []
    if any(value(r, "tensor_gmma_inst") > 0 for r in (a, b)):
        found.append("wgmma runs asynchronously, beside the issued instructions")
    tails = value(a, "sm_imbalance"), value(b, "sm_imbalance")
    if all(t > 0 for t in tails) and abs(tails[1] / tails[0] - 1) > TAIL_MOVE:
        found.append(f"the grid's tail (busiest SM over the mean) moved {tails[0]:.2f} -> {tails[1]:.2f}")
    return "; ".join(found) or "none of the counters says what else moved"
