"""Reading gemm-bench's Google Benchmark JSON: validation with clear errors, the variant's facts
(from the entry's `variant` object; from the name only for files written before gemm-bench
recorded them) and a tidy pandas table."""
import json
import math
import re
from pathlib import Path

from . import names
from .errors import InputError

TIME_UNITS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
# Numeric keys of an entry that are Google Benchmark's bookkeeping, not measurements.
NOT_MEASUREMENTS = ("family_index", "per_family_instance_index", "repetitions", "threads",
                    "repetition_index", "real_time", "cpu_time", "iterations")
# Facts of the `variant` object copied into each row (launch facts are absent for cuBLAS/CPU).
FACT_COLUMNS = ("compute", "backend", "origin", "note", "rung", "rung_name", "threads_per_block",
                "outputs_per_thread", "warps_launched")


def parse_name(name):
    """gemm/fp32/shared/tile:16/m:512/n:512/k:512/manual_time -> dict, or None."""
    parsed = names.parse_benchmark(name)
    if parsed is None:
        return None
    family, params = names.variant_params(parsed["variant"])
    parsed.update(family=family, params=_params_text(parsed["variant"]),
                  shape=f"{parsed['m']}x{parsed['n']}x{parsed['k']}", tile=_sweep_value(params))
    return parsed


def _params_text(variant):
    """'naive_row/block:16x16' -> 'block:16x16' (how tables and sentences show a parameter)."""
    return variant.partition("/")[2]


def _sweep_value(params):
    """The first parameter's first number: the swept tile/block edge of a tile_sweep family
    (gemm-bench lists the swept parameter first), e.g. {'block': '16x16'} -> 16."""
    for value in params.values():
        number = re.match(r"\d+", str(value))
        return int(number.group()) if number else None
    return None


def read_json(path):
    """The parsed JSON of a file; InputError (one line) if it is missing or unreadable."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text)
    except json.JSONDecodeError as error:
        hint = " (truncated?)" if error.pos >= len(text.rstrip()) - 1 else ""
        raise InputError(f"{path}: not valid JSON{hint}: {error.msg} at line {error.lineno}") from None
    except (OSError, UnicodeDecodeError, RecursionError, ValueError) as error:
        raise InputError(f"{path}: cannot be read: {type(error).__name__}: {error}") from None


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# Types of the `variant` facts that tools compute with (json_contract.md); a bool is none of them.
NUMBER = (int, float)
VARIANT_TYPES = {"name": str, "params": dict, "tags": list, "compute": str, "rung_name": str,
                 "rung": NUMBER, "threads_per_block": NUMBER, "outputs_per_thread": NUMBER,
                 "warps_launched": NUMBER}


def _check_variant(variant):
    """The reason a `variant` object breaks the contract, or None."""
    if not isinstance(variant, dict) or not isinstance(variant.get("family"), str) or not variant["family"]:
        return "'variant' must be an object with a 'family' string"
    for key, expected in VARIANT_TYPES.items():
        value = variant.get(key)
        if key not in variant or (isinstance(value, expected) and not isinstance(value, bool)):
            continue
        return f"variant.{key} is {value!r}"
    if not all(isinstance(tag, str) for tag in variant.get("tags", ())):
        return f"variant.tags is {variant['tags']!r}; expected a list of strings"
    return None


def check_entry(path, i, entry):
    """InputError naming entry i of `path` where its fields have types no tool can use."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise InputError(f"{path}: benchmark entry {i} has no name")
    name = entry.get("run_name", entry["name"])
    if not isinstance(name, str):
        raise InputError(f"{path}: benchmark entry {i}: run_name is {name!r}, not a string")
    where = f"{path}: entry {i} ({name})"
    if "real_time" in entry and not is_number(entry["real_time"]):
        raise InputError(f"{where}: real_time is {entry['real_time']!r}; expected a number")
    unit = entry.get("time_unit", "ns")
    if not isinstance(unit, str) or unit not in TIME_UNITS:
        raise InputError(f"{where}: time_unit {unit!r} is not one of {', '.join(TIME_UNITS)}")
    if "variant" in entry:
        problem = _check_variant(entry["variant"])
        if problem:
            raise InputError(f"{where}: {problem}")


def load_results(path):
    """Returns (context, benchmarks) of a gemm-bench JSON file; InputError if unusable."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise InputError(f"{path}: not a Google Benchmark results file (no 'benchmarks' list)")
    if not isinstance(data.get("context"), dict):
        raise InputError(f"{path}: no 'context' section")
    for i, entry in enumerate(data["benchmarks"]):
        check_entry(path, i, entry)
    return data["context"], data["benchmarks"]


# ----------------------------------------------------------------------------- variant facts

def variant_facts(entry, parsed):
    """The variant's facts as flat row fields: from the entry's `variant` object when gemm-bench
    recorded it, else inferred from the name (older files: the only place that reads names)."""
    recorded = entry.get("variant")
    if isinstance(recorded, dict):
        return _recorded_facts(recorded, parsed)
    return legacy_facts(parsed)


def _recorded_facts(variant, parsed):
    params = variant.get("params") or {}
    facts = {"family": variant.get("family", parsed["family"]),
             "params": _params_text(variant.get("name", parsed["variant"])),
             "param_values": dict(params), "tile": _sweep_value(params),
             "tags": tuple(variant.get("tags") or ()), "facts_from": "variant"}
    for key in FACT_COLUMNS:
        if key in variant:
            facts[key] = variant[key]
    return facts


def legacy_facts(parsed):
    """What a name written before the kernel contract tells: the write-ups' seed kernels (and
    cuBLAS and the CPU baseline), whose parameter names say how they launch: tile:T is a TxT
    block per TxT tile, block:XxY an XxY block per XxY tile, threads:N a grid-stride loop with
    N-thread blocks, blocks:N N one-thread blocks."""
    family, params = names.variant_params(parsed["variant"])
    facts = {"family": family, "params": parsed["params"], "param_values": params,
             "tile": parsed["tile"], "facts_from": "name"}
    if family.startswith("cublas"):
        facts.update(backend="cublas", tags=("reference",),
                     compute="tf32" if family.endswith("tf32") else parsed["precision"])
        return facts
    if family.startswith("cpu"):
        facts.update(backend="cpu", tags=("cpu",), compute=parsed["precision"])
        return facts
    facts.update(backend="cuda_kernel", compute=parsed["precision"], tags=("seed",))
    threads, blocks = _legacy_launch(params, parsed["m"], parsed["n"])
    if threads:
        facts.update(threads_per_block=threads, warps_launched=blocks * math.ceil(threads / 32),
                     outputs_per_thread=parsed["m"] * parsed["n"] / (threads * blocks))
        if "tile" in params or "block" in params:
            facts["tags"] = ("seed", "tile_sweep")
    return facts


def _legacy_launch(params, m, n):
    """(threads per block, blocks) from a seed variant's name parameters, or (None, None)."""
    if "tile" in params or "block" in params:
        edges = [int(x) for x in (params.get("tile") or params["block"]).split("x")]
        ex, ey = edges[0], edges[-1]
        return ex * ey, math.ceil(n / ex) * math.ceil(m / ey)
    if "threads" in params:
        threads = int(params["threads"])
        return threads, math.ceil(m * n / threads)
    if "blocks" in params:
        return 1, int(params["blocks"])
    return None, None


# ----------------------------------------------------------------------------- tables

def _row(entry, parsed):
    row = dict(parsed)
    row.update(variant_facts(entry, parsed))
    row["name"] = entry.get("run_name", entry["name"])
    row["repetition"] = entry.get("repetition_index", 0)
    row["error"] = entry.get("error_message") if entry.get("error_occurred") else None
    scale = TIME_UNITS.get(entry.get("time_unit", "ns"), 1e-6)
    row["real_time_ms"] = entry.get("real_time", math.nan) * scale
    for key, value in entry.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key not in row \
                and key not in NOT_MEASUREMENTS:
            row[key] = float(value)
    return row


def to_frame(benchmarks, include_aggregates=False):
    """One row per iteration run of a gemm benchmark (repetitions kept), with its facts."""
    import pandas as pd

    rows = []
    for entry in benchmarks:
        if entry.get("run_type") == "aggregate" and not include_aggregates:
            continue
        parsed = parse_name(entry.get("run_name", entry["name"]))
        if parsed is not None:
            rows.append(_row(entry, parsed))
    frame = pd.DataFrame(rows)
    if frame.empty:
        raise InputError("no gemm benchmarks in the results")
    if "tags" not in frame:
        frame["tags"] = [()] * len(frame)
    return frame


def one_row_per_benchmark(frame):
    """Repetitions (--benchmark_repetitions) collapsed to one row per benchmark: the median of
    each measurement, the facts of the first repetition. A benchmark with an error in any
    repetition keeps that error."""
    import pandas as pd

    if not frame["name"].duplicated().any():
        return frame.reset_index(drop=True)
    numeric = [c for c in frame.columns if frame[c].dtype.kind == "f" and c != "repetition"]
    rows = []
    for _, group in frame.groupby("name", sort=False):
        row = group.iloc[0].copy()
        ok = group[group["error"].isna()]
        if len(ok) < len(group):
            row["error"] = group["error"].dropna().iloc[0]
        for column in numeric:
            row[column] = ok[column].median() if len(ok) else math.nan
        row["repetitions"] = len(group)
        rows.append(row)
    return pd.DataFrame(rows).reset_index(drop=True)


def shapes_by_size(frame):
    """The frame's shapes ('MxNxK'), smallest first, by M, then N, then K."""
    return sorted(frame["shape"].unique(), key=lambda s: [int(x) for x in s.split("x")])


def has_tag(frame, *tags):
    """Boolean mask: rows whose variant carries any of the tags."""
    wanted = set(tags)
    # astype(bool): on an empty frame map() gives an object Series, which frame[mask] would
    # read as a list of column names (an empty frame without columns).
    return frame["tags"].map(lambda row_tags: bool(wanted & set(row_tags or ()))).astype(bool)


def context_value(context, *keys, default=math.nan):
    """A numeric context entry under the first of its names that exists (gemm-bench writes
    context values as strings; older files use other names for some of them)."""
    for key in keys:
        value = context.get(key)
        if value in (None, ""):
            continue
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return default
