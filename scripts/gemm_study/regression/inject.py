"""Deliberate slowdowns for recording a history whose regressions are known (scripts/
record_history.sh): a clock64 spin at the start of one family's kernel, in a copy of the tree,
long enough to cost a chosen share of the kernel's cycles in the baseline run.

  spin per block = share x kernel cycles / waves,   waves = ceil(blocks / (SMs x blocks per SM))

One thread of each block spins, so the block finishes that many cycles later (its other warps
wait for it at the first barrier, or it ends last) while its neighbours on the SM keep issuing;
every wave of blocks is late by the spin. The measured step is the truth the history is checked
against; the calibration only aims at it.
The command line is gemm-inject (cli/inject.py).
"""

import math
import os
import re
import shutil
from pathlib import Path

import numpy as np

from gemm_study.data.errors import InputError
from gemm_study.data.results import context_value, load_results, read_rows, repetition_cycles

MARK = "injected slowdown (scripts/record_history.sh)"
BACKUP = ".before-injection"


def kernel_file(tree, family):
    """kernels/<folder>/<family>.cu of the tree, which must define exactly one __global__
    function (a kernel shared with other families through a header would slow them too)."""
    found = sorted(Path(tree, "kernels").glob(f"*/{family}.cu"))
    if len(found) != 1:
        raise InputError(f"{family}: expected one kernels/*/{family}.cu in {tree}, found {len(found)}")
    kernels = len(re.findall(r"\b__global__\b", found[0].read_text()))
    if kernels != 1:
        raise InputError(
            f"{found[0]}: {kernels} __global__ functions; a family to slow down needs its own single kernel"
        )
    return found[0]


def body_start(source):
    """The offset just after the opening brace of the file's __global__ function: the first '{'
    at parenthesis depth 0 after the keyword (__launch_bounds__(...) and the parameters have
    parentheses, template arguments have none that matter here)."""
    at = source.index("__global__")
    depth = 0
    for offset in range(at, len(source)):
        ch = source[offset]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "{" and depth == 0:
            return offset + 1
        elif ch == ";" and depth == 0:
            break
    raise InputError("no kernel body after __global__")


def spin_code(cycles):
    return (
        f"\n  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {{  // {MARK}\n"
        f"    const long long spin_start = clock64();\n"
        f"    while (clock64() - spin_start < {int(cycles)}LL) {{\n    }}\n  }}\n"
    )


def apply(tree, family, cycles):
    """Adds the spin to the family's kernel (keeping the original beside it); returns the file."""
    path = kernel_file(tree, family)
    source = path.read_text()
    if MARK in source:
        raise InputError(f"{path}: already slowed down")
    backup = path.with_name(path.name + BACKUP)
    if not backup.exists():
        shutil.copy2(path, backup)
    at = body_start(source)
    path.write_text(source[:at] + spin_code(cycles) + source[at:])
    return path


def remove(tree):
    """Puts every slowed-down file of the tree back; returns the files restored. Each restored
    file is stamped with the current time: the backup kept the original's older time, and a build
    would take its objects (compiled with the spin) for up to date."""
    restored = []
    for backup in sorted(Path(tree, "kernels").glob(f"*/*{BACKUP}")):
        target = backup.with_name(backup.name[: -len(BACKUP)])
        shutil.move(backup, target)
        os.utime(target)
        restored.append(target)
    return restored


def waves(row, context):
    """Waves of blocks of one launch: blocks / (SMs x resident blocks per SM), rounded up; the
    resident blocks from the theoretical occupancy the run recorded (1 where it did not)."""
    variant = row.get("variant_object") or {}
    grid = variant.get("grid") or [1, 1, 1]
    blocks = int(np.prod(grid))
    threads = float(variant.get("threads_per_block") or row.get("threads_per_block") or 1)
    sms = context_value(context, "gpu_sm_count", "sm_count", default=1)
    max_threads = context_value(context, "gpu_max_threads_per_sm", "max_threads_per_sm", default=threads)
    occupancy = row.get("theoretical_occupancy")
    per_sm = max(1, int(occupancy / 100 * max_threads // threads)) if occupancy else 1
    return max(1, math.ceil(blocks / (sms * per_sm)))


def calibrate(baseline, family, share):
    """(benchmark, spin cycles per block, kernel kcycles, waves) for the family's tracked FP32
    benchmark in the baseline run (cycles per repetition, median)."""
    context, entries = load_results(baseline)
    rows = [
        r
        for r in read_rows(baseline, entries)
        if r["family"] == family and r["precision"] == "fp32" and r["error"] is None
    ]
    for row in rows:
        row["variant_object"] = next(
            (e.get("variant") for e in entries if e.get("run_name", e.get("name")) == row["name"]), None
        )
    cycles = [c for c in map(repetition_cycles, rows) if c is not None]
    if not rows or not cycles:
        raise InputError(f"{baseline}: no FP32 run of {family} with clocks to calibrate against")
    names = sorted({r["name"] for r in rows})
    if len(names) != 1:
        raise InputError(f"{baseline}: {family} has {len(names)} FP32 benchmarks ({', '.join(names)}); track one")
    kcycles = float(np.median(cycles))
    count = waves(rows[0], context)
    return names[0], int(round(share * kcycles * 1e3 / count)), kcycles, count
