"""Nsight Compute's source page: per SASS line of a profiled kernel, how many warp instructions
executed it (the SourceCounters section's `Instructions Executed`), and the warp-state samples
taken on it.

What it gives the account (analysis/schedule.py): the path a warp takes through a k-tile where
the SASS alone cannot, a loop nested in the main loop (its trip count is the kernel's, not in the
code) and the unrolled remainders beside it that run or not. The executed counts per warp and
k-tile say how often each line runs.

    ncu -i REPORT.ncu-rep --csv --page source --print-source sass
"""

import csv
import io
import re
import subprocess

from gemm_study.analysis.sass_loop import opcode
from gemm_study.data.errors import InputError
from gemm_study.ncu.session import _check_ncu_output, find_ncu

EXECUTED = "Instructions Executed"
STATE = re.compile(r"^stall_(\w+)$")  # a warp state's samples on the line (all samples)


def export_source(rep, ncu=None):
    """The source page of a report, SASS only, as CSV text."""
    ncu = ncu or find_ncu()
    proc = subprocess.run(
        [ncu, "-i", str(rep), "--csv", "--page", "source", "--print-source", "sass"], capture_output=True, text=True
    )
    _check_ncu_output(proc.returncode, proc.stdout + proc.stderr, "ncu source page export")
    return proc.stdout


def _number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def parse_source_csv(text):
    """[(address, sass text, executed warp instructions, {state: samples})] of the first kernel on
    the page, in address order; InputError where the page has no such table."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"Address"')), None)
    if start is None:
        raise InputError("ncu source page: no table with an 'Address' column (exported with --print-source sass?)")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith('"Kernel Name"')), len(lines))
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:end]))))
    if not rows or EXECUTED not in rows[0] or "Source" not in rows[0]:
        raise InputError(f"ncu source page: no '{EXECUTED}' or 'Source' column")
    out = []
    for row in rows:
        address = row.get("Address", "")
        executed = _number(row.get(EXECUTED))
        if executed is None or not re.fullmatch(r"0x[0-9a-fA-F]+", address.strip()):
            raise InputError(f"ncu source page: line {address!r} has no address or executed count")
        if not (row.get("Source") or "").strip():
            raise InputError(f"ncu source page: line {address} has no SASS")
        states = {m.group(1): _number(v) or 0.0 for k, v in row.items() if k and (m := STATE.match(k))}
        out.append((int(address, 16), " ".join(row["Source"].split()), executed, states))
    return sorted(out)


def aligned_counts(code, lines, per):
    """The executed count of each instruction of `code` ([(offset, text)] of sass.json) from the
    source page's `lines` (parse_source_csv), divided by `per` (warps x k-tiles); None where the
    two do not list the same instructions (another build, another kernel)."""
    if len(code) != len(lines) or not per > 0:
        return None
    base = lines[0][0]
    for (offset, text), (address, line_text, _, _) in zip(code, lines):
        if address - base != offset or opcode(text) != opcode(line_text):
            return None
    return [round(executed / per, 4) for _, _, executed, _ in lines]


def samples_by_opcode(lines, state):
    """{opcode: share of the kernel's samples of `state`} over parse_source_csv's lines (shares
    sum to 1; {} where the state was never sampled), and the state's share of all the samples."""
    per, total, everything = {}, 0.0, 0.0
    for _, text, _, states in lines:
        everything += sum(states.values())
        n = states.get(state, 0.0)
        if n:
            op = opcode(text)
            per[op] = per.get(op, 0.0) + n
            total += n
    if not total:
        return {}, 0.0
    return {op: n / total for op, n in sorted(per.items(), key=lambda kv: -kv[1])}, total / everything
