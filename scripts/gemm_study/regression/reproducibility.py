"""Two runs of one study on one GPU, back to back: do their numbers come back?

Two checks, both from the files alone:
  benchmarks  compare.py's rule on times (cycles where both runs recorded clocks), counters left
              out: every benchmark whose first-run median launch is above MIN_MS must be SAME.
              Shorter ones are listed with their verdicts but do not decide: a launch of tens of
              microseconds is dominated by launch overhead and cache state, not by the kernel.
              A benchmark missing from the second run, or failed in either, decides at any length;
  headline    the README's ladder table (readme_table: per ladder the fastest rung at the largest
              square) of the first run, each rung's benchmark looked up by name in the second (not
              the second run's fastest rung: the figure that was published is what must come back):
              its GFLOP/s must be within HEADLINE_TOLERANCE, and so must its % of cuBLAS (each run
              against the cuBLAS of the same arithmetic in its own run). A rung missing or failed in
              the second run fails; so does a % of cuBLAS that the first run has and the second lacks.
              Where the first run has no cuBLAS of the rung's arithmetic at the shape there is no
              % of cuBLAS to compare, and GFLOP/s alone decides (the page says so).
The second run may be a times-only study (STUDY_COUNTERS=off STUDY_CROSSCHECK=off): neither check
reads a counter.
"""

import math
from dataclasses import dataclass
from statistics import median

from gemm_study.analysis import ladder
from gemm_study.data.errors import InputError
from gemm_study.data.formatting import number
from gemm_study.data.results import load_frame, load_results, load_run, one_row_per_benchmark
from gemm_study.regression.compare import Settings, compare_runs
from gemm_study.report.ladder_report import best_rungs, ladder_headline_shape
from gemm_study.report.readme_table import study

MIN_MS = 1.0  # the benchmarks that decide: first-run median launch above this
HEADLINE_TOLERANCE = 0.02  # the headline figures: relative change allowed between the runs
ALWAYS_DECIDING = ("MISSING", "FAILED", "BASE_FAILED")  # whatever the first run's launch time
CLOCK_MOVE = 0.01  # a change of the median SM clock named as a cause
POWER_MOVE = 0.03  # and of the median board power (NVML's one-second average)


def _finite(value):
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def _entries_by_name(path):
    """{benchmark name: its first entry} of a results file (the raw JSON fields)."""
    out = {}
    for entry in load_results(path)[1]:
        out.setdefault(entry.get("name", "").removesuffix("/manual_time"), entry)
        out.setdefault(entry.get("name", ""), entry)
    return out


def likely_cause(first, second):
    """What the two files record that moved beside the kernel's own time, for a benchmark or a
    headline that did not come back: the arithmetic on the host, copies from pageable memory, a
    library's other kernel, the SM clock, the board power, slowdowns NVML reported, samples below
    the median clock.
    `first`, `second`: the raw entries (second None where missing)."""
    if second is None:
        return "missing from the second run"
    variant = first.get("variant") if isinstance(first.get("variant"), dict) else {}
    causes = []
    if variant.get("backend") == "cpu":
        causes.append("host time on one CPU core: the host's load and frequency, not the GPU")
    if variant.get("end_to_end") or str(first.get("name", "")).startswith("gemm_e2e/"):
        if "pinned host memory" in str(first.get("label", "")):
            causes.append(
                "end to end: copies from pinned host memory, at the speed of the PCIe link and the host's memory"
            )
        else:
            causes.append("end to end: copies from pageable host memory, whose speed follows the host's memory state")
    kernels = first.get("kernels"), second.get("kernels")
    if all(isinstance(k, list) and k for k in kernels) and kernels[0] != kernels[1]:
        causes.append(f"the library ran other kernels: {', '.join(kernels[0])} -> {', '.join(kernels[1])}")
    clocks = first.get("sm_clock_mhz"), second.get("sm_clock_mhz")
    if all(_finite(c) and c > 0 for c in clocks) and abs(clocks[1] / clocks[0] - 1) > CLOCK_MOVE:
        causes.append(f"median SM clock {clocks[0]:.0f} -> {clocks[1]:.0f} MHz")
    powers = first.get("power_w"), second.get("power_w")
    if all(_finite(p) and p > 0 for p in powers) and abs(powers[1] / powers[0] - 1) > POWER_MOVE:
        causes.append(
            f"NVML's board power {powers[0]:.0f} -> {powers[1]:.0f} W (median of its one-second averages, "
            "which also cover the work before the samples)"
        )
    for run, entry in (("first", first), ("second", second)):
        if entry.get("clock_throttled"):
            causes.append(f"NVML reported a power or thermal slowdown during the {run} run's samples")
        flagged = entry.get("samples_flagged")
        if _finite(flagged) and flagged > 0:
            causes.append(f"{flagged:.0f} of the {run} run's samples below its median clock by more than 2%")
    return "; ".join(causes) or (
        "none recorded: the same kernels at the same median SM clock, no slowdown reported (a change "
        "of the GPU's state between the runs that NVML's clock readings do not show)"
    )


@dataclass
class Headline:
    ladder: str
    variant: str
    gflops: tuple  # (first, second); second None where the rung is missing there
    pct_of_cublas: tuple  # (first, second); NaN where that run has no cuBLAS of the arithmetic
    clocks: tuple  # MHz, None where not recorded
    cause: str = ""  # likely_cause, where the figure did not come back

    @property
    def change(self):
        first, second = self.gflops
        return None if second is None else second / first - 1

    @property
    def cublas_compared(self):
        """Whether the first run has a % of cuBLAS to reproduce."""
        return _finite(self.pct_of_cublas[0])

    @property
    def cublas_change(self):
        first, second = self.pct_of_cublas
        return second / first - 1 if _finite(first) and _finite(second) else None

    @property
    def holds(self):
        if self.change is None or not abs(self.change) <= HEADLINE_TOLERANCE:
            return False
        if not self.cublas_compared:
            return True
        return bool(self.cublas_change is not None and abs(self.cublas_change) <= HEADLINE_TOLERANCE)


def _has_kernel_rows(path):
    """Whether the results file has a successful kernel (not end-to-end) benchmark."""
    _, frame = load_frame(path)
    frame = one_row_per_benchmark(frame)
    return bool((~frame.end_to_end & frame.error.isna()).any())


def _pct_of_cublas(kernel, lad, shape, gflops):
    """GFLOP/s over the run's cuBLAS of the ladder's precision and arithmetic at the shape, in %
    (ladder.annotate's pct_of_reference), NaN without one."""
    cublas = ladder.reference_row(ladder.references(kernel, lad, shape))
    return 100 * gflops / cublas["gflops"] if cublas is not None else math.nan


def headlines(first_path, second_path):
    """(shape, one Headline per ladder of the first run's README table)."""
    first_context, first_kernel, first_table = study(first_path)
    shape = ladder_headline_shape(first_kernel)
    best = best_rungs(first_kernel, first_context, first_table, shape) if shape else []
    if not best:
        raise InputError(f"{first_path}: no ladder rung, so no headline figure (the README's ladder table) to compare")
    # A second run in which every kernel failed is a run whose numbers did not come back (each
    # headline missing there), not bad input.
    second_kernel = study(second_path)[1] if _has_kernel_rows(second_path) else None
    out = []
    for lad, row in best:
        other = None
        if second_kernel is not None:
            same = second_kernel[second_kernel.name == row["name"]]
            other = same.iloc[0] if len(same) else None
        second_gflops = None if other is None else float(other["gflops"])
        second_pct = None if other is None else _pct_of_cublas(second_kernel, lad, shape, second_gflops)
        line = Headline(
            lad.title,
            row["variant"],
            (float(row["gflops"]), second_gflops),
            (float(row["pct_of_reference"]), second_pct),
            (row.get("sm_clock_mhz"), None if other is None else other.get("sm_clock_mhz")),
        )
        if not line.holds:
            line.cause = _headline_cause(first_path, second_path, row["name"], lad, shape, first_kernel, second_kernel)
        out.append(line)
    return shape, out


def _headline_cause(first_path, second_path, name, lad, shape, first_kernel, second_kernel):
    """The rung's likely_cause, and its cuBLAS's where that moved the % of cuBLAS."""
    first, second = _entries_by_name(first_path), _entries_by_name(second_path)
    text = f"the rung: {likely_cause(first[name], second.get(name))}"
    cublas = ladder.reference_row(ladder.references(first_kernel, lad, shape))
    if cublas is not None and second_kernel is not None:
        ref = cublas["name"]
        other = second_kernel[second_kernel.name == ref]
        if len(other) and abs(float(other.iloc[0]["gflops"]) / float(cublas["gflops"]) - 1) > HEADLINE_TOLERANCE:
            change = float(other.iloc[0]["gflops"]) / float(cublas["gflops"]) - 1
            text += f"; its cuBLAS moved {change:+.1%}: {likely_cause(first[ref], second.get(ref))}"
    return text


def check(first_path, second_path, settings=None, min_ms=MIN_MS):
    """{'rows', 'deciding', 'not_same', 'shape', 'headlines', 'reproducible', 'min_ms'} of two runs."""
    settings = settings or Settings(time_only=True)
    first, second = load_run(first_path), load_run(second_path)
    result = compare_runs(first_path, first, second_path, second, settings)
    first_ms = {name: median(bench.times) for name, bench in first[1].items() if bench.times}
    deciding = [
        r for r in result["benchmarks"] if first_ms.get(r["name"], 0) > min_ms or r["verdict"] in ALWAYS_DECIDING
    ]
    not_same = [r for r in deciding if r["verdict"] != "SAME"]
    if not_same:
        first_entries, second_entries = _entries_by_name(first_path), _entries_by_name(second_path)
        for r in not_same:
            entry = first_entries.get(r["name"])
            r["cause"] = likely_cause(entry, second_entries.get(r["name"])) if entry else ""
    shape, lines = headlines(first_path, second_path)
    return {
        "rows": result["benchmarks"],
        "deciding": deciding,
        "not_same": not_same,
        "context_warnings": result["context_warnings"],
        "notes": result["notes"],
        "shape": shape,
        "headlines": lines,
        "min_ms": min_ms,
        "reproducible": not not_same and all(h.holds for h in lines),
    }


def _pct(value):
    return "-" if value is None else f"{value:+.1%}"


def _clock(value):
    return "-" if not _finite(value) else f"{number(value)} MHz"


def _share(value, missing):
    """A % of cuBLAS cell: the figure, or why there is none."""
    return f"{number(value)}%" if _finite(value) else missing


def _cell(text):
    """Text inside a table cell: one line, no column separator."""
    return " ".join(str(text).split()).replace("|", "\\|")


def summary_line(outcome):
    """The verdict in one sentence (the page's first line and the command's last)."""
    verdicts = {}
    for r in outcome["deciding"]:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    short = len(outcome["rows"]) - len(outcome["deciding"])
    held = sum(h.holds for h in outcome["headlines"])
    return (
        f"{'Reproducible' if outcome['reproducible'] else 'Not reproducible'}: deciding benchmarks (first-run "
        f"launch above {outcome['min_ms']:g} ms, or missing or failed): "
        + (", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) or "none")
        + f"; {short} shorter ones listed, not deciding; headline figures within {HEADLINE_TOLERANCE:.0%}: "
        f"{held} of {len(outcome['headlines'])}."
    )


def to_markdown(outcome, first_path, second_path, command=""):
    lines = [f"# Two runs of one study, back to back: `{first_path}` then `{second_path}`", ""]
    for text in [f"**WARNING: context differs: {w}**" for w in outcome["context_warnings"]] + [
        f"Note: {n}" for n in outcome["notes"]
    ]:
        lines += [text, ""]  # a paragraph each
    verdict, _, rest = summary_line(outcome).partition(": ")
    lines += [f"**{verdict}**: {rest}", ""]
    lines += [
        f"## Headline ({outcome['shape']}, the README's ladder table of the first run)",
        "",
        "Per ladder the first run's fastest rung, its benchmark looked up by name in the second run; "
        f"within: its GFLOP/s and its % of cuBLAS (each run's own cuBLAS) both moved by at most "
        f"{HEADLINE_TOLERANCE:.0%}.",
        "",
        "| ladder | fastest rung | GFLOP/s, first | second | change | % of cuBLAS, first | second | change "
        "| SM clock, first | second | within |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for h in outcome["headlines"]:
        missing = h.gflops[1] is None
        second = "missing" if missing else number(h.gflops[1])
        second_pct = "-" if missing else _share(h.pct_of_cublas[1], "no cuBLAS")
        cublas_change = _pct(h.cublas_change) if h.cublas_compared else "not compared"
        lines.append(
            f"| {h.ladder} | `{h.variant}` | {number(h.gflops[0])} | {second} | {_pct(h.change)} | "
            f"{_share(h.pct_of_cublas[0], 'no cuBLAS')} | {second_pct} | {cublas_change} | "
            f"{_clock(h.clocks[0])} | {_clock(h.clocks[1])} | {'yes' if h.holds else '**no**'} |"
        )
    for h in outcome["headlines"]:
        if not h.holds and h.cause:
            lines += ["", f"{h.ladder} did not come back; {_cell(h.cause)}."]
    if outcome["not_same"]:
        lines += [
            "",
            "## Deciding benchmarks that were not SAME",
            "",
            "What the two files record beside the time (likely cause): the arithmetic on the host, "
            "copies from pageable memory, another library kernel, the median SM clock and board "
            "power, NVML's slowdown reasons, samples below the median clock.",
            "",
            "| benchmark | verdict | change | likely cause |",
            "|---|---|---:|---|",
        ]
        lines += [
            f"| {r['name']} | {r['verdict']}{': ' + _cell(r['error']) if r.get('error') else ''} | "
            f"{_pct(r.get('change'))} | {_cell(r.get('cause') or '-')} |"
            for r in outcome["not_same"]
        ]
    lines += [
        "",
        "## Every verdict",
        "",
        "| benchmark | verdict | statistic | change | threshold | deciding |",
        "|---|---|---|---:|---:|---|",
    ]
    deciding = {r["name"] for r in outcome["deciding"]}
    for r in outcome["rows"]:
        threshold = "-" if "threshold" not in r else f"{r['threshold']:.1%}"
        lines.append(
            f"| {r['name']} | {r['verdict']} | {r.get('statistic', '-')} | {_pct(r.get('change'))} | "
            f"{threshold} | {'yes' if r['name'] in deciding else 'no'} |"
        )
    if command:
        lines += ["", f"Written by `{command}`."]
    return "\n".join(lines) + "\n"
