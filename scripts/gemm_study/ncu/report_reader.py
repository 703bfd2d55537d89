"""Nsight Compute reports (.ncu-rep) read with NVIDIA's own Python interface, `ncu_report`: the
`ncu-report` package (pip install ncu-report), or the copy each Nsight Compute installation
ships under extras/python (the GPU machine's, which has no network).

It gives the rows ncu.parse_raw_csv gives for `ncu -i REPORT --csv --page raw --print-units
base`, one per profiled kernel: its benchmark (from the kernel's NVTX range), its name and every
numeric metric in base units. Counts are the same numbers; ratios and percentages come at full
precision, where the CSV prints two decimals."""

import glob
import importlib
import shutil
import sys
from pathlib import Path

from gemm_study.data import names
from gemm_study.data.errors import InputError

BENCHMARK_RANGE_PREFIXES = ("gemm.", "gemm_e2e.")
NVTX_DOMAIN = "gemm"
# Where Nsight Compute installations keep extras/python, besides next to the ncu on PATH.
INSTALL_GLOBS = ("/usr/local/cuda*/nsight-compute-*", "/opt/nvidia/nsight-compute/*")


def extras_folders(ncu=None):
    """extras/python folders of the Nsight Compute installations found, newest name last."""
    found = []
    tool = ncu or shutil.which("ncu")
    if tool:
        here = Path(tool).resolve().parent
        found += [here / "extras" / "python", here.parent / "extras" / "python"]
    for pattern in INSTALL_GLOBS:
        found += [Path(p) / "extras" / "python" for p in sorted(glob.glob(pattern))]
    return [folder for folder in dict.fromkeys(found) if (folder / "ncu_report.py").is_file()]


def load_module(ncu=None):
    """(the ncu_report module, '') or (None, why it cannot be loaded)."""
    try:
        return importlib.import_module("ncu_report"), ""
    except ImportError as error:
        why = str(error)
    for folder in reversed(extras_folders(ncu)):
        sys.path.insert(0, str(folder))
        try:
            return importlib.import_module("ncu_report"), ""
        except ImportError as error:
            sys.path.remove(str(folder))
            why = f"{folder}: {error}"
    return None, (
        f"Nsight Compute's report reader is not importable ({why}): pip install ncu-report, "
        "or install Nsight Compute, which ships it under extras/python"
    )


def benchmark_of(action):
    """The benchmark whose NVTX range (domain gemm) was open around this kernel, or None."""
    state = action.nvtx_state()
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        if domain.name() != NVTX_DOMAIN:
            continue
        for range_name in domain.push_pop_ranges():
            if range_name.startswith(BENCHMARK_RANGE_PREFIXES):
                return names.benchmark_from_nvtx(range_name)
    return None


def _numeric_metrics(action):
    values = {}
    for name in action.metric_names():
        if "__" not in name:
            continue
        value = action.metric_by_name(name).value()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values[name] = float(value)
    return values


def read_report(path, module):
    """One dict per profiled kernel: 'benchmark', 'kernel' and its numeric metrics (base units).
    InputError for a file that is missing or holds no profiled kernel."""
    try:
        context = module.load_report(str(path))
    except (FileNotFoundError, RuntimeError) as error:
        raise InputError(f"{path}: {error}") from None
    rows = []
    for r in range(context.num_ranges()):
        report_range = context.range_by_idx(r)
        for a in range(report_range.num_actions()):
            action = report_range.action_by_idx(a)
            row = {"benchmark": benchmark_of(action), "kernel": action.name(module.IAction.NameBase_DEMANGLED)}
            row.update(_numeric_metrics(action))
            rows.append(row)
    if not rows:
        raise InputError(f"{path}: no profiled kernel in it (not an Nsight Compute report, or an empty one)")
    return rows
