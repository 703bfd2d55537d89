"""The L2-state probe of DRAM bytes (gemm-ncu-cache-states) and the script that runs every
cross-check on a GPU (scripts/ncu_crosscheck_shapes.sh), with a fake gemm-bench and fake ncu."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SCRIPTS, make_run

from gemm_study.ncu import session as ncu

MIB = 2**20
A, B = "gemm/fp64/shared/tile:32/m:1536/n:1536/k:1536", "gemm/fp64/warptile/m:1536/n:1536/k:1536"
# CUPTI flushed like ncu flushed; CUPTI as cross-checked is nearest the flushed state too.
STATES = {
    "CUPTI as cross-checked": {A: (100 * MIB, 19 * MIB), B: (40 * MIB, 19 * MIB)},
    "CUPTI --flush-l2": {A: (101 * MIB, 60 * MIB), B: (40 * MIB, 60 * MIB)},
    "CUPTI hardware counters only": {A: (100 * MIB, 19 * MIB)},
    "ncu warm": {A: (86 * MIB, 19 * MIB), B: (22 * MIB, 19 * MIB)},
    "ncu flushed": {A: (100 * MIB, 19 * MIB), B: (41 * MIB, 19 * MIB)},
    "ncu kernel replay": {A: (120 * MIB, 19 * MIB), B: (None, None)},
}


def test_findings_name_the_nearest_ncu_state_and_each_gap():
    from gemm_study.ncu import cache_states as ncu_cache_states

    found = ncu_cache_states.findings(STATES, [A, B])
    assert found[0] == (
        "DRAM bytes read by CUPTI as cross-checked are nearest ncu flushed for 2 "
        "(median 1.2% apart, at most 2.4%) of the benchmarks."
    )
    assert any(
        s.startswith("CUPTI --flush-l2 against ncu flushed (both flushed") and "at most 2.4%" in s for s in found
    )
    assert any(s.startswith("ncu warm against ncu flushed") and "at most 46.3%" in s for s in found)
    # One benchmark without a kernel-replay value: compared over the one that has it.
    assert any(s.startswith("ncu kernel replay against ncu warm") and "over 1 benchmarks" in s for s in found)


FAKE_BENCH = r"""#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
open(LOG, "a").write(" ".join(args) + "\n")
if "--list" in args:
    print(A + "\ttags=seed,crosscheck")
    print(B + "\ttags=ladder,crosscheck")
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
data = json.load(open(RUN))
read = 100 * 2**20 if "--flush-l2" in args else 90 * 2**20
for entry in data["benchmarks"]:
    entry["dram_read_bytes"] = read
json.dump(data, open(out, "w"))
"""


def _fake_bench(tmp_path):
    run = make_run(
        tmp_path / "run.json",
        {A: [5.0], B: [1.0]},
        {
            A: {"dram_read_bytes": 1.0, "dram_write_bytes": 19.0 * MIB},
            B: {"dram_read_bytes": 1.0, "dram_write_bytes": 19.0 * MIB},
        },
        context={"gpu_l2_bytes": str(50 * MIB)},
        repetitions=1,
    )
    log = tmp_path / "bench.log"
    bench = tmp_path / "gemm-bench"
    bench.write_text(
        FAKE_BENCH.replace("LOG", repr(str(log)))
        .replace("RUN", repr(str(run)))
        .replace("A +", repr(A) + " +")
        .replace("B +", repr(B) + " +")
    )
    bench.chmod(bench.stat().st_mode | stat.S_IEXEC)
    return bench, log


def test_the_probe_runs_every_state_and_writes_the_table(tmp_path, monkeypatch):
    from gemm_study.cli import ncu_cache_states

    bench, log = _fake_bench(tmp_path)
    sessions = []

    def fake_session(bench_path, bench_filter, shapes, precisions, stem, **kwargs):
        sessions.append((kwargs["replay_mode"], kwargs["cache_control"]))
        return stem.with_suffix(".ncu-rep"), ["ncu"]

    def fake_rows(rep, text, tool):
        read = {"ncu-flushed": 100, "ncu-warm": 70, "ncu-kernel-replay": 120}[rep.stem] * MIB
        return [
            {"benchmark": name, "kernel": "k", "dram__bytes_read.sum": read, "dram__bytes_write.sum": 19 * MIB}
            for name in (A, B)
        ], "a fake reader"

    monkeypatch.setattr(ncu, "gpu_present", lambda: True)
    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    monkeypatch.setattr(ncu, "run_session", fake_session)
    monkeypatch.setattr(ncu, "export_raw", lambda rep, metrics, tool: "")
    monkeypatch.setattr(ncu, "read_kernels", fake_rows)
    out = tmp_path / "out"
    assert ncu_cache_states.main(["--bench", str(bench), "--out", str(out)]) == 0
    runs = [line for line in log.read_text().splitlines() if "--benchmark_out=" in line]
    assert [("--flush-l2" in r, "--uncapped" in r, "--counters-cap=1" in r) for r in runs] == [
        (False, True, False),
        (True, True, False),
        (False, False, True),
    ]
    assert sessions == [("application", "none"), ("application", "all"), ("kernel", "none")]
    text = (out / "cache_states.md").read_text()
    assert f"| {A} | 54.0 | 36.0 | 90.0 / 19.0 | 100.0 / 19.0 | 90.0 / 19.0 | 70.0 / 19.0 | 100.0 / 19.0 |" in text
    found = json.loads((out / "cache_states.json").read_text())["findings"]
    # 90 MiB read against 100 flushed and 70 warm: nearest the flushed state, 10% apart.
    assert found[0].startswith(
        "DRAM bytes read by CUPTI as cross-checked are nearest ncu flushed for 2 (median 10.0% apart"
    )
    assert "Command: gemm-ncu-cache-states --bench" in text


def test_the_probe_without_a_gpu_is_bad_input(tmp_path, monkeypatch, capsys):
    from gemm_study.cli import ncu_cache_states
    from gemm_study.data.errors import run_cli

    monkeypatch.setattr(ncu, "gpu_present", lambda: False)
    assert run_cli(ncu_cache_states.main, ["--out", str(tmp_path)]) == 2
    assert "no NVIDIA GPU here" in capsys.readouterr().err


def test_the_shapes_script_runs_each_step_and_fails_when_one_does(tmp_path):
    # An nvidia-smi that lists no GPU ahead of any real one: every step exits 2.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\nexit 9\n")
    (fake / "nvidia-smi").chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}:/usr/bin:/bin", GEMM_TOOLS=str(Path(sys.executable).parent))
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "ncu_crosscheck_shapes.sh"), str(tmp_path / "x")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 1
    summary = (tmp_path / "x" / "summary.txt").read_text().splitlines()
    assert [line.split(":")[0] for line in summary] == [
        "1024x1024x1024",
        "1000x1000x1000",
        "3000x2000x1500",
        "cache_states_1536",
    ]
    assert all(": exit 2, " in line for line in summary)
    assert "no NVIDIA GPU here" in (tmp_path / "x" / "3000x2000x1500.log").read_text()


@pytest.mark.parametrize("also,kept", [("", 2), ("ladder,tensor_core", 1), ("reference", 0)])
def test_a_listing_narrowed_to_benchmarks_also_tagged(also, kept):
    listing = f"{A}\ttags=seed,crosscheck\n{B}\ttags=ladder,crosscheck\n"
    assert len(ncu.parse_listing(listing, [t for t in also.split(",") if t])) == kept
