"""The report people read, on a synthetic study in the current format: the summary on top with the
limiter of every rung, a table of contents whose links resolve, the account and the steps as
files, every roofline point under its own ceiling, seed 001's series sorted as numbers with both
speedups, and the README's ladder table from the same data."""

import json
import subprocess
import sys

import pandas as pd
import pytest
import study_rows
from conftest import SCRIPTS
from test_ladder import kernel_of

from gemm_study.analysis import account, ceilings
from gemm_study.cli.report import main as report_main
from gemm_study.cli.summary_table import main as summary_main
from gemm_study.data.errors import InputError, run_cli
from gemm_study.report import readme_table, roofline, seed_series, tile_sweep


def link_problems(page):
    """docs/check_links.py run on one page: its lines of links and paths that do not resolve."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS.parent / "docs" / "check_links.py"), str(page)], capture_output=True, text=True
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.splitlines()[:-1]  # the last line is the tally


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    out = folder / "out"
    assert (
        report_main([str(study_rows.write(folder / "study.json", study_rows.study(series()))), "--out", str(out)]) == 0
    )
    return out


def series():
    """Seed 001's series at 256^3: one-thread blocks (kernel and end to end) and the serial CPU."""
    shape = (256, 256, 256)
    entries = [study_rows.entry("fp32", "cpu_serial", 2.0, ("cpu",), shape=shape)]
    for blocks in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        gflops = 0.1 * blocks
        for end_to_end, speed in ((False, gflops), (True, gflops / 2)):
            entries.append(
                study_rows.entry(
                    "fp32",
                    f"single_thread_blocks/blocks:{blocks}",
                    speed,
                    ("seed", "e2e"),
                    shape=shape,
                    end_to_end=end_to_end,
                    threads_per_block=1,
                    warps_launched=blocks,
                )
            )
    return entries


def test_the_summary_comes_first_with_the_limiter_of_every_rung(report):
    text = (report / "report.md").read_text()
    order = [text.index(h) for h in ("## Contents", "## Summary", "## The ladders", "## Ceilings and the roofline")]
    assert order == sorted(order)
    summary = text[text.index("## Summary") : text.index("## The ladders")]
    assert "| 9 | tuned | tuned/bm:128/bn:128 | 49,100 | 95.3 | 93.5 | FMA pipe (FP32) | 0.8 |" in summary
    assert "**TF32 on the tensor cores, 1024x1024x1024** (4 of 4 predicted steps within 10%" in summary
    assert "![ladder_fp32](ladder_fp32.png)" in summary


def test_every_link_of_the_table_of_contents_resolves(report):
    assert link_problems(report / "report.md") == []
    contents = (report / "report.md").read_text().split("## Contents")[1].split("## Summary")[0]
    assert contents.count("- [") >= 8


def test_the_account_and_the_steps_are_files_beside_the_report(report):
    accounts = json.loads((report / "account.json").read_text())
    tuned = accounts["gemm/fp32/tuned/bm:128/bn:128/m:1024/n:1024/k:1024/manual_time"]
    assert tuned["limiter"] == "fma" and tuned["explained"] == pytest.approx(0.8)
    assert accounts["gemm/fp32/cpu_serial/m:256/n:256/k:256/manual_time"]["account"] is None
    steps = pd.read_csv(report / "ladder_steps.csv")
    assert (steps.verdict == "unexplained").sum() == 4 and len(steps) == 24
    csv = pd.read_csv(report / "results.csv")
    assert {"account_limiter", "account_explained", "account_fma_ms", "pct_of_same_arithmetic"} <= set(csv.columns)
    for name in ("ladder_fp32", "ladder_fp64", "roofline_fp32", "roofline_fp64"):
        assert (report / f"{name}.png").stat().st_size > 10000


def test_every_roofline_point_is_under_its_own_ceiling(tmp_path):
    context, kernel = kernel_of(study_rows.write(tmp_path / "s.json"))
    table = ceilings.ceilings(context, kernel)
    for precision in ("fp32", "fp64"):
        points = roofline.points(kernel, precision, "1024x1024x1024", context, table)
        assert roofline.levels_present(points, table) == ["dram", "l2", "shared"]
        assert roofline.above_ceiling(points, table, context) == []
        assert len(points) == len(set(points.label))  # the key names each point once
    # A point above the shared-memory roof (more wavefronts than its time allows) is caught.
    points = roofline.points(kernel, "fp32", "1024x1024x1024", context, table)
    points.loc[points.label == "9 tuned", "smem_wavefronts"] = 1e12
    assert [(label, level) for label, level, _, _ in roofline.above_ceiling(points, table, context)] == [
        ("9 tuned", "shared")
    ]


def test_cold_l2_adds_the_measured_dram_intensity(tmp_path):
    context, kernel = kernel_of(study_rows.write(tmp_path / "s.json", context={"l2_state": "cold"}))
    table = ceilings.ceilings(context, kernel)
    points = roofline.points(kernel, "fp32", "1024x1024x1024", context, table)
    points.loc[points.label == "9 tuned", "dram_read_bytes"] = 1e13  # far more traffic than its time allows
    assert ("9 tuned", "dram") in [(lab, lvl) for lab, lvl, _, _ in roofline.above_ceiling(points, table, context)]
    assert roofline.figure(kernel, context, tmp_path, "fp32", table)[0].stat().st_size > 10000


def test_seed_001s_series_sorted_as_numbers_with_both_speedups(report):
    text = (report / "report.md").read_text()
    section = text.split("## Seed 001: one thread per block")[1].split("\n## ")[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| ")]
    blocks = [int(cells[1].replace(",", "")) for cells in rows if cells[1].strip().replace(",", "").isdigit()]
    assert blocks == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert "speedup over the CPU, copies included" in section
    table = seed_series.series(*_series_frames(), study_rows.CONTEXT)[("fp32", "256x256x256")]
    cpu_ms = 2.0 * 256**3 / 2.0 / 1e6
    row = table.set_index("blocks").loc[64]
    assert row.speedup_vs_cpu == pytest.approx(cpu_ms / row.median_ms)
    assert row.efficiency == pytest.approx(row.speedup_vs_cpu / 64)
    assert row.e2e_speedup_vs_cpu == pytest.approx(row.speedup_vs_cpu / 2)


def _series_frames():
    from gemm_study.data.results import one_row_per_benchmark, to_frame

    frame = one_row_per_benchmark(to_frame(series()))
    return frame[~frame.end_to_end], frame[frame.end_to_end]


def test_a_series_without_end_to_end_rows_says_so():
    kernel, _ = _series_frames()
    lines = seed_series.section(kernel, kernel.iloc[0:0], study_rows.CONTEXT)
    assert any("only the kernel-only speedup is shown" in line for line in lines)
    assert seed_series.section(kernel.iloc[0:0], kernel.iloc[0:0], study_rows.CONTEXT) == []


def test_the_counters_figure_leaves_out_warm_cache_residues():
    small = pd.DataFrame([{"m": 1024, "n": 1024, "k": 1024, "precision": "fp32", "l2_read_sectors": 1.0}])
    assert tile_sweep.memory_counter(small, 50e6) == "l2_read_sectors"  # 12 MB fits in 50 MB of L2
    large = small.assign(m=4096, n=4096, k=4096)
    assert tile_sweep.memory_counter(large, 50e6) == "dram_read_bytes"


def test_the_readme_table_is_the_reports_data(tmp_path, capsys):
    path = study_rows.write(tmp_path / "s.json")
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{readme_table.BEGIN}\nold table\n{readme_table.END}\nafter\n")
    assert summary_main([str(path), "--ladders", "--also", f"{path}@1024x1024x1024", "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("intro\n<!-- ladder-table:begin -->\nNVIDIA H100 80GB HBM3, 1024³") and text.endswith(
        "<!-- ladder-table:end -->\nafter\n"
    )
    assert "old table" not in text
    assert (
        "| FP32 on the CUDA cores | 9 `tuned/bm:128/bn:128` | 49,100 | 95.3% | 95.3% | 73.4% | FMA pipe (FP32) (0.80) "
        "| 1,980 MHz, burst | 95.3% |"
    ) in text
    assert "| TF32 on the tensor cores | 12 `wgmma_tma/bm:128/bn:128` | 326,000 | 94.5% |" in text
    assert f"written by `gemm-summary-table {path} --ladders --also {path}@1024x1024x1024 --readme {readme}`" in text
    assert summary_main([str(path), "--ladders"]) == 0
    assert "| FP64 on the tensor cores | 15 `mma_fp64_m16n8k16/bm:128/bn:128` |" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,message",
    [
        (["--ladders", "--readme", "{missing}"], "no such file"),
        (["--ladders", "--readme", "{nomarkers}"], "needs one <!-- ladder-table:begin --> line"),
        (["--ladders", "--also", "nofile"], "expected FILE@MxNxK"),
        (["--shape", "1024x1024x1024", "--readme", "{nomarkers}"], "--also and --readme go with --ladders"),
    ],
)
def test_the_readme_table_refuses_bad_input(tmp_path, capsys, args, message):
    path = study_rows.write(tmp_path / "s.json")
    (tmp_path / "plain.md").write_text("no markers\n")
    args = [a.format(missing=tmp_path / "none.md", nomarkers=tmp_path / "plain.md") for a in args]
    assert run_cli(summary_main, [str(path), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_results_file_without_kernels_has_no_readme_table(tmp_path):
    only_cpu = [study_rows.entry("fp32", "cpu_serial", 2.0, ("cpu",), end_to_end=True)]
    with pytest.raises(InputError, match="no successful kernel benchmark"):
        readme_table.study(study_rows.write(tmp_path / "s.json", only_cpu))


def test_the_readme_table_and_the_report_summary_share_the_ladders_largest_square(tmp_path):
    """cuBLAS (or a write-up kernel) run at a larger square than any rung moves neither."""
    bigger = study_rows.entry("fp32", "cublas", 52000, ("reference",), shape=(2048, 2048, 2048))
    path = study_rows.write(tmp_path / "s.json", study_rows.study([bigger]))
    block = "\n".join(readme_table.lines(path))
    assert block.startswith("NVIDIA H100 80GB HBM3, 1024³") and "| FP32 on the CUDA cores | 9 `tuned" in block
    only_references = [e for e in study_rows.study() if e["variant"]["family"].startswith("cublas")]
    with pytest.raises(InputError, match="no ladder rung"):
        readme_table.lines(study_rows.write(tmp_path / "r.json", only_references))


def test_the_account_of_the_synthetic_rows_is_the_one_they_were_built_with(tmp_path):
    context, kernel = kernel_of(study_rows.write(tmp_path / "s.json"))
    warptile = kernel[kernel.variant == "warptile/bm:128/bn:128"]
    row = warptile[warptile.precision == "fp32"].iloc[0]
    acc = account.account(row, context)
    assert acc.limiter == "fma" and acc.explained == pytest.approx(0.6)
    assert acc.share("dram") == pytest.approx(study_rows.OTHER_SHARE)


def test_the_readme_table_is_what_its_command_writes(monkeypatch):
    """The README's block holds exactly what the command written under it generates from the
    committed results: a number typed into it, or results changed without rerunning it, fails."""
    import shlex

    root = SCRIPTS.parent
    text = (root / "README.md").read_text()
    block = text.split(readme_table.BEGIN + "\n")[1].split(readme_table.END)[0].rstrip("\n").split("\n")
    command = block[-1].split("written by `")[1].rstrip("`.")
    words = shlex.split(command)
    assert words[0] == "gemm-summary-table" and "--ladders" in words
    also = [words[i + 1] for i, w in enumerate(words) if w == "--also"]
    monkeypatch.chdir(root)
    assert readme_table.lines(words[1], also, command) == block
