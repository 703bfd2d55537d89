"""stages.json, the cross-GPU page, the cross-check's selection / L2 state / no-GPU rule."""

import json
import os
import stat
import subprocess

import pytest
from conftest import DATA, SCRIPTS, command, write_contract_run

from gemm_study.cli.stages import main as stages_main
from gemm_study.data.errors import run_cli
from gemm_study.data.results import load_results, one_row_per_benchmark, to_frame
from gemm_study.ncu import session as ncu
from gemm_study.report import cross_gpu, stages

H200 = SCRIPTS.parent / "reports" / "h200" / "results.json"


# ----------------------------------------------------------------------------- stages


def test_stage_seconds_are_summed_over_iterations_only():
    entries = [
        {"name": "a", "run_type": "iteration", "stage_verify_s": 1.0, "stage_timing_s": 2.0, "stage_counters_s": 3.0},
        {"name": "b", "run_type": "iteration", "stage_verify_s": 0.5, "stage_timing_s": 0.5, "stage_counters_s": 0.5},
        {"name": "a_mean", "run_type": "aggregate", "stage_verify_s": 100.0},
    ]
    assert stages.bench_stage_seconds(entries) == {"verify": 1.5, "timing": 2.5, "counters": 3.5}


def test_stages_cli_merges_script_and_bench_stages(tmp_path, capsys):
    results = tmp_path / "results.json"
    data = json.loads((DATA / "h200_512_partial.json").read_text())
    for entry in data["benchmarks"]:
        entry.update(stage_verify_s=0.1, stage_timing_s=0.2, stage_counters_s=0.3)
    results.write_text(json.dumps(data))
    out = tmp_path / "stages.json"
    assert (
        stages_main(
            [
                "--results",
                str(results),
                "--stage",
                "build=10",
                "--stage",
                "bench=100",
                "--setting",
                "sizes=512",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert stages_main(["--stage", "report=5", "--out", str(out)]) == 0
    recorded = json.loads(out.read_text())
    n = len(data["benchmarks"])
    assert recorded["stages"]["verify"] == pytest.approx(0.1 * n)
    assert recorded["stages"]["bench other"] == pytest.approx(100 - 0.6 * n)
    assert recorded["stages"]["report"] == 5 and recorded["settings"] == {"sizes": "512"}
    assert stages.total_wall(recorded["stages"]) == pytest.approx(115)
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1].split() == ["total", "115.0", "s"]
    assert printed[2].split() == ["verify", f"{0.1 * n:.1f}", "s"] and printed[2].startswith("  ")


def test_bad_stage_argument_is_bad_input(tmp_path, capsys):
    assert run_cli(stages_main, ["--stage", "build", "--out", str(tmp_path / "s.json")]) == 2
    assert "expected NAME=SECONDS" in capsys.readouterr().err


# ----------------------------------------------------------------------------- cross-GPU

MEMORY_BOUND = "gemm/fp64/naive_col/block:32x32/m:1024/n:1024/k:1024/manual_time"


def second_gpu(tmp_path):
    """A: the recorded H200 run with one benchmark made memory-bound; B: an imaginary GPU with
    1.5x the DRAM bandwidth and the same SMs and clocks, where that kernel runs 1.5x faster."""
    data = json.loads(H200.read_text())
    entry = next(e for e in data["benchmarks"] if e["name"] == MEMORY_BOUND)
    entry["dram_read_bytes"] = 0.8 * float(data["context"]["peak_dram_gbs"]) * 1e9 * entry["median_ms"] / 1e3
    a = tmp_path / "a.json"
    a.write_text(json.dumps(data))
    data["context"].update(gpu_name="Imaginary GPU", peak_dram_gbs=str(1.5 * float(data["context"]["peak_dram_gbs"])))
    entry = next(e for e in data["benchmarks"] if e["name"] == MEMORY_BOUND)
    entry["median_ms"] /= 1.5
    b = tmp_path / "b.json"
    b.write_text(json.dumps(data))
    return a, b


def test_cross_gpu_page_explains_ratios_by_the_context(tmp_path):
    from gemm_study.cli.cross_gpu import main as cross_main

    a, b = second_gpu(tmp_path)
    out = tmp_path / "cross_gpu.md"
    assert cross_main([str(a), str(b), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| peak DRAM bandwidth | 4,814 GB/s | 7,221 GB/s | 1.5 |" in text
    # DRAM at 80% of its peak on A: predicted to move with the bandwidth, and it did.
    ms = next(e["median_ms"] for e in json.loads(a.read_text())["benchmarks"] if e["name"] == MEMORY_BOUND)
    row = f"| naive_col/block:32x32 | {ms:.3g} | {ms / 1.5:.3g} | 1.5 | 1 | 1.5 | HBM bandwidth | HBM bandwidth | yes |"
    assert row in text, row
    # Same SMs and clocks: a kernel bound by neither should not move, and did not.
    bound = next(
        e["median_ms"]
        for e in json.loads(a.read_text())["benchmarks"]
        if e["name"] == "gemm/fp32/shared/tile:32/m:4096/n:4096/k:4096/manual_time"
    )
    assert f"| shared/tile:32 | {bound:.3g} | {bound:.3g} | 1 | 1 | 1.5 | SM clock | SM clock | yes | no |" in text
    assert "have A+B+C within both L2s" in text and "cpu_serial" not in text


def test_cross_gpu_pairs_only_common_benchmarks(tmp_path):
    a, b = second_gpu(tmp_path)
    context_a, entries_a = load_results(a)
    frame_b = one_row_per_benchmark(to_frame([e for e in load_results(b)[1] if "/m:256/" in e["name"]]))
    text = cross_gpu.page(context_a, one_row_per_benchmark(to_frame(entries_a)), load_results(b)[0], frame_b)
    assert "### fp32, 256x256x256" in text and "4096x4096x4096" not in text


# ----------------------------------------------------------------------------- ncu cross-check


def test_crosscheck_without_a_gpu_is_one_line_and_exit_2(tmp_path, monkeypatch):
    env = dict(os.environ, PATH=str(tmp_path))  # no nvidia-smi on PATH
    proc = subprocess.run(
        [command("gemm-ncu-crosscheck"), "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no NVIDIA GPU here" in proc.stderr


FAKE_BENCH = r"""#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
open(LOG, "a").write(" ".join(args) + "\n")
if "--list" in args:
    print("gemm/fp32/shared/tile:16/m:512/n:512/k:512\ttags=seed,tile_sweep,crosscheck")
    print("gemm/fp32/shared/tile:32/m:512/n:512/k:512\ttags=seed,tile_sweep,crosscheck")
    print("gemm/fp32/naive_row/block:8x8/m:512/n:512/k:512\ttags=seed,crosscheck")
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
data = json.load(open(RUN))
data["context"]["l2_state"] = "cold: L2 flushed before every launch"
json.dump(data, open(out, "w"))
"""


def test_crosscheck_selects_by_tag_and_profiles_in_the_same_l2_state(tmp_path, monkeypatch):
    from gemm_study.cli import ncu_crosscheck

    run = write_contract_run(tmp_path / "run.json")
    log = tmp_path / "bench.log"
    bench = tmp_path / "gemm-bench"
    bench.write_text(FAKE_BENCH.replace("LOG", repr(str(log))).replace("RUN", repr(str(run))))
    bench.chmod(bench.stat().st_mode | stat.S_IEXEC)
    seen, sessions = {}, []

    def fake_session(bench_path, bench_filter, shapes, precisions, stem, **kwargs):
        seen.update(kwargs, filter=bench_filter)
        sessions.append(kwargs)
        return tmp_path / "x.ncu-rep", ["ncu", "--cache-control", kwargs["cache_control"]]

    header = '"ID","Kernel Name","NVTX Range","dram__bytes_read.sum"\n"","","","byte"\n'
    row = '"0","k","gemm:gemm.fp32.shared.tile-16.m-512.n-512.k-512","{}"\n'
    cupti = next(
        e
        for e in json.loads(run.read_text())["benchmarks"]
        if e["name"] == "gemm/fp32/shared/tile:16/m:512/n:512/k:512/manual_time"
    )["dram_read_bytes"]
    monkeypatch.setattr(ncu, "gpu_present", lambda: True)
    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    monkeypatch.setattr(ncu, "run_session", fake_session)
    monkeypatch.setattr(ncu, "export_raw", lambda rep, metrics, tool: header + row.format(cupti + 50 * 2**20))
    monkeypatch.setattr(ncu.ncu_report_reader, "load_module", lambda ncu=None: (None, "a fake ncu"))
    status = ncu_crosscheck.main(
        ["--bench", str(bench), "--shape", "512x512x512", "--limit", "2", "--out", str(tmp_path / "out")]
    )
    assert "--list --tags=crosscheck --shapes=512x512x512" in log.read_text()
    # The CUPTI run lifts the counter caps: a capped benchmark would have no counters to compare.
    cupti_run = next(line for line in log.read_text().splitlines() if "--benchmark_out=" in line)
    assert "--uncapped" in cupti_run
    assert seen["cache_control"] == "all"  # the counters were collected with L2 flushed
    # The cache-state counters come from an application-replay session of their own, the rest
    # from kernel replay: no memory restore between passes refills L2 before they are read.
    assert [s["replay_mode"] for s in sessions] == ["kernel", "application"]
    assert set(sessions[1]["metrics"]) == {
        "dram__bytes_read.sum",
        "dram__bytes_write.sum",
        "lts__t_sector_hit_rate.pct",
        "lts__t_sectors_srcunit_tex_op_read.sum",
        "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
        "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
    }
    assert sessions[1]["cache_control"] == "all"
    assert not set(sessions[0]["metrics"]) & set(sessions[1]["metrics"])
    assert "shared/tile:32" in seen["filter"] and "naive_row" not in seen["filter"]  # --limit 2
    assert status == 1  # DRAM bytes 50 MiB apart: a required agreement fails
    table = json.loads((tmp_path / "out" / "ncu_crosscheck.json").read_text())
    assert table["cache_control"] == "all" and table["rows"][0]["agree"] is False


def test_crosscheck_without_ncu_stops_before_running_gemm_bench(tmp_path, monkeypatch, capsys):
    from gemm_study.cli import ncu_crosscheck

    def no_ncu():
        raise ncu.InputError("ncu (Nsight Compute) not found: install it or put it on PATH")

    log = tmp_path / "bench.log"
    bench = tmp_path / "gemm-bench"
    bench.write_text(FAKE_BENCH.replace("LOG", repr(str(log))).replace("RUN", repr(str(tmp_path / "run.json"))))
    bench.chmod(bench.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(ncu, "gpu_present", lambda: True)
    monkeypatch.setattr(ncu, "find_ncu", no_ncu)
    status = run_cli(ncu_crosscheck.main, ["--bench", str(bench), "--out", str(tmp_path / "out")])
    assert status == 2 and "ncu (Nsight Compute) not found" in capsys.readouterr().err
    assert not log.exists() and not (tmp_path / "out").exists()


def test_cross_gpu_on_a_file_without_median_ms_uses_its_mean_and_says_so(tmp_path):
    """An older file (real_time only) used to fail with 'unexpected KeyError'."""
    from gemm_study.cli.cross_gpu import main as cross_main

    a, b = second_gpu(tmp_path)
    data = json.loads(b.read_text())
    for entry in data["benchmarks"]:
        if "median_ms" in entry:
            entry["real_time"] = entry.pop("median_ms")
            entry["time_unit"] = "ms"
    b.write_text(json.dumps(data))
    out = tmp_path / "cross_gpu.md"
    assert cross_main([str(a), str(b), "--out", str(out)]) == 0
    text = out.read_text()
    assert "Note: B's file has no median_ms: its times are Google Benchmark's mean real_time." in text
    ms = next(e["median_ms"] for e in json.loads(a.read_text())["benchmarks"] if e["name"] == MEMORY_BOUND)
    assert f"| naive_col/block:32x32 | {ms:.3g} | {ms / 1.5:.3g} | 1.5 |" in text
