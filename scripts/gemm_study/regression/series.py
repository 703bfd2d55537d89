"""Change points over a benchmark's whole history, not between neighbouring runs.

One benchmark's series is its revisions in order, each ok (repetitions that ran), failed (an
error) or missing (not in that run). Over the ok revisions:

  search     Apache Otava's e-divisive statistic (Matteson & James; otava.change_point_divisive)
             proposes, within a segment, the revisions tau and kappa where the run of per-revision
             medians ok[tau:kappa] stands out most from the run before it; the segment is split
             there if a weak form of the step test accepts it
             (half the floor and half the noise factor: a segment that still holds another step
             is noisier than its parts), and both halves are searched again. These are Otava's
             "weak" change points; the merge step keeps the real ones.
  step test  compare.py's rule on the two segments (cycles where every ok revision recorded
             clocks, else time): a segment's level is the median of its revisions' medians, its
             spread s the spread within its runs; the change of the levels must exceed
             max(min_effect, k x noise), noise = sqrt(s_left^2 + s_right^2 + drift^2 (1/R_left +
             1/R_right)) with R the revisions a segment pools (each run brings its own drift), with
             one-sided Mann-Whitney p < alpha and at least 4 repetitions a side. For two single
             runs this is compare.py's rule exactly.
  merge      every accepted change point is tested again against its final neighbouring segments;
             the weakest that fails is dropped and its neighbours retested (Otava's merge step),
             so a creep of steps too small to pass one by one stays as the larger step it adds up to.

A revision missing or failed between two ok ones is skipped: the step across it is measured from
the last good run. Verdicts (regressions, see `events`) say the first bad revision, the size of
the step, and the counters that stepped with it."""

from dataclasses import dataclass, field

import numpy as np

from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.errors import InputError
from gemm_study.regression.compare import counter_changes, counter_regressions, verdict

# The history's defaults (gemm-history): a step of 1.5% counts where the noise allows it,
# with a drift allowance of 0.4% per run in cycles (1% for series in time, without clocks).
# drift_sim --history shows what they find on the recorded plan; docs/regression.md says why.
HISTORY_DEFAULTS = {"min_effect": 0.015, "drift": 0.004, "time_drift": 0.01}


@dataclass
class Point:
    """One revision of one benchmark."""

    index: int  # position in the history
    status: str  # ok | failed | missing
    values: list = field(default_factory=list)  # the statistic per repetition (kcycles or ms)
    gflops: list = field(default_factory=list)
    counters: dict = field(default_factory=dict)
    error: str = None
    spins: bool = False  # variant fact: warps poll mbarriers (counts are timing-dependent)


def _levels(points):
    return np.array([float(np.median(p.values)) for p in points])


def _centred(points):
    """A segment's repetitions, each run's scaled to put its median at the segment's level (the
    median of its runs' medians): what is left of their spread is the noise within a run, and a
    run off the level (drift, or a step not yet split off) moves the level only as a median does.
    The drift between runs is the step test's allowance, not this spread."""
    medians = _levels(points)
    level = float(np.median(medians))
    return [v / m * level for p, m in zip(points, medians) for v in p.values]


def step(left, right, settings):
    """compare.verdict of segment `right` against segment `left` (lists of ok Points): medians of
    the runs' medians, the noise within runs, and a drift allowance per run of each segment."""
    return verdict(_centred(left), _centred(right), settings, runs=(len(left), len(right)))


def _accepted(result):
    return result["verdict"] in ("SLOWER", "FASTER")


WEAK = 0.5  # the search's share of the floor and of the noise factor


def _candidate(calculator, start, stop):
    """Otava's e-divisive candidate in ok[start:stop]: (tau, kappa) maximising Q(tau, kappa), the
    divergence of ok[start:tau] from ok[tau:kappa]. kappa < stop where the change is a run of
    revisions that returns to the level before (a spike), which a split at tau alone misses."""
    q = calculator._get_Q_vals(start, stop)  # Otava's Q over every (tau, kappa) of the segment
    i, j = np.unravel_index(int(np.argmax(q)), q.shape)
    return int(i) + 1 + start, int(j) + 2 + start


OTAVA_MISSING = (
    "the history needs apache-otava (its change-point search), which is not installed: "
    "pip install --no-deps 'apache-otava>=0.8.0' (scripts/requirements-no-deps.txt says why)"
)


def require_change_point_search():
    """InputError (one line, how to install it) where Otava is missing: a command that draws a
    history says so before it reads anything."""
    try:
        import otava.change_point_divisive.calculator  # noqa: F401
    except ImportError:
        raise InputError(OTAVA_MISSING) from None


def _search(ok, settings):
    """Indexes (into ok) of the weak change points, by divisive search."""
    # Imported here: only the history needs Otava, so the study and its report run without it.
    try:
        from otava.change_point_divisive.calculator import PairDistanceCalculator
    except ImportError:
        raise InputError(OTAVA_MISSING) from None

    weak = type(settings)(
        **dict(settings.__dict__, min_effect=WEAK * settings.min_effect, noise_factor=WEAK * settings.noise_factor)
    )
    calculator = PairDistanceCalculator(_levels(ok))
    found, pending = set(), [(0, len(ok))]
    while pending:
        start, stop = pending.pop()
        if stop - start < 2:
            continue
        tau, kappa = _candidate(calculator, start, stop)
        if _accepted(step(ok[start:tau], ok[tau:kappa], weak)):
            found |= {tau} | ({kappa} if kappa < stop else set())
            pending += [(start, tau), (tau, kappa), (kappa, stop)]
    return sorted(found)


def _merge(ok, found, settings):
    """Drops, one at a time, the weakest change point that its final neighbours do not support."""
    found = list(found)
    while found:
        bounds = [0, *found, len(ok)]
        tests = [
            step(ok[bounds[i] : bounds[i + 1]], ok[bounds[i + 1] : bounds[i + 2]], settings) for i in range(len(found))
        ]
        failing = [i for i, t in enumerate(tests) if not _accepted(t)]
        if not failing:
            return list(zip(found, tests))
        weakest = min(failing, key=lambda i: abs(tests[i]["change"]) / tests[i]["threshold"])
        del found[weakest]
    return []


def change_points(points, settings):
    """The accepted steps of one benchmark's series: dicts with the first revision after the step
    (`revision`), the last good revision before it (`last_good`), the revisions skipped between
    them (`gap`: [(index, status)]), and the step test's result."""
    ok = [p for p in points if p.status == "ok" and p.values]
    if len(ok) < 2:
        return []
    steps = []
    for at, test in _merge(ok, _search(ok, settings), settings):
        before, after = ok[at - 1], ok[at]
        gap = [(p.index, p.status) for p in points if before.index < p.index < after.index]
        steps.append(dict(test, revision=after.index, last_good=before.index, gap=gap, counters={}))
    return steps


def counter_step(points, before, after, settings, catalogue=None):
    """Counter changes between the last good revision `before` and revision `after` (indexes)."""
    catalogue = catalogue or load_catalogue()
    by_index = {p.index: p for p in points}
    b, c = by_index[before], by_index[after]
    return counter_changes(b.counters, c.counters, settings, catalogue, spins=b.spins or c.spins)


def events(points, family, settings, catalogue=None):
    """The history of one benchmark as events, oldest first: time steps (SLOWER/FASTER), failures,
    counter changes between consecutive good revisions, and the regressions they add up to.

    A regression opens at a SLOWER step, a failure, or a counter regression (compare.py's counter
    rule: guarded and worse, or exact and worse without a faster time); it stays open through
    further SLOWER steps (a creep or a second slowdown adds to it) and is recovered at the first
    revision whose level is back within min_effect of the level before it opened (a failure: at
    the next revision that runs). Returns (steps, counter_events, regressions)."""
    catalogue = catalogue or load_catalogue()
    steps = change_points(points, settings)
    by_revision = {s["revision"]: s for s in steps}
    ok = [p for p in points if p.status == "ok" and p.values]
    counter_events = []
    for before, after in zip(ok, ok[1:]):
        changes = counter_step(points, before.index, after.index, settings, catalogue)
        time = by_revision.get(after.index, {}).get("verdict", "SAME")
        if after.index in by_revision:
            by_revision[after.index]["counters"] = changes
        flagged = counter_regressions(family, changes, time)
        for name, change in changes.items():
            if change["stability"] == "exact" or name in flagged:
                counter_events.append(
                    {
                        "revision": after.index,
                        "last_good": before.index,
                        "counter": name,
                        "change": change,
                        "time": time,
                        "regression": name in flagged,
                    }
                )
    regressions = _time_regressions(steps, settings) + _failures(points)
    regressions += _grouped(_counter_regressions(counter_events, settings), regressions)
    return steps, counter_events, sorted(regressions, key=lambda r: (r["first"], r["kind"]))


def _grouped(counter_regressions, others):
    """Counter regressions that open at the revision where the time regression opens join it
    (its `counter_regressions`); those opening together otherwise become one entry."""
    time_at = {r["first"]: r for r in others if r["kind"] == "time"}
    out, at = [], {}
    for r in counter_regressions:
        owner = time_at.get(r["first"])
        if owner is not None:
            owner.setdefault("counter_regressions", []).append(r)
        elif r["first"] in at:
            at[r["first"]]["counters"].append(r)
        else:
            at[r["first"]] = dict(r, counters=[r])
            out.append(at[r["first"]])
    for entry in out:  # recovered when every counter of it has
        entry["recovered"] = (
            None
            if any(c["recovered"] is None for c in entry["counters"])
            else max(c["recovered"] for c in entry["counters"])
        )
    return out


def _time_regressions(steps, settings):
    """Regressions of the level (segment medians: a step's base and cand), grouped as events() says."""
    out, current = [], None
    for s in steps:
        if s["verdict"] == "SLOWER" and current is None:
            current = {
                "kind": "time",
                "first": s["revision"],
                "last_good": s["last_good"],
                "gap": s["gap"],
                "reference": s["base"],
                "steps": [],
                "recovered": None,
            }
            out.append(current)
        if current is None:
            continue
        current["steps"].append(s)
        if s["verdict"] == "FASTER" and s["cand"] <= current["reference"] * (1 + settings.min_effect):
            current["recovered"] = s["revision"]
            current = None
    for r in out:
        open_steps = [s for s in r["steps"] if s["revision"] != r["recovered"]]
        r["worst"] = max(s["cand"] for s in open_steps) / r["reference"] - 1
        r["change"] = open_steps[-1]["cand"] / r["reference"] - 1
    return out


def _failures(points):
    out, current = [], None
    for p in points:
        if p.status == "failed":
            if current is None:
                current = {
                    "kind": "failed",
                    "first": p.index,
                    "error": p.error,
                    "recovered": None,
                    "last_good": next((q.index for q in reversed(points[: p.index]) if q.status == "ok"), None),
                }
                out.append(current)
        elif p.status == "ok" and current is not None:
            current["recovered"] = p.index
            current = None
    return out


def _counter_regressions(counter_events, settings):
    """A counter regression per counter that turned worse, recovered where it is back within the
    count tolerance of its value before."""
    out, current = [], {}
    for e in counter_events:
        name = e["counter"]
        if e["regression"] and name not in current:
            current[name] = {
                "kind": "counter",
                "first": e["revision"],
                "last_good": e["last_good"],
                "counter": name,
                "change": e["change"],
                "recovered": None,
            }
            out.append(current[name])
        elif name in current and e["change"]["verdict"] == "BETTER":
            before, now = current[name]["change"]["base"], e["change"]["cand"]
            if (
                before is not None
                and now is not None
                and abs(now - before) <= settings.count_tolerance * max(abs(before), abs(now))
            ):
                current.pop(name)["recovered"] = e["revision"]
    return out
