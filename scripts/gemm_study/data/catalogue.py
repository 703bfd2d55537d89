"""The metric catalogue, read from profiling/metric_catalogue.inc (the C++ harness reads the
same file), plus the harness's own timing counters: one source of truth for names,
directions and stability."""

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gemm_study.data.paths import CHECKOUT

CATALOGUE_FILE = CHECKOUT / "profiling" / "metric_catalogue.inc"

_LINE = re.compile(r"^GEMM_(METRIC|DERIVED|LAUNCH)\((.*)\)\s*$")


@dataclass(frozen=True)
class Metric:
    name: str
    kind: str  # metric | derived | launch | timing
    better: str  # lower | higher | none
    stability: str  # exact | noisy
    cupti: str = ""
    description: str = ""
    unit: str = ""

    @property
    def is_percent(self):
        return self.unit == "%"


def _split_args(text):
    parts, current, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    return [p.strip('"') for p in parts]


@lru_cache(maxsize=None)
def load_catalogue(path=CATALOGUE_FILE):
    """short name -> Metric (cached: callers must not mutate the dict)."""
    metrics = {}
    for line in Path(path).read_text().splitlines():
        match = _LINE.match(line.strip())
        if not match:
            continue
        kind, args = match.group(1).lower(), _split_args(match.group(2))
        if kind == "metric":
            name, cupti, unit, better, stability, what = args
            metrics[name] = Metric(name, "metric", better, stability, cupti, what, unit)
        elif kind == "derived":
            name, _num, _den, better, stability, what = args
            metrics[name] = Metric(name, "derived", better, stability, "", what)
        else:
            name, unit, better, stability, what = args
            metrics[name] = Metric(name, "launch", better, stability, "", what, unit)
    for name, better, what in [
        ("gflops", "higher", "GFLOP/s from the median launch time"),
        ("median_ms", "lower", "median kernel time per launch"),
        ("pct_of_cublas", "higher", "share of same-precision cuBLAS throughput"),
    ]:
        metrics[name] = Metric(name, "timing", better, "noisy", "", what)
    return metrics
