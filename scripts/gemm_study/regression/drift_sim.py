"""Deterministic simulation of two tracking runs of one benchmark, to choose and check the
regression rule of compare.py: how often it calls an unchanged benchmark SLOWER (false
positives) and how often it finds a real slowdown (detection), under run-to-run drift.

Model of one run of one benchmark (all factors log-normal with the given relative SD):
  run clock     c_run = f_max x exp(N(0, between))       what the GPU boosts to in this run
  per repetition c_i  = c_run x exp(N(0, clock_jitter))  repetitions are interleaved across the run
  time          t_i   = t0 x (1 + effect) x exp(N(0, residual)) x exp(N(0, within)) x (c_i / f_max)^-s
  recorded clock      = c_i x exp(N(0, clock_error))
s, the share of the time that scales with the SM clock, is uniform in [sensitivity_low, 1] per
benchmark (memory-bound work does not scale). residual is run-level drift the clock does not
explain. Run as: PYTHONPATH=scripts python3 -m gemm_study.regression.drift_sim [RUN.json ...] (with runs of
one build: their measured drift instead of the simulation); with --history: the history rule on
the plan of scripts/record_history.sh (HISTORY_PLAN).
"""

import math
from dataclasses import dataclass

import numpy as np

from gemm_study.regression.compare import Settings, spread, verdict


@dataclass(frozen=True)
class Model:
    within: float = 0.002  # within-run noise of one repetition
    between: float = 0.02  # between-run drift of the clock (one run's level)
    residual: float = 0.002  # between-run drift the clock does not explain
    clock_jitter: float = 0.002  # clock wander between the interleaved repetitions of one run
    clock_error: float = 0.001  # error of the recorded clock
    sensitivity_low: float = 0.8  # time ~ clock^-s, s uniform in [sensitivity_low, 1]
    reps: int = 10
    effect: float = 0.0  # true slowdown of the candidate


def simulate_pair(rng, model):
    """(base times, base clocks, cand times, cand clocks) of one benchmark, two runs."""
    s = rng.uniform(model.sensitivity_low, 1.0)
    out = []
    for effect in (0.0, model.effect):
        clock = math.exp(rng.normal(0, model.between)) * np.exp(rng.normal(0, model.clock_jitter, model.reps))
        times = (
            (1 + effect)
            * math.exp(rng.normal(0, model.residual))
            * np.exp(rng.normal(0, model.within, model.reps))
            * clock**-s
        )
        out += [times, 1980.0 * clock * np.exp(rng.normal(0, model.clock_error, model.reps))]
    return out


def old_verdict(base, cand, alpha=0.05, min_effect=0.03):
    """The rule before the drift work: 3% floor, max(IQR/median) noise, one-sided U test."""
    from scipy.stats import mannwhitneyu

    change = np.median(cand) / np.median(base) - 1
    noise = max(spread(base) * 1.349, spread(cand) * 1.349)
    if abs(change) <= min_effect or abs(change) <= noise:
        return "SAME"
    p = mannwhitneyu(cand, base, alternative="greater" if change > 0 else "less").pvalue
    return ("SLOWER" if change > 0 else "FASTER") if p < alpha else "UNSURE"


def rates(model, settings=None, statistic="cycles", trials=2000, seed=20240611):
    """Share of trials per verdict. statistic: cycles | time | old (the previous rule, on time)."""
    settings = settings or Settings()
    rng = np.random.default_rng(seed)
    counts = {}
    for _ in range(trials):
        bt, bc, ct, cc = simulate_pair(rng, model)
        if statistic == "old":
            word = old_verdict(bt, ct)
        elif statistic == "cycles":
            word = verdict(bt * bc, ct * cc, settings, p_values=False)["verdict"]
        else:
            word = verdict(bt, ct, settings, p_values=False)["verdict"]
        counts[word] = counts.get(word, 0) + 1
    return {k: v / trials for k, v in counts.items()}


SCENARIOS = [  # (label, model, statistic)
    ("unchanged, 2% drift, cycles", Model(), "cycles"),
    ("5% slower, 2% drift, cycles", Model(effect=0.05), "cycles"),
    ("unchanged, 2% drift, time only", Model(), "time"),
    ("5% slower, 2% drift, time only", Model(effect=0.05), "time"),
    ("unchanged, 1% drift, time only", Model(between=0.01), "time"),
    ("5% slower, 1% drift, time only", Model(between=0.01, effect=0.05), "time"),
    ("unchanged, 2% drift, previous rule", Model(), "old"),
    ("5% slower, 2% drift, previous rule", Model(effect=0.05), "old"),
    ("5% slower, 2% drift, cycles, 5 reps", Model(effect=0.05, reps=5), "cycles"),
    ("2x slower, 3 reps, cycles", Model(effect=1.0, reps=3), "cycles"),
    ("unchanged, 2% drift, cycles, clock share of time 0-100%", Model(sensitivity_low=0.0), "cycles"),
]


def table(settings=None, trials=2000):
    lines = ["| scenario (10 repetitions unless said) | SLOWER | FASTER | other verdicts |", "|---|---:|---:|---|"]
    for label, model, statistic in SCENARIOS:
        r = rates(model, settings, statistic, trials)
        other = ", ".join(f"{k} {v:.1%}" for k, v in sorted(r.items()) if k not in ("SLOWER", "FASTER"))
        lines.append(f"| {label} | {r.get('SLOWER', 0):.1%} | {r.get('FASTER', 0):.1%} | {other} |")
    return "\n".join(lines)


def measured_drift(paths):
    """Between-run drift of real runs of one build: per benchmark, the SD across the runs of the
    log of the median time. Returns (median, RMS, max, benchmark of the max)."""
    from gemm_study.regression.compare import load_run

    runs = [load_run(path)[1] for path in paths]
    if len(runs) < 2:
        raise ValueError("measuring drift needs at least two runs")
    names = sorted(set.intersection(*(set(r) for r in runs)))
    sds = {
        n: float(np.std([np.log(np.median(r[n].times)) for r in runs], ddof=1))
        for n in names
        if all(r[n].times for r in runs)
    }
    worst = max(sds, key=sds.get)
    values = np.array(list(sds.values()))
    return float(np.median(values)), float(np.sqrt(np.mean(values**2))), sds[worst], worst


# ----------------------------------------------------------------------------- histories

# The recorded history's plan (scripts/record_history.sh): a build twice, then +2%, +5% and +10%
# in three kernels, accumulating, then the build without them twice. Levels per revision of the
# three injected benchmarks and of one left alone. The 2% step is the first and the removal is
# recorded twice: a 2% step between single runs is too close to the drift allowance
# (HISTORY_PLAN_SHORT: one run after the removal finds it in about 4 of 5 trials).
HISTORY_PLAN = {
    "plus 2%": [1, 1, 1.02, 1.02, 1.02, 1, 1],
    "plus 5%": [1, 1, 1, 1.05, 1.05, 1, 1],
    "plus 10%": [1, 1, 1, 1, 1.10, 1, 1],
    "unchanged": [1] * 7,
}
HISTORY_PLAN_SHORT = {label: levels[:-1] for label, levels in HISTORY_PLAN.items()}


def simulate_series(rng, model, levels):
    """Per-repetition cycles (relative) of one benchmark over the revisions: each revision a run
    of the model at that level (the clock scaled out as compare.py does)."""
    s = rng.uniform(model.sensitivity_low, 1.0)
    out = []
    for level in levels:
        clock = math.exp(rng.normal(0, model.between)) * np.exp(rng.normal(0, model.clock_jitter, model.reps))
        times = (
            level
            * math.exp(rng.normal(0, model.residual))
            * np.exp(rng.normal(0, model.within, model.reps))
            * clock**-s
        )
        out.append(list(times * clock * np.exp(rng.normal(0, model.clock_error, model.reps))))
    return out


def series_rates(model, levels, settings, trials=300, seed=20240611):
    """Share of trials whose change points are exactly the revisions where `levels` changes
    ('exact'), with one more ('extra') or one missing ('missed')."""
    from gemm_study.regression.series import Point, change_points

    rng = np.random.default_rng(seed)
    truth = {i for i in range(1, len(levels)) if levels[i] != levels[i - 1]}
    counts = {"exact": 0, "extra": 0, "missed": 0}
    for _ in range(trials):
        points = [Point(i, "ok", values) for i, values in enumerate(simulate_series(rng, model, levels))]
        found = {st["revision"] for st in change_points(points, settings)}
        counts["exact"] += found == truth
        counts["extra"] += bool(found - truth)
        counts["missed"] += bool(truth - found)
    return {k: v / trials for k, v in counts.items()}


def history_table(settings, model=None, trials=300, plan=None):
    """The history rule on a plan (HISTORY_PLAN) under the model, per benchmark."""
    model, plan = model or Model(), plan or HISTORY_PLAN
    count = len(next(iter(plan.values())))
    lines = [
        f"| benchmark ({count} revisions, {model.reps} repetitions) | change points exactly right | "
        "an extra one | one missed |",
        "|---|---:|---:|---:|",
    ]
    for label, levels in plan.items():
        r = series_rates(model, levels, settings, trials)
        lines.append(f"| {label} | {r['exact']:.1%} | {r['extra']:.1%} | {r['missed']:.1%} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--history"]:  # the history rule's defaults (gemm-history) on the recorded plan
        from gemm_study.regression.series import HISTORY_DEFAULTS

        history_settings = Settings(**HISTORY_DEFAULTS)
        print(f"Rule: {history_settings}\n\nModel: {Model()}\n\n{history_table(history_settings)}\n")
        compute_bound = Model(sensitivity_low=0.95)
        print(f"Model: {compute_bound}\n\n{history_table(history_settings, compute_bound)}")
    elif len(sys.argv) > 1:
        med, rms, top, name = measured_drift(sys.argv[1:])
        print(
            f"between-run drift over {len(sys.argv) - 1} runs: median {med:.2%}, RMS {rms:.2%}, max {top:.2%} ({name})"
        )
    else:
        print(f"Model: {Model()}\nRule: {Settings()}\n")
        print(table())
