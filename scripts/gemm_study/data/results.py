"""The one reader of gemm-bench's Google Benchmark JSON: validation with one-line errors, the
variant's facts (from the entry's `variant` object; from the name only for files written before
gemm-bench recorded them), rows per repetition, and the pandas table the reports use.

What the tools rely on in a results file (gemm-bench writes it; a file that breaks it is bad input):
  context    a dict of strings: gpu_name, gpu_slug, git_revision, date (the run's ISO-8601 time),
             cuda_driver_version, cuda_runtime_version, gpu_max_sm_clock_mhz, gpu_memory_clock_mhz,
             gpu_sm_count, gpu_max_threads_per_sm, gpu_l2_bytes, peak_{fp32,tf32,fp64}_gflops,
             peak_dram_gbs, l2_state ('warm...' or 'cold...'); numbers as strings, any may be
             absent in older files (context_value reads them).
  benchmarks a list of entries; the tools read those whose run_name (or name) follows the name
             grammar (bench/benchmark_names.inc). Per entry: repetition_index (an int >= 0),
             run_type ('iteration'; 'aggregate' rows are skipped), error_occurred and
             error_message, median_ms (the median launch time of the repetition, ms; real_time
             with time_unit, Google Benchmark's mean, only where median_ms is absent),
             sm_clock_mhz (the SM clock measured right after the timed launches), clock_throttled
             (0 or 1), counters_available, the catalogue's counters under their short names
             (profiling/metric_catalogue.inc), stage_*_s (bookkeeping), and
  variant    an object: family (a non-empty string), name, params (the parameters as numbers),
             tags (strings, kernels/tags.inc), compute, rung and rung_name, threads_per_block,
             outputs_per_thread, warps_launched; VARIANT_TYPES lists the types that are checked.
Numbers are JSON numbers (a bool is not one); NaN and infinities are missing values for counters
and bad input for times and clocks."""

import gzip
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gemm_study.data import names
from gemm_study.data.errors import InputError
from gemm_study.data.manifest import TAGS
from gemm_study.data.schema import check_version
from gemm_study.data.shape import Shape, shape_order

TIME_UNITS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
# Numeric keys of an entry that are Google Benchmark's bookkeeping, not measurements.
NOT_MEASUREMENTS = (
    "family_index",
    "per_family_instance_index",
    "repetitions",
    "threads",
    "repetition_index",
    "real_time",
    "cpu_time",
    "iterations",
)
# Facts of the `variant` object copied into each row (launch facts are absent for cuBLAS/CPU).
FACT_COLUMNS = (
    "compute",
    "backend",
    "origin",
    "note",
    "rung",
    "rung_name",
    "threads_per_block",
    "outputs_per_thread",
    "warps_launched",
    "spins",
    "persistent_grid",
)


def parse_name(name):
    """gemm/fp32/shared/tile:16/m:512/n:512/k:512/manual_time -> dict, or None."""
    parsed = names.parse_benchmark(name)
    if parsed is None:
        return None
    family, params = names.variant_params(parsed["variant"])
    parsed.update(
        family=family,
        params=_params_text(parsed["variant"]),
        shape=str(Shape(parsed["m"], parsed["n"], parsed["k"])),
        tile=_edge(params),
    )
    return parsed


def _parsed_from_variant(entry):
    """parse_name's fields from the entry's `variant` object, for a name outside the grammar
    that gemm-bench still marked as one of its benchmarks; None without a `variant`."""
    variant = entry.get("variant")
    if not isinstance(variant, dict):
        return None
    shape = variant.get("shape") if isinstance(variant.get("shape"), dict) else {}
    m, n, k = (shape.get(key) if is_number(shape.get(key)) else 0 for key in "mnk")
    name = variant.get("name") if isinstance(variant.get("name"), str) else variant["family"]
    return {
        "end_to_end": variant.get("end_to_end") is True,
        "precision": str(variant.get("precision")),
        "variant": name,
        "m": m,
        "n": n,
        "k": k,
        "family": variant["family"],
        "params": _params_text(name),
        "shape": str(Shape(m, n, k)),
        "tile": None,
    }


def _params_text(variant):
    """'naive_row/block:16x16' -> 'block:16x16' (how tables and sentences show a parameter)."""
    return variant.partition("/")[2]


# `tile`, in every table and sentence, is the edge a tile_sweep family sweeps (the write-ups'
# tile or block edge), and nothing else: None for every other variant (grid_stride's 256 threads
# or a ladder rung's bm are not tile edges). The parameter that holds it: in a name tile:16,
# block:16x16 or tile:8x8; in the variant's parameter fields tile, tile_x or block_x.
EDGE_KEYS = ("tile", "tile_x", "block", "block_x")


def _edge(params):
    """The first number of the first of EDGE_KEYS in params, or None."""
    for key in EDGE_KEYS:
        if key in params:
            number = re.match(r"\d+", str(params[key]))
            return int(number.group()) if number else None
    return None


def sweep_edge(params, tags):
    """The swept tile/block edge of a variant tagged tile_sweep (from its parameter fields), else None."""
    return _edge(params) if TAGS.tile_sweep in tags else None


GZIP_MAGIC = b"\x1f\x8b"


def read_text(path, what="a results file (give one of its .json files)"):
    """A file's text, gunzipped where it is gzipped (committed runs often are); InputError (one
    line) if it is missing or unreadable."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: a folder, not {what}")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        raw = path.read_bytes()
        return (gzip.decompress(raw) if raw[:2] == GZIP_MAGIC else raw).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"{path}: cannot be read: {type(error).__name__}: {error}") from None


def read_json(path):
    """The parsed JSON of a file; InputError (one line) if it is missing or unreadable."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        hint = " (truncated?)" if error.pos >= len(text.rstrip()) - 1 else ""
        raise InputError(f"{path}: not valid JSON{hint}: {error.msg} at line {error.lineno}") from None
    except (RecursionError, ValueError) as error:
        raise InputError(f"{path}: cannot be read: {type(error).__name__}: {error}") from None


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def field_number(row, key):
    """A row's field as a finite float, NaN where it is absent, not a number or not finite."""
    try:
        number = float(row.get(key))
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


# The share of a repetition's samples that must have the SMs' count for it to be the
# repetition's clock (bench/timing.h's kMinCountedShare: one sample long enough for the timer
# among many short ones is not the run).
MIN_COUNTED_SHARE = 0.5


def counted_clock_mhz(row):
    """The row's sm_clock_counted_mhz (the SMs' clock64 over %globaltimer across its samples; a
    read row keeps it only where enough samples counted: counted_on_enough_samples), NaN without."""
    return field_number(row, "sm_clock_counted_mhz")


def sm_clock_mhz(row):
    """The SM clock of a row's timed samples in MHz, the one that turns its time into SM cycles:
    the SMs' own count (counted_clock_mhz) where the row has it, else NVML's reading
    (sm_clock_mhz), which under tensor-core load on an H100 reads above the clock the SMs run at;
    NaN without either."""
    counted = counted_clock_mhz(row)
    return counted if counted > 0 else field_number(row, "sm_clock_mhz")


def cycles_ratio(a, b):
    """Row a's SM cycles over row b's (time_ms x clock): both at the SMs' counted clock where both
    rows have it, else both at NVML's, never one of each (the count sits a percent above NVML's
    reading even where nothing slows the SMs); NaN without a pair."""
    for clock in (counted_clock_mhz, lambda r: field_number(r, "sm_clock_mhz")):
        ca, cb = clock(a), clock(b)
        if ca > 0 and cb > 0:
            return field_number(a, "time_ms") * ca / (field_number(b, "time_ms") * cb)
    return math.nan


# Types of the `variant` facts that tools compute with (the contract above); a bool is none of them.
NUMBER = (int, float)
VARIANT_TYPES = {
    "name": str,
    "params": dict,
    "tags": list,
    "compute": str,
    "rung_name": str,
    "rung": NUMBER,
    "threads_per_block": NUMBER,
    "outputs_per_thread": NUMBER,
    "warps_launched": NUMBER,
}


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


def load_results(path, source_counters=True):
    """Returns (context, benchmarks) of a gemm-bench JSON file; InputError if unusable.
    source_counters=False leaves out source_counters.json beside it (for the command that
    rewrites it)."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise InputError(f"{path}: not a Google Benchmark results file (no 'benchmarks' list)")
    if not isinstance(data.get("context"), dict):
        raise InputError(f"{path}: no 'context' section")
    check_version(path, data["context"])
    for i, entry in enumerate(data["benchmarks"]):
        check_entry(path, i, entry)
    peaks = pipe_peaks_beside(path)
    # Another GPU's peaks (a file left beside results copied from elsewhere) do not apply.
    if peaks is not None and peaks.get("gpu_name") in (None, data["context"].get("gpu_name")):
        data["context"]["pipe_peaks"] = peaks
    sass = sass_beside(path)
    if sass is not None:
        data["context"]["sass"] = sass
        counters = source_counters_beside(path) if source_counters else None
        if counters is not None:
            data["context"]["source_counters"] = counters
    return data["context"], data["benchmarks"]


SASS_FILE = "sass.json"
# What load_results adds to a context from the files beside the results: never written back.
ATTACHED = ("pipe_peaks", "sass", "source_counters")


def own_context(context):
    """The context as the results file holds it, without what load_results attached."""
    return {key: value for key, value in context.items() if key not in ATTACHED}


def sass_beside(path):
    """The SASS of the study's build (sass.json or sass.json.gz, tests/cpu/sass_compare.py collect:
    each variant's kernel per shape and each kernel's instructions) from the results file's folder, or None
    where there is none; InputError if it is not what that command writes."""
    found = [p for p in (Path(path).with_name(SASS_FILE), Path(path).with_name(SASS_FILE + ".gz")) if p.is_file()]
    if not found:
        return None
    sass_path = found[0]
    sass = read_json(sass_path)
    if (
        not isinstance(sass, dict)
        or not isinstance(sass.get("kernels"), dict)
        or not isinstance(sass.get("sass"), dict)
    ):
        raise InputError(f"{sass_path}: expected sass_compare.py collect's output, with 'kernels' and 'sass'")
    return sass


SOURCE_COUNTERS_FILE = "source_counters.json"


def source_counters_beside(path):
    """The executed count of each SASS line per warp and k-tile of the kernels whose main loop
    holds a nested loop (source_counters.json, gemm-source-counters) from the results file's
    folder, or None where there is none; InputError if it is not what that command writes."""
    counters_path = Path(path).with_name(SOURCE_COUNTERS_FILE)
    if not counters_path.is_file():
        return None
    counters = read_json(counters_path)
    kernels = counters.get("kernels") if isinstance(counters, dict) else None
    if not isinstance(kernels, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("per_warp_ktile"), list) for v in kernels.values()
    ):
        raise InputError(f"{counters_path}: expected gemm-source-counters' output, 'kernels' with 'per_warp_ktile'")
    return counters


PIPE_PEAKS_FILE = "pipe_peaks.json"


def pipe_peaks_beside(path):
    """The study's pipe_peaks.json (bench/pipe_peaks.cu: each instruction form's warp instructions
    per SM per clock) from the results file's folder, or None where there is none; InputError if
    it is not what pipe-peaks writes."""
    peaks_path = Path(path).with_name(PIPE_PEAKS_FILE)
    if not peaks_path.is_file():
        return None
    peaks = read_json(peaks_path)
    forms = peaks.get("forms") if isinstance(peaks, dict) else None
    valid = isinstance(forms, list) and all(
        isinstance(f, dict)
        and isinstance(f.get("form"), str)
        and is_number(f.get("inst_per_clk_per_sm"))
        and math.isfinite(f["inst_per_clk_per_sm"])
        and f["inst_per_clk_per_sm"] > 0
        for f in forms
    )
    if not valid:
        raise InputError(
            f"{peaks_path}: expected pipe-peaks' output, a 'forms' list of form and inst_per_clk_per_sm > 0"
        )
    return peaks


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
    facts = {
        "family": variant.get("family", parsed["family"]),
        "params": _params_text(variant.get("name", parsed["variant"])),
        "param_values": dict(params),
        "tags": tuple(variant.get("tags") or ()),
        "facts_from": "variant",
    }
    facts["tile"] = sweep_edge(params, facts["tags"])
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
    facts = {"family": family, "params": parsed["params"], "param_values": params, "tile": None, "facts_from": "name"}
    if family.startswith("cublas"):
        facts.update(
            backend="cublas", tags=(TAGS.reference,), compute="tf32" if family.endswith("tf32") else parsed["precision"]
        )
        return facts
    if family.startswith("cpu"):
        facts.update(backend="cpu", tags=(TAGS.cpu,), compute=parsed["precision"])
        return facts
    facts.update(backend="cuda_kernel", compute=parsed["precision"], tags=(TAGS.seed,))
    threads, blocks = _legacy_launch(params, parsed["m"], parsed["n"])
    if threads:
        facts.update(
            threads_per_block=threads,
            warps_launched=blocks * math.ceil(threads / 32),
            outputs_per_thread=parsed["m"] * parsed["n"] / (threads * blocks),
        )
        if "tile" in params or "block" in params:
            facts.update(tags=(TAGS.seed, TAGS.tile_sweep), tile=parsed["tile"])
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


# ----------------------------------------------------------------------------- rows

# Never a measurement to compare: bookkeeping, and the clock itself (it turns times into cycles).
NOT_COUNTERS = ("stage_", "sm_clock_mhz", "sm_clock_counted_mhz", "clock_throttled")
# Row fields that are derived from the entry, not measurements of it.
COUNTER_EXCLUDED = {"time_ms", "real_time_ms"}


# Above these a time or a clock is impossible (a day per launch, 100 GHz), and their products
# (cycles) would overflow: bad input, not a verdict.
MAX_MS = 8.64e7
MAX_MHZ = 1e5


def _positive(where, key, value, upper):
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: {key} is {value!r}; expected a positive finite number")
    if value > upper:
        raise InputError(f"{where}: {key} is {value!r}; more than {upper:g} is not a possible measurement")
    return float(value)


def _row(where, entry, parsed):
    """One repetition of one benchmark: the name's parts, the variant's facts, its error (None
    when it ran), `time_ms` (the time statistic: median_ms, or real_time where the file has no
    median_ms), the clock, and every other number of the entry as a float."""
    row = dict(parsed)
    row.update(variant_facts(entry, parsed))
    row["name"] = entry.get("run_name", entry["name"])
    row["repetition"] = entry.get("repetition_index", 0)
    row["error"] = (
        str(entry.get("error_message") or "error_occurred without a message") if entry.get("error_occurred") else None
    )
    scale = TIME_UNITS[entry.get("time_unit", "ns")]
    real = entry.get("real_time", math.nan)
    row["real_time_ms"] = real * scale if is_number(real) else math.nan
    if row["error"] is None:
        if "median_ms" in entry:
            row["time_ms"], row["time_field"] = _positive(where, "median_ms", entry["median_ms"], MAX_MS), "median_ms"
        else:
            row["time_ms"], row["time_field"] = _positive(where, "real_time", real, MAX_MS / scale) * scale, "real_time"
        for clock in ("sm_clock_mhz", "sm_clock_counted_mhz"):
            if clock in entry:
                _positive(where, clock, entry[clock], MAX_MHZ)
        throttled = entry.get("clock_throttled", 0)
        if not is_number(throttled):
            raise InputError(f"{where}: clock_throttled is {throttled!r}; expected 0 or 1")
        if "samples" in entry:
            row["samples"] = _samples(where, entry["samples"])
    for key, value in entry.items():
        if is_number(value) and key not in row and key not in NOT_MEASUREMENTS:
            row[key] = float(value)
    if not counted_on_enough_samples(row.get("samples")):
        row.pop("sm_clock_counted_mhz", None)
    return row


def counted_on_enough_samples(samples):
    """Whether at least MIN_COUNTED_SHARE of a repetition's samples have the SMs' count (True
    without samples): files written before gemm-bench had that rule took a run's count from the
    one sample of hundreds long enough for the timer, and such a count is dropped on reading."""
    if not samples or not samples.get("ms"):
        return True
    counts = samples.get("sm_clock_counted_mhz") or ()
    return sum(1 for c in counts if c > 0) >= MIN_COUNTED_SHARE * len(samples["ms"])


def _samples(where, samples):
    """The timed samples of one repetition (gemm-bench since per-sample clocks): ms, the NVML SM
    clock of each (0: no reading) and whether it was flagged (clock more than 2% below the
    repetition's median: kept in median_ms since gemm-bench samples to a confidence interval,
    left out of it before), plus the slowdown reasons seen."""
    if not isinstance(samples, dict):
        raise InputError(f"{where}: samples is {samples!r}; expected an object")
    ms, clocks = samples.get("ms"), samples.get("sm_clock_mhz", [])
    flagged = samples.get("flagged", [0] * len(ms) if isinstance(ms, list) else [])
    lists = {"samples.ms": ms, "samples.sm_clock_mhz": clocks, "samples.flagged": flagged}
    for key, values in lists.items():
        if not isinstance(values, list) or not all(is_number(v) and math.isfinite(v) and v >= 0 for v in values):
            raise InputError(f"{where}: {key} must be a list of numbers >= 0")
    if (
        not ms
        or any(v <= 0 or v > MAX_MS for v in ms)
        or any(v > MAX_MHZ for v in clocks)
        or (clocks and len(clocks) != len(ms))
        or len(flagged) != len(ms)
    ):
        raise InputError(
            f"{where}: samples: {len(ms or [])} times, {len(clocks)} clocks, {len(flagged)} flags; "
            "expected as many positive times as clocks and flags"
        )
    counted = samples.get("sm_clock_counted_mhz", [])
    if (
        not isinstance(counted, list)
        or not all(is_number(v) and math.isfinite(v) and 0 <= v <= MAX_MHZ for v in counted)
        or (counted and len(counted) != len(ms))
    ):
        raise InputError(
            f"{where}: samples.sm_clock_counted_mhz must be a list of numbers >= 0, one per sample ({len(ms)})"
        )
    slowdown = samples.get("slowdown", [])
    return {
        "ms": [float(v) for v in ms],
        "sm_clock_mhz": [float(v) for v in clocks] or [0.0] * len(ms),
        "sm_clock_counted_mhz": [float(v) for v in counted] or [0.0] * len(ms),
        "flagged": [bool(v) for v in flagged],
        "slowdown": [str(v) for v in slowdown] if isinstance(slowdown, list) else [],
    }


def _cycles(row, clock_key, samples_with_clock):
    """The median of ms x clock over samples_with_clock (the samples' (ms, MHz) pairs that count),
    else median_ms x the row's clock_key; None without either, and end to end: the copies run at
    the link's speed whatever the SM clock, so cycles would add the clock's noise to them."""
    if row.get("end_to_end"):
        return None
    cycles = [t * c for t, c in samples_with_clock]
    if cycles:
        return float(np.median(cycles))
    clock = field_number(row, clock_key)
    return row["time_ms"] * clock if clock > 0 else None


def repetition_cycles(row):
    """Thousands of SM cycles of one repetition (ms x NVML's MHz), or None without a clock: the
    median over its unflagged samples that have a clock reading where gemm-bench recorded
    samples, else median_ms x sm_clock_mhz (older files: one clock per repetition)."""
    samples = row.get("samples") or {}
    pairs = zip(samples.get("ms", ()), samples.get("sm_clock_mhz", ()), samples.get("flagged", ()))
    return _cycles(row, "sm_clock_mhz", [(t, c) for t, c, f in pairs if c > 0 and not f])


def repetition_counted_cycles(row):
    """Thousands of SM cycles of one repetition by the SMs' own count of the clock: the median of
    ms x sm_clock_counted_mhz over the samples that have a count, where at least
    MIN_COUNTED_SHARE of them do (None where fewer do, whatever the row says: files written
    before gemm-bench had that rule took a run's count from one sample), else, without samples,
    median_ms x the row's sm_clock_counted_mhz; None where the run did not count it. Under
    tensor-core load NVML's clock is not the SMs': these are the cycles that stay put when the
    clock moves unseen."""
    samples = row.get("samples") or {}
    if not counted_on_enough_samples(samples):
        return None
    pairs = [(t, c) for t, c in zip(samples.get("ms", ()), samples.get("sm_clock_counted_mhz", ())) if c > 0]
    return _cycles(row, "sm_clock_counted_mhz", pairs)


def read_rows(path, entries):
    """The rows (see _row) of every iteration entry of a gemm-study benchmark, in file order:
    the one place that reads benchmark entries. InputError (one line naming the file and the
    entry) for a repetition index that is not a count, a duplicate repetition, an impossible time
    or clock, a file that mixes median_ms with real_time, or a file with none of our benchmarks."""
    rows, seen, aggregates, time_field = [], {}, 0, None
    for i, entry in enumerate(entries):
        name = entry.get("run_name", entry["name"])
        parsed = parse_name(name) or _parsed_from_variant(entry)
        if parsed is None:
            continue  # another program's benchmark in the same file
        if entry.get("run_type") == "aggregate":
            aggregates += 1
            continue
        where = f"{path}: entry {i} ({name})"
        rep = entry.get("repetition_index", 0)
        if not isinstance(rep, int) or isinstance(rep, bool) or rep < 0:
            raise InputError(f"{where}: repetition_index is {rep!r}")
        if (name, rep) in seen:
            raise InputError(f"{where}: duplicate benchmark (repetition {rep} is also entry {seen[name, rep]})")
        seen[name, rep] = i
        row = _row(where, entry, parsed)
        if row["error"] is None:
            time_field = time_field or row["time_field"]
            if row["time_field"] != time_field:
                raise InputError(
                    f"{where}: "
                    + (
                        "no median_ms, unlike earlier entries"
                        if time_field == "median_ms"
                        else "has median_ms, unlike earlier entries"
                    )
                )
        rows.append(row)
    if not rows:
        if aggregates:
            raise InputError(
                f"{path}: only aggregate rows ({aggregates}): rerun without "
                "--benchmark_report_aggregates_only so that every repetition is kept"
            )
        raise InputError(
            f"{path}: no gemm benchmarks, i.e. no benchmark of gemm-study ({len(entries)} entries, "
            "none named gemm/<precision>/<variant>/m:/n:/k: or carrying a 'variant')"
        )
    return rows


# ----------------------------------------------------------------------------- tables


def to_frame(benchmarks, path="results"):
    """One row per repetition of a gemm benchmark (read_rows), with its facts, as a DataFrame."""
    import pandas as pd

    frame = pd.DataFrame(read_rows(path, benchmarks)).drop(columns=["samples"], errors="ignore")
    if "tags" not in frame:
        frame["tags"] = [()] * len(frame)
    return frame


def load_frame(path, source_counters=True):
    """(context, one row per repetition) of a results file."""
    context, entries = load_results(path, source_counters)
    return context, to_frame(entries, path)


# ----------------------------------------------------------------------------- runs


@dataclass
class Bench:
    """The repetitions of one benchmark in one run, as the comparisons read them."""

    family: str
    tags: tuple = ()
    time_field: str = "median_ms"  # median_ms, or real_time (a mean) in older files
    times: list = field(default_factory=list)  # ms per repetition that ran
    clocks: list = field(default_factory=list)  # MHz per repetition, where recorded
    cycles: list = field(default_factory=list)  # thousands of cycles per repetition (repetition_cycles)
    counted_cycles: list = field(default_factory=list)  # the same by the SMs' count (repetition_counted_cycles)
    from_samples: int = 0  # repetitions whose cycles came from per-sample clocks
    slowdown: set = field(default_factory=set)  # NVML slowdown reasons seen in any sample
    real_times: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    throttled: bool = False
    counters: dict = field(default_factory=dict)  # name -> list of finite values
    reps: set = field(default_factory=set)
    spins: bool = False  # variant fact: warps poll mbarriers


def load_run(path):
    """(context, {benchmark name: Bench}) of a results file, from read_rows; InputError if unusable."""
    context, entries = load_results(path)
    benches = {}
    for row in read_rows(path, entries):
        bench = benches.setdefault(row["name"], Bench(row["family"], tuple(row.get("tags") or ())))
        bench.reps.add(row["repetition"])
        if row["error"] is not None:
            bench.errors.append(row["error"])
            continue
        bench.time_field = row["time_field"]
        bench.times.append(row["time_ms"])
        if math.isfinite(row["real_time_ms"]):
            bench.real_times.append(row["real_time_ms"])
        if "sm_clock_mhz" in row:
            bench.clocks.append(row["sm_clock_mhz"])
        cycles = repetition_cycles(row)
        if cycles is not None:
            bench.cycles.append(cycles)
            bench.from_samples += "samples" in row
        counted = repetition_counted_cycles(row)
        if counted is not None:
            bench.counted_cycles.append(counted)
        bench.slowdown.update(row.get("samples", {}).get("slowdown", ()))
        bench.throttled |= bool(row.get("clock_throttled", 0))
        bench.spins |= row.get("spins") is True
        for key, value in row.items():
            if key in COUNTER_EXCLUDED or key.startswith(NOT_COUNTERS):
                continue
            if isinstance(value, float) and math.isfinite(value):
                bench.counters.setdefault(key, []).append(value)
    for name, bench in benches.items():
        if bench.cycles and len(bench.cycles) != len(bench.times):
            raise InputError(f"{path}: {name}: a clock on {len(bench.cycles)} of {len(bench.times)} repetitions")
        if bench.clocks and len(bench.clocks) != len(bench.times):
            raise InputError(f"{path}: {name}: sm_clock_mhz on {len(bench.clocks)} of {len(bench.times)} repetitions")
    return context, benches


def cycles_of(bench, counted):
    """The bench's cycles per repetition: by the SMs' count where `counted` (every repetition has
    one: counted_clock_on), else from NVML's clock."""
    return bench.counted_cycles if counted else bench.cycles


def counted_clock_on(benches):
    """Whether every repetition of every bench (None or failed ones aside) has cycles by the SMs'
    count: only then are they compared, so that one comparison never mixes the two clocks."""
    ran = [b for b in benches if b is not None and not b.errors and b.times]
    return bool(ran) and all(len(b.counted_cycles) == len(b.times) for b in ran)


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
    return sorted(frame["shape"].unique(), key=shape_order)


def has_tag(frame, *tags):
    """Boolean mask: rows whose variant carries any of the tags."""
    wanted = set(tags)
    # astype(bool): on an empty frame map() gives an object Series, which frame[mask] would
    # read as a list of column names (an empty frame without columns).
    return frame["tags"].map(lambda row_tags: bool(wanted & set(row_tags or ()))).astype(bool)


def max_warps_per_sm(context):
    return context_value(context, "gpu_max_threads_per_sm", "max_threads_per_sm") / 32


def sm_count(context):
    return context_value(context, "gpu_sm_count", "sm_count")


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
