"""Noise-aware comparison of two gemm-bench runs: time verdicts from per-repetition samples
(median change, IQR/median noise, one-sided Mann-Whitney U, minimum effect), counter verdicts
with direction, and a context check. Exit status: 0 no regression, 1 regression, 2 bad input."""
import math
from dataclasses import dataclass, field

import numpy as np

from .catalogue import load_catalogue
from .errors import InputError
from .results import load_results, to_frame

CONTEXT_KEYS = ["gpu_name", "cuda_driver_version", "cuda_runtime_version",
                "gpu_max_sm_clock_mhz", "gpu_memory_clock_mhz", "l2_state"]


@dataclass
class Settings:
    min_effect: float = 0.03       # relative change in time that matters
    alpha: float = 0.05            # one-sided Mann-Whitney U significance
    count_tolerance: float = 0.001  # relative change of an exact count that is flagged
    counter_effect: float = 0.10   # relative change of a noisy counter that is flagged
    allow_context_mismatch: bool = False
    family_aliases: dict = field(default_factory=dict)  # candidate family -> baseline family
    time_only: bool = False        # skip counters (e.g. comparing counters on against off)


def _noise(samples):
    samples = np.asarray(samples, dtype=float)
    median = float(np.median(samples))
    if len(samples) < 2 or median == 0:
        return 0.0
    q75, q25 = np.percentile(samples, [75, 25])
    return float((q75 - q25) / median)


def _mann_whitney_greater(a, b):
    """p-value that samples b tend to be larger than a (one-sided), or None if untestable."""
    if len(a) < 2 or len(b) < 2:
        return None
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(b, a, alternative="greater").pvalue)


def time_verdict(base, cand, settings):
    """Verdict for per-repetition times (lower is better)."""
    base_med, cand_med = float(np.median(base)), float(np.median(cand))
    change = cand_med / base_med - 1.0
    noise = max(_noise(base), _noise(cand))
    p_slower = _mann_whitney_greater(base, cand)
    p_faster = _mann_whitney_greater(cand, base)
    result = {"base_ms": base_med, "cand_ms": cand_med, "change": change,
              "noise_base": _noise(base), "noise_cand": _noise(cand),
              "p_slower": p_slower, "p_faster": p_faster, "n_base": len(base), "n_cand": len(cand)}
    if abs(change) <= settings.min_effect or abs(change) <= noise:
        result["verdict"] = "SAME"  # below the minimum effect, or inside the noise
    elif change > 0:
        result["verdict"] = "SLOWER" if p_slower is not None and p_slower < settings.alpha else "UNSURE"
    else:
        result["verdict"] = "FASTER" if p_faster is not None and p_faster < settings.alpha else "UNSURE"
    return result


def counter_verdict(metric, base, cand, settings):
    if base is None or cand is None or math.isnan(base) or math.isnan(cand):
        return "MISSING"
    if base == cand:
        return "SAME"
    scale = max(abs(base), abs(cand))
    change = (cand - base) / scale if scale else 0.0
    tolerance = settings.count_tolerance if metric.stability == "exact" else settings.counter_effect
    if abs(change) <= tolerance or metric.better == "none":
        return "SAME" if abs(change) <= tolerance else "CHANGED"
    worse = (change > 0) == (metric.better == "lower")
    return "WORSE" if worse else "BETTER"


def _check_context(base_ctx, cand_ctx, settings):
    problems = []
    for key in CONTEXT_KEYS:
        if base_ctx.get(key) != cand_ctx.get(key):
            problems.append(f"{key}: {base_ctx.get(key)!r} vs {cand_ctx.get(key)!r}")
    if problems and not settings.allow_context_mismatch:
        raise InputError("the runs were not made in the same context (" + "; ".join(problems) +
                         "); pass --allow-context-mismatch to compare anyway")
    return problems


def _samples(frame):
    """name -> (time samples in ms, counter medians)."""
    out = {}
    for name, group in frame.groupby("name"):
        if group["error"].notna().any():
            continue
        times = group["median_ms"] if "median_ms" in group else group["real_time_ms"]
        counters = {c: float(group[c].median()) for c in group.columns
                    if c not in ("m", "n", "k", "tile", "repetition", "real_time_ms")
                    and group[c].dtype.kind == "f" and group[c].notna().all()}
        out[name] = (times.dropna().tolist(), counters, group.iloc[0]["family"])
    return out


def _alias(name, aliases):
    for cand_family, base_family in aliases.items():
        for prefix in ("gemm/fp32/", "gemm/fp64/", "gemm_e2e/fp32/", "gemm_e2e/fp64/"):
            if name.startswith(prefix + cand_family + "/"):
                return prefix + base_family + name[len(prefix + cand_family):]
    return name


def compare_files(base_path, cand_path, settings):
    base_ctx, base_entries = load_results(base_path)
    cand_ctx, cand_entries = load_results(cand_path)
    warnings = _check_context(base_ctx, cand_ctx, settings)
    base = _samples(to_frame(base_entries))
    cand_all = _samples(to_frame(cand_entries))
    if settings.family_aliases:  # compare only the aliased families of the candidate
        replaced = set(settings.family_aliases)
        cand_all = {n: v for n, v in cand_all.items() if v[2] in replaced}
        base = {n: v for n, v in base.items() if v[2] in set(settings.family_aliases.values())}
    cand = {_alias(n, settings.family_aliases): v for n, v in cand_all.items()}
    catalogue = load_catalogue()
    rows, families = [], {}
    for name in sorted(set(base) | set(cand)):
        if name not in cand:
            rows.append({"name": name, "verdict": "MISSING", "counters": {}})
            continue
        if name not in base:
            rows.append({"name": name, "verdict": "NEW", "counters": {}})
            continue
        (b_times, b_counters, family), (c_times, c_counters, _) = base[name], cand[name]
        if not b_times or not c_times:
            rows.append({"name": name, "verdict": "MISSING", "counters": {}})
            continue
        row = {"name": name, **time_verdict(b_times, c_times, settings), "counters": {}}
        for metric_name, metric in catalogue.items():
            if settings.time_only:
                break
            if metric.kind == "timing" and metric_name != "gflops":
                continue
            b, c = b_counters.get(metric_name), c_counters.get(metric_name)
            if b is None and c is None:
                continue
            verdict = counter_verdict(metric, b, c, settings)
            if verdict != "SAME":
                row["counters"][metric_name] = {"base": b, "cand": c, "verdict": verdict,
                                                "stability": metric.stability}
        families.setdefault(family, []).append(row["cand_ms"] / row["base_ms"])
        rows.append(row)
    geomean = {f: float(np.exp(np.mean(np.log(r)))) for f, r in families.items()}
    regressions = [r for r in rows if r["verdict"] == "SLOWER" or any(
        c["verdict"] == "WORSE" and c["stability"] == "exact" for c in r["counters"].values())]
    return {"base": str(base_path), "candidate": str(cand_path), "context_warnings": warnings,
            "settings": settings.__dict__, "benchmarks": rows, "family_geomean_ratio": geomean,
            "regressions": [r["name"] for r in regressions]}


def _fmt(x, digits=4):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}g}"


def to_markdown(result):
    lines = []
    for warning in result["context_warnings"]:
        lines.append(f"**WARNING: context differs: {warning}**\n")
    s = result["settings"]
    lines.append(f"Minimum effect {s['min_effect']:.0%}, one-sided Mann-Whitney U at alpha "
                 f"{s['alpha']}, exact counts flagged beyond {s['count_tolerance']:.1%}, noisy "
                 f"counters beyond {s['counter_effect']:.0%}.\n")
    lines.append("| benchmark | verdict | base ms | cand ms | change | noise base/cand | p (slower) | counters |")
    lines.append("|---|---|---:|---:|---:|---|---:|---|")
    for r in result["benchmarks"]:
        counters = ", ".join(f"{k} {v['verdict']} ({_fmt(v['base'])} -> {_fmt(v['cand'])})"
                             for k, v in r["counters"].items())
        if "change" not in r:
            lines.append(f"| {r['name']} | {r['verdict']} | | | | | | |")
            continue
        lines.append(f"| {r['name']} | {r['verdict']} | {r['base_ms']:.4g} | {r['cand_ms']:.4g} | "
                     f"{r['change']:+.1%} | {r['noise_base']:.1%} / {r['noise_cand']:.1%} | "
                     f"{_fmt(r['p_slower'], 2)} | {counters} |")
    lines.append("\n| family | geometric mean of time ratio (candidate / base) |")
    lines.append("|---|---:|")
    for family, ratio in sorted(result["family_geomean_ratio"].items()):
        lines.append(f"| {family} | {ratio:.3f} |")
    verdicts = {}
    for r in result["benchmarks"]:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    lines.append("\nVerdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    lines.append(f"Regressions: {len(result['regressions'])}" +
                 ("" if not result["regressions"] else " (" + ", ".join(result["regressions"]) + ")"))
    return "\n".join(lines) + "\n"
