"""The regression dashboard: one static HTML page per tracked GPU, drawn from a history
(history.build): per benchmark, the time statistic (cycles where clocks exist) and GFLOP/s over
the revisions with the interquartile band of the repetitions and the change points marked, and a
table of the open regressions with the command that profiles each bad revision in Nsight
Compute, and an index of the benchmarks by family. Every panel of a kind spans the same relative
range around its own level (the page's largest move sets it), so a 1% wobble looks 1% tall next
to an 80% step instead of filling its panel. Everything is inline (CSS and SVG, no script, no font or file fetched), so the page
reads from the file system without a server or a network."""

import html
import math

from gemm_study.data.formatting import significant

WIDTH, HEIGHT, PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 640, 230, 58, 10, 18, 110
# The smallest relative range of a panel (+-1.5%): below it, drift would look larger than it is.
MIN_HALF_RANGE = 0.015
STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; } h3 { font-size: 0.95em; margin: 0.2em 0; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td.num { text-align: right; }
code { font-size: 0.85em; background: #f6f6f6; padding: 0.1em 0.3em; }
.benchmark { margin: 0.6em 0; }
.plots { display: grid; grid-template-columns: 1fr 1fr; gap: 0.5em; }
svg { background: #fff; border: 1px solid #ddd; width: 100%; height: auto; }
nav#index li { margin: 0.1em 0; }
svg text { font-size: 9px; fill: #444; }
.band { fill: #1f77b4; fill-opacity: 0.25; stroke: none; }
.median { fill: none; stroke: #1f77b4; stroke-width: 1.5; }
.point { fill: #1f77b4; }
.failed { stroke: #000; stroke-width: 1.5; }
.changepoint line { stroke-width: 1.5; stroke-dasharray: 4 3; }
.changepoint.slower line { stroke: #d62728; } .changepoint.faster line { stroke: #2ca02c; }
.open { color: #d62728; font-weight: bold; } .none { color: #2ca02c; }
.legend { font-size: 0.85em; color: #555; }
"""


def page(history):
    """The dashboard of one history (one GPU) as one HTML document."""
    runs = history["runs"]
    open_ones = [e for e in history["regressions"] if e["open"]]
    title = f"Regression dashboard: {history['gpu']}"
    parts = [
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>',
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>{len(runs)} revisions, ordered {_e(history['order'])}: "
        f"{_e(runs[0]['label'])} ({_e(runs[0]['date'] or '-')}) to {_e(runs[-1]['label'])} "
        f"({_e(runs[-1]['date'] or '-')}). {len(history['series'])} benchmarks.</p>",
        _summary(open_ones),
        "<h2>Open regressions</h2>",
        _open_table(open_ones),
        "<h2>Recovered regressions</h2>",
        _recovered_table([e for e in history["regressions"] if not e["open"]]),
        _index(history["series"]),
        "<h2>Benchmarks</h2>",
        '<p class="legend">Each panel: the median of the repetitions per revision, the band from the 25th to '
        "the 75th percentile; dashed lines: change points (red slower, green faster) before the revision "
        "they start at; x: the benchmark failed at that revision; a gap: it did not run.</p>",
    ]
    half_ranges = {kind: _half_range(history["series"], key) for kind, key in PANELS}
    for family, members in sorted(_families(history["series"]).items()):
        parts.append(f'<h3 id="family-{_e(family)}">{_e(family)}</h3>')
        parts += [_benchmark(name, series, runs, half_ranges) for name, series in members]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# The panels of a benchmark: (kind, the point field that holds its band).
PANELS = (("statistic", "band"), ("gflops", "gflops"))


def _families(series_by_name):
    families = {}
    for name, series in series_by_name.items():
        families.setdefault(series["family"], []).append((name, series))
    return families


def _index(series_by_name):
    """Links to each family's panels, with how many benchmarks each has."""
    items = [
        f'<li><a href="#family-{_e(family)}">{_e(family)}</a> ({len(members)})</li>'
        for family, members in sorted(_families(series_by_name).items())
    ]
    return '<nav id="index"><h2>Index</h2><ul>' + "".join(items) + "</ul></nav>"


def _half_range(series_by_name, key):
    """Half the relative range every panel of one kind spans: the largest of any benchmark's
    (max - min) / 2 / level, and at least MIN_HALF_RANGE."""
    widest = MIN_HALF_RANGE
    for series in series_by_name.values():
        values = _finite([v for point in series["points"] for v in (point.get(key) or ())])
        if values:
            middle = (min(values) + max(values)) / 2
            if middle > 0:
                widest = max(widest, (max(values) - min(values)) / 2 / middle)
    return widest


def _e(text):
    return html.escape(str(text), quote=True)


def _summary(open_ones):
    if not open_ones:
        return '<p id="verdict" class="none">No open regression.</p>'
    return f'<p id="verdict" class="open">{len(open_ones)} open regression(s).</p>'


def _open_table(entries):
    if not entries:
        return '<p id="open-regressions" class="none">None.</p>'
    rows = [
        '<table id="open-regressions"><tr><th>benchmark</th><th>first bad revision</th><th>last good</th>'
        "<th>what</th><th>counters that stepped with it</th><th>profile the bad revision</th></tr>"
    ]
    for e in entries:
        gap = f" ({_e(', '.join(e['gap']))} between)" if e["gap"] else ""
        rows.append(
            f'<tr class="regression"><td>{_e(e["benchmark"])}</td><td>{_e(e["first_revision"])}</td>'
            f"<td>{_e(e['last_good'] or '-')}{gap}</td><td>{_e(e['what'])}</td>"
            f"<td>{_e(e['counters'] or '-')}</td><td><code>{_e(e['ncu'])}</code></td></tr>"
        )
    return "\n".join(rows + ["</table>"])


def _recovered_table(entries):
    if not entries:
        return '<p id="recovered-regressions">None.</p>'
    rows = [
        '<table id="recovered-regressions"><tr><th>benchmark</th><th>first bad revision</th><th>what</th>'
        "<th>recovered at</th></tr>"
    ]
    rows += [
        f"<tr><td>{_e(e['benchmark'])}</td><td>{_e(e['first_revision'])}</td><td>{_e(e['what'])}</td>"
        f"<td>{_e(e['recovered'])}</td></tr>"
        for e in entries
    ]
    return "\n".join(rows + ["</table>"])


def _benchmark(name, series, runs, half_ranges):
    short = name.removeprefix("gemm/").removesuffix("/manual_time")
    unit = {"kcycles": "thousand SM cycles", "ms": "ms"}[series["statistic"]]
    panels = [
        _plot(
            [p["band"] for p in series["points"]],
            series,
            runs,
            f"{unit} (lower is better)",
            "statistic",
            half_ranges["statistic"],
        ),
        _plot(
            [p["gflops"] for p in series["points"]],
            series,
            runs,
            "GFLOP/s (higher is better)",
            "gflops",
            half_ranges["gflops"],
        ),
    ]
    return (
        f'<div class="benchmark" data-name="{_e(name)}"><h3>{_e(short)}</h3>'
        f'<div class="plots">{"".join(panels)}</div></div>'
    )


def _finite(values):
    return [v for v in values if v is not None and isinstance(v, (int, float)) and math.isfinite(v)]


def _plot(bands, series, runs, label, kind, half_range=MIN_HALF_RANGE):
    """One inline SVG: band, median line, points, failures and change points over the revisions,
    on +-half_range of the panel's own level (the same relative range for every panel of a kind)."""
    count = len(runs)
    values = _finite([v for band in bands for v in band])
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    middle = (low + high) / 2 or 1.0
    low, high = min(low, middle * (1 - half_range)), max(high, middle * (1 + half_range))
    x = lambda i: PAD_LEFT + (WIDTH - PAD_LEFT - PAD_RIGHT) * (i + 0.5) / count
    y = lambda v: PAD_TOP + (HEIGHT - PAD_TOP - PAD_BOTTOM) * (high - v) / (high - low)
    out = [
        f'<svg class="plot {kind}" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{_e(label)}">',
        f'<text x="4" y="11">{_e(label)}</text>',
        f'<text x="{PAD_LEFT - 4}" y="{PAD_TOP + 4}" text-anchor="end">{_e(significant(high, 5))}</text>',
        f'<text x="{PAD_LEFT - 4}" y="{HEIGHT - PAD_BOTTOM}" text-anchor="end">{_e(significant(low, 5))}</text>',
    ]
    for run in _runs_of_points(bands):
        upper = " ".join(f"{x(i):.1f},{y(bands[i][2]):.1f}" for i in run)
        lower = " ".join(f"{x(i):.1f},{y(bands[i][0]):.1f}" for i in reversed(run))
        out.append(f'<polygon class="band" points="{upper} {lower}"/>')
        out.append(f'<polyline class="median" points="{" ".join(f"{x(i):.1f},{y(bands[i][1]):.1f}" for i in run)}"/>')
    for i, band in enumerate(bands):
        if _finite(band[1:2]):
            out.append(
                f'<circle class="point" cx="{x(i):.1f}" cy="{y(band[1]):.1f}" r="2.5">'
                f"<title>{_e(runs[i]['label'])}: median {_e(significant(band[1], 5))}, "
                f"IQR {_e(significant(band[0], 5))} to {_e(significant(band[2], 5))}</title></circle>"
            )
    for i, point in enumerate(series["points"]):
        if point["status"] == "failed":
            cx, cy = x(i), HEIGHT - PAD_BOTTOM - 6
            out.append(
                f'<g class="failed"><title>{_e(runs[i]["label"])}: failed: {_e(point["error"])}</title>'
                f'<line x1="{cx - 4:.1f}" y1="{cy - 4:.1f}" x2="{cx + 4:.1f}" y2="{cy + 4:.1f}"/>'
                f'<line x1="{cx - 4:.1f}" y1="{cy + 4:.1f}" x2="{cx + 4:.1f}" y2="{cy - 4:.1f}"/></g>'
            )
    for st in series["steps"]:
        cx = (x(st["revision"]) + x(st["revision"] - 1)) / 2
        word = st["verdict"].lower()
        out.append(
            f'<g class="changepoint {word}" data-revision="{_e(runs[st["revision"]]["label"])}">'
            f"<title>{_e(st['verdict'])} {st['change']:+.1%} at {_e(runs[st['revision']]['label'])} "
            f"(against {_e(runs[st['last_good']]['label'])})</title>"
            f'<line x1="{cx:.1f}" y1="{PAD_TOP}" x2="{cx:.1f}" y2="{HEIGHT - PAD_BOTTOM}"/></g>'
        )
    for i, run in enumerate(runs):
        out.append(
            f'<text x="{x(i):.1f}" y="{HEIGHT - PAD_BOTTOM + 12}" text-anchor="end" '
            f'transform="rotate(-45 {x(i):.1f} {HEIGHT - PAD_BOTTOM + 12})">{_e(run["label"])}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _runs_of_points(bands):
    """Consecutive revisions that have a finite band (a missing or failed revision breaks the line)."""
    runs, current = [], []
    for i, band in enumerate(bands):
        if len(_finite(band)) == 3:
            current.append(i)
        elif current:
            runs.append(current)
            current = []
    return runs + ([current] if current else [])
