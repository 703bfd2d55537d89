"""The benchmark-name grammar, read from bench/benchmark_names.inc (the C++ harness reads the
same file), so a name that one side writes the other side parses."""

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gemm_study.data.errors import InputError
from gemm_study.data.paths import CHECKOUT
from gemm_study.data.shape import Shape

NAMES_FILE = CHECKOUT / "bench" / "benchmark_names.inc"
REQUIRED_KEYS = (
    "kernel_prefix",
    "end_to_end_prefix",
    "manual_time_suffix",
    "benchmark_regex",
    "variant_regex",
    "nvtx_from",
    "nvtx_to",
)

# GEMM_NAME(key, R"(value)"): the value is a C++ raw string, so it may hold quotes and commas.
_LINE = re.compile(r'^GEMM_NAME\(\s*(?P<key>\w+)\s*,\s*R"\((?P<value>.*)\)"\s*\)\s*$')


@dataclass(frozen=True)
class NameSpec:
    kernel_prefix: str
    end_to_end_prefix: str
    manual_time_suffix: str
    benchmark: re.Pattern  # groups: kind, precision, variant, m, n, k
    variant: re.Pattern
    to_nvtx: dict  # str.translate table: benchmark name -> NVTX range name
    from_nvtx: dict


def read_spec_file(path):
    """key -> raw value of every GEMM_NAME line; InputError if the file or a key is missing."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file (the benchmark-name grammar)")
    values = {}
    for line in path.read_text().splitlines():
        match = _LINE.match(line.strip())
        if match:
            values[match.group("key")] = match.group("value")
    missing = [key for key in REQUIRED_KEYS if key not in values]
    if missing:
        raise InputError(f"{path}: no GEMM_NAME entry for {', '.join(missing)}")
    return values


@lru_cache(maxsize=None)
def load_spec(path=NAMES_FILE):
    values = read_spec_file(path)
    source, target = values["nvtx_from"], values["nvtx_to"]
    if len(source) != len(target):
        raise InputError(f"{path}: nvtx_from and nvtx_to must have the same length")
    benchmark = re.compile(values["benchmark_regex"])
    if benchmark.groups < 6:
        raise InputError(f"{path}: benchmark_regex needs the groups kind, precision, variant, m, n, k")
    return NameSpec(
        values["kernel_prefix"],
        values["end_to_end_prefix"],
        values["manual_time_suffix"],
        benchmark,
        re.compile(values["variant_regex"]),
        str.maketrans(source, target),
        str.maketrans(target, source),
    )


def parse_benchmark(name, spec=None):
    """'gemm/fp32/shared/tile:16/m:512/n:512/k:512/manual_time' -> dict of the name's parts, or
    None when the name is not one of ours (other benchmarks may share a results file)."""
    spec = spec or load_spec()
    match = spec.benchmark.match(name)
    if not match:
        return None
    kind, precision, variant, m, n, k = match.groups()[:6]
    return {
        "end_to_end": kind == spec.end_to_end_prefix,
        "precision": precision,
        "variant": variant,
        "m": int(m),
        "n": int(n),
        "k": int(k),
    }


def strip_manual_time(name, spec=None):
    spec = spec or load_spec()
    suffix = spec.manual_time_suffix
    return name[: -len(suffix)] if name.endswith(suffix) else name


def nvtx_range(benchmark, spec=None):
    """gemm/fp32/shared/tile:16/m:512/n:512/k:512 -> gemm.fp32.shared.tile-16.m-512.n-512.k-512."""
    spec = spec or load_spec()
    return strip_manual_time(benchmark, spec).translate(spec.to_nvtx)


def benchmark_from_nvtx(range_name, spec=None):
    """The inverse of nvtx_range: the variant grammar has no '.' or '-', so it is exact."""
    spec = spec or load_spec()
    return range_name.translate(spec.from_nvtx)


def check_shape(text):
    """'MxNxK' with positive integers (how the tools and gemm-bench --shapes write a shape), or
    InputError."""
    Shape.parse(text or "")
    return text


def benchmark_name(precision, variant, shape, end_to_end=False, spec=None):
    """The one builder of a benchmark's name, as gemm-bench writes it without /manual_time:
    ('fp32', 'shared/tile:16', Shape(512, 512, 512)) -> gemm/fp32/shared/tile:16/m:512/n:512/k:512.
    `variant` and `precision` may be regular expressions, for a filter (benchmark_filter)."""
    spec = spec or load_spec()
    prefix = spec.end_to_end_prefix if end_to_end else spec.kernel_prefix
    return f"{prefix}/{precision}/{variant}/{shape_suffix(shape)}"


def shape_suffix(shape):
    """Shape(512, 256, 128) (or '512x256x128') -> 'm:512/n:256/k:128', the end of every name."""
    shape = shape if isinstance(shape, Shape) else Shape.parse(shape)
    return f"m:{shape.m}/n:{shape.n}/k:{shape.k}"


def benchmark_filter(precisions, variants, shape, spec=None):
    """A --benchmark_filter for the kernel benchmarks of `variants` (a regular expression) at one
    shape, in any of `precisions`: ^gemm/(fp32|fp64)/(VARIANTS)/m:M/n:N/k:K(/manual_time)?$."""
    spec = spec or load_spec()
    name = benchmark_name(f"({'|'.join(precisions)})", f"({variants})", shape, spec=spec)
    return f"^{name}({re.escape(spec.manual_time_suffix)})?$"


def variant_params(variant):
    """'naive_row/block:16x16' -> ('naive_row', {'block': '16x16'}): the name's own parameters,
    for result files written before gemm-bench recorded the variant's facts."""
    family, *parts = variant.split("/")
    params = {}
    for part in parts:
        key, _, value = part.partition(":")
        params[key] = value
    return family, params
