"""Two runs of one study on one GPU, back to back: do their numbers come back?

Two checks, both from the files alone:
  benchmarks  compare.py's rule on times (cycles where both runs recorded clocks), counters left
              out: every benchmark whose first-run median launch is above MIN_MS must be SAME.
              Shorter ones are listed with their verdicts but do not decide: a launch of tens of
              microseconds is dominated by launch overhead and cache state, not by the kernel;
  headline    the README's ladder table (readme_table: per ladder the fastest rung at the largest
              square) of the first run, each rung looked up in the second: its GFLOP/s must be
              within HEADLINE_TOLERANCE, and so must its % of cuBLAS (each run against the cuBLAS
              of its own run).
The second run may be a times-only study (STUDY_COUNTERS=off STUDY_CROSSCHECK=off): neither check
reads a counter. A benchmark missing from the second run, or failed in either, fails the check.
"""
from dataclasses import dataclass
from statistics import median

from .compare import Settings, compare_runs
from .errors import InputError
from .formatting import number
from .ladder_report import ShapeLadder, best_rungs, headline_shape, ladders_present
from .readme_table import study
from .results import load_run

MIN_MS = 1.0                # the benchmarks that decide: first-run median launch above this
HEADLINE_TOLERANCE = 0.02   # the headline figures: relative change allowed between the runs


@dataclass
class Headline:
    ladder: str
    variant: str
    gflops: tuple           # (first, second); second None where the rung is missing there
    pct_of_cublas: tuple
    clocks: tuple           # MHz, None where not recorded

    @property
    def change(self):
        first, second = self.gflops
        return None if second is None else second / first - 1

    @property
    def cublas_change(self):
        first, second = self.pct_of_cublas
        return None if second is None or first != first or second != second else second / first - 1

    @property
    def holds(self):
        return (self.change is not None and abs(self.change) <= HEADLINE_TOLERANCE
                and self.cublas_change is not None and abs(self.cublas_change) <= HEADLINE_TOLERANCE)


def headlines(first_path, second_path):
    """One Headline per ladder of the first run's README table."""
    first_context, first_kernel, first_table = study(first_path)
    second_context, second_kernel, second_table = study(second_path)
    shape = headline_shape(first_kernel)
    second_rows = {lad.key: ShapeLadder(second_kernel, lad, shape, second_context, second_table).rows
                   for lad in ladders_present(second_kernel)}
    out = []
    for lad, row in best_rungs(first_kernel, first_context, first_table, shape):
        rows = second_rows.get(lad.key)
        same = rows[rows.variant == row["variant"]] if rows is not None else []
        other = same.iloc[0] if len(same) else None
        out.append(Headline(
            lad.title, row["variant"],
            (float(row["gflops"]), None if other is None else float(other["gflops"])),
            (float(row["pct_of_reference"]), None if other is None else float(other["pct_of_reference"])),
            (row.get("sm_clock_mhz"), None if other is None else other.get("sm_clock_mhz"))))
    if not out:
        raise InputError(f"{first_path}: no ladder at its largest square {shape}")
    return shape, out


def check(first_path, second_path, settings=None, min_ms=MIN_MS):
    """{'rows', 'deciding', 'not_same', 'shape', 'headlines', 'reproducible', 'min_ms'} of two runs."""
    settings = settings or Settings(time_only=True)
    first, second = load_run(first_path), load_run(second_path)
    result = compare_runs(first_path, first, second_path, second, settings)
    first_ms = {name: median(bench.times) for name, bench in first[1].items() if bench.times}
    deciding = [r for r in result["benchmarks"]
                if first_ms.get(r["name"], 0) > min_ms or r["verdict"] in ("FAILED", "BASE_FAILED")]
    not_same = [r for r in deciding if r["verdict"] != "SAME"]
    shape, lines = headlines(first_path, second_path)
    return {"rows": result["benchmarks"], "deciding": deciding, "not_same": not_same,
            "context_warnings": result["context_warnings"], "notes": result["notes"],
            "shape": shape, "headlines": lines, "min_ms": min_ms,
            "reproducible": not not_same and all(h.holds for h in lines)}


def _pct(value):
    return "-" if value is None else f"{value:+.1%}"


def _clock(value):
    return "-" if value is None or value != value else f"{number(value)} MHz"


def to_markdown(outcome, first_path, second_path, command=""):
    verdicts = {}
    for r in outcome["deciding"]:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    short = len(outcome["rows"]) - len(outcome["deciding"])
    lines = [f"# Two runs of one study, back to back: `{first_path}` then `{second_path}`", ""]
    lines += [f"**WARNING: context differs: {w}**" for w in outcome["context_warnings"]]
    lines += [f"Note: {n}" for n in outcome["notes"]]
    lines += ["", f"**{'Reproducible' if outcome['reproducible'] else 'Not reproducible'}**: "
              f"benchmarks above {outcome['min_ms']:g} ms: " + (", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) or "none")
              + f" ({short} shorter ones listed in the table of all verdicts, not deciding); headline figures "
              f"{'all' if all(h.holds for h in outcome['headlines']) else 'not all'} within {HEADLINE_TOLERANCE:.0%}.", ""]
    lines += [f"## Headline ({outcome['shape']}, the README's ladder table of the first run)", "",
              "| ladder | fastest rung | GFLOP/s, first | second | change | % of cuBLAS, first | second | SM clock, first | second |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for h in outcome["headlines"]:
        second = "missing" if h.gflops[1] is None else number(h.gflops[1])
        lines.append(f"| {h.ladder} | `{h.variant}` | {number(h.gflops[0])} | {second} | {_pct(h.change)} | "
                     f"{number(h.pct_of_cublas[0])}% | {'-' if h.pct_of_cublas[1] is None else number(h.pct_of_cublas[1]) + '%'} | "
                     f"{_clock(h.clocks[0])} | {_clock(h.clocks[1])} |")
    if outcome["not_same"]:
        lines += ["", f"## Benchmarks above {outcome['min_ms']:g} ms that were not SAME", "",
                  "| benchmark | verdict | change |", "|---|---|---:|"]
        lines += [f"| {r['name']} | {r['verdict']}{': ' + r['error'] if r.get('error') else ''} | "
                  f"{_pct(r.get('change'))} |" for r in outcome["not_same"]]
    lines += ["", "## Every verdict", "", "| benchmark | verdict | statistic | change | threshold | deciding |",
              "|---|---|---|---:|---:|---|"]
    deciding = {r["name"] for r in outcome["deciding"]}
    for r in outcome["rows"]:
        threshold = "-" if "threshold" not in r else f"{r['threshold']:.1%}"
        lines.append(f"| {r['name']} | {r['verdict']} | {r.get('statistic', '-')} | {_pct(r.get('change'))} | "
                     f"{threshold} | {'yes' if r['name'] in deciding else 'no'} |")
    if command:
        lines += ["", f"Written by `{command}`."]
    return "\n".join(lines) + "\n"
