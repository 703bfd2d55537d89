"""Nsight Compute sessions over gemm-bench --profile, selected by NVTX ranges, and the
comparison of ncu's values with CUPTI's (in the same L2 state as gemm-bench's counters)."""
import csv
import glob
import io
import re
import shutil
import subprocess
from pathlib import Path

from . import names
from .catalogue import load_catalogue
from .errors import ExternalToolError, InputError
from .footprint import working_set_bytes

RANGE_IN_NVTX = re.compile(r"gemm:(gemm(?:_e2e)?\.[^:\s\"]+)")
# gemm-bench's context l2_state -> the ncu --cache-control that reproduces it: 'none' leaves
# L2 as the previous launch left it (warm), 'all' flushes it before each profiled kernel (cold).
CACHE_CONTROL = {"warm": "none", "cold": "all"}
# Counters of the cache state. ncu's kernel replay saves and restores device memory around its
# passes, which refills L2 with whatever it restored (measured on an H100: an FP64 1024^3 GEMM
# read A and B from HBM again under --cache-control none), so these are profiled in a session of
# their own with application replay: they fit in one pass, and the launch sees L2 as the
# benchmark left it.
CACHE_STATE_METRICS = ("dram_read_bytes", "dram_write_bytes", "l2_hit_rate")
# Required agreements of the noisy counters (the exact ones must be equal). DRAM bytes: within 10%
# of each other or 1 MiB, whichever is larger; where the working set A+B+C fits in L2, within a
# third of the working set instead if that is larger (footprint.py). There a warm launch reads a
# residue and a cold one reads A and B, two thirds of A+B+C: a third is half that gap, the line between
# the two cache states. The residue itself moves with write-back timing and the profilers' own
# set-up (H100, 1024^3 FP64, warm: CUPTI read 1 to 5.6 MiB more than ncu for every kernel, up to
# 23% of A+B+C, ncu up to 5%), so a tighter rule would compare profilers, not cache states.
# The L2 hit rate: within 5 percentage points. Occupancy: 1 point.
DRAM_RELATIVE_TOLERANCE = 0.10
DRAM_WORKING_SET_SHARE = 1 / 3
DRAM_ABSOLUTE_TOLERANCE_BYTES = 1 << 20
L2_HIT_RATE_TOLERANCE_POINTS = 5.0
OCCUPANCY_TOLERANCE_POINTS = 1.0


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


def parse_listing(text):
    """Benchmark names from `gemm-bench --list --tags=...` lines 'NAME<TAB>tags=a,b'."""
    out = []
    for line in text.splitlines():
        name = line.split("\t", 1)[0].strip()
        if names.parse_benchmark(name) is not None:
            out.append(names.strip_manual_time(name))
    return out


def exact_filter(benchmarks):
    """A --benchmark_filter regex that selects exactly these benchmarks."""
    return "^(" + "|".join(re.escape(b) for b in benchmarks) + ")(/manual_time)?$"


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "all"


def agreement_markdown(table):
    """The CUPTI-vs-ncu table and its tally, as markdown."""
    lines = ["| benchmark | metric | CUPTI | ncu | rule | agree |", "|---|---|---:|---:|---|---|"]
    for row in table:
        agree = {True: "yes", False: "NO", None: "-"}[row["agree"]]
        lines.append(f"| {names.strip_manual_time(row['benchmark'])} | {row['metric']} | "
                     f"{row['cupti']:.6g} | {row['ncu']:.6g} | {row['rule']} | {agree} |")
    checked = [r for r in table if r["agree"] is not None]
    lines.append(f"\n{sum(r['agree'] for r in checked)} of {len(checked)} required agreements hold "
                 f"({len({r['benchmark'] for r in table})} benchmarks).")
    return "\n".join(lines)


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
        raise ExternalToolError(f"{what}: ncu cannot read the GPU performance counters "
                                "(ERR_NVGPUCTRPERM): run as root or allow profiling for all users")
    if "LibraryNotLoaded" in output or "Failed to initialize the profiler" in output:
        raise ExternalToolError(f"{what}: ncu could not start its profiler on this machine: "
                                f"{last_line(output)}")
    if returncode != 0:
        raise ExternalToolError(f"{what}: ncu exited with {returncode}: {last_line(output)}")


def last_line(output):
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def run_session(bench, benchmark_filter, shapes, precisions, out_stem, metrics=None,
                ncu_set=None, sections=(), clock_control="none", ncu=None, cache_control="none",
                replay_mode="kernel"):
    """Profiles every benchmark matching the filter, one launch each (its 'timed' range).
    Returns the .ncu-rep path and the command line that was run."""
    ncu = check_tools(bench, ncu)
    cmd = [ncu, "--nvtx", "--nvtx-include", r"regex:gemm@gemm.*/timed/",
           "--clock-control", clock_control, "--cache-control", cache_control,
           "--replay-mode", replay_mode, "-o", str(out_stem), "-f"]
    if ncu_set:
        cmd += ["--set", ncu_set]
    for section in sections:
        cmd += ["--section", section]
    if metrics or not (ncu_set or sections):
        cmd += ["--metrics", ",".join(metrics or default_metrics())]
    cmd += [str(bench), "--profile", f"--shapes={shapes}", f"--precisions={precisions}",
            "--end-to-end=off", f"--benchmark_filter={benchmark_filter}"]
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
        out = {"benchmark": benchmark_from_range(match.group(1)) if match else None,
               "kernel": record.get("Kernel Name", "")}
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


def working_set_of(benchmark):
    """A, B and C once each, for a benchmark name; 0 when the name is not one of ours."""
    parsed = names.parse_benchmark(benchmark)
    return working_set_bytes(parsed) if parsed else 0


def agreement_rule(metric, cupti, ncu_value, working_set=0, l2_bytes=0):
    """(rule, agree) for one catalogue metric: exact counts equal; occupancy, DRAM bytes and the
    L2 hit rate within their tolerances; the rest is shown (agree None). `working_set`: the
    benchmark's A+B+C bytes; `l2_bytes`: the GPU's L2, for the DRAM rule at L2-resident sizes."""
    if metric.stability == "exact":
        return "equal", cupti == ncu_value
    if metric.name == "achieved_occupancy":
        return (f"within {OCCUPANCY_TOLERANCE_POINTS:g} point",
                abs(cupti - ncu_value) <= OCCUPANCY_TOLERANCE_POINTS)
    if metric.name.startswith("dram_") and metric.name.endswith("_bytes"):
        floor, why = DRAM_ABSOLUTE_TOLERANCE_BYTES, "1 MiB"
        if 0 < working_set <= l2_bytes and DRAM_WORKING_SET_SHARE * working_set > floor:
            floor, why = DRAM_WORKING_SET_SHARE * working_set, "1/3 of A+B+C, which fit in L2"
        allowed = max(DRAM_RELATIVE_TOLERANCE * max(abs(cupti), abs(ncu_value)), floor)
        return (f"within {DRAM_RELATIVE_TOLERANCE:.0%} or {floor / 2**20:.3g} MiB ({why})",
                abs(cupti - ncu_value) <= allowed)
    if metric.name == "l2_hit_rate":
        return (f"within {L2_HIT_RATE_TOLERANCE_POINTS:g} points",
                abs(cupti - ncu_value) <= L2_HIT_RATE_TOLERANCE_POINTS)
    return "shown", None


def crosscheck(cupti_rows, ncu_by_benchmark, l2_bytes=0):
    """Per benchmark and catalogue metric: CUPTI value, ncu value and whether they agree.
    `l2_bytes`: the GPU's L2 size (the results context's gpu_l2_bytes), for the DRAM rule."""
    catalogue = {m.cupti: m for m in load_catalogue().values() if m.kind == "metric"}
    table = []
    for name, cupti in cupti_rows.items():
        ncu_values = ncu_by_benchmark.get(names.strip_manual_time(name))
        if not ncu_values:
            continue
        for cupti_name, metric in catalogue.items():
            if metric.name not in cupti or cupti_name not in ncu_values:
                continue
            a, b = cupti[metric.name], ncu_values[cupti_name]
            if a is None or a != a:  # NaN: this benchmark has no such counter
                continue
            rule, agree = agreement_rule(metric, a, b, working_set_of(name), l2_bytes)
            table.append({"benchmark": name, "metric": metric.name, "cupti": a, "ncu": b,
                          "rule": rule, "agree": agree})
    return table
