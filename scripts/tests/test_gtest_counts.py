"""gemm-results gtest: the GPU scripts' test counts from GoogleTest's own JSON reports."""

import json
import subprocess

import pytest
from conftest import SCRIPTS

from gemm_study.cli.results import main as results_main
from gemm_study.data.errors import run_cli
from gemm_study.data.run_files import gtest_counts

BUILD = SCRIPTS.parent / "build" / "tests"


def report(tests):
    return {"testsuites": [{"name": "S", "testsuite": tests}]}


def test_failures_skips_and_passes_are_told_apart_and_unrun_tests_ignored(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(
        json.dumps(
            report(
                [
                    {"name": "a", "status": "RUN", "result": "COMPLETED"},
                    {"name": "b", "status": "RUN", "result": "COMPLETED", "failures": [{"failure": "x"}]},
                    {"name": "c", "status": "RUN", "result": "SKIPPED"},
                    {"name": "d", "status": "NOTRUN", "result": "SUPPRESSED"},
                ]
            )
        )
    )
    two = tmp_path / "two.json"
    two.write_text(json.dumps(report([{"name": "e", "status": "RUN", "result": "COMPLETED"}])))
    assert gtest_counts([one, two]) == (2, 1, 1)


def test_a_file_that_is_no_report_is_bad_input(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert run_cli(results_main, ["gtest", str(bad)]) == 2
    assert "not a GoogleTest JSON report" in capsys.readouterr().err


@pytest.mark.skipif(not (BUILD / "cpu_tests").exists(), reason="no build: the real reports need build/tests")
def test_real_reports_of_the_built_tests(tmp_path, capsys):
    """The CPU tests pass; the GPU tests skip on a machine without a GPU (and run on one)."""
    cpu = tmp_path / "cpu.json"
    subprocess.run(
        [BUILD / "cpu_tests", "--gtest_filter=Median.*", f"--gtest_output=json:{cpu}"], check=True, capture_output=True
    )
    assert run_cli(results_main, ["gtest", str(cpu)]) == 0
    assert capsys.readouterr().out.strip() == "passed 1, skipped 0, failed 0"
    gpu = tmp_path / "gpu.json"
    subprocess.run(
        [BUILD / "gpu_tests", "--gtest_filter=CorrectnessReference*", f"--gtest_output=json:{gpu}"], capture_output=True
    )
    passed, skipped, failed = gtest_counts([gpu])
    assert failed == 0 and passed + skipped >= 1
