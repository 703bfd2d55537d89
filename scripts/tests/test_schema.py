"""The results schema (scripts/gemm_study/data/results.schema.json): every committed results file
and a real gemm-bench run without a GPU conform; per-benchmark counters and the members of
`samples` are open; the reader refuses a file of another schema version in one line."""

import copy
import gzip
import json
import os
import subprocess

import pytest
from conftest import SCRIPTS

from gemm_study.cli.compare import main as compare_main
from gemm_study.data.errors import run_cli
from gemm_study.data.schema import problems, results_schema, schema_version

ROOT = SCRIPTS.parent
BENCH = ROOT / os.environ.get("BUILD_DIR", "build") / "bench" / "gemm-bench"


def results_files():
    """The committed files that are gemm-bench results (context and benchmarks)."""
    found = []
    for path in sorted(ROOT.glob("reports/**/*.json*")):
        raw = path.read_bytes()
        data = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
        if isinstance(data, dict) and "context" in data and "benchmarks" in data:
            found.append((path, data))
    return found


COMMITTED = results_files()


def reference_problems(data):
    """The jsonschema package's verdict, where it is installed (CI installs it), else None."""
    try:
        import jsonschema
    except ImportError:
        return None
    return [e.message for e in jsonschema.Draft202012Validator(results_schema()).iter_errors(data)]


def test_the_schema_is_versioned_and_valid_json_schema():
    assert schema_version() == 1
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema not installed (scripts/bootstrap --test)")
    jsonschema.Draft202012Validator.check_schema(results_schema())


@pytest.mark.parametrize("path, data", COMMITTED, ids=[str(p.relative_to(ROOT)) for p, _ in COMMITTED])
def test_every_committed_results_file_conforms(path, data):
    assert problems(data) == []
    assert reference_problems(data) in (None, [])


def test_a_real_run_without_a_gpu_conforms(tmp_path):
    if not BENCH.is_file():
        pytest.skip(f"no gemm-bench at {BENCH}: build it first (cmake -B build -G Ninja && cmake --build build)")
    out = tmp_path / "x.json"
    proc = subprocess.run(
        [str(BENCH), "--cpu-only", "--sizes=64", f"--benchmark_out={out}", "--benchmark_out_format=json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["benchmarks"] and problems(data) == []
    assert reference_problems(data) in (None, [])


def one_run():
    path, data = COMMITTED[0]
    return copy.deepcopy({"context": data["context"], "benchmarks": data["benchmarks"][:3]})


def test_counters_and_sample_members_are_open():
    data = one_run()
    entry = data["benchmarks"][0]
    entry.update(stage_warmup_s=0.5, stage_total_s=2.0, samples_ci_pct=1.2, median_ms_all=0.9, samples_kept=30)
    entry.setdefault("samples", {})["power_w"] = [650.0, 660.0]
    entry["choice"] = {"library": "cuBLASLt", "algo_id": 20}  # a library's algorithm, as gemm-bench records it
    assert problems(data) == [] and reference_problems(data) in (None, [])


@pytest.mark.parametrize(
    "break_it, where",
    [
        (lambda e: e.update(stage_total_s="2 s"), "stage_total_s: expected number"),
        (lambda e: e.pop("name"), "missing name"),
        (lambda e: e.update(time_unit="minutes"), "time_unit: expected one of"),
        (lambda e: [e.pop(k) for k in ("real_time", "gflops")], "matches none of 2 alternatives"),
        (lambda e: e.update(variant={"name": "x"}), "variant: missing family"),
    ],
)
def test_the_structure_is_pinned(break_it, where):
    data = one_run()
    break_it(data["benchmarks"][0])
    found = problems(data)
    assert any(where in line for line in found), found
    reference = reference_problems(data)
    assert reference is None or reference  # the jsonschema package finds it too


def test_a_failed_run_needs_its_error_not_its_times():
    data = one_run()
    entry = data["benchmarks"][0]
    for key in ("real_time", "gflops"):
        entry.pop(key, None)
    entry.update(error_occurred=True, error_message="wrong result: max_rel_err 0.5")
    assert problems(data) == [] and reference_problems(data) in (None, [])


def test_the_reader_refuses_another_schema_version_in_one_line(tmp_path, capsys):
    data = one_run()
    data["context"]["schema_version"] = 2
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data))
    assert run_cli(compare_main, [str(path), str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "results schema version 2; these tools read version 1" in err


def test_gemm_bench_writes_the_version_as_a_string_and_it_counts(tmp_path, capsys):
    """Google Benchmark's context holds strings: "1" is version 1, "2" is refused like 2."""
    data = one_run()
    data["context"]["schema_version"] = "1"
    assert problems(data) == []
    path = tmp_path / "current.json"
    path.write_text(json.dumps(data))
    assert run_cli(compare_main, [str(path), str(path)]) == 0
    data["context"]["schema_version"] = "2"
    path.write_text(json.dumps(data))
    assert run_cli(compare_main, [str(path), str(path)]) == 2
    assert "results schema version 2; these tools read version 1" in capsys.readouterr().err
