"""The steps every sweep shares, from gemm-bench JSON to a generated .inc: read the sweep files
(a later file's keys replacing an earlier one's), rank each key's candidates by their median,
keep those within a tie of the best, name the runner-up, and write the table or print it.
Which candidate wins a tie is each table's own rule (tuning/ladder_configs.py,
tuning/shape_table.py), so the engine takes the ranked list and leaves the choice to them."""

import statistics
import sys

from gemm_study.data import results
from gemm_study.data.errors import InputError

# What a malformed entry of a sweep file raises while it is collected.
READ_ERRORS = (InputError, ValueError, TypeError, KeyError, AttributeError)


def source_line(path, context):
    """'file, GPU, date': where a table's numbers come from, for its header."""
    return f"{path.name}, {context.get('gpu_name', 'unknown GPU')}, {context.get('date', '')}".strip(", ")


def read_sweeps(paths, collect):
    """(tables, sources): `collect(benchmarks)` returns a tuple of {key: {candidate: [values]}}
    per file; the tables merge them, a later file's key replacing an earlier one's. InputError
    names the file that cannot be read."""
    tables, sources = None, []
    for path in paths:
        try:
            context, benchmarks = results.load_results(path)
            collected = collect(benchmarks)
        except READ_ERRORS as e:
            raise InputError(f"{path}: {e}") from e
        if tables is None:
            tables = tuple({} for _ in collected)
        for table, part in zip(tables, collected):
            table.update(part)
        sources.append(source_line(path, context))
    return tables or (), sources


def ranked(candidates, higher_is_better):
    """[(median, candidate)], best first (ties in the median broken by the candidate itself)."""
    return sorted(((statistics.median(v), c) for c, v in candidates.items()), reverse=higher_is_better)


def within_tie(ranking, tie, higher_is_better):
    """The ranked candidates within `tie` (a fraction) of the best."""
    best = ranking[0][0]
    if higher_is_better:
        return [(value, c) for value, c in ranking if value >= best * (1 - tie)]
    return [(value, c) for value, c in ranking if value <= best * (1 + tie)]


def runner_up(ranking, chosen):
    """The median of the best candidate other than `chosen` (NaN when there is none)."""
    others = [value for value, c in ranking if c != chosen]
    return others[0] if others else float("nan")


def emit(text, out, dry_run):
    """The table printed (dry run) or written to `out`; OSError propagates for the caller's message."""
    if dry_run:
        sys.stdout.write(text)
    else:
        out.write_text(text)
