"""Each step of a ladder as a prediction, checked against the measured speedup.

The model. A row's bottleneck account (account.py) gives its bound B, the time its limiter needs
at peak, and explained e = B / T, T the measured time. For the step from rung a to rung b, assume
that b gets as close to its limiter's peak as a got to its own: T'(b) = B(b) / e(a). The
predicted speedup is then T(a) / T'(b) = B(a) / B(b), the ratio of the two rungs' limiter work at
peak (each side's own limiter, so a step that moves the limiter from shared memory to the FMA
pipe is predicted by both). The measured speedup is T(a) / T(b), and measured / predicted =
e(b) / e(a).

Why this is the prediction to make: a rung is a change to the code, and what a change can be held
to in advance is the work it moves between the units (fewer shared-memory wavefronts, fewer
instructions, fewer sectors). The account turns that work into time at peak; how close a kernel
runs to its limiter's peak (latency hiding, stalls, occupancy) is what the account does not
model, so holding it fixed is the prediction's one assumption, and a miss measures exactly that
assumption failing. A step within TOLERANCE is explained by the work its counters moved; any
other step is "unexplained", shown with the counters it has and nothing else: no story. Steps that
lose time are predicted the same way."""

import math
from dataclasses import dataclass

import numpy as np

from gemm_study.analysis import account, sass_loop, sm_simulation, warp_state_steps
from gemm_study.analysis import schedule as schedule_term
from gemm_study.analysis.account import value
from gemm_study.analysis.moves import largest_moves
from gemm_study.data.formatting import number

# Tighter than the ladder's steps (most move the time by 5% to 2x): at 15% a model predicting
# x1.00 for every step explained half of the H100's steps.
TOLERANCE = 0.10
# A change of the grid's tail (busiest SM over the mean) by more than this is named.
TAIL_MOVE = 0.05


@dataclass
class Step:
    ladder: str
    shape: str
    before: object
    after: object
    measured: float
    predicted: float
    verdict: str  # explained | unexplained | no prediction
    sentence: str

    @property
    def predicted_by_units(self):
        """The prediction without the latency time: the ratio of the two rungs' units' bounds."""
        bounds = [account.units_bound(r) for r in (self.before, self.after)]
        return bounds[0] / bounds[1] if all(b > 0 for b in bounds) else math.nan

    @property
    def off(self):
        """measured / predicted - 1 (NaN without a prediction)."""
        return self.measured / self.predicted - 1 if self.predicted > 0 else math.nan

    @property
    def label(self):
        return f"{_name(self.before)} -> {_name(self.after)}"


def _name(row):
    return f"{int(row['rung'])} {row['variant'] if row.get('start') is True else row['family']}"


def _chain_text(row):
    """'1 global round trip and 2 barriers per k-tile: 421 cycles of waits beside 1,161 of compute,
    2 block(s) per SM to fill them' for a row whose limiter is latency."""
    trips, bars = value(row, "account_global_round_trips"), int(value(row, "account_barriers"))
    return (
        f"{trips:.3g} global round trip{'s' * (trips != 1)} and {bars} barrier{'s' * (bars != 1)} per k-tile: "
        f"{number(value(row, 'account_wait_cycles'))} cycles of waits (the chip's k-tile through L2: "
        f"{number(value(row, 'account_burst_cycles'))}) beside "
        f"{number(value(row, 'account_compute_cycles'))} of compute, "
        f"{int(value(row, 'account_chain_blocks'))} block(s) per SM to fill them"
    )


# Warp states of the simulated schedule named per rung, the largest first.
SCHEDULE_STATES_SHOWN = 3


def _schedule_text(row):
    """'1,364 cycles per block and k-tile; simulated warp states per issued instruction: barrier
    1.8 (measured 0.4), ...' for a row with a simulated schedule: the states it predicts beside
    those ncu measured (stall_<state>), the largest first."""
    states = {s: value(row, f"account_schedule_{s}") for s in sm_simulation.STATES if s != "selected"}
    shown = sorted((s for s in states if states[s] > 0), key=lambda s: -states[s])[:SCHEDULE_STATES_SHOWN]
    parts = []
    for state in shown:
        measured = value(row, f"stall_{state}")
        parts.append(
            f"{state} {states[state]:.2f}" + (f" (measured {measured:.2f})" if math.isfinite(measured) else "")
        )
    return f"{number(value(row, 'account_schedule_cycles'))} cycles per block and k-tile" + (
        f"; simulated warp states per issued instruction: {', '.join(parts)}" if parts else ""
    )


def _work_text(row):
    """'smem_wavefronts 4.03e+08' for the row's limiter."""
    if row["account_unit"] == account.LATENCY.key:
        return _chain_text(row)
    if row["account_unit"] == account.SCHEDULE.key:
        return _schedule_text(row)
    unit = account.BY_KEY[row["account_unit"]]
    counters = " + ".join(unit.work)
    return f"{counters} {number(sum(value(row, c) for c in unit.work))}"


def _work_sentence(a, b):
    """What the limiters' work did between a and b."""
    ua, ub = a["account_unit"], b["account_unit"]
    if ua == ub == account.LATENCY.key:
        text = f"latency limits both: {_chain_text(a)} -> {_chain_text(b)}"
    elif ua == ub == account.SCHEDULE.key:
        text = f"the SM's schedule (simulated) limits both: {_schedule_text(a)} -> {_schedule_text(b)}"
    elif ua == ub:
        unit = account.BY_KEY[ua]
        before = sum(value(a, c) for c in unit.work)
        after = sum(value(b, c) for c in unit.work)
        verb = "falls" if after < before else "rises"
        ratio = max(before, after) / min(before, after) if min(before, after) > 0 else math.inf
        text = (
            f"{unit.label} limits both; its work {' + '.join(unit.work)} {verb} {ratio:.2f}x "
            f"({number(before)} -> {number(after)})"
        )
    else:
        text = (
            f"the limiter moves from {account.BY_KEY[ua].label} ({_work_text(a)}) to "
            f"{account.BY_KEY[ub].label} ({_work_text(b)})"
        )
    ta, tb = value(a, "account_tail"), value(b, "account_tail")
    if np.isfinite(ta) and np.isfinite(tb) and abs(tb / ta - 1) > TAIL_MOVE:
        text += f"; the grid's tail (busiest SM's work over the mean) {ta:.2f} -> {tb:.2f}"
    return text


def step(a, b, ladder_key, shape):
    """The Step from row a to row b (rows carry the account_* columns and time_ms), its sentence
    closed by the step in warp states where both rows have them."""
    out = _predicted_step(a, b, ladder_key, shape)
    states = warp_state_steps.sentence(a, b)
    if states:
        out.sentence = out.sentence.removesuffix(".") + f"; {states}."
    spin = _outside_loop_sentence(a, b)
    if spin:
        out.sentence = out.sentence.removesuffix(".") + f"; {spin}."
    code = sass_loop.change_sentence(
        a.get("sass_loop"),
        b.get("sass_loop"),
        (a.get("registers_per_thread"), b.get("registers_per_thread")),
        (a.get("blocks_per_sm"), b.get("blocks_per_sm")),
    )
    if code:
        out.sentence = out.sentence.removesuffix(".") + f"; {code}."
    return out


def _outside_loop_sentence(a, b):
    """For a step where a rung polls (mbarrier waits, a tile scheduler): how much of each rung's
    executed instructions lie outside its main loop as compiled, which bounds the spinning its
    instruction count holds; '' otherwise."""
    if not any(r.get("spins") in (True, 1) for r in (a, b)):
        return ""
    shares = value(a, "account_outside_loop_share"), value(b, "account_outside_loop_share")
    if not all(math.isfinite(x) for x in shares):
        return ""
    return (
        f"instructions outside the main loop as compiled (spin loops, prologue, epilogue): "
        f"{shares[0]:.1%} -> {shares[1]:.1%} of those executed"
    )


def _predicted_step(a, b, ladder_key, shape):
    measured = value(a, "time_ms") / value(b, "time_ms")
    head = f"measured x{measured:.2f}"
    missing = [r for r in (a, b) if not isinstance(r.get("account_unit"), str) or not r.get("account_unit")]
    if missing:
        reasons = {r.get("account_reason") or "no account" for r in missing}
        which = "either rung" if len(missing) == 2 else f"rung {int(missing[0]['rung'])}"
        moved = largest_moves(a, b)
        return Step(
            ladder_key,
            shape,
            a,
            b,
            measured,
            math.nan,
            "no prediction",
            f"{head}; no prediction, no account on {which}: {'; '.join(sorted(reasons))}"
            + (f"; the counters that moved: {moved}." if moved else "."),
        )
    predicted = value(a, "account_bound_ms") / value(b, "account_bound_ms")
    off = measured / predicted - 1
    head += f", predicted x{predicted:.2f} ({off:+.0%})"
    if abs(off) <= TOLERANCE:
        return Step(ladder_key, shape, a, b, measured, predicted, "explained", f"{head}: {_work_sentence(a, b)}.")
    moved = largest_moves(a, b)
    text = (
        f"{head}: unexplained; explained share {value(a, 'account_explained'):.2f} -> "
        f"{value(b, 'account_explained'):.2f} ({_work_sentence(a, b)})"
    )
    text += f"; the counters that moved: {moved}" if moved else "; no other counter moved by 5%"
    return Step(ladder_key, shape, a, b, measured, predicted, "unexplained", f"{text}; {settle(a, b)}.")


# Warps per scheduler at or below which a block cannot hide its own dependencies: a warp waits
# its instructions' latency (4 cycles for the FMA pipes, more for shared loads and MMAs) between
# dependent ones, and two warps fill at most two of those cycles.
FEW_WARPS = 2


# What would measure the cause of a warp state the run spends more cycles in than the simulation.
STATE_MEASUREMENTS = {
    "long_scoreboard": "the global memory operations' latency under the chip's load: loads, which the "
    "simulation waits the idle latencies for, and registers a cp.async (LDGSTS) still reads, which it "
    "does not wait for (ncu's source counters per SASS line say which)",
    "short_scoreboard": "the shared-memory loads' latency behind the SM's MIO queue under this load",
    "dispatch_stall": "where the dispatch stalls fall beyond the register banks' reads "
    "(ncu's source counters per SASS line: gemm-source-states)",
    "not_selected": "the schedulers' issue rate over this instruction mix (ncu's issue-slot utilization per scheduler)",
    "wait": "the fixed latencies this mix waits (the stall counts and the pipes' dependent latencies)",
    "math_pipe_throttle": "the pipes' rates as this mix issues them (ncu's pipe utilization per pipe)",
    "barrier": "each warp's arrival at the barriers (ncu's source counters per SASS line)",
    "mio_throttle": "the MIO queue's depth under this load",
    "lg_throttle": "the LSU's global-load queue under this load",
}


def _state_gap(row):
    """(state, measured, simulated) of the warp state the run spends the most cycles per issued
    instruction in beyond the simulation, or None without a simulated schedule."""
    gaps = []
    for state in STATE_MEASUREMENTS:
        measured = value(row, f"stall_{state}")
        simulated = value(row, f"account_schedule_{state}")
        simulated = simulated if math.isfinite(simulated) else 0.0
        if math.isfinite(measured) and math.isfinite(value(row, "account_schedule_cycles")):
            gaps.append((measured - simulated, state, measured, simulated))
    best = max(gaps, default=None)
    return best[1:] if best and best[0] > 0 else None


def _top_states(row, count=2):
    """[(state, cycles per issued instruction)] of the row's largest measured warp states."""
    found = [(value(row, f"stall_{s}"), s) for s in STATE_MEASUREMENTS]
    return [(s, v) for v, s in sorted((f for f in found if math.isfinite(f[0])), reverse=True)[:count]]


def _unsimulated_loop(a, b):
    """For a step one of whose rungs runs a loop with no k-tile (the write-ups' naive kernels: no
    simulated schedule can exist) and runs its limiter well below peak, what would settle it:
    a simulation of that loop's loads, and the warp states it would have to reproduce; '' else."""
    rows = [
        r
        for r in (a, b)
        if schedule_term.without_ktile(r)
        and r["account_unit"] not in (account.SCHEDULE.key, account.LATENCY.key)
        and value(r, "account_explained") < 1 - TOLERANCE
    ]
    if not rows:
        return ""
    row = min(rows, key=lambda r: value(r, "account_explained"))
    states = _top_states(row)
    said = " and ".join(f"{s} {v:.2f}" for s, v in states) if states else "states not collected"
    return (
        f"would settle it: a simulation of {_name(row)}'s loop, which has no k-tile for the schedule to "
        "model, with its global loads served from L1, L2 and DRAM at their hit rates and latencies under "
        f"this load; it runs its limiter ({row['account_limiter']}) at {value(row, 'account_explained'):.0%} "
        f"of peak, its warps waiting per issued instruction in {said}"
    )


def _erring_first(a, b):
    """The step's two rows, the one whose account errs the step's way first. The predicted step
    over the measured is a's explained share over b's, so a step predicted too large has a
    explained too high or b too low (and the other way round); the row further off that way, in
    ratio, is the one to measure. Rows without explained shares keep their order."""
    ea, eb = value(a, "account_explained"), value(b, "account_explained")
    if not (ea > 0 and eb > 0):
        return a, b
    too_large = ea > eb  # predicted / measured = ea / eb
    off_a, off_b = (math.log(ea), -math.log(eb)) if too_large else (-math.log(ea), math.log(eb))
    return (b, a) if off_b > off_a else (a, b)


def settle(a, b):
    """Which measurement would settle an unexplained step, from what its rungs' accounts assume:
    for a rung whose loop has no k-tile and runs below its limiter's peak, a simulation of that loop; for
    a simulated rung, the warp state the run spends most beyond the simulation, on the rung whose
    account errs the step's way (_erring_first), else on the other."""
    unsimulated = _unsimulated_loop(a, b)
    if unsimulated:
        return unsimulated
    if account.SCHEDULE.key in (a["account_unit"], b["account_unit"]):
        found = [(g, r) for r in _erring_first(a, b) if (g := _state_gap(r))]
        if found:
            (state, measured, simulated), row = found[0]
            return (
                f"would settle it: {STATE_MEASUREMENTS[state]}; {_name(row)} spends {measured:.2f} cycles per "
                f"issued instruction in {state}, the simulation {simulated:.2f}"
            )
        return (
            "would settle it: the warp states per SASS line (ncu's source counters) against the "
            "simulation's: a state the run has and the simulation lacks is what it leaves out"
        )
    if account.LATENCY.key in (a["account_unit"], b["account_unit"]):
        return (
            "would settle it: each block's time per k-tile in its phases (load wait, barrier, "
            "compute; clock64 around each) against the chain's waits, and whether the blocks of an "
            "SM run in phase"
        )
    warps = [value(r, "account_warps_per_scheduler") for r in (a, b)]
    if any(0 < w <= FEW_WARPS for w in warps):
        return (
            f"would settle it: the limiter's rate at {min(w for w in warps if w > 0):.1f} warps per "
            "scheduler, where a block cannot hide its own dependencies"
        )
    return "would settle it: the warp states of each rung per phase of its k-tile (ncu's source counters per SASS line)"


def ladder_steps(rows, ladder_key, shape):
    """The Steps between consecutive rungs that ran (a rung not run is stepped over)."""
    ran = [r for _, r in rows.iterrows() if np.isfinite(value(r, "time_ms"))]
    return [step(a, b, ladder_key, shape) for a, b in zip(ran, ran[1:])]


def tally(steps):
    """(explained, unexplained, without a prediction) counts."""
    return tuple(sum(s.verdict == v for s in steps) for v in ("explained", "unexplained", "no prediction"))


def null_tally(steps):
    """How many of the predicted steps the null model ("nothing changed": x1.00) would explain at
    the same tolerance: the account is worth what it explains beyond this."""
    return sum(s.verdict != "no prediction" and abs(s.measured - 1) <= TOLERANCE for s in steps)


def tally_sentence(steps):
    explained, unexplained, none = tally(steps)
    predicted = explained + unexplained
    if not predicted:
        return f"no step has a prediction ({none} steps lack an account on one side or both)."
    text = (
        f"{explained} of {predicted} predicted steps within {TOLERANCE:.0%} of the measured speedup "
        f"({100 * explained / predicted:.0f}%), {unexplained} unexplained"
    )
    text += f", {none} without a prediction" if none else ""
    text += f"; predicting x1.00 for every step would explain {null_tally(steps)} of {predicted}"
    predicted_steps = [s for s in steps if s.verdict != "no prediction"]
    order_times = [f"account_{u.key}_ms" for u in account.ORDER_TIMES]
    if any(math.isfinite(value(r, c)) for s in predicted_steps for r in (s.before, s.after) for c in order_times):
        units = sum(abs(s.measured / s.predicted_by_units - 1) <= TOLERANCE for s in predicted_steps)
        text += (
            f"; the units alone (no schedule or latency time) {units}; mean miss "
            f"{mean_miss(predicted_steps, 'predicted'):.0%}, the units alone "
            f"{mean_miss(predicted_steps, 'predicted_by_units'):.0%}"
        )
    return text + "."


def mean_miss(steps, prediction):
    """exp(mean |log(measured / predicted)|) - 1 over the steps: the typical factor a prediction
    misses by, the same for a step over- and under-predicted."""
    logs = [abs(math.log(s.measured / getattr(s, prediction))) for s in steps]
    logs = [x for x in logs if math.isfinite(x)]
    return math.exp(sum(logs) / len(logs)) - 1 if logs else math.nan
