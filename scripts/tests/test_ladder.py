"""The ladders: rungs and their numbers from the family manifest (every rung family shown, one
family per (precision, rung)), references of the same arithmetic, the best library named, each
rung against the ceiling of the unit it runs on; the counters that moved."""

import json

import pytest
import study_rows
from conftest import ladder_entry, recorded_entry, write_contract_run

from gemm_study.analysis import account, ceilings, ladder, moves
from gemm_study.cli.report import main as report_main
from gemm_study.data.manifest import load_families
from gemm_study.data.results import load_results, one_row_per_benchmark, to_frame
from gemm_study.report import ladder_report, seeds

TEMPLATE = "gemm/fp32/shared/tile:32/m:512/n:512/k:512/manual_time"
BASE = {"dram_read_bytes": 2.2e6, "dram_write_bytes": 1.1e6, "l2_read_sectors": 4e6, "l2_write_sectors": 1e5}
SHAPE = "1024x1024x1024"


def kernel_of(path):
    context, entries = load_results(path)
    frame = one_row_per_benchmark(to_frame(entries))
    kernel = seeds.enrich(frame[~frame.end_to_end & frame.error.isna()], context)
    kernel, _ = account.add_columns(kernel, context)
    return context, kernel


@pytest.fixture
def synthetic(tmp_path):
    return kernel_of(study_rows.write(tmp_path / "study.json"))


def view(kernel, context, key, shape=SHAPE):
    lad = next(l for l in ladder.LADDERS if l.key == key)
    return ladder_report.ShapeLadder(kernel, lad, shape, context, ceilings.ceilings(context, kernel))


def test_every_rung_family_of_the_manifest_is_on_its_ladder_once(synthetic):
    context, kernel = synthetic
    shown = {}
    for lad in ladder.LADDERS:
        rows = view(kernel, context, lad.key).rows
        rungs = rows[~rows.start.astype(bool)]
        assert list(rungs.rung) == sorted(rungs.rung), lad.key  # manifest order
        for family, rung in zip(rungs.family, rungs.rung):
            shown.setdefault((lad.precision, rung), set()).add(family)
    manifest = {f.family: f.rung for f in load_families() if f.rung}
    assert all(len(families) == 1 for families in shown.values())  # one family per (precision, rung)
    assert {family for families in shown.values() for family in families} == set(manifest)
    assert all(manifest[next(iter(families))] == rung for (_, rung), families in shown.items())


def test_the_report_shows_every_manifest_rung(tmp_path):
    out = tmp_path / "out"
    assert report_main([str(study_rows.write(tmp_path / "study.json")), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    for family in load_families():
        if family.rung:
            assert f"| {family.rung} | {family.rung_name} | {family.family}/" in text, family.family


def test_rung_numbers_come_from_the_manifest_not_the_rows(tmp_path):
    """Rows recorded with the old numbering (mma_tf32 at rung 9 beside tuned) still get the manifest's."""
    entries = study_rows.study()
    for entry in entries:
        if entry["variant"]["family"] in ("tuned", "mma_tf32"):
            entry["variant"]["rung"] = 9
    context, kernel = kernel_of(study_rows.write(tmp_path / "old.json", entries))
    rows = view(kernel, context, "tf32").rows.set_index("family")
    manifest = {f.family: f.rung for f in load_families()}
    assert rows.loc["mma_tf32", "rung"] == manifest["mma_tf32"] != rows.loc["tuned", "rung"] == manifest["tuned"]


def test_a_rung_without_a_benchmark_at_the_shape_is_shown_not_run_with_the_reason(tmp_path):
    entries = [e for e in study_rows.study() if not e["name"].startswith("gemm/fp32/wgmma_tma/")]
    # wgmma_tma ran at another shape, refused at this one.
    other = study_rows.entry(
        "fp32", "wgmma_tma/bm:128/bn:128", 300000, ("tensor_core", "summary"), compute="tf32", shape=(2048, 2048, 2048)
    )
    skipped = json.dumps(
        [{"benchmark": "gemm/fp32/wgmma_tma/bm:128/bn:128/m:1024/n:1024/k:1024", "reason": "wgmma_tma: refused here"}]
    )
    context, kernel = kernel_of(study_rows.write(tmp_path / "s.json", entries + [other], {"skipped": skipped}))
    shown = view(kernel, context, "tf32")
    row = shown.rows.set_index("family").loc["wgmma_tma"]
    assert row["variant"] == "not run" and row["not_run"] == "wgmma_tma: refused here"
    assert "| 12 | wgmma + TMA | not run (wgmma_tma: refused here) |" in shown.table(ladder_report.COLUMNS)
    steps = [s.label for s in shown.steps]
    assert "11 mma_tf32_pipelined -> 13 wgmma_persistent" in steps  # stepped over


def test_tensor_rungs_against_the_library_of_their_arithmetic_and_the_best_library_named(synthetic):
    context, kernel = synthetic
    tf32 = view(kernel, context, "tf32").rows.set_index("family")
    assert tf32.loc["wgmma_tma", "pct_of_reference"] == pytest.approx(100 * 326000 / 345000)  # cublas_tf32
    fp32 = view(kernel, context, "fp32")
    rows = fp32.rows.set_index("family")
    assert rows.loc["tuned", "pct_of_reference"] == pytest.approx(100 * 49100 / 51500)  # cuBLAS SGEMM
    assert rows.loc["tuned", "pct_of_best_library"] == pytest.approx(100 * 49100 / 52500)  # cuBLASLt faster
    assert fp32.best_library == "cuBLASLt"
    assert "% of best library (cuBLASLt)" in fp32.table(ladder_report.COLUMNS)
    fp64 = view(kernel, context, "fp64_tensor").rows.set_index("family")
    assert fp64.loc["mma_fp64_m16n8k16", "pct_of_reference"] == pytest.approx(100 * 48800 / 58600)


def test_in_sm_cycles_each_side_counts_at_the_clock_its_sms_counted(tmp_path):
    """wgmma_tma at 326,000 GFLOP/s against cuBLAS TF32 at 345,000: 94.5% in time. Where the SMs
    counted 1,500 MHz for cuBLAS and 1,650 for wgmma_tma (NVML reading one clock for both), the
    kernel used 1,650/1,500 of its time's cycles: 94.5% x 1,500/1,650 in cycles."""
    entries = study_rows.study()
    for e in entries:
        for prefix, counted in (("gemm/fp32/cublas_tf32/", 1500.0), ("gemm/fp32/wgmma_tma/", 1650.0)):
            if e["name"].startswith(prefix):
                e["sm_clock_mhz"], e["sm_clock_counted_mhz"] = 1980.0, counted
                e["samples"]["sm_clock_counted_mhz"] = [counted] * len(e["samples"]["ms"])
    context, kernel = kernel_of(study_rows.write(tmp_path / "counted.json", entries))
    row = view(kernel, context, "tf32").rows.set_index("family").loc["wgmma_tma"]
    assert row["pct_of_reference"] == pytest.approx(100 * 326000 / 345000, rel=1e-3)
    assert row["pct_of_reference_cycles"] == pytest.approx(100 * 326000 / 345000 * 1500 / 1650, rel=1e-3)
    # A run's count taken from one sample of three (files before gemm-bench's rule) is dropped on
    # reading: NVML's clock on both sides, the same for both here.
    for e in entries:
        if e["name"].startswith("gemm/fp32/cublas_tf32/"):
            e["samples"]["sm_clock_counted_mhz"] = [1500.0, 0.0, 0.0]
    context, kernel = kernel_of(study_rows.write(tmp_path / "one_sample.json", entries))
    row = view(kernel, context, "tf32").rows.set_index("family").loc["wgmma_tma"]
    assert row["pct_of_reference_cycles"] == pytest.approx(100 * 326000 / 345000, rel=1e-3)


def test_each_row_against_the_ceiling_of_its_own_unit(synthetic):
    context, kernel = synthetic
    table = ceilings.ceilings(context, kernel)
    fp64 = view(kernel, context, "fp64_tensor")
    rows = fp64.rows.set_index("family")
    assert rows.loc["mma_fp64_m16n8k16", "pct_of_peak"] == pytest.approx(100 * 48800 / table["fp64_tensor"].value)
    assert rows.loc["tuned", "pct_of_peak"] == pytest.approx(100 * 24550 / table["fp64"].value)  # the start: CUDA cores
    dgemm = fp64.references.iloc[0]
    assert dgemm["pct_of_peak"] == pytest.approx(100 * 58600 / table["fp64_tensor"].value)  # DGEMM runs DMMA


def test_overview_percentages_against_the_same_arithmetic(synthetic):
    context, kernel = synthetic
    pct = ladder.pct_of_same_arithmetic(kernel)
    row = kernel[kernel.variant == "wgmma_tma/bm:128/bn:128"].index[0]
    assert pct[row] == pytest.approx(100 * 326000 / 345000)  # not 633% of SGEMM


def test_the_ceilings_and_the_h100_datasheet():
    context = dict(study_rows.CONTEXT)
    table = ceilings.ceilings(context)
    assert table["tf32"].value == pytest.approx(2048 * 132 * 1980 / 1e3)
    assert table["fp64_tensor"].value == pytest.approx(256 * 132 * 1980 / 1e3)
    checks = {label: (value, implied) for label, value, _, _, implied in ceilings.datasheet_check(context, table)}
    assert checks["FP32 FMA, CUDA cores"][0] == pytest.approx(67000, rel=0.002)  # 67 TFLOP/s
    assert checks["FP64, tensor cores"][0] == pytest.approx(67000, rel=0.002)  # 67 TFLOP/s
    assert checks["FP64 FMA, CUDA cores"][0] == pytest.approx(34000, rel=0.02)  # 34 TFLOP/s, rounded
    assert checks["DRAM"][0] == pytest.approx(3350, rel=0.001)  # 3.35 TB/s
    assert checks["TF32, tensor cores"][1] == pytest.approx(1831, abs=1)  # 495 TFLOP/s assumes 1,830 MHz
    assert ceilings.datasheet_check(dict(context, gpu_name="NVIDIA H200"), table) == []
    unknown = dict(context, gpu_compute_capability="7.5")
    assert "tf32" not in ceilings.ceilings(unknown) and "fp32" in ceilings.ceilings(unknown)


def test_the_tensor_rate_measured_from_the_counters(synthetic):
    context, kernel = synthetic
    rates = ceilings.tensor_flop_per_pipe_cycle(kernel, context)
    # Built with the tensor pipe busy 75% of the time: FLOP / (0.75 x time x SMs x clock) per SM.
    assert rates["wgmma_tma"] == pytest.approx(326000e9 / (0.75 * 132 * 1.98e9), rel=1e-6)
    assert set(rates) == {f.family for f in load_families() if f.level == "tensor_core"}


# ----------------------------------------------------------------------------- legacy rows and moves


def rungs():
    t = recorded_entry(TEMPLATE)
    return [
        ladder_entry(
            t,
            "blocktile_1d/bm:64/bn:64/bk:8/tm:8",
            1,
            "1-D register blocking",
            12000,
            dict(BASE, smem_ld_requests=1e6, stall_mio_throttle=4.0, fma_pipe_util_pct=30.0),
        ),
        ladder_entry(
            t,
            "blocktile_1d/bm:32/bn:32/bk:8/tm:4",
            1,
            "1-D register blocking",
            10000,
            dict(BASE, smem_ld_requests=2e6, stall_mio_throttle=5.0, fma_pipe_util_pct=20.0),
        ),
        ladder_entry(
            t,
            "blocktile_2d/bm:128/bn:128/bk:8/tm:8/tn:8",
            2,
            "2-D register blocking",
            16000,
            dict(BASE, smem_ld_requests=2.5e5, stall_mio_throttle=1.0, fma_pipe_util_pct=60.0),
        ),
    ]


def test_rows_without_the_account_counters_step_with_the_counters_that_moved(tmp_path):
    context, kernel = kernel_of(write_contract_run(tmp_path / "run.json", rungs()))
    shown = view(kernel, context, "fp32", "512x512x512")
    assert list(shown.rows.variant[:6]) == [
        "naive_col/block:32x32",  # the seed rungs: the write-ups' own steps up to rung 0
        "grid_stride/threads:256",
        "naive_row/block:32x32",
        "shared/tile:32",
        "blocktile_1d/bm:64/bn:64/bk:8/tm:8",
        "blocktile_2d/bm:128/bn:128/bk:8/tm:8/tn:8",
    ]
    assert list(shown.rows.rung[:4]) == [-3, -2, -1, 0]
    (step,) = [s for s in shown.steps if s.label == "1 blocktile_1d -> 2 blocktile_2d"]
    assert step.verdict == "no prediction"
    assert step.sentence.startswith("measured x1.33; no prediction, no account on either rung: no ")
    assert "stall_mio_throttle falls 4.00x (4 -> 1) (better)" in step.sentence
    assert "fma_pipe_util_pct rises from 30% to 60% (better)" in step.sentence
    assert "No account for" in "\n".join(shown.no_account_note())


def test_dram_bytes_of_l2_resident_inputs_are_not_a_cause():
    a = {"m": 512, "n": 512, "k": 512, "precision": "fp32", "dram_read_bytes": 1e5, "gld_requests": 100.0}
    b = dict(a, dram_read_bytes=3e4, gld_requests=50.0)  # both far below the compulsory 2 MiB of A+B
    assert [m[0] for m in moves.counter_moves(a, b)] == ["gld_requests"]


def test_steps_name_causes_not_residues():
    """Tiny stalls, the hardware conflict counter and tensor counts between CUDA-core kernels
    are never named as what moved; real moves still are."""
    a = {
        "tags": ("ladder",),
        "stall_mio_throttle": 1.5e-07,
        "smem_ld_bank_conflicts": 100.0,
        "tensor_hmma_inst": 10.0,
        "tensor_pipe_cycles": 1.0e6,  # the residue the naive kernels read at 4096^3
        "gld_requests": 400.0,
        "m": 64,
        "n": 64,
        "k": 64,
        "precision": "fp32",
    }
    b = {
        "tags": ("ladder",),
        "stall_mio_throttle": 0.05,
        "smem_ld_bank_conflicts": 9000.0,
        "tensor_hmma_inst": 5000.0,
        "tensor_pipe_cycles": 0.0,
        "gld_requests": 100.0,
        "m": 64,
        "n": 64,
        "k": 64,
        "precision": "fp32",
    }
    assert [move[0] for move in moves.counter_moves(a, b)] == ["gld_requests"]
    b_tensor = dict(b, tags=("tensor_core",))
    assert {"tensor_hmma_inst", "tensor_pipe_cycles"} <= {move[0] for move in moves.counter_moves(a, b_tensor)}
    big_stall = dict(b, stall_mio_throttle=3.0)
    assert "stall_mio_throttle" in [move[0] for move in moves.counter_moves(a, big_stall)]
    assert moves.describe_move("gld_requests", 400.0, 0.0) == "gld_requests falls from 400 to 0 (better)"


def test_results_without_rungs_have_no_ladder_section(tmp_path, recorded):
    assert report_main([str(recorded), "--out", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "## The ladders" in text and "### FP32 on the CUDA cores" not in text
    assert "No ladder rung in these results." in text
    assert "Rungs of the manifest with no benchmark in these results: 1 `blocktile_1d`" in text


def test_rung_0_is_the_manifests_ladder_start():
    """One source for both sides: kernels/manifest.inc's GEMM_LADDER_START, which the registry
    reads too (its test: Registry.TheLadderStartIsAWriteUpKernelOfTheManifest)."""
    from gemm_study.analysis import ladder as ladder_module
    from gemm_study.data.manifest import ladder_start

    assert ladder_module.LADDER_START == ladder_start()
    assert ladder_start().startswith("shared/")


def test_the_cuda_core_ladders_begin_with_the_seed_rungs_below_rung_0(tmp_path):
    """The manifest's GEMM_LADDER_SEED lines (the registry reads them too: its test
    Registry.TheLadderSeedsAreWriteUpKernelsBelowTheStart) are rungs -3 to -1, in order; a seed
    with no benchmark at the shape is shown not run with the reason, and the steps go round it."""
    from gemm_study.data.manifest import ladder_seeds

    seeds = ladder_seeds()
    assert [s.rung for s in seeds] == [-3, -2, -1]
    assert [s.variant.split("/")[0] for s in seeds] == ["naive_col", "grid_stride", "naive_row"]
    col, _, row = seeds
    entries = study_rows.study() + [
        study_rows.entry("fp32", row.variant, 6000, ("seed", "summary"), counts=study_rows.counters(6000, "l1", 0.8))
    ]
    skipped = json.dumps([{"benchmark": f"gemm/fp32/{col.variant}/m:1024/n:1024/k:1024", "reason": "capped here"}])
    context, kernel = kernel_of(study_rows.write(tmp_path / "s.json", entries, {"skipped": skipped}))
    shown = view(kernel, context, "fp32")
    assert list(shown.rows.rung[:4]) == [-3, -2, -1, 0]
    assert list(shown.rows.variant[:4]) == ["not run", "not run", row.variant, ladder.LADDER_START]
    assert shown.rows.iloc[0]["not_run"] == "capped here"
    first = shown.steps[0]
    assert first.label == f"-1 {row.variant} -> 0 {ladder.LADDER_START}"
    assert first.before["account_unit"] == "l1"
    assert all(r >= 0 for r in view(kernel, context, "tf32").rows.rung)  # the tensor ladders have none
