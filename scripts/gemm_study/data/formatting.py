"""How the tools write numbers, markdown tables and figures (every report section and tool
shares these; none of them is a report section itself)."""

import math
from pathlib import Path


def number(value, digits=3):
    """A table cell: '' for a missing value, 3 significant digits, thousands separators from
    1,000, scientific notation from 1e6 and below 1e-3; tuples and lists comma-joined."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    if abs(value) >= 1e6 or (abs(value) < 1e-3 and value != 0):
        return f"{value:.{digits}e}"
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def significant(value, digits=4):
    """A value inside a sentence of a verdict: '-' when missing, else `digits` significant digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}g}"


def markdown_table(frame, columns, headers=None):
    """A markdown table of the frame's columns; strings as they are, numbers through number()."""
    headers = headers or columns
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(columns)]
    for _, row in frame.iterrows():
        cells = [row[c] if isinstance(row[c], str) else number(row[c]) for c in columns]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def save_figure(fig, stem, dpi=110):
    """The figure as stem.png and stem.svg; returns both paths."""
    paths = []
    for ext in ("png", "svg"):
        path = Path(f"{stem}.{ext}")
        fig.savefig(path, dpi=dpi)
        paths.append(path)
    return paths
