"""Nsight Compute sessions over gemm-bench --profile, selected by NVTX ranges, and the
comparison of ncu's values with CUPTI's."""
import csv
import glob
import io
import re
import shutil
import subprocess
from pathlib import Path

from .catalogue import load_catalogue
from .errors import InputError

RANGE_IN_NVTX = re.compile(r"gemm:(gemm(?:_e2e)?\.[^:\s\"]+)")


def find_ncu():
    found = shutil.which("ncu")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/local/cuda/bin/ncu") + glob.glob("/opt/nvidia/nsight-compute/*/ncu"))
    if candidates:
        return candidates[-1]
    raise InputError("ncu (Nsight Compute) not found: install it or put it on PATH")


def benchmark_from_range(range_name):
    """gemm.fp32.shared.tile-16.m-512.n-512.k-512 -> gemm/fp32/shared/tile:16/m:512/n:512/k:512."""
    return "/".join(part.replace("-", ":", 1) for part in range_name.split("."))


def range_from_benchmark(name):
    name = re.sub(r"/manual_time$", "", name)
    return name.replace("/", ".").replace(":", "-")


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "all"


def check_shape(text):
    """'MxNxK' with positive integers, or InputError."""
    if not re.fullmatch(r"[1-9]\d*x[1-9]\d*x[1-9]\d*", text or ""):
        raise InputError(f"shape {text!r}: expected MxNxK with positive integers, e.g. 1024x1024x1024")
    return text


def agreement_markdown(table):
    """The CUPTI-vs-ncu table and its tally, as markdown."""
    lines = ["| benchmark | metric | CUPTI | ncu | rule | agree |", "|---|---|---:|---:|---|---|"]
    for row in table:
        agree = {True: "yes", False: "NO", None: "-"}[row["agree"]]
        lines.append(f"| {re.sub(r'/manual_time$', '', row['benchmark'])} | {row['metric']} | "
                     f"{row['cupti']:.6g} | {row['ncu']:.6g} | {row['rule']} | {agree} |")
    checked = [r for r in table if r["agree"] is not None]
    lines.append(f"\n{sum(r['agree'] for r in checked)} of {len(checked)} required agreements hold "
                 f"({len({r['benchmark'] for r in table})} benchmarks).")
    return "\n".join(lines)


def default_metrics():
    return [m.cupti for m in load_catalogue().values() if m.kind == "metric"]


def _check_ncu_output(returncode, output, what):
    if "ERR_NVGPUCTRPERM" in output or "does not have permission" in output:
        raise RuntimeError(f"{what}: ncu cannot read the GPU performance counters "
                           "(ERR_NVGPUCTRPERM): run as root or allow profiling for all users")
    if "LibraryNotLoaded" in output or "Failed to initialize the profiler" in output:
        raise RuntimeError(f"{what}: ncu could not start its profiler on this machine:\n{output[-2000:]}")
    if returncode != 0:
        raise RuntimeError(f"{what}: ncu exited with {returncode}:\n{output[-3000:]}")


def run_session(bench, benchmark_filter, shapes, precisions, out_stem, metrics=None,
                ncu_set=None, sections=(), clock_control="none", ncu=None):
    """Profiles every benchmark matching the filter, one launch each (its 'timed' range).
    Returns the .ncu-rep path and the command line that was run."""
    ncu = ncu or find_ncu()
    if not Path(bench).is_file():
        raise InputError(f"{bench}: gemm-bench not found (build it first)")
    cmd = [ncu, "--nvtx", "--nvtx-include", r"regex:gemm@gemm.*/timed/",
           "--clock-control", clock_control, "-o", str(out_stem), "-f"]
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
        raise RuntimeError(f"ncu wrote no report ({rep}); output:\n{(proc.stdout + proc.stderr)[-2000:]}")
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


def crosscheck(cupti_rows, ncu_by_benchmark):
    """Per benchmark and catalogue metric: CUPTI value, ncu value and whether they agree:
    exact counts must be equal, occupancy within one percentage point; the rest is shown."""
    catalogue = {m.cupti: m for m in load_catalogue().values() if m.kind == "metric"}
    table = []
    for name, cupti in cupti_rows.items():
        ncu_values = ncu_by_benchmark.get(re.sub(r"/manual_time$", "", name))
        if not ncu_values:
            continue
        for cupti_name, metric in catalogue.items():
            if metric.name not in cupti or cupti_name not in ncu_values:
                continue
            a, b = cupti[metric.name], ncu_values[cupti_name]
            if metric.stability == "exact":
                rule, agree = "equal", a == b
            elif metric.name == "achieved_occupancy":
                rule, agree = "within 1 point", abs(a - b) <= 1.0
            else:
                rule, agree = "shown", None
            table.append({"benchmark": name, "metric": metric.name, "cupti": a, "ncu": b,
                          "rule": rule, "agree": agree})
    return table
