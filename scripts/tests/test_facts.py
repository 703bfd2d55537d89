"""Facts, not names: the variant object drives efficiency, the tile report and selections;
old files without it still load; repetitions give one row per benchmark."""

import json

import pytest
from conftest import DATA, contract_entry, recorded_entry, write_contract_run

from gemm_study.cli.report import main as report_main
from gemm_study.cli.summary_table import main as summary_main
from gemm_study.data.errors import run_cli
from gemm_study.data.results import has_tag, load_results, one_row_per_benchmark, to_frame
from gemm_study.report import seeds

SHARED16 = "gemm/fp32/shared/tile:16/m:512/n:512/k:512/manual_time"


def frame_of(path):
    context, entries = load_results(path)
    return context, one_row_per_benchmark(to_frame(entries))


def test_efficiency_uses_warps_launched_from_the_facts(tmp_path):
    # The name says tile:16 (256 warps... by the old formula); the facts say 3 warps.
    path = write_contract_run(
        tmp_path / "run.json",
        transform=lambda e: (e["variant"].update(warps_launched=3) or e) if e["run_name"] == SHARED16 else e,
    )
    context, frame = frame_of(path)
    kernel = seeds.enrich(frame[~frame.end_to_end], context)
    row = kernel[kernel.name == SHARED16].iloc[0]
    assert row.warps_launched == 3
    assert row.efficiency == pytest.approx(row.speedup_vs_cpu / 3)


def test_old_files_fall_back_to_the_name(recorded):
    context, frame = frame_of(recorded)
    row = frame[frame.name == SHARED16].iloc[0]
    assert row.facts_from == "name"
    assert row.warps_launched == 32 * 32 * 8  # (512/16)^2 blocks of 256 threads
    assert row.threads_per_block == 256
    assert "tile_sweep" in row.tags
    cublas = frame[frame.variant == "cublas_tf32"].iloc[0]
    assert cublas.compute == "tf32" and "reference" in cublas.tags


def test_a_new_family_appears_in_the_tile_report_by_its_tag(tmp_path):
    new = [
        contract_entry(dict(recorded_entry(SHARED16), name=n, run_name=n), ("tile_sweep",), {"tile": t})
        for t in (16, 32)
        for n in [f"gemm/fp32/brand_new/tile:{t}/m:512/n:512/k:512/manual_time"]
    ]

    def untag_shared_col(entry):
        if "/shared_col/" in entry["run_name"]:
            entry["variant"]["tags"] = ["seed"]
        return entry

    path = write_contract_run(tmp_path / "run.json", new, transform=untag_shared_col)
    assert report_main([str(path), "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "### brand_new, fp32" in text
    assert "brand_new tile:16 -> tile:32 (fp32, 512x512x512)" in text
    assert "### shared_col, fp32" not in text  # not tagged tile_sweep any more
    assert (tmp_path / "out" / "gflops_brand_new_fp32.csv").exists()


def test_sweep_value_is_the_first_parameter(tmp_path):
    path = write_contract_run(tmp_path / "run.json")
    _, frame = frame_of(path)
    row = frame[frame.variant == "naive_row/block:8x8"].iloc[0]
    assert row.tile == 8 and row.param_values == {"block": 8}


def repeated_run(tmp_path, repetitions=3):
    """The recorded run with every entry repeated (per-repetition rows and aggregate rows)."""
    data = json.loads((DATA / "h200_512_partial.json").read_text())
    rows = []
    for entry in data["benchmarks"]:
        if entry.get("error_occurred") or "median_ms" not in entry:
            continue
        for rep in range(repetitions):
            rows.append(
                dict(
                    entry, repetition_index=rep, repetitions=repetitions, median_ms=entry["median_ms"] * (1 + 0.1 * rep)
                )
            )
        for aggregate in ("mean", "median", "stddev", "cv"):
            rows.append(
                dict(
                    entry,
                    name=entry["name"] + "_" + aggregate,
                    run_type="aggregate",
                    aggregate_name=aggregate,
                    repetitions=repetitions,
                )
            )
    data["benchmarks"] = rows
    path = tmp_path / "repeated.json"
    path.write_text(json.dumps(data))
    return path


def test_runs_with_repetitions_report_one_row_per_benchmark_at_the_median(tmp_path):
    path = repeated_run(tmp_path)
    assert report_main([str(path), "--out", str(tmp_path / "out")]) == 0
    import pandas as pd

    names_in_csv = pd.read_csv(tmp_path / "out" / "results.csv")["name"]
    assert len(names_in_csv) == names_in_csv.nunique() > 0
    _, frame = frame_of(path)
    original = recorded_entry(SHARED16)["median_ms"]
    assert frame[frame.name == SHARED16].median_ms.iloc[0] == pytest.approx(original * 1.1)
    text = (tmp_path / "out" / "report.md").read_text()
    assert text.count("| shared/tile:16 | 512x512x512 |") == 1  # the fp32 tile table, once


def test_summary_table_defaults_to_the_summary_tag(tmp_path, capsys):
    path = write_contract_run(tmp_path / "run.json")
    assert summary_main([str(path), "--shape", "512x512x512"]) == 0
    out = capsys.readouterr().out
    assert "| cublas | fp32 |" in out and "| cublas_tf32 | fp32 |" in out
    assert "shared/tile:16" not in out


def test_summary_table_on_an_untagged_file_says_what_to_do(recorded, capsys):
    assert run_cli(summary_main, [str(recorded), "--shape", "512x512x512"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "need --variants" in err


def test_has_tag_matches_any_of_the_tags(tmp_path):
    _, frame = frame_of(write_contract_run(tmp_path / "run.json"))
    assert set(frame[has_tag(frame, "cpu", "reference")].family) == {"cpu_serial", "cublas", "cublas_tf32"}
