"""Nsight Compute sessions over gemm-bench --profile, selected by NVTX ranges, their reports read
back (Nsight Compute's own reader where it is installed, the CSV export otherwise), and the L2
state the cross-check's ncu sessions must reproduce (crosscheck.py holds the rule itself)."""

import csv
import glob
import io
import re
import shutil
import subprocess
from pathlib import Path

from gemm_study.data import names
from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.errors import ExternalToolError, InputError
from gemm_study.ncu import report_reader as ncu_report_reader
from gemm_study.ncu.crosscheck import agreement_markdown, crosscheck  # noqa: F401  (the rule, for report.py)

RANGE_IN_NVTX = re.compile(r"gemm:(gemm(?:_e2e)?\.[^:\s\"]+)")
# The L2 a counter pass of gemm-bench starts with -> the ncu --cache-control that reproduces it:
# 'none' leaves L2 as the previous launch left it (warm), 'all' flushes it before the profiled
# kernel (cold).
CACHE_CONTROL = {"warm": "none", "cold": "all"}
# Counters of the cache state. ncu's kernel replay saves and restores device memory around its
# passes, which refills L2 with whatever it restored (measured on an H100: an FP64 1024^3 GEMM
# read A and B from HBM again under --cache-control none), so these are profiled in a session of
# their own with application replay: each pass is a run of gemm-bench --profile, whose profiled
# launch follows one unprofiled launch of the same kernel, and sees L2 as that launch left it.
CACHE_STATE_METRICS = (
    "dram_read_bytes",
    "dram_write_bytes",
    "l2_hit_rate",
    "l2_read_hits",
    "l2_read_misses",
    "l2_read_sectors",
)
# What gemm-bench's context l2_state_detail says when it warms L2 before a counter pass only
# where A, B and C fit in L2 (bench/main.cpp).
WARMS_ONLY_WHAT_FITS = "fit in L2"


def find_ncu():
    found = shutil.which("ncu")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/local/cuda/bin/ncu") + glob.glob("/opt/nvidia/nsight-compute/*/ncu"))
    if candidates:
        return candidates[-1]
    raise InputError("ncu (Nsight Compute) not found: install it or put it on PATH")


def check_tools(bench, ncu=None):
    """The ncu to run, once it and gemm-bench are known to exist (before anything runs or is
    written); InputError naming the missing one."""
    ncu = ncu or find_ncu()
    if not Path(bench).is_file():
        raise InputError(f"{bench}: gemm-bench not found (build it first)")
    return ncu


def benchmark_from_range(range_name):
    """gemm.fp32.shared.tile-16.m-512.n-512.k-512 -> gemm/fp32/shared/tile:16/m:512/n:512/k:512."""
    return names.benchmark_from_nvtx(range_name)


def range_from_benchmark(name):
    return names.nvtx_range(name)


def cache_control_for(l2_state):
    """ncu --cache-control matching gemm-bench's context l2_state ('warm...' or 'cold...')."""
    state = (l2_state or "").strip().lower()
    for prefix, control in CACHE_CONTROL.items():
        if state.startswith(prefix):
            return control
    raise InputError(f"l2_state {l2_state!r} in the results context: expected 'warm' or 'cold'")


def counter_pass_cache_control(context, working_set, l2_bytes):
    """The ncu --cache-control that gives the L2 state one of gemm-bench's counter passes starts
    with, for a benchmark of `working_set` bytes (A+B+C) on a GPU with `l2_bytes` of L2.

    --flush-l2 (l2_state 'cold'): flushed before every pass, 'all'. Warm: each pass follows an
    unprofiled launch, 'none' -- except where the harness warms only working sets that fit in L2
    (its l2_state_detail says so) and this one does not: such a pass follows the previous pass,
    and a pass does not start with L2 as the previous one left it (profiling/counter_session.cpp:
    a 1024^3 FP32 GEMM profiled pass after pass read A and B from HBM every time), 'all'."""
    control = cache_control_for(context.get("l2_state"))
    detail = str(context.get("l2_state_detail", ""))
    if control == "none" and WARMS_ONLY_WHAT_FITS in detail and working_set > l2_bytes > 0:
        return "all"
    return control


def gpu_present():
    """Whether nvidia-smi lists at least one GPU (False without the driver or a device)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and "GPU" in proc.stdout


def parse_listing(text, also_tagged=()):
    """Benchmark names from `gemm-bench --list --tags=...` lines 'NAME<TAB>tags=a,b'; with
    `also_tagged`, only those carrying at least one of these tags too."""
    out = []
    for line in text.splitlines():
        name, _, rest = line.partition("\t")
        tags = set(rest.strip().removeprefix("tags=").split(","))
        if names.parse_benchmark(name.strip()) is not None and (not also_tagged or tags & set(also_tagged)):
            out.append(names.strip_manual_time(name.strip()))
    return out


def exact_filter(benchmarks):
    """A --benchmark_filter regex that selects exactly these benchmarks."""
    return "^(" + "|".join(re.escape(b) for b in benchmarks) + ")(/manual_time)?$"


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "all"


def default_metrics():
    return [m.cupti for m in load_catalogue().values() if m.kind == "metric"]


def cache_state_metrics():
    """The ncu names of CACHE_STATE_METRICS."""
    catalogue = load_catalogue()
    return [catalogue[name].cupti for name in CACHE_STATE_METRICS]


def merge_by_benchmark(base, override):
    """Per benchmark, base's values with override's on top (sum_by_benchmark results)."""
    merged = {name: dict(values) for name, values in base.items()}
    for name, values in override.items():
        merged.setdefault(name, {}).update(values)
    return merged


def _check_ncu_output(returncode, output, what):
    if "ERR_NVGPUCTRPERM" in output or "does not have permission" in output:
        raise ExternalToolError(
            f"{what}: ncu cannot read the GPU performance counters "
            "(ERR_NVGPUCTRPERM): run as root or allow profiling for all users"
        )
    if "LibraryNotLoaded" in output or "Failed to initialize the profiler" in output:
        raise ExternalToolError(f"{what}: ncu could not start its profiler on this machine: {last_line(output)}")
    if returncode != 0:
        raise ExternalToolError(f"{what}: ncu exited with {returncode}: {last_line(output)}")


def last_line(output):
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def run_session(
    bench,
    benchmark_filter,
    shapes,
    precisions,
    out_stem,
    metrics=None,
    ncu_set=None,
    sections=(),
    clock_control="none",
    ncu=None,
    cache_control="none",
    replay_mode="kernel",
):
    """Profiles every benchmark matching the filter, one launch each (its 'timed' range).
    Returns the .ncu-rep path and the command line that was run."""
    ncu = check_tools(bench, ncu)
    cmd = [
        ncu,
        "--nvtx",
        "--nvtx-include",
        r"regex:gemm@gemm.*/timed/",
        "--clock-control",
        clock_control,
        "--cache-control",
        cache_control,
        "--replay-mode",
        replay_mode,
        "-o",
        str(out_stem),
        "-f",
    ]
    if ncu_set:
        cmd += ["--set", ncu_set]
    for section in sections:
        cmd += ["--section", section]
    if metrics or not (ncu_set or sections):
        cmd += ["--metrics", ",".join(metrics or default_metrics())]
    cmd += [
        str(bench),
        "--profile",
        f"--shapes={shapes}",
        f"--precisions={precisions}",
        "--end-to-end=off",
        f"--benchmark_filter={benchmark_filter}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    _check_ncu_output(proc.returncode, proc.stdout + proc.stderr, "ncu session")
    rep = Path(str(out_stem) + ".ncu-rep")
    if not rep.is_file():
        raise ExternalToolError(f"ncu wrote no report ({rep}): {last_line(proc.stdout + proc.stderr)}")
    return rep, cmd


def export_raw(rep, metrics=None, ncu=None):
    ncu = ncu or find_ncu()
    cmd = [ncu, "-i", str(rep), "--csv", "--page", "raw", "--print-units", "base"]
    if metrics:
        cmd += ["--metrics", ",".join(metrics)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    _check_ncu_output(proc.returncode, proc.stdout + proc.stderr, "ncu export")
    return proc.stdout


def read_kernels(rep, csv_text, ncu=None):
    """(rows, reader): the report's kernels as parse_raw_csv gives them, read with Nsight Compute's
    own reader where it loads, else parsed from `csv_text` (its raw CSV export); `reader` says
    which was used, and why not the first."""
    module, why = ncu_report_reader.load_module(ncu)
    if module:
        return ncu_report_reader.read_report(rep, module), "Nsight Compute's report reader (ncu_report)"
    return parse_raw_csv(csv_text), f"its CSV export ({why})"


def parse_raw_csv(text):
    """Rows of `ncu --csv --page raw`: one dict per profiled kernel, with 'benchmark' taken from
    its NVTX range and numeric metric values (ncu prints thousands separators)."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    if len(lines) < 2:
        raise InputError("not an ncu raw CSV export (no header and units rows)")
    reader = list(csv.reader(io.StringIO("\n".join(lines))))
    header, body = reader[0], reader[2:]
    rows = []
    for values in body:
        record = dict(zip(header, values))
        nvtx = " ".join(v for k, v in record.items() if "Range" in k)
        match = RANGE_IN_NVTX.search(nvtx)
        out = {
            "benchmark": benchmark_from_range(match.group(1)) if match else None,
            "kernel": record.get("Kernel Name", ""),
        }
        for key, value in record.items():
            if "__" in key:
                try:
                    out[key] = float(value.replace(",", ""))
                except ValueError:
                    pass
        rows.append(out)
    return rows


def sum_by_benchmark(rows):
    """Kernels of one benchmark (cuBLAS may launch several) summed; percentages averaged."""
    out = {}
    for row in rows:
        if not row["benchmark"]:
            continue
        agg = out.setdefault(row["benchmark"], {"kernels": 0})
        agg["kernels"] += 1
        for key, value in row.items():
            if key in ("benchmark", "kernel"):
                continue
            if key.endswith(".pct") or "pct_of_peak" in key:
                agg[key] = agg.get(key, 0.0) + (value - agg.get(key, 0.0)) / agg["kernels"]
            else:
                agg[key] = agg.get(key, 0.0) + value
    return out
