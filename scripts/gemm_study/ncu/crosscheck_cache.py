"""When the CUPTI-vs-ncu cross-check needs to run, and CUPTI's side taken from a study.

The cross-check tests the counter collection (CUPTI's range profiler as gemm-bench drives it)
against Nsight Compute, not the kernels: its verdict holds until the driver, the CUDA toolkit,
the GPU, the metric catalogue or the collection code changes. Its key records those; a study
that finds a cross-check with the same key in its folder keeps it instead of running ncu again.
"""

import hashlib
import json
import shutil
import subprocess

from gemm_study.data.results import load_results, own_context

# The files whose change can change what CUPTI reports: the catalogue and the code that collects.
COLLECTION_FILES = ("profiling/metric_catalogue.inc", "profiling/counter_session.cpp", "bench/counters.cpp")


def _tool_line(command):
    """The last non-empty line a version command prints, or 'unknown'."""
    if not shutil.which(command[0]):
        return "unknown"
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    return lines[-1] if proc.returncode == 0 and lines else "unknown"


def _files_digest(root):
    digest = hashlib.sha256()
    for name in COLLECTION_FILES:
        path = root / name
        digest.update(name.encode())
        digest.update(path.read_bytes() if path.is_file() else b"absent")
    return digest.hexdigest()[:16]


def key(args, root):
    """What the cross-check's verdict depends on, as a dict of strings."""
    return {
        "gpu_and_driver": _tool_line(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]),
        "cuda_toolkit": _tool_line(["nvcc", "--version"]),
        "files": _files_digest(root),
        "shape": args.shape,
        "precisions": args.precisions,
        "tags": args.tags,
        "also_tagged": args.also_tagged,
        "limit": str(args.limit),
    }


def completed(pre_key, context):
    """The key as recorded, with the results' own account of the CUDA versions beside it."""
    recorded = dict(pre_key)
    for name in ("cuda_driver_version", "cuda_runtime_version", "gpu_name"):
        if name in context:
            recorded[f"context_{name}"] = str(context[name])
    return recorded


def recorded_key(folder):
    """The key recorded with the cross-check in `folder`, or None."""
    path = folder / "ncu_crosscheck.json"
    try:
        recorded = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    key_found = recorded.get("key") if isinstance(recorded, dict) else None
    return key_found if isinstance(key_found, dict) else None


def kept(out, current):
    """The recorded key of the cross-check measured in `out` if it matches `current` (its
    measurements can be read again under the current rule), else None."""
    if not (out / "ncu_crosscheck.md").is_file():
        return None
    old = recorded_key(out)
    if old is None or any(old.get(name) != value for name, value in current.items()):
        return None
    return old


def _base_name(entry):
    name = str(entry.get("run_name", entry.get("name", "")))
    return name[: -len("/manual_time")] if name.endswith("/manual_time") else name


def _complete(entry):
    """Whether a study's entry carries the counters a cross-check compares: all of them, SASS-level
    ones included (not capped), and no error."""
    return (
        entry.get("run_type") != "aggregate"
        and not entry.get("error_occurred")
        and entry.get("counters_available") == 1
        and not entry.get("counters_capped")
    )


def copy_rows(study_results, benchmarks, out_path):
    """Writes to `out_path` a results file holding the study's entries of `benchmarks` (its
    context kept); returns the benchmarks it lacks complete counters for."""
    context, entries = load_results(study_results)
    wanted = set(benchmarks)
    chosen = [e for e in entries if _base_name(e) in wanted and _complete(e)]
    found = {_base_name(e) for e in chosen}
    out_path.write_text(json.dumps({"context": own_context(context), "benchmarks": chosen}, indent=1))
    return [name for name in benchmarks if name not in found]


def merge_files(into_path, more_path):
    """Appends the entries of `more_path` to the results file `into_path`."""
    merged = json.loads(into_path.read_text())
    merged["benchmarks"] += json.loads(more_path.read_text())["benchmarks"]
    into_path.write_text(json.dumps(merged, indent=1))
    more_path.unlink()
