import json

import numpy as np
import pytest

from compare import main as compare_main
from conftest import make_run

NAMES = ["gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024", "gemm/fp32/naive_row/block:16x16/m:1024/n:1024/k:1024"]


def jitter(center, rel, n=10, seed=0):
    rng = np.random.default_rng(seed)
    return list(center * (1 + rel * rng.uniform(-1, 1, n)))


def run(tmp_path, base, cand, *extra):
    out = tmp_path / "cmp.json"
    status = compare_main([str(base), str(cand), "--json", str(out), *extra])
    return status, json.loads(out.read_text()) if out.exists() else None


def verdicts(result):
    return {r["name"].split("/")[2]: r["verdict"] for r in result["benchmarks"]}


def test_identical_files_are_all_same(tmp_path, recorded):
    status, result = run(tmp_path, recorded, recorded)
    assert status == 0
    assert set(r["verdict"] for r in result["benchmarks"]) == {"SAME"}
    assert result["regressions"] == []


def test_ten_percent_slowdown_with_low_noise_is_slower(tmp_path):
    base = make_run(tmp_path / "a.json", {n: jitter(1.0, 0.005, seed=i) for i, n in enumerate(NAMES)})
    cand = make_run(tmp_path / "b.json", {NAMES[0]: jitter(1.10, 0.005, seed=7), NAMES[1]: jitter(1.0, 0.005, seed=8)})
    status, result = run(tmp_path, base, cand)
    assert status == 1
    assert verdicts(result) == {"shared": "SLOWER", "naive_row": "SAME"}
    assert result["regressions"] == [NAMES[0] + "/manual_time"]


def test_slowdown_inside_the_noise_is_not_slower(tmp_path):
    base = make_run(tmp_path / "a.json", {NAMES[0]: jitter(1.0, 0.30, seed=1)})
    cand = make_run(tmp_path / "b.json", {NAMES[0]: jitter(1.05, 0.30, seed=2)})
    status, result = run(tmp_path, base, cand)
    assert status == 0
    assert verdicts(result)["shared"] != "SLOWER"


def test_speedup_is_faster_and_never_fails(tmp_path):
    base = make_run(tmp_path / "a.json", {NAMES[0]: jitter(1.0, 0.005, seed=1)})
    cand = make_run(tmp_path / "b.json", {NAMES[0]: jitter(0.8, 0.005, seed=2)})
    status, result = run(tmp_path, base, cand)
    assert status == 0
    assert verdicts(result)["shared"] == "FASTER"


def test_bank_conflict_regression_is_flagged(tmp_path):
    times = {NAMES[0]: jitter(1.0, 0.005, seed=1)}
    base = make_run(tmp_path / "a.json", times, {NAMES[0]: {"smem_ld_wavefronts": 1000.0, "smem_ld_bank_conflicts": 0.0}})
    cand = make_run(tmp_path / "b.json", times, {NAMES[0]: {"smem_ld_wavefronts": 32000.0, "smem_ld_bank_conflicts": 31000.0}})
    status, result = run(tmp_path, base, cand)
    counters = result["benchmarks"][0]["counters"]
    assert counters["smem_ld_bank_conflicts"]["verdict"] == "WORSE"
    assert counters["smem_ld_wavefronts"]["verdict"] == "WORSE"
    assert status == 1  # a worse exact count is a regression even at equal time


def test_counter_on_one_side_is_missing_not_zero(tmp_path):
    times = {NAMES[0]: jitter(1.0, 0.005, seed=1)}
    base = make_run(tmp_path / "a.json", times, {NAMES[0]: {"gld_sectors": 100.0}})
    cand = make_run(tmp_path / "b.json", times)
    _, result = run(tmp_path, base, cand)
    assert result["benchmarks"][0]["counters"]["gld_sectors"]["verdict"] == "MISSING"


def test_missing_and_new_benchmarks(tmp_path):
    base = make_run(tmp_path / "a.json", {NAMES[0]: jitter(1.0, 0.01)})
    cand = make_run(tmp_path / "b.json", {NAMES[1]: jitter(1.0, 0.01)})
    status, result = run(tmp_path, base, cand)
    assert verdicts(result) == {"shared": "MISSING", "naive_row": "NEW"}
    assert status == 0


def test_malformed_json_is_bad_input(tmp_path, recorded, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text(recorded.read_text()[:5000])
    from gemm_study.errors import run_cli
    assert run_cli(compare_main, [str(recorded), str(broken)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_context_mismatch_is_refused_unless_allowed(tmp_path):
    from gemm_study.errors import run_cli
    base = make_run(tmp_path / "a.json", {NAMES[0]: jitter(1.0, 0.01)})
    cand = make_run(tmp_path / "b.json", {NAMES[0]: jitter(1.0, 0.01)}, context={"gpu_name": "NVIDIA H100 80GB HBM3"})
    assert run_cli(compare_main, [str(base), str(cand)]) == 2
    assert run_cli(compare_main, [str(base), str(cand), "--allow-context-mismatch"]) == 0


def test_alias_compares_two_variants_of_one_run(tmp_path):
    padded = "gemm/fp32/shared_col_padded/tile:32/m:1024/n:1024/k:1024"
    unpadded = "gemm/fp32/shared_col/tile:32/m:1024/n:1024/k:1024"
    base = make_run(tmp_path / "a.json", {padded: jitter(1.0, 0.005)})
    cand = make_run(tmp_path / "b.json", {unpadded: jitter(3.0, 0.005)})
    status, result = run(tmp_path, base, cand, "--alias", "shared_col=shared_col_padded")
    assert status == 1
    assert verdicts(result) == {"shared_col_padded": "SLOWER"}


def test_help(capsys):
    with pytest.raises(SystemExit) as done:
        compare_main(["--help"])
    assert done.value.code == 0
    assert "Exit status" in capsys.readouterr().out


@pytest.mark.parametrize("flag", [["--min-effect", "-0.1"], ["--alpha", "1.5"], ["--count-tolerance", "-1"]])
def test_bad_settings_are_bad_input(tmp_path, recorded, capsys, flag):
    from gemm_study.errors import run_cli
    assert run_cli(compare_main, [str(recorded), str(recorded), *flag]) == 2
    assert "expected a fraction" in capsys.readouterr().err
