"""The ladder section and the roofline: rungs from the facts, references of the same arithmetic,
peaks from the context, counters and their directions from the catalogue."""
import pytest

from conftest import ladder_entry, recorded_entry, write_contract_run
from gemm_study import ladder, roofline
from gemm_study.results import load_results, one_row_per_benchmark, to_frame
from report import main as report_main

TEMPLATE = "gemm/fp32/shared/tile:32/m:512/n:512/k:512/manual_time"
BASE = {"dram_read_bytes": 2.2e6, "dram_write_bytes": 1.1e6, "l2_read_sectors": 4e6, "l2_write_sectors": 1e5}


def rungs():
    t = recorded_entry(TEMPLATE)
    return [
        ladder_entry(t, "blocktile_1d/bm:64/bn:64/bk:8/tm:8", 1, "1-D register blocking", 12000,
                     dict(BASE, smem_ld_requests=1e6, stall_mio_throttle=4.0, fma_pipe_util_pct=30.0)),
        ladder_entry(t, "blocktile_1d/bm:32/bn:32/bk:8/tm:4", 1, "1-D register blocking", 10000,
                     dict(BASE, smem_ld_requests=2e6, stall_mio_throttle=5.0, fma_pipe_util_pct=20.0)),
        ladder_entry(t, "blocktile_2d/bm:128/bn:128/bk:8/tm:8/tn:8", 2, "2-D register blocking", 16000,
                     dict(BASE, smem_ld_requests=2.5e5, stall_mio_throttle=1.0, fma_pipe_util_pct=60.0)),
        ladder_entry(t, "mma_tf32/bm:128/bn:128", 3, "TF32 mma.sync", 25000,
                     dict(BASE, smem_ld_requests=2.5e5, tensor_pipe_util_pct=40.0), compute="tf32",
                     tags=("tensor_core",)),
    ]


@pytest.fixture
def run(tmp_path):
    return write_contract_run(tmp_path / "run.json", rungs())


def kernel_of(path):
    from gemm_study import seeds

    context, entries = load_results(path)
    frame = one_row_per_benchmark(to_frame(entries))
    return context, seeds.enrich(frame[~frame.end_to_end & frame.error.isna()], context)


def test_best_variant_of_each_rung_from_the_seeds_best(run):
    context, kernel = kernel_of(run)
    rows, references = ladder.ladder_rows(kernel, "fp32", "512x512x512")
    assert list(rows.variant) == ["shared/tile:32", "blocktile_1d/bm:64/bn:64/bk:8/tm:8",
                                  "blocktile_2d/bm:128/bn:128/bk:8/tm:8/tn:8", "mma_tf32/bm:128/bn:128"]
    assert list(rows.rung) == [0, 1, 2, 3]
    assert set(references.variant) == {"cublas", "cublas_tf32"}


def test_tf32_rungs_compare_with_cublas_tf32_and_the_tf32_peak(run):
    context, kernel = kernel_of(run)
    rows, references = ladder.ladder_rows(kernel, "fp32", "512x512x512")
    table = ladder.annotate(rows, references, context).set_index("rung")
    cublas = recorded_entry("gemm/fp32/cublas/m:512/n:512/k:512/manual_time")["gflops"]
    cublas_tf32 = recorded_entry("gemm/fp32/cublas_tf32/m:512/n:512/k:512/manual_time")["gflops"]
    assert table.loc[2, "pct_of_reference"] == pytest.approx(100 * 16000 / cublas)
    assert table.loc[3, "pct_of_reference"] == pytest.approx(100 * 25000 / cublas_tf32)
    assert table.loc[3, "pct_of_peak"] == pytest.approx(100 * 25000 / 494700)
    assert table.loc[2, "pct_of_peak"] == pytest.approx(100 * 16000 / float(context["peak_fp32_gflops"]))
    assert table.loc[2, "flop_per_dram_byte"] == pytest.approx(2 * 512**3 / 3.3e6)
    assert table.loc[2, "ncu"] == ("`build/bench/gemm-bench --ncu-command="
                                   "gemm/fp32/blocktile_2d/bm:128/bn:128/bk:8/tm:8/tn:8/m:512/n:512/k:512`")


def test_step_sentences_name_the_counters_that_moved_with_the_catalogue_direction(run):
    context, kernel = kernel_of(run)
    rows, _ = ladder.ladder_rows(kernel, "fp32", "512x512x512")
    sentences = ladder.step_sentences(rows)
    step = sentences[1]  # rung 1 -> rung 2
    assert step.startswith("rung 1 (blocktile_1d/bm:64/bn:64/bk:8/tm:8) -> rung 2 2-D register blocking")
    assert "(x1.33)" in step
    assert "stall_mio_throttle falls 4.00x (4 -> 1) (better)" in step
    assert "smem_ld_requests falls 4.00x" in step
    assert "fma_pipe_util_pct rises from 30% to 60% (better)" in step


def test_dram_bytes_of_l2_resident_inputs_are_not_a_cause(run):
    context, kernel = kernel_of(run)
    rows, _ = ladder.ladder_rows(kernel, "fp32", "512x512x512")
    a, b = rows.iloc[1].copy(), rows.iloc[2].copy()
    b["dram_read_bytes"] = a["dram_read_bytes"] / 3  # both far below the compulsory 2 MiB of A+B
    a["dram_read_bytes"] = 1e5
    b["dram_read_bytes"] = 3e4
    assert "dram_read_bytes" not in [m[0] for m in ladder.counter_moves(a, b)]


def test_report_has_the_ladder_and_the_roofline(run, tmp_path):
    out = tmp_path / "out"
    assert report_main([str(run), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "## The ladder, fp32" in text and "### fp32, 512x512x512" in text
    assert "## The ladder, fp64" not in text  # no fp64 rung in this run
    assert "| 3 | TF32 mma.sync | mma_tf32/bm:128/bn:128 |" in text
    assert "![roofline_fp32](roofline_fp32.png)" in text
    assert (out / "roofline_fp32.png").stat().st_size > 1000


def test_roofline_draws_the_levels_whose_counters_exist(run):
    context, kernel = kernel_of(run)
    points = roofline.roofline_points(kernel, "fp32")
    assert roofline.levels_present(points) == ["dram", "l2"]
    without_l2 = points.drop(columns=["l2_read_sectors", "l2_write_sectors"])
    assert roofline.levels_present(without_l2) == ["dram"]
    assert roofline.levels_present(without_l2.drop(columns=["dram_read_bytes"])) == []
    assert [label for label, _ in roofline.compute_ceilings(context, "fp32")] == ["FP32 peak", "TF32 peak"]


def test_l2_traffic_in_bytes_or_sectors():
    import pandas as pd

    row = pd.Series({"m": 2, "n": 2, "k": 2, "l2_read_sectors": 1.0, "l2_write_sectors": 1.0})
    assert ladder.traffic_bytes(row, "l2") == 64
    row = pd.Series({"m": 2, "n": 2, "k": 2, "l2_read_bytes": 10.0, "l2_write_bytes": 6.0})
    assert ladder.flop_per_byte(row, "l2") == 1.0


def test_results_without_rungs_have_no_ladder_section(tmp_path, recorded):
    assert report_main([str(recorded), "--out", str(tmp_path)]) == 0
    assert "## The ladder" not in (tmp_path / "report.md").read_text()


def test_steps_name_causes_not_residues():
    """Tiny stalls, the hardware conflict counter and tensor counts between CUDA-core kernels
    are never named as what moved; real moves still are."""
    from gemm_study import ladder
    a = {"tags": ("ladder",), "stall_mio_throttle": 1.5e-07, "smem_ld_bank_conflicts": 100.0,
         "tensor_hmma_inst": 10.0, "gld_requests": 400.0, "m": 64, "n": 64, "k": 64}
    b = {"tags": ("ladder",), "stall_mio_throttle": 0.05, "smem_ld_bank_conflicts": 9000.0,
         "tensor_hmma_inst": 5000.0, "gld_requests": 100.0, "m": 64, "n": 64, "k": 64}
    names = [move[0] for move in ladder.counter_moves(a, b)]
    assert names == ["gld_requests"]
    b_tensor = dict(b, tags=("tensor_core",))
    assert "tensor_hmma_inst" in [move[0] for move in ladder.counter_moves(a, b_tensor)]
    big_stall = dict(b, stall_mio_throttle=3.0)
    assert "stall_mio_throttle" in [move[0] for move in ladder.counter_moves(a, big_stall)]
