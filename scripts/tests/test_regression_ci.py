"""The CI job's one command (scripts/regression_ci.sh) end to end on the CPU, with recorded runs in
place of gemm-bench: the first run becomes the baseline, later ones are compared with it, appended
to the GPU's history and drawn on its dashboard; a regression fails the job, a pull request
(--no-append) leaves the history as it was. The workflow file runs the same command."""

import json
import os
import subprocess

from conftest import SCRIPTS, require
from test_history import TUNED, WARP, history_of

require("otava", "apache-otava")  # the history's change-point search

ROOT = SCRIPTS.parent


def ci(history_root, *argv):
    proc = subprocess.run(
        [str(SCRIPTS / "regression_ci.sh"), str(history_root), *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, CI="true"),
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_runs_are_compared_appended_and_drawn_and_a_regression_fails(tmp_path):
    runs = history_of(tmp_path, {TUNED: [1, 1, 1, 1.1], WARP: [1, 1, 1, 1]})
    root = tmp_path / "history"
    status, out = ci(root, "--recorded", runs[0])
    assert status == 0 and "no baseline yet: this run (r0aaaaaaaaaaa) is the baseline now" in out
    gpu = root / "h200"
    assert (gpu / "baseline.json").is_file() and not (gpu / "dashboard.html").exists()
    for run in runs[1:3]:
        status, out = ci(root, "--recorded", run)
        assert status == 0 and "no regression" in out, out[-2000:]
    assert sorted(p.name for p in (gpu / "runs").iterdir()) == [
        "001_r0aaaaaaaaaaa.json",
        "002_r1aaaaaaaaaaa.json",
        "003_r2aaaaaaaaaaa.json",
    ]
    assert "No open regression." in (gpu / "dashboard.html").read_text()
    status, out = ci(root, "--recorded", runs[3], "--no-append")
    assert status == 1 and "REGRESSION" in out and len(list((gpu / "runs").iterdir())) == 3
    assert "Regressions: 1" in (gpu / "compare.md").read_text()
    assert "1 open regression(s)." in (gpu / "dashboard.html").read_text()
    status, out = ci(root, "--recorded", runs[3])
    assert status == 1 and len(list((gpu / "runs").iterdir())) == 4
    history = json.loads((gpu / "history.json").read_text())
    assert [e["first_revision"] for e in history["regressions"] if e["open"]] == ["r3aaaaaaaaaaa"]


def test_bad_input_is_exit_2(tmp_path):
    assert ci(tmp_path / "h", "--recorded", tmp_path / "nope.json")[0] == 2
    assert ci(tmp_path / "h", "--bogus")[0] == 2
    (tmp_path / "junk.json").write_text("{}")
    status, out = ci(tmp_path / "h", "--recorded", tmp_path / "junk.json")
    assert status == 2 and "not a gemm-bench results file" in out


def test_the_workflow_runs_the_local_command_on_a_gpu_runner():
    text = (ROOT / ".github" / "workflows" / "gpu-regression.yml").read_text()
    assert "runs-on: [self-hosted, linux, gpu]" in text
    assert 'scripts/regression_ci.sh "$GEMM_HISTORY_ROOT"' in text and "--no-append" in text
    assert "actions/upload-artifact" in text and "dashboard.html" in text
