"""Reading gemm-bench's Google Benchmark JSON: validation with clear errors, name parsing,
and a tidy pandas table (one row per benchmark run)."""
import json
import math
import re
from pathlib import Path

from .errors import InputError

NAME = re.compile(
    r"^(?P<kind>gemm|gemm_e2e)/(?P<precision>fp32|fp64)/(?P<variant>.+)"
    r"/m:(?P<m>\d+)/n:(?P<n>\d+)/k:(?P<k>\d+)(?:/manual_time)?$"
)
TIME_UNITS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def parse_name(name):
    """gemm/fp32/shared/tile:16/m:512/n:512/k:512/manual_time -> dict, or None."""
    match = NAME.match(name)
    if not match:
        return None
    variant = match.group("variant")
    family, _, params = variant.partition("/")
    out = {
        "end_to_end": match.group("kind") == "gemm_e2e",
        "precision": match.group("precision"),
        "variant": variant,
        "family": family,
        "params": params,
        "m": int(match.group("m")),
        "n": int(match.group("n")),
        "k": int(match.group("k")),
    }
    out["shape"] = f"{out['m']}x{out['n']}x{out['k']}"
    numbers = [int(x) for x in re.findall(r"\d+", params)]
    out["tile"] = numbers[0] if numbers else None  # tile edge, block edge, threads or blocks
    return out


def load_results(path):
    """Returns (context, benchmarks) of a gemm-bench JSON file; InputError if unusable."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        hint = " (truncated?)" if error.pos >= len(text.rstrip()) - 1 else ""
        raise InputError(f"{path}: not valid JSON{hint}: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise InputError(f"{path}: not a Google Benchmark results file (no 'benchmarks' list)")
    if not isinstance(data.get("context"), dict):
        raise InputError(f"{path}: no 'context' section")
    for i, entry in enumerate(data["benchmarks"]):
        if not isinstance(entry, dict) or "name" not in entry:
            raise InputError(f"{path}: benchmark entry {i} has no name")
    return data["context"], data["benchmarks"]


def to_frame(benchmarks, include_aggregates=False):
    """One row per iteration run of a gemm benchmark (repetitions kept), with parsed fields."""
    import pandas as pd

    rows = []
    for entry in benchmarks:
        if entry.get("run_type") == "aggregate" and not include_aggregates:
            continue
        parsed = parse_name(entry.get("run_name", entry["name"]))
        if parsed is None:
            continue
        row = dict(parsed)
        row["name"] = entry.get("run_name", entry["name"])
        row["repetition"] = entry.get("repetition_index", 0)
        row["error"] = entry.get("error_message") if entry.get("error_occurred") else None
        scale = TIME_UNITS.get(entry.get("time_unit", "ns"), 1e-6)
        row["real_time_ms"] = entry.get("real_time", math.nan) * scale
        for key, value in entry.items():
            if isinstance(value, (int, float)) and key not in row and key not in (
                "family_index", "per_family_instance_index", "repetitions", "threads",
                "repetition_index", "real_time", "cpu_time", "iterations"):
                row[key] = float(value)
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        raise InputError("no gemm benchmarks in the results")
    return frame
