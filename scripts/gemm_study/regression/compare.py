"""Noise- and drift-aware comparison of two gemm-bench tracking runs (and the step test of a
history's segments, series.py).

The rule (one benchmark, per-repetition samples on each side):
  statistic  cycles (each repetition's time x its own SM clock, results.repetition_cycles) when
             both sides recorded clocks, else median_ms (real_time only where median_ms is absent);
             the clock is the SMs' own count (repetition_counted_cycles) where both sides counted
             it on every repetition, else NVML's;
  change     median(candidate) / median(baseline) - 1;
  noise      sqrt(s_base^2 + s_cand^2 + drift^2 (1/runs_base + 1/runs_cand)), s = IQR / median /
             1.349 (robust relative SD of one repetition), drift = the between-run allowance of one
             run (--drift); a pair of runs has runs = 1 a side: 2 drift^2;
  SLOWER     change > max(min_effect, k x noise)  and  one-sided Mann-Whitney p < alpha;
  TOO_FEW    beyond the threshold, but fewer than MIN_REPETITIONS a side or sizes whose rank test
             cannot reach p < alpha at all;
  UNSURE     beyond the threshold, p >= alpha;  SAME inside it;  FASTER mirrors SLOWER;
  FAILED     a candidate repetition errored, or a benchmark new in the candidate errored.
Counters are compared whatever the time verdict (counter_changes); counter_regressions says which
changes fail: a guarded counter worse, or an exact count worse while the time did not get faster.
Exit status: 0 no regression, 1 regression, 2 bad input."""

import dataclasses
import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.errors import InputError
from gemm_study.data.formatting import significant
from gemm_study.data.results import counted_clock_on, cycles_of, load_run
from gemm_study.ncu.crosscheck import SPIN_DEPENDENT
from gemm_study.regression.guards import guarded

CONTEXT_KEYS = [
    "gpu_name",
    "cuda_driver_version",
    "cuda_runtime_version",
    "gpu_max_sm_clock_mhz",
    "gpu_memory_clock_mhz",
    "l2_state",
]
REGRESSION_VERDICTS = {"SLOWER", "FAILED"}
# Fewer repetitions on either side give no verdict but SAME or TOO_FEW (the spread of 3 values
# says little, and 3 vs 3 cannot reach p < 0.05 anyway).
MIN_REPETITIONS = 4
STRICT_VERDICTS = {"UNSURE", "TOO_FEW", "MISSING"}


@dataclass
class Settings:
    min_effect: float = 0.03  # relative change that matters, whatever the noise
    alpha: float = 0.05  # one-sided Mann-Whitney U significance
    noise_factor: float = 3.0  # k: a change must exceed k x the pooled noise
    drift: float = 0.01  # between-run allowance: relative SD of one run's level
    time_drift: float = None  # histories: the allowance for series in time (None: drift)
    statistic: str = "auto"  # auto (cycles where both sides have clocks) | cycles | time
    count_tolerance: float = 0.001  # relative change of an exact count that is flagged
    counter_effect: float = 0.10  # relative change of a noisy counter that is flagged
    allow_context_mismatch: bool = False
    family_aliases: dict = field(default_factory=dict)  # candidate family -> baseline family
    time_only: bool = False  # skip counters (e.g. comparing counters on against off)
    strict: bool = False  # UNSURE, TOO_FEW and MISSING fail too


# ----------------------------------------------------------------------------- the rule


def spread(samples):
    """Robust relative SD of one sample: IQR / median / 1.349 (0 for fewer than 2)."""
    samples = np.asarray(samples, dtype=float)
    if len(samples) < 2:
        return 0.0
    q75, q25 = np.percentile(samples, [75, 25])
    return float((q75 - q25) / np.median(samples) / 1.349)


def p_greater(a, b):
    """One-sided Mann-Whitney p-value that b tends to be larger than a."""
    if len(a) < 1 or len(b) < 1:
        return 1.0
    from scipy.stats import mannwhitneyu

    p = float(mannwhitneyu(b, a, alternative="greater").pvalue)
    return p if math.isfinite(p) else 1.0


@lru_cache(maxsize=None)
def smallest_p(n_base, n_cand):
    """The smallest p the test can give for these sample sizes (perfect separation)."""
    return p_greater(list(range(n_base)), list(range(n_base, n_base + n_cand)))


def test_reachable(n_base, n_cand, alpha):
    """Whether a verdict other than SAME is possible: MIN_REPETITIONS per side (fewer give no
    spread worth the name) and sizes whose rank test can reach p < alpha at all."""
    return min(n_base, n_cand) >= MIN_REPETITIONS and smallest_p(n_base, n_cand) < alpha


def verdict(base, cand, settings, p_values=True, runs=(1, 1)):
    """Verdict for per-repetition samples of one statistic (lower is better). `runs`: how many
    runs each side pools (a segment of a history), each bringing its own drift, so the drift term
    is drift^2 x (1/runs_base + 1/runs_cand): 2 drift^2 for two runs. p_values=False computes the
    rank test only where the verdict needs it (the simulation)."""
    base, cand = np.asarray(base, dtype=float), np.asarray(cand, dtype=float)
    base_med, cand_med = float(np.median(base)), float(np.median(cand))
    change = cand_med / base_med - 1.0
    s_base, s_cand = spread(base), spread(cand)
    noise = math.sqrt(s_base**2 + s_cand**2 + settings.drift**2 * (1 / runs[0] + 1 / runs[1]))
    threshold = max(settings.min_effect, settings.noise_factor * noise)
    beyond = abs(change) > threshold
    reachable = test_reachable(len(base), len(cand), settings.alpha)
    needed = beyond and reachable
    p_slower = p_greater(base, cand) if p_values or (needed and change > 0) else None
    p_faster = p_greater(cand, base) if p_values or (needed and change < 0) else None
    p = p_slower if change > 0 else p_faster
    if not beyond:
        word = "SAME"
    elif not reachable:
        word = "TOO_FEW"
    elif p >= settings.alpha:
        word = "UNSURE"
    else:
        word = "SLOWER" if change > 0 else "FASTER"
    return {
        "verdict": word,
        "base": base_med,
        "cand": cand_med,
        "change": change,
        "noise_base": s_base,
        "noise_cand": s_cand,
        "threshold": threshold,
        "p_slower": p_slower,
        "p_faster": p_faster,
        "test_reachable": reachable,
        "n_base": len(base),
        "n_cand": len(cand),
    }


def counter_verdict(metric, base, cand, settings):
    if base is None or cand is None:
        return "MISSING"
    if base == cand:
        return "SAME"
    scale = max(abs(base), abs(cand))
    change = (cand - base) / scale
    tolerance = settings.count_tolerance if metric.stability == "exact" else settings.counter_effect
    if abs(change) <= tolerance:
        return "SAME"
    if metric.better == "none":
        return "CHANGED"
    return "WORSE" if (change > 0) == (metric.better == "lower") else "BETTER"


# ----------------------------------------------------------------------------- two runs


def check_context(base_ctx, cand_ctx, allow_mismatch, paths):
    """The context differences of two runs (GPU, driver, CUDA, clocks, L2 state); InputError
    naming both files unless a mismatch is allowed."""
    problems = [
        f"{key}: {base_ctx.get(key)!r} vs {cand_ctx.get(key)!r}"
        for key in CONTEXT_KEYS
        if base_ctx.get(key) != cand_ctx.get(key)
    ]
    if problems and not allow_mismatch:
        raise InputError(
            "{} and {}: the runs were not made in the same context (".format(*paths)
            + "; ".join(problems)
            + "); pass --allow-context-mismatch to compare anyway"
        )
    return problems


def _rename(name, family, new_family):
    parts = name.split("/")
    if family in parts:
        parts[parts.index(family)] = new_family
        return "/".join(parts)
    return name.replace(family, new_family, 1)


def _apply_aliases(base, cand, aliases, base_path, cand_path):
    """Keep only the aliased families, the candidate's renamed to the baseline's."""
    for cand_family, base_family in aliases.items():
        for path, run, family in ((cand_path, cand, cand_family), (base_path, base, base_family)):
            if not any(b.family == family for b in run.values()):
                known = ", ".join(sorted({b.family for b in run.values()}))
                raise InputError(
                    f"--alias {cand_family}={base_family}: no benchmark of family "
                    f"{family!r} in {path} (families there: {known})"
                )
    base = {n: b for n, b in base.items() if b.family in set(aliases.values())}
    renamed = {}
    for name, bench in cand.items():
        if bench.family in aliases:
            new = _rename(name, bench.family, aliases[bench.family])
            if new in renamed:
                raise InputError(f"--alias: {name} and {renamed[new][0]} both become {new}")
            renamed[new] = (name, bench)
    return base, {n: b for n, (_, b) in renamed.items()}


def statistic_of(name, b, c, settings):
    """'kcycles' where both sides have a clock on every repetition (and --statistic allows it),
    else 'ms'; InputError for --statistic cycles without clocks."""
    clocks = bool(b.cycles and c.cycles)
    if settings.statistic == "cycles" and not clocks:
        raise InputError(
            f"{name}: --statistic cycles, but sm_clock_mhz is missing on the "
            f"{'baseline' if not b.cycles else 'candidate'} side"
        )
    return "kcycles" if clocks and settings.statistic != "time" else "ms"


def samples_of(bench, statistic, counted=False):
    return cycles_of(bench, counted) if statistic == "kcycles" else bench.times


def counter_changes(b_counters, c_counters, settings, catalogue, spins=False):
    """name -> {base, cand, verdict, stability} of every catalogue counter that changed
    (medians of the repetitions; MISSING where the baseline had it and the candidate lost it; a
    counter new in the candidate is not a change). A variant that polls mbarriers (`spins`)
    executes a timing-dependent number of instructions: its spin-dependent counts are noisy."""
    out = {}
    for metric_name, metric in catalogue.items():
        if metric.kind == "timing" and metric_name != "gflops":
            continue
        bv, cv = b_counters.get(metric_name), c_counters.get(metric_name)
        if bv is None:
            continue
        if spins and metric_name in SPIN_DEPENDENT and metric.stability == "exact":
            metric = dataclasses.replace(metric, stability="noisy")
        bv = float(np.median(bv)) if bv else None
        cv = float(np.median(cv)) if cv else None
        word = counter_verdict(metric, bv, cv, settings)
        if word != "SAME":
            out[metric_name] = {"base": bv, "cand": cv, "verdict": word, "stability": metric.stability}
    return out


def counter_regressions(family, counters, time_verdict):
    """The counters whose change is a regression: a guarded counter of the family that got worse
    (whatever the time did), or an exact count that got worse while the time did not get faster.
    An exact count that got worse while the time got faster is 'changed': the trade paid off."""
    out = []
    for name, change in counters.items():
        if change["verdict"] != "WORSE":
            continue
        if guarded(family, name) or (change["stability"] == "exact" and time_verdict != "FASTER"):
            out.append(name)
    return out


def compare_benchmark(name, b, c, settings, catalogue):
    row = {"name": name, "family": b.family, "counters": {}, "counter_regressions": []}
    if c.errors:
        row.update(verdict="FAILED", error=c.errors[0], errored_repetitions=len(c.errors), base_failed=bool(b.errors))
        return row
    if b.errors:
        row.update(verdict="BASE_FAILED", error=b.errors[0])
        return row
    statistic = statistic_of(name, b, c, settings)
    counted = statistic == "kcycles" and counted_clock_on((b, c))
    row.update(verdict(samples_of(b, statistic, counted), samples_of(c, statistic, counted), settings))
    row["statistic"] = statistic
    if statistic == "kcycles":
        row["clock"] = "counted" if counted else "nvml"
    row["time_change"] = float(np.median(c.times) / np.median(b.times) - 1)
    row["clock_change"] = float(np.median(c.clocks) / np.median(b.clocks) - 1) if b.clocks and c.clocks else None
    if b.real_times and c.real_times:
        row["real_time_change"] = float(np.median(c.real_times) / np.median(b.real_times) - 1)
    row["time_fields"] = [b.time_field, c.time_field]
    row["throttled"] = [side for side, x in (("baseline", b), ("candidate", c)) if x.throttled]
    row["slowdown"] = sorted(b.slowdown | c.slowdown)
    if settings.time_only:
        return row
    row["counters"] = counter_changes(b.counters, c.counters, settings, catalogue, spins=b.spins or c.spins)
    row["counter_regressions"] = counter_regressions(b.family, row["counters"], row["verdict"])
    return row


def method_notes(base_path, base, cand_path, cand, rows, settings):
    """What changed the method, said once each: a side without clocks (times, not cycles), a side
    whose times are Google Benchmark's mean real_time instead of the median launch time."""
    notes = []
    clocked = [(path, any(b.cycles for b in run.values())) for path, run in ((base_path, base), (cand_path, cand))]
    for path, has in clocked:
        if not has:
            notes.append(
                f"{path}: no sm_clock_mhz recorded: times compared, not cycles "
                f"(drift allowance {settings.drift:.1%} per run)"
            )
    if clocked[0][1] != clocked[1][1]:
        notes.append("sm_clock_mhz recorded on one side only: every benchmark compared in time, not cycles")
    clocks = {r.get("clock") for r in rows}
    if "counted" in clocks:
        notes.append(
            "cycles from the SMs' own count of the clock (sm_clock_counted_mhz) where both sides counted it"
            + (", from NVML's clock elsewhere" if "nvml" in clocks else "")
        )
    fields = {tuple(r["time_fields"]) for r in rows if "time_fields" in r}
    for base_field, cand_field in sorted(fields):
        if base_field != cand_field:
            notes.append(
                f"the baseline's time is {TIME_FIELD_TEXT[base_field]}, the candidate's "
                f"{TIME_FIELD_TEXT[cand_field]}: a median against a mean"
            )
    if fields and all(f == ("real_time", "real_time") for f in fields):
        notes.append("neither file has median_ms: compared Google Benchmark's mean real_time")
    return notes


TIME_FIELD_TEXT = {
    "median_ms": "median_ms (the median launch time)",
    "real_time": "real_time (Google Benchmark's mean)",
}


def compare_runs(base_path, base_run, cand_path, cand_run, settings):
    (base_ctx, base), (cand_ctx, cand) = base_run, cand_run
    warnings = check_context(base_ctx, cand_ctx, settings.allow_context_mismatch, (base_path, cand_path))
    if settings.family_aliases:
        base, cand = _apply_aliases(base, cand, settings.family_aliases, base_path, cand_path)
    catalogue = load_catalogue()
    rows, families = [], {}
    for name in sorted(set(base) | set(cand)):
        if name not in cand:
            rows.append({"name": name, "family": base[name].family, "verdict": "MISSING", "counters": {}})
        elif name not in base:
            new = cand[name]
            row = {"name": name, "family": new.family, "verdict": "NEW", "counters": {}}
            if new.errors:  # new and broken: a regression like any other failure
                row.update(
                    verdict="FAILED",
                    error=new.errors[0],
                    errored_repetitions=len(new.errors),
                    base_failed=False,
                    new=True,
                )
            rows.append(row)
        else:
            row = compare_benchmark(name, base[name], cand[name], settings, catalogue)
            if "change" in row:
                families.setdefault(row["family"], []).append(1 + row["change"])
            rows.append(row)
    fail = REGRESSION_VERDICTS | (STRICT_VERDICTS if settings.strict else set())
    regressions = [r["name"] for r in rows if r["verdict"] in fail or r.get("counter_regressions")]
    return {
        "base": str(base_path),
        "candidate": str(cand_path),
        "context_warnings": warnings,
        "notes": method_notes(base_path, base, cand_path, cand, rows, settings),
        "settings": dict(settings.__dict__),
        "benchmarks": rows,
        "family_geomean_ratio": {f: float(np.exp(np.mean(np.log(r)))) for f, r in families.items()},
        "regressions": regressions,
    }


def compare_files(base_path, cand_path, settings):
    return compare_runs(base_path, load_run(base_path), cand_path, load_run(cand_path), settings)


# ----------------------------------------------------------------------------- markdown


def _counter_text(counters, exact, regressions=()):
    return ", ".join(
        f"{k} {v['verdict']} ({significant(v['base'])} -> {significant(v['cand'])})"
        + (" [regression]" if k in regressions else "")
        for k, v in counters.items()
        if (v["stability"] == "exact") == exact
    )


def rule_text(s):
    return (
        f"SLOWER/FASTER: change in {'cycles (time x SM clock) where both sides recorded clocks, else ' if s['statistic'] == 'auto' else ''}"
        f"{'cycles' if s['statistic'] == 'cycles' else 'median_ms'} beyond max({s['min_effect']:.0%}, "
        f"{s['noise_factor']:g} x noise), noise = sqrt(IQR-spread base^2 + cand^2 + 2 x {s['drift']:.1%} "
        f"drift^2), one-sided Mann-Whitney p < {s['alpha']:g}, and at least {MIN_REPETITIONS} repetitions "
        f"per side. Exact counts flagged beyond {s['count_tolerance']:.1%}, noisy counters beyond "
        f"{s['counter_effect']:.0%}; a counter is a regression where it is guarded for the family "
        "(guards.tsv) and got worse, or is an exact count that got worse while the time did not get faster."
        + (" --strict: UNSURE, TOO_FEW and MISSING fail." if s["strict"] else "")
    )


def to_markdown(result):
    lines = [f"**WARNING: context differs: {w}**\n" for w in result["context_warnings"]]
    lines += [f"Note: {n}\n" for n in result["notes"]]
    lines.append(rule_text(result["settings"]) + "\n")
    lines.append(
        "| benchmark | verdict | statistic | base | cand | change | threshold | p (slower) | n | "
        "clock change | exact counts | other counters |"
    )
    lines.append("|---|---|---|---:|---:|---:|---:|---:|---|---:|---|---|")
    for r in result["benchmarks"]:
        if "change" not in r:
            error = f": {r['error']}" if r.get("error") else ""
            lines.append(f"| {r['name']} | {r['verdict']}{error} | | | | | | | | | | |")
            continue
        flag = " (throttled: " + ", ".join(r["throttled"]) + ")" if r["throttled"] else ""
        clock = "-" if r["clock_change"] is None else f"{r['clock_change']:+.1%}"
        lines.append(
            f"| {r['name']} | {r['verdict']}{flag} | {r['statistic']} | {r['base']:.4g} | "
            f"{r['cand']:.4g} | {r['change']:+.1%} | {r['threshold']:.1%} | {significant(r['p_slower'], 2)} | "
            f"{r['n_base']}/{r['n_cand']} | {clock} | "
            f"{_counter_text(r['counters'], True, r['counter_regressions'])} | "
            f"{_counter_text(r['counters'], False, r['counter_regressions'])} |"
        )
    lines.append("\n| family | geometric mean of the ratio (candidate / base) |")
    lines.append("|---|---:|")
    lines += [f"| {f} | {ratio:.3f} |" for f, ratio in sorted(result["family_geomean_ratio"].items())]
    lines.append("")
    lines += summary_lines(result)
    return "\n".join(lines) + "\n"


def throttle_lines(rows):
    """How many benchmarks ran with a slowed clock, and why (NVML's reasons where recorded):
    a count, never a list of names (the table marks each row)."""
    throttled = [r for r in rows if r.get("throttled")]
    if not throttled:
        return []
    reasons = sorted({reason for r in throttled for reason in r.get("slowdown", ())})
    compared = sum(1 for r in rows if "change" in r)
    return [
        f"Clock throttled: {len(throttled)} of {compared} benchmarks had slowed-clock samples"
        + (f" ({', '.join(reasons)})" if reasons else "")
        + "; cycles discount the clock, times do not"
    ]


def summary_lines(result):
    rows, alpha = result["benchmarks"], result["settings"]["alpha"]
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    out = ["Verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    exact = {}
    for r in rows:
        for k, v in r["counters"].items():
            if v["stability"] == "exact" and v["verdict"] != "MISSING":
                exact[k, v["verdict"]] = exact.get((k, v["verdict"]), 0) + 1
    if exact:
        out.append(
            "Exact counts that changed (benchmarks): "
            + ", ".join(f"{k} {v} in {n}" for (k, v), n in sorted(exact.items()))
        )
    unreachable = sorted({(r["n_base"], r["n_cand"]) for r in rows if r.get("test_reachable") is False})
    if unreachable:
        count = sum(1 for r in rows if r.get("test_reachable") is False)
        out.append(
            f"Too few repetitions: for {count} benchmarks ({', '.join(f'{a} vs {b}' for a, b in unreachable)} "
            f"repetitions) fewer than {MIN_REPETITIONS} per side or a rank test that cannot reach "
            f"p < {alpha:g}: no SLOWER is possible there"
        )
    for r in rows:
        if r["verdict"] in ("FAILED", "BASE_FAILED"):
            out.append(f"{r['verdict']}: {r['name']}: {r['error']}")
    out += throttle_lines(rows)
    out.append(
        f"Regressions: {len(result['regressions'])}"
        + ("" if not result["regressions"] else " (" + ", ".join(result["regressions"]) + ")")
    )
    return out
