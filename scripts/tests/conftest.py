import json
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(SCRIPTS))


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
            row = {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
                   "repetitions": repetitions, "repetition_index": rep, "threads": 1, "iterations": 10,
                   "real_time": t, "cpu_time": t, "time_unit": "ms", "median_ms": t, "gflops": 1.0 / t}
            row.update((counters_by_name or {}).get(name, {}))
            rows.append(row)
    path.write_text(json.dumps({"context": base_context, "benchmarks": rows}))
    return path
