"""Regression history over tracking runs of successive revisions: each run is compared with the
one before it by compare.py's rule; per benchmark, GFLOP/s and chosen counters are drawn across
revisions with their noise band (interquartile range of the repetitions), the revisions with a
verdict other than SAME are marked, and a markdown summary names the first revision of each
regression (SLOWER, FAILED, or a worse exact count)."""
import json
import math
import re
from pathlib import Path

import numpy as np

from .compare import compare_runs, load_run, rule_text
from .errors import InputError, writing

MARKS = {"SLOWER": ("v", "tab:red"), "FASTER": ("^", "tab:green"), "FAILED": ("X", "black"),
         "WORSE": ("v", "tab:red"), "BETTER": ("^", "tab:green"), "CHANGED": ("s", "tab:purple"),
         "UNSURE": ("d", "tab:orange"), "TOO_FEW": ("d", "tab:orange"), "NEW": ("o", "tab:blue"),
         "MISSING": ("o", "tab:gray"), "BASE_FAILED": ("o", "tab:gray")}
SHOWN = ["SLOWER", "FASTER", "FAILED", "UNSURE", "TOO_FEW", "NEW", "MISSING"]


def expand(paths):
    """Files as given; a folder gives its *.json files in name order (but history.json, this
    tool's own output, so that --out may be the runs' folder)."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.name != "history.json")
            if not found:
                raise InputError(f"{path}: no *.json tracking runs in this folder")
            files += found
        else:
            files.append(path)
    return files


def _sort_key(path, context, field):
    value = context.get(field)
    if value is None:
        raise InputError(f"{path}: context has no {field!r} to order the runs by")
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def load_history(paths, order_by="args"):
    """[(label, path, context, benches)] in revision order."""
    runs = [(path, *load_run(path)) for path in expand(paths)]
    if len(runs) < 2:
        raise InputError("a history needs at least two tracking runs")
    if order_by != "args":
        keys = [_sort_key(path, ctx, order_by) for path, ctx, _ in runs]
        if len({k[0] for k in keys}) > 1:
            raise InputError(f"--order-by {order_by}: values mix numbers and text")
        runs = [run for _, run in sorted(zip(keys, runs), key=lambda pair: pair[0])]
    out, seen = [], {}
    for path, ctx, benches in runs:
        revision = str(ctx.get("git_revision", "unknown"))
        label = revision_label(revision) if revision not in ("", "unknown") else Path(path).stem
        seen[label] = seen.get(label, 0) + 1
        out.append((label if seen[label] == 1 else f"{label} ({seen[label]})", Path(path), ctx, benches))
    return out


def revision_label(revision):
    """A commit hash shortened to 12 characters, with what follows the hash kept: a build of a
    patched tree ("<hash>+unpadded", "<hash>-dirty") must not take its base revision's label."""
    match = re.match(r"([0-9a-f]{12})[0-9a-f]*(.*)$", revision)
    return match.group(1) + match.group(2) if match else revision


def _band(values):
    if not values:
        return [math.nan] * 3
    return [float(v) for v in np.percentile(values, [25, 50, 75])]


def build(runs, settings, counters):
    """Series, per-revision verdicts and regressions of a loaded history."""
    names = sorted({n for *_, benches in runs for n in benches})
    series = {n: {"family": next(b[n].family for *_, b in runs if n in b), "verdicts": [None] * len(runs),
                  "metrics": {m: [] for m in ["gflops", *counters]}} for n in names}
    for label, path, ctx, benches in runs:
        for n in names:
            bench = benches.get(n)
            for metric, values in series[n]["metrics"].items():
                ok = bench is not None and not bench.errors
                values.append(_band(bench.counters.get(metric, [])) if ok else [math.nan] * 3)
    comparisons = []
    for i in range(1, len(runs)):
        (_, base_path, base_ctx, base), (_, cand_path, cand_ctx, cand) = runs[i - 1], runs[i]
        result = compare_runs(base_path, (base_ctx, base), cand_path, (cand_ctx, cand), settings)
        comparisons.append(result)
        for row in result["benchmarks"]:
            exact = {k: v for k, v in row["counters"].items()
                     if v["stability"] == "exact" and v["verdict"] != "MISSING"}
            series[row["name"]]["verdicts"][i] = {"verdict": row["verdict"], "change": row.get("change"),
                                                  "error": row.get("error"), "exact": exact,
                                                  "base_failed": row.get("base_failed", False),
                                                  "regression": row["name"] in result["regressions"]}
    return {"runs": [{"label": r[0], "file": str(r[1]), "date": r[2].get("date")} for r in runs],
            "series": series, "regressions": regressions(runs, series),
            "settings": comparisons[0]["settings"], "notes": sorted({n for c in comparisons for n in c["notes"]}),
            "counts": [_counts(c) for c in comparisons]}


def _counts(result):
    counts = {}
    for row in result["benchmarks"]:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
        if any(v["stability"] == "exact" and v["verdict"] != "MISSING" for v in row["counters"].values()):
            counts["exact counts changed"] = counts.get("exact counts changed", 0) + 1
    return counts


def _what(v):
    if v["verdict"] == "FAILED":
        return f"FAILED: {v['error']}"
    parts = [f"{v['verdict']} {v['change']:+.1%}"] if v.get("change") is not None else [v["verdict"]]
    parts += [f"{k} {c['verdict']} ({c['base']:.4g} -> {c['cand']:.4g})" for k, c in v["exact"].items()
              if c["base"] is not None and c["cand"] is not None]
    return ", ".join(parts)


def regressions(runs, series):
    """One entry per regression: its first revision, and the revision where it recovered."""
    out = []
    for name, s in series.items():
        open_entry = None
        for i, v in enumerate(s["verdicts"]):
            if v is None:
                continue
            failed = v["verdict"] == "FAILED"
            if open_entry and open_entry["failed"] and not failed:
                open_entry["recovered"] = runs[i][0]
                open_entry = None
            elif open_entry and not open_entry["failed"] and v["verdict"] == "FASTER":
                open_entry["recovered"] = runs[i][0]
                open_entry = None
            if v["regression"] and not (open_entry and open_entry["failed"] and failed):
                # Failing on both sides with nothing open: it failed first in the previous run.
                first = i - 1 if failed and v["base_failed"] else i
                open_entry = {"benchmark": name, "first_revision": runs[first][0],
                              "previous": runs[first - 1][0] if first > 0 else None,
                              "what": _what(v), "recovered": None, "failed": failed}
                out.append(open_entry)
    return sorted(out, key=lambda e: ([r[0] for r in runs].index(e["first_revision"]), e["benchmark"]))


def to_markdown(history, figures, command):
    runs = history["runs"]
    lines = ["# Regression history", "", f"Command: `{command}`", "",
             "Each run is compared with the run before it. " + rule_text(history["settings"]), ""]
    lines += [f"Note: {n}" for n in history["notes"]] + ([""] if history["notes"] else [])
    lines += ["| # | revision | file | date |", "|---:|---|---|---|"]
    lines += [f"| {i} | {r['label']} | {Path(r['file']).name} | {r['date'] or '-'} |" for i, r in enumerate(runs)]
    lines += ["", "## Regressions", ""]
    if history["regressions"]:
        lines += ["| benchmark | first revision | against | what | recovered at |", "|---|---|---|---|---|"]
        lines += [f"| {e['benchmark']} | {e['first_revision']} | {e['previous'] or '-'} | {e['what']} | "
                  f"{e['recovered'] or '-'} |" for e in history["regressions"]]
    else:
        lines.append("None: no revision is SLOWER, FAILED or worse in an exact count than the one before it.")
    kinds = SHOWN + ["exact counts changed"]
    lines += ["", "## Verdicts against the previous revision", "",
              "| revision | " + " | ".join(kinds) + " |", "|---" * (len(kinds) + 1) + "|"]
    lines += [f"| {runs[i + 1]['label']} | " + " | ".join(str(c.get(k, 0)) for k in kinds) + " |"
              for i, c in enumerate(history["counts"])]
    lines += ["", "## Figures", "", "GFLOP/s and counters per revision: median of the repetitions, band "
              "from the 25th to the 75th percentile; markers: " +
              ", ".join(f"{k} {MARKS[k][0]}" for k in SHOWN) + " (against the previous revision).", ""]
    lines += [f"![{family}]({name})" for family, name in figures]
    return "\n".join(lines) + "\n"


def marks(series, metric):
    """[(revision index, verdict)] marked on one panel: GFLOP/s gets every verdict other than
    SAME, a counter panel the verdict of the revisions where that exact count changed."""
    return [(i, v["verdict"] if metric == "gflops" else v["exact"][metric]["verdict"])
            for i, v in enumerate(series["verdicts"])
            if v is not None and (metric in v["exact"] if metric != "gflops" else v["verdict"] in SHOWN)]


def draw(history, out, counters):
    """One PNG per family: a row per benchmark, a column for GFLOP/s and one per counter."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [r["label"] for r in history["runs"]]
    x = np.arange(len(labels))
    families = {}
    for name, s in history["series"].items():
        families.setdefault(s["family"], []).append(name)
    written = []
    for family, names in sorted(families.items()):
        metrics = ["gflops", *counters]
        fig, axes = plt.subplots(len(names), len(metrics), squeeze=False,
                                 figsize=(3.6 * len(metrics), 2.2 * len(names) + 0.6))
        for row, name in enumerate(names):
            s = history["series"][name]
            for col, metric in enumerate(metrics):
                ax = axes[row][col]
                band = np.array(s["metrics"][metric], dtype=float)
                ax.fill_between(x, band[:, 0], band[:, 2], alpha=0.3, color="tab:blue", linewidth=0)
                ax.plot(x, band[:, 1], "-o", color="tab:blue", markersize=3)
                for i, word in marks(s, metric):
                    finite = band[:, 1][np.isfinite(band[:, 1])]
                    y = band[i, 1] if math.isfinite(band[i, 1]) else (finite.min() if len(finite) else 0.0)
                    marker, color = MARKS[word]
                    ax.plot([i], [y], marker, color=color, markersize=9,
                            markerfacecolor=color if metric == "gflops" else "none")
                if metric == "gflops" and np.isfinite(band).any():  # at least +-3%: drift looks its size
                    mid = float(np.nanmedian(band[:, 1]))
                    ax.set_ylim(min(np.nanmin(band), 0.97 * mid), max(np.nanmax(band), 1.03 * mid))
                ax.set_xticks(x, labels, rotation=30, fontsize=7, ha="right")
                ax.tick_params(axis="y", labelsize=7)
                ax.set_title(f"{name.removeprefix('gemm/').removesuffix('/manual_time')}\n{metric}", fontsize=7)
        fig.tight_layout()
        path = Path(out) / f"history_{family}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append((family, path.name))
    return written


def _clean(value):
    """JSON without NaN: missing points become null."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_all(history, out, counters, command):
    out = Path(out)
    with writing(out):
        out.mkdir(parents=True, exist_ok=True)
        figures = draw(history, out, counters)
        (out / "history.md").write_text(to_markdown(history, figures, command))
        (out / "history.json").write_text(json.dumps(_clean(history), indent=1))
    return out / "history.md"
