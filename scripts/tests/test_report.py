import re
import subprocess

import pytest
from conftest import DATA, SCRIPTS, command

from gemm_study.cli.report import main as report_main
from gemm_study.data.errors import run_cli


def test_report_from_a_real_run(tmp_path, recorded):
    assert report_main([str(recorded), "--out", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "# GEMM study on NVIDIA H200" in text
    assert "## Every variant, fp32, 512x512x512" in text
    # Generated from the data: the shared tiles' sectors halve with each doubling of the tile.
    assert "shared tile:8 -> tile:16 (fp32, 512x512x512)" in text
    assert "gld_sectors falls from 4.194e+06 to 2.097e+06" in text
    assert "Seed 000, table 'row'" in text and "Seed 002 (Tesla T4)" in text
    for name in ("gflops_vs_tile_fp32", "counters_vs_tile_fp32"):
        assert (tmp_path / f"{name}.png").stat().st_size > 1000
        assert (tmp_path / f"{name}.svg").exists()
    assert not (tmp_path / "ladder_fp32.png").exists()  # no rung in this run: no ladder figure
    assert (tmp_path / "results.csv").exists()


def test_truncated_input_is_a_clear_error(tmp_path, capsys):
    status = run_cli(report_main, [str(DATA / "truncated_run.json"), "--out", str(tmp_path)])
    assert status == 2
    assert "truncated" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content,message",
    [
        ("[]", "not a Google Benchmark results file"),
        ('{"benchmarks": []}', "no 'context'"),
        ('{"context": {}, "benchmarks": [{"name": "other/thing"}]}', "no gemm benchmarks"),
    ],
)
def test_malformed_input(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert run_cli(report_main, [str(bad), "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


def test_missing_file(tmp_path, capsys):
    assert run_cli(report_main, [str(tmp_path / "nope.json"), "--out", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err


COMMANDS = re.findall(r"^(gemm-[\w-]+) = ", (SCRIPTS.parent / "pyproject.toml").read_text(), re.MULTILINE)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help_that_names_it(name):
    """The usage line names the command however it was installed (not `usage: -c`)."""
    proc = subprocess.run([command(name), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"usage: {name} ")


def test_ncu_exports_add_an_agreement_section(tmp_path, recorded):
    export = DATA / "ncu_raw_naive_col.csv"  # a 1024^3 benchmark: not in the 512^3 results
    assert report_main([str(recorded), "--out", str(tmp_path), "--ncu", str(export)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "## CUPTI vs Nsight Compute" in text
    assert "From the given exports: No benchmark of the results appears in the ncu exports." in text


def test_the_agreement_table_goes_to_its_own_file_linked_with_its_tally(tmp_path, recorded):
    import json

    name = "gemm/fp32/shared/tile:16/m:512/n:512/k:512"
    sectors = next(
        e for e in json.loads(recorded.read_text())["benchmarks"] if e.get("run_name") == name + "/manual_time"
    )["gld_sectors"]
    export = tmp_path / "counts.csv"
    export.write_text(
        '"ID","Kernel Name","NVTX Range","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"\n'
        '"","","","sector"\n'
        f'"0","k","gemm:gemm.fp32.shared.tile-16.m-512.n-512.k-512","{sectors:.0f}"\n'
    )
    out = tmp_path / "out"
    assert report_main([str(recorded), "--out", str(out), "--ncu", str(export)]) == 0
    text = (out / "report.md").read_text()
    assert "[ncu/agreement.md](ncu/agreement.md). 1 of 1 required agreements hold (1 benchmarks)." in text
    row = f"| {name} | gld_sectors |"
    assert row in (out / "ncu" / "agreement.md").read_text()
    assert row not in text


def test_the_crosscheck_table_is_linked_not_inlined(tmp_path, recorded):
    table = tmp_path / "ncu_crosscheck.md"
    table.write_text(
        "| benchmark | metric |\n|---|---|\n| x | gld_sectors |\n\n5 of 6 required agreements hold (1 benchmarks).\n"
    )
    out = tmp_path / "out"
    assert report_main([str(recorded), "--out", str(out), "--ncu-crosscheck", str(table)]) == 0
    text = (out / "report.md").read_text()
    assert "[ncu/ncu_crosscheck.md](ncu/ncu_crosscheck.md). 5 of 6 required agreements hold (1 benchmarks)." in text
    assert "| x | gld_sectors |" not in text
    assert (out / "ncu" / "ncu_crosscheck.md").read_text() == table.read_text()


def test_several_ncu_exports_of_one_benchmark_are_merged(tmp_path):
    # The cross-check writes two exports per run (counts, and DRAM/L2 from an application-replay
    # session): the agreement table must hold the metrics of both, not only the last file's.
    from gemm_study.data.results import one_row_per_benchmark, to_frame
    from gemm_study.report import study_report as report_script

    name = "gemm/fp32/shared/tile:16/m:512/n:512/k:512"
    kernel = one_row_per_benchmark(
        to_frame(
            [
                {
                    "name": name + "/manual_time",
                    "run_type": "iteration",
                    "real_time": 1.0,
                    "time_unit": "ms",
                    "median_ms": 1.0,
                    "gld_sectors": 10.0,
                    "dram_read_bytes": 0.0,
                }
            ]
        )
    )
    header = '"ID","Kernel Name","NVTX Range","{}"\n"","","","{}"\n'
    counts = tmp_path / "counts.csv"
    counts.write_text(
        header.format("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector")
        + '"0","k","gemm:gemm.fp32.shared.tile-16.m-512.n-512.k-512","10"\n'
    )
    cache = tmp_path / "cache.csv"
    cache.write_text(
        header.format("dram__bytes_read.sum", "byte")
        + '"0","k","gemm:gemm.fp32.shared.tile-16.m-512.n-512.k-512","0"\n'
    )
    text = report_script.ncu_agreement(kernel, [counts, cache])
    assert "| gld_sectors |" in text and "| dram_read_bytes |" in text


def test_a_step_without_counters_says_so_instead_of_no_counter_moved(tmp_path, recorded):
    """Above the counters cap the write-ups' kernels have no counters: the step sentence must not
    claim that no counter moved."""
    import json

    data = json.loads(recorded.read_text())
    for entry in data["benchmarks"]:
        if "/shared/tile:16/" in entry["name"] and "fp32" in entry["name"]:
            for key in list(entry):
                if key in (
                    "gld_sectors",
                    "gld_sectors_per_request",
                    "smem_ld_wavefronts_per_request",
                    "achieved_occupancy",
                    "theoretical_occupancy",
                    "dram_read_bytes",
                    "l2_hit_rate",
                    "registers_per_thread",
                ):
                    del entry[key]
            entry["counters_capped"] = 1
    path = tmp_path / "capped.json"
    path.write_text(json.dumps(data))
    assert report_main([str(path), "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert (
        "shared tile:8 -> tile:16 (fp32, 512x512x512)" in text
        and "counters above the counters cap (gemm-bench --counters-cap) for tile:16, so no counter explains" in text
    )
    sentence = next(line for line in text.splitlines() if "shared tile:8 -> tile:16 (fp32, 512x512x512)" in line)
    assert "no counter moved" not in sentence
