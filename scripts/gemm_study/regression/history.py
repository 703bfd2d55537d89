"""Regression history over tracking runs of many revisions: the runs in the order of their
recorded dates, each benchmark's series of revisions, its change points (series.py), and the
regressions they add up to, each with its first bad revision, the size of the step and the
counters that stepped with it. Written as history.md, history.json and one figure per family;
dashboard.py draws the same data as a page."""

import json
import math
import re
from pathlib import Path

import numpy as np

from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.errors import InputError, writing
from gemm_study.data.formatting import significant
from gemm_study.data.results import counted_clock_on, cycles_of, load_run
from gemm_study.regression.compare import check_context, rule_text
from gemm_study.regression.series import Point, events

NCU_COMMAND = "git checkout {revision} && cmake --build build && build/bench/gemm-bench --ncu-command={benchmark}"
RUN_DATE, COMMIT_DATE = "date", "git_commit_date"


def expand(paths):
    """Files as given; a folder gives its *.json and *.json.gz files (committed runs are gzipped),
    but history.json, this tool's own output, so that --out may be the runs' folder."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            runs = [*path.glob("*.json"), *path.glob("*.json.gz")]
            found = sorted(p for p in runs if p.name != "history.json")
            if not found:
                raise InputError(f"{path}: no *.json or *.json.gz tracking runs in this folder")
            files += found
        else:
            files.append(path)
    return files


def _field_key(path, context, name):
    value = context.get(name)
    if value in (None, ""):
        raise InputError(f"{path}: context has no {name!r} to order the runs by")
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def order(runs, order_by):
    """(runs sorted, a sentence saying how). order_by: 'date' (the commit date where every run
    has context git_commit_date, ties and the rest by run date), 'args' (as given), or any
    context field (numbers where every value is one, else text)."""
    if order_by == "args":
        return runs, "in the order given"
    if order_by == "date":
        by_commit = all(ctx.get(COMMIT_DATE) for _, ctx, _ in runs)
        fields = [COMMIT_DATE, RUN_DATE] if by_commit else [RUN_DATE]
        how = (
            "by commit date (context git_commit_date), then run date (context date)"
            if by_commit
            else "by run date (context date; the runs carry no git_commit_date)"
        )
    else:
        fields, how = [order_by], f"by context {order_by}"
    keys = [tuple(_field_key(path, ctx, f) for f in fields) for path, ctx, _ in runs]
    if len({tuple(k[0] for k in key) for key in keys}) > 1:
        raise InputError(f"--order-by {order_by}: values mix numbers and text")
    ranked = sorted(range(len(runs)), key=lambda i: (keys[i], str(runs[i][0])))
    return [runs[i] for i in ranked], how


def revision_label(revision):
    """A commit hash shortened to 12 characters, with what follows the hash kept: a build of a
    patched tree ("<hash>+unpadded", "<hash>-dirty") must not take its base revision's label."""
    match = re.match(r"([0-9a-f]{12})[0-9a-f]*(.*)$", revision)
    return match.group(1) + match.group(2) if match else revision


def load_history(paths, order_by="date", allow_context_mismatch=False):
    """([(label, path, context, benches)] oldest first, how they were ordered)."""
    runs = [(path, *load_run(path)) for path in expand(paths)]
    if len(runs) < 2:
        raise InputError("a history needs at least two tracking runs")
    runs, how = order(runs, order_by)
    for (before, before_ctx, _), (path, ctx, _) in zip(runs, runs[1:]):
        check_context(before_ctx, ctx, allow_context_mismatch, (before, path))
    out, seen = [], {}
    for path, ctx, benches in runs:
        revision = str(ctx.get("git_revision", "unknown"))
        label = revision_label(revision) if revision not in ("", "unknown") else Path(path).stem
        seen[label] = seen.get(label, 0) + 1
        out.append((label if seen[label] == 1 else f"{label} ({seen[label]})", Path(path), ctx, benches))
    return out, how


def _band(values):
    if not values:
        return [math.nan] * 3
    return [float(v) for v in np.percentile(values, [25, 50, 75])]


def series_statistic(benches, settings, name):
    """'kcycles' where every run of the benchmark that ran has a clock on every repetition, else 'ms'."""
    ran = [b for b in benches if b is not None and not b.errors and b.times]
    clocks = all(b.cycles for b in ran)
    if settings.statistic == "cycles" and not clocks:
        raise InputError(f"{name}: --statistic cycles, but some revision has no sm_clock_mhz")
    return "kcycles" if clocks and settings.statistic != "time" else "ms"


def points_of(runs, name, statistic):
    counted = counted_clock_on([benches.get(name) for *_, benches in runs])
    points = []
    for i, (*_, benches) in enumerate(runs):
        bench = benches.get(name)
        if bench is None:
            points.append(Point(i, "missing"))
        elif bench.errors:
            points.append(Point(i, "failed", error=bench.errors[0]))
        else:
            values = cycles_of(bench, counted) if statistic == "kcycles" else bench.times
            points.append(
                Point(i, "ok", list(values), list(bench.counters.get("gflops", [])), bench.counters, spins=bench.spins)
            )
    return points


def settings_for(settings, statistic):
    """Times drift with the clock, cycles far less: the time-only drift allowance for 'ms'."""
    if statistic == "ms" and settings.time_drift is not None:
        return type(settings)(**dict(settings.__dict__, drift=settings.time_drift))
    return settings


def build(runs, settings, counters, how="in the order given"):
    """Series, change points and regressions of a loaded history."""
    catalogue = load_catalogue()
    labels = [r[0] for r in runs]
    names = sorted({n for *_, benches in runs for n in benches})
    series, flat = {}, []
    for name in names:
        benches = [r[3].get(name) for r in runs]
        family = next(b.family for b in benches if b is not None)
        statistic = series_statistic(benches, settings, name)
        points = points_of(runs, name, statistic)
        steps, counter_events, regressions = events(points, family, settings_for(settings, statistic), catalogue)
        series[name] = {
            "family": family,
            "statistic": statistic,
            "points": [
                {
                    "status": p.status,
                    "band": _band(p.values),
                    "gflops": _band(p.gflops),
                    "error": p.error,
                    "counters": {c: _band(p.counters.get(c, [])) for c in counters},
                }
                for p in points
            ],
            "steps": steps,
            "counter_events": counter_events,
        }
        flat += [_entry(name, family, statistic, r, labels) for r in regressions]
    flat.sort(key=lambda e: (e["first_index"], e["benchmark"]))
    return {
        "runs": [
            {
                "label": r[0],
                "file": str(r[1]),
                "date": r[2].get(RUN_DATE),
                "commit_date": r[2].get(COMMIT_DATE),
                "revision": str(r[2].get("git_revision", "")),
            }
            for r in runs
        ],
        "order": how,
        "gpu": runs[-1][2].get("gpu_name", "unknown GPU"),
        "gpu_slug": runs[-1][2].get("gpu_slug", "gpu"),
        "settings": dict(settings.__dict__),
        "series": series,
        "regressions": flat,
        "counters": counters,
        "statistics": sorted({s["statistic"] for s in series.values()}),
    }


def _entry(name, family, statistic, r, labels):
    """One regression, flattened for tables: labels instead of indexes, and what it was."""
    benchmark = name.removesuffix("/manual_time")
    entry = {
        "benchmark": benchmark,
        "family": family,
        "kind": r["kind"],
        "first_index": r["first"],
        "first_revision": labels[r["first"]],
        "last_good": labels[r["last_good"]] if r.get("last_good") is not None else None,
        "gap": [f"{labels[i]} {status}" for i, status in r.get("gap", [])],
        "recovered": labels[r["recovered"]] if r["recovered"] is not None else None,
        "open": r["recovered"] is None,
        "statistic": statistic,
    }
    if r["kind"] == "time":
        first = r["steps"][0]
        guarded = [c["counter"] for c in r.get("counter_regressions", [])]
        entry.update(
            change=r["change"],
            worst=r["worst"],
            step=first["change"],
            threshold=first["threshold"],
            steps=[f"{labels[s['revision']]} {s['verdict']} {s['change']:+.1%}" for s in r["steps"]],
            counters=_counter_text(first.get("counters", {}), guarded),
            counter_regressions=guarded,
        )
        slower = [s for s in r["steps"] if s["verdict"] == "SLOWER"]
        later = f", {r['change']:+.1%} now" if r["recovered"] is None else f", {r['worst']:+.1%} at its worst"
        entry["what"] = (
            f"{statistic} {first['change']:+.1%} at {labels[r['first']]}"
            + (later if len(slower) > 1 else "")
            + (f"; worse counts: {', '.join(guarded)}" if guarded else "")
        )
    elif r["kind"] == "failed":
        entry.update(what=f"FAILED: {r['error']}", counters="", counter_regressions=[])
    else:
        names = [c["counter"] for c in r["counters"]]
        entry.update(
            what="worse counts at the same time: "
            + ", ".join(
                f"{c['counter']} {c['change']['verdict']} ({significant(c['change']['base'])} -> "
                f"{significant(c['change']['cand'])})"
                for c in r["counters"]
            ),
            counters=", ".join(names),
            counter_regressions=names,
        )
    entry["ncu"] = NCU_COMMAND.format(revision=_revision_of(labels[r["first"]]), benchmark=benchmark)
    return entry


def _revision_of(label):
    """The commit to check out for a label ('50cbe9466b08+unpadded' -> '50cbe9466b08')."""
    match = re.match(r"[0-9a-f]{7,40}", label)
    return match.group(0) if match else label


def _counter_text(changes, regressions=()):
    return ", ".join(
        f"{k} {v['verdict']} ({significant(v['base'])} -> {significant(v['cand'])})"
        + (" [regression]" if k in regressions else "")
        for k, v in changes.items()
        if v["verdict"] != "MISSING"
    )


# ----------------------------------------------------------------------------- markdown


def to_markdown(history, figures, command):
    runs, s = history["runs"], history["settings"]
    lines = [
        "# Regression history",
        "",
        f"Command: `{command}`",
        "",
        f"{history['gpu']}, {len(runs)} revisions, ordered {history['order']}. Per benchmark, change "
        f"points over the whole series (e-divisive search, step test, merge: docs/regression.md), in "
        f"{' and '.join(history['statistics'])}. Step test: "
        + rule_text(s)
        + (f" Drift allowance for series in time (no clocks): {s['time_drift']:.1%}." if s.get("time_drift") else ""),
        "",
        "| # | revision | file | run date | commit date |",
        "|---:|---|---|---|---|",
    ]
    lines += [
        f"| {i} | {r['label']} | {Path(r['file']).name} | {r['date'] or '-'} | {r['commit_date'] or '-'} |"
        for i, r in enumerate(runs)
    ]
    open_ones = [e for e in history["regressions"] if e["open"]]
    closed = [e for e in history["regressions"] if not e["open"]]
    lines += ["", f"## Open regressions ({len(open_ones)})", ""]
    lines += _regression_table(open_ones, with_ncu=True) if open_ones else ["None."]
    lines += ["", f"## Recovered regressions ({len(closed)})", ""]
    lines += _regression_table(closed) if closed else ["None."]
    lines += [
        "",
        "## Change points",
        "",
        "| benchmark | revision | verdict | step | threshold | p | against | counters that stepped with it |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for name, series in history["series"].items():
        for st in series["steps"]:
            p = st["p_slower"] if st["verdict"] == "SLOWER" else st["p_faster"]
            against = runs[st["last_good"]]["label"] + "".join(
                f" (after {runs[i]['label']} {status})" for i, status in st["gap"]
            )
            lines.append(
                f"| {name.removesuffix('/manual_time')} | {runs[st['revision']]['label']} | {st['verdict']} | "
                f"{st['change']:+.1%} | {st['threshold']:.1%} | {significant(p, 2)} | {against} | "
                f"{_counter_text(st.get('counters', {}))} |"
            )
    changed = [
        (n, e) for n, series in history["series"].items() for e in series["counter_events"] if not e["regression"]
    ]
    if changed:
        lines += [
            "",
            "## Counts that changed without a regression",
            "",
            "Exact counts that moved where the time got faster (the trade paid off), or better.",
            "",
            "| benchmark | revision | counter | change | time |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {n.removesuffix('/manual_time')} | {runs[e['revision']]['label']} | {e['counter']} | "
            f"{e['change']['verdict']} ({significant(e['change']['base'])} -> {significant(e['change']['cand'])}) | "
            f"{e['time']} |"
            for n, e in changed
        ]
    if figures:
        lines += [
            "",
            "## Figures",
            "",
            "Per benchmark and revision: the median of the repetitions with the band from "
            "the 25th to the 75th percentile; change points marked (red: slower, green: faster), failed "
            "revisions as x.",
            "",
        ]
        lines += [f"![{family}]({name})" for family, name in figures]
    return "\n".join(lines) + "\n"


def _regression_table(entries, with_ncu=False):
    head = (
        "| benchmark | first bad revision | last good | what | steps | counters that stepped with it | recovered at |"
    )
    rows = [head + (" profile the bad revision |" if with_ncu else ""), "|---" * (7 + with_ncu) + "|"]
    for e in entries:
        gap = f" ({', '.join(e['gap'])} between)" if e["gap"] else ""
        rows.append(
            f"| {e['benchmark']} | {e['first_revision']} | {e['last_good'] or '-'}{gap} | {e['what']} | "
            f"{'; '.join(e.get('steps', [])) or '-'} | {e['counters'] or '-'} | {e['recovered'] or '-'} |"
            + (f" `{e['ncu']}` |" if with_ncu else "")
        )
    return rows


# ----------------------------------------------------------------------------- figures


TICK_CHARS = 22  # a revision label longer than this is cut on the axis; history.md has it whole


def tick_label(index, label):
    """'#index label' for a figure's axis, cut to TICK_CHARS with an ellipsis (a label that names
    several injected changes ran off the figure's edge); the table of history.md gives each # whole."""
    text = f"#{index} {label}"
    return text if len(text) <= TICK_CHARS else text[: TICK_CHARS - 1] + "\u2026"


def draw(history, out, counters):
    """One PNG per family: a row per benchmark, a column for the statistic, GFLOP/s and each counter."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [tick_label(i, r["label"]) for i, r in enumerate(history["runs"])]
    x = np.arange(len(labels))
    families = {}
    for name, s in history["series"].items():
        families.setdefault(s["family"], []).append(name)
    written = []
    for family, names in sorted(families.items()):
        columns = ["statistic", "gflops", *counters]
        fig, axes = plt.subplots(
            len(names), len(columns), squeeze=False, figsize=(3.6 * len(columns), 2.2 * len(names) + 0.6)
        )
        for row, name in enumerate(names):
            s = history["series"][name]
            for col, column in enumerate(columns):
                band = np.array(
                    [
                        p["band"]
                        if column == "statistic"
                        else p["gflops"]
                        if column == "gflops"
                        else p["counters"][column]
                        for p in s["points"]
                    ],
                    dtype=float,
                )
                _panel(axes[row][col], x, labels, band, s, column)
                title = s["statistic"] if column == "statistic" else column
                # The benchmark's name once per row, left-aligned on a line of its own above the
                # panels' titles: repeated over every panel, the long names ran into each other.
                if col == 0:
                    short = name.removeprefix("gemm/").removesuffix("/manual_time")
                    axes[row][col].set_title(f"{short}\n{title}", fontsize=7, loc="left")
                else:
                    axes[row][col].set_title(f"\n{title}", fontsize=7)
        fig.tight_layout()
        path = Path(out) / f"history_{family}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append((family, path.name))
    return written


def _panel(ax, x, labels, band, series, column):
    ax.fill_between(x, band[:, 0], band[:, 2], alpha=0.3, color="tab:blue", linewidth=0)
    ax.plot(x, band[:, 1], "-o", color="tab:blue", markersize=3)
    finite = band[:, 1][np.isfinite(band[:, 1])]
    floor = finite.min() if len(finite) else 0.0
    for i, p in enumerate(series["points"]):
        if p["status"] == "failed":
            ax.plot([i], [floor], "x", color="black", markersize=8)
    if column in ("statistic", "gflops"):
        for st in series["steps"]:
            colour = "tab:red" if st["verdict"] == "SLOWER" else "tab:green"
            ax.axvline(st["revision"] - 0.5, color=colour, linestyle="--", linewidth=1)
    if column in ("statistic", "gflops") and len(finite):  # at least +-3%: drift looks its size
        mid = float(np.median(finite))
        ax.set_ylim(min(np.nanmin(band), 0.97 * mid), max(np.nanmax(band), 1.03 * mid))
    ax.set_xticks(x, labels, rotation=30, fontsize=7, ha="right")
    ax.tick_params(axis="y", labelsize=7)


def _clean(value):
    """JSON without NaN: missing points become null."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def write_all(history, out, counters, command, figures=True):
    out = Path(out)
    with writing(out):
        out.mkdir(parents=True, exist_ok=True)
        drawn = draw(history, out, counters) if figures else []
        (out / "history.md").write_text(to_markdown(history, drawn, command))
        (out / "history.json").write_text(json.dumps(_clean(history), indent=1))
    return out / "history.md"
