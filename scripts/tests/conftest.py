import importlib
import json
import os
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def require(module, package):
    """Skips the calling test module where `package` (which provides `module`) is not installed:
    it is optional for the study (scripts/bootstrap installs it only with --test). In CI, which
    installs it, its absence fails instead, so the tests that need it always run there."""
    try:
        importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI") == "true":
            raise RuntimeError(f"CI must have {package} (scripts/bootstrap --test installs it)") from None
        pytest.skip(f"{package} not installed (scripts/bootstrap --test installs it)", allow_module_level=True)


def command(name):
    """The path of an installed command (gemm-compare, ...), beside the interpreter running the tests."""
    return str(Path(sys.executable).parent / name)


@pytest.fixture
def recorded():
    """A real gemm-bench run (H200, 512^3, counters on), trimmed to its complete entries."""
    return DATA / "h200_512_partial.json"


def make_run(path, times_by_name, counters_by_name=None, context=None, repetitions=10):
    """A gemm-bench-shaped results file with per-repetition rows (synthetic times)."""
    base_context = json.loads((DATA / "h200_512_partial.json").read_text())["context"]
    base_context.update(context or {})
    rows = []
    for name, times in times_by_name.items():
        for rep, t in enumerate(times[:repetitions]):
            row = {
                "name": name + "/manual_time",
                "run_name": name + "/manual_time",
                "run_type": "iteration",
                "repetitions": repetitions,
                "repetition_index": rep,
                "threads": 1,
                "iterations": 10,
                "real_time": t,
                "cpu_time": t,
                "time_unit": "ms",
                "median_ms": t,
                "gflops": 1.0 / t,
            }
            row.update((counters_by_name or {}).get(name, {}))
            rows.append(row)
    path.write_text(json.dumps({"context": base_context, "benchmarks": rows}))
    return path


# ----------------------------------------------------------------------------- kernel contract


def contract_entry(entry, tags, params=None, **facts):
    """A legacy gemm-bench entry given the `variant` object of the kernel contract."""
    from gemm_study.data.results import legacy_facts, parse_name

    parsed = parse_name(entry["run_name"])
    legacy = legacy_facts(parsed)
    variant = {
        "name": parsed["variant"],
        "family": parsed["family"],
        "precision": parsed["precision"],
        "compute": legacy["compute"],
        "backend": legacy["backend"],
        "params": params
        if params is not None
        else {k: int(v.split("x")[0]) for k, v in legacy["param_values"].items()},
        "tags": list(tags),
        "end_to_end": parsed["end_to_end"],
        "shape": {"m": parsed["m"], "n": parsed["n"], "k": parsed["k"]},
    }
    for key in ("threads_per_block", "outputs_per_thread", "warps_launched"):
        if key in legacy:
            variant[key] = legacy[key]
    variant.update(facts)
    return dict(entry, variant=variant)


def ladder_entry(template, variant_name, rung, rung_name, gflops, counters, compute="fp32", tags=("ladder",)):
    """A synthetic ladder benchmark at the template's shape and precision."""
    from gemm_study.data.results import parse_name

    parsed = parse_name(template["run_name"])
    name = f"gemm/{parsed['precision']}/{variant_name}/m:{parsed['m']}/n:{parsed['n']}/k:{parsed['k']}/manual_time"
    family = variant_name.split("/")[0]
    flops = 2.0 * parsed["m"] * parsed["n"] * parsed["k"]
    ms = flops / gflops / 1e6
    entry = {key: value for key, value in template.items() if key not in ("variant",)}
    entry.update(name=name, run_name=name, real_time=ms, median_ms=ms, gflops=gflops, **counters)
    entry["variant"] = {
        "name": variant_name,
        "family": family,
        "precision": parsed["precision"],
        "compute": compute,
        "backend": "cuda_kernel",
        "params": {"bm": 128},
        "tags": list(tags),
        "rung": rung,
        "rung_name": rung_name,
        "threads_per_block": 256,
        "outputs_per_thread": 64,
        "warps_launched": 128,
    }
    return entry


def seed_tags(entry):
    """The tags gemm-bench gives the write-ups' kernels, cuBLAS and the CPU baseline."""
    variant = entry["run_name"].split("/")[2]
    if variant.startswith("cublas"):
        return ("reference", "summary")
    if variant.startswith("cpu"):
        return ("cpu",)
    params = entry["run_name"].split("/")[3]
    sweep = params.startswith(("tile:", "block:"))
    return ("seed", "tile_sweep", "crosscheck") if sweep else ("seed",)


def write_contract_run(path, extra_entries=(), context=None, transform=None):
    """The recorded H200 512^3 run rewritten in the kernel contract, plus extra entries."""
    data = json.loads((DATA / "h200_512_partial.json").read_text())
    entries = []
    for entry in data["benchmarks"]:
        if entry.get("error_occurred") or "run_name" not in entry:
            continue
        new = contract_entry(entry, seed_tags(entry))
        entries.append(transform(new) if transform else new)
    data["benchmarks"] = entries + list(extra_entries)
    data["context"].update(
        {"peak_tf32_gflops": "494700", "l2_state": "warm", "gpu_max_threads_per_sm": "2048"}, **(context or {})
    )
    path.write_text(json.dumps(data))
    return path


def recorded_entry(run_name):
    data = json.loads((DATA / "h200_512_partial.json").read_text())
    return next(e for e in data["benchmarks"] if e.get("run_name") == run_name)
