"""The auto dispatcher's table: per arithmetic and shape the fastest verified candidate, the
anchor it is measured against, and the rules for who may serve which arithmetic."""

import json

import pytest

from gemm_study.cli import tune_shapes as tune_cli
from gemm_study.tuning import shape_table as tune


def bench(name, ms, precision="fp32", compute=None, tags=("shapes",), shape=(1, 4096, 4096), error=False):
    family = name.split("/")[0]
    m, n, k = shape
    entry = {
        "name": f"gemm/{precision}/{name}/m:{m}/n:{n}/k:{k}/manual_time",
        "run_name": f"gemm/{precision}/{name}/m:{m}/n:{n}/k:{k}/manual_time",
        "run_type": "iteration",
        "repetition_index": 0,
        "median_ms": ms,
        "variant": {
            "name": name,
            "family": family,
            "precision": precision,
            "compute": compute or precision,
            "tags": list(tags),
            "params": {},
            "shape": {"m": m, "n": n, "k": k},
        },
    }
    if error:
        entry.update(error_occurred=True, error_message="wrong result")
    return entry


def test_the_fastest_candidate_wins_and_is_compared_with_the_faster_anchor():
    times, anchors = tune.collect(
        [
            bench("gemv/warps:4/ks:16", 0.030),
            bench("split_k/bm:64/ks:0", 0.040),
            bench("cublas", 0.027, tags=("reference",)),
            bench("cublaslt", 0.026, tags=("reference",)),
        ]
    )
    [(arith, shape, name, ms, second, anchor, anchor_ms)] = [w for w in tune.winners(times, anchors) if w[0] == "fp32"]
    assert (name, ms, second, anchor, anchor_ms) == ("gemv/warps:4/ks:16", 0.030, 0.040, "cublaslt", 0.026)


def test_a_device_split_wins_a_tie_within_two_percent():
    name, ms, _ = tune.pick({"gemv/ks:16": [0.0300], "gemv/ks:0": [0.0305], "gemv/ks:8": [0.04]})
    assert name == "gemv/ks:0" and ms == 0.0305
    name, _, _ = tune.pick({"gemv/ks:16": [0.0300], "gemv/ks:0": [0.0310]})
    assert name == "gemv/ks:16"


def test_fp32_kernels_serve_tf32_but_tf32_kernels_never_serve_fp32():
    assert tune.arithmetics_of({"precision": "fp32", "compute": "fp32", "tags": ["shapes"]}) == ["fp32", "tf32"]
    assert tune.arithmetics_of({"precision": "fp32", "compute": "tf32", "tags": ["tensor_core"]}) == ["tf32"]
    assert tune.arithmetics_of({"precision": "fp64", "compute": "fp64", "tags": ["ladder"]}) == ["fp64"]
    for level in ("reference", "seed", "cpu", "dispatch"):
        assert tune.arithmetics_of({"precision": "fp32", "compute": "fp32", "tags": [level]}) == []


def test_failed_benchmarks_and_the_dispatchers_never_win():
    times, anchors = tune.collect(
        [bench("gemv/ks:0", 0.001, error=True), bench("auto", 0.0001, tags=("dispatch",)), bench("split_k/ks:0", 0.05)]
    )
    assert {n for c in times.values() for n in c} == {"split_k/ks:0"}


def test_anchors_are_per_arithmetic_and_precision():
    _, anchors = tune.collect(
        [
            bench("cublas_tf32", 0.01, tags=("reference",)),
            bench("cublas", 0.02, precision="fp64", tags=("reference",)),
            bench("cublas", 0.03, tags=("reference",)),
        ]
    )
    assert dict(anchors[("tf32", (1, 4096, 4096))]) == {"cublas_tf32": [0.01]}
    assert dict(anchors[("fp64", (1, 4096, 4096))]) == {"cublas": [0.02]}
    assert dict(anchors[("fp32", (1, 4096, 4096))]) == {"cublas": [0.03]}


def test_render_writes_one_line_per_winner_with_its_rate_and_share_of_the_anchor():
    text = tune.render([("fp64", (128, 128, 65536), "split_k/bm:128/ks:0", 0.05, 0.06, "cublas", 0.068)], "test")
    assert 'GEMM_AUTO(fp64, 128, 128, 65536, "split_k/bm:128/ks:0")' in text
    assert "// fp64 128x128x65536: 42950 GFLOP/s, 136.0% of cublas (next best 35791)" in text


def write(tmp_path, entries, name="sweep.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"context": {"gpu_name": "GPU"}, "benchmarks": entries}))
    return path


def test_main_writes_the_table_and_a_later_file_replaces_a_shape(tmp_path):
    first = write(tmp_path, [bench("gemv/ks:0", 0.05), bench("split_k/ks:0", 0.06)], "a.json")
    second = write(tmp_path, [bench("split_k/ks:0", 0.04)], "b.json")
    out = tmp_path / "auto_table.inc"
    assert tune_cli.main([str(first), str(second), "--out", str(out)]) == 0
    text = out.read_text()
    assert 'GEMM_AUTO(fp32, 1, 4096, 4096, "split_k/ks:0")' in text
    assert "a.json, GPU; b.json, GPU" in text


@pytest.mark.parametrize("content", ["not json", json.dumps({"context": {}, "benchmarks": []})])
def test_bad_or_empty_input_is_a_one_line_error(tmp_path, capsys, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert tune_cli.main([str(path), "--out", str(tmp_path / "x.inc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tune_shapes:")


def test_dry_run_prints_and_writes_nothing(tmp_path, capsys):
    path = write(tmp_path, [bench("gemv/ks:0", 0.05)])
    out = tmp_path / "auto_table.inc"
    assert tune_cli.main([str(path), "--out", str(out), "--dry-run"]) == 0
    assert "GEMM_AUTO(fp32" in capsys.readouterr().out and not out.exists()
