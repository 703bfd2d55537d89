"""`auto`'s model replayed without a GPU (gemm_study/tuning/model_replay.py): the same arithmetic as
kernels/dispatch/shape_model.h (the cases of tests/cpu/shape_model_test.cpp, counted by hand from
the geometry), and on the committed evaluation sweep the same picks as the built `auto` made."""

import math

import pytest

from gemm_study.cli import auto_replay as cli
from gemm_study.data.paths import CHECKOUT
from gemm_study.data.results import load_results
from gemm_study.tuning import model_replay as replay
from gemm_study.tuning.shape_table import heldout_shapes

SMS = 132
TILE_WORK = 128.0 * 128.0 * (128 + 1) * 32  # a 128 x 128 tile over K = 4096 in k-tiles of 32
DISPATCH = CHECKOUT / "reports" / "h100-80gb-hbm3" / "shapes" / "dispatch"


def grid(m, n, bm, bn, slices=1):
    return replay.Launch(math.ceil(m / bm) * math.ceil(n / bn) * slices, False)


def test_the_busiest_sm_runs_ceil_blocks_over_sms_tiles_as_in_the_cpp_model():
    tile = (128, 128, 32)
    assert replay.busiest_sm_work(tile, (4096, 4096, 4096), grid(4096, 4096, 128, 128), SMS) == 8 * TILE_WORK
    assert replay.busiest_sm_work(tile, (128, 132 * 128, 4096), grid(128, 132 * 128, 128, 128), SMS) == TILE_WORK
    assert replay.busiest_sm_work(tile, (128, 133 * 128, 4096), grid(128, 133 * 128, 128, 128), SMS) == 2 * TILE_WORK
    # K cut into 8 slices: an eighth of the tile each.
    assert replay.busiest_sm_work(tile, (128, 128, 4096), grid(128, 128, 128, 128, 8), SMS) == TILE_WORK / 8
    # A persistent block loops over whole tiles: 1024 tiles over 132 blocks, the busiest runs 8.
    assert replay.busiest_sm_work(tile, (4096, 4096, 4096), replay.Launch(SMS, True), SMS) == 8 * TILE_WORK
    # Without a tile: its share of M x N x (K + 1), 4 of 513 blocks on the busiest SM.
    work = replay.busiest_sm_work((0, 0, 1), (4097, 1, 4096), replay.Launch(513, False), SMS)
    assert work == pytest.approx(4 * 4097.0 * (4096 + 1) / 513)


def test_only_the_time_above_the_fixed_part_scales():
    assert replay.scaled_ms(0.104, 1.0, 2.0) == pytest.approx(replay.FIXED_MS + 0.100 * 2)
    assert replay.scaled_ms(0.003, 1.0, 100.0) == 0.003
    assert replay.scaled_ms(0.5, 0.0, 1.0) == 0.5


def test_a_reference_of_the_other_alignment_counts_the_misaligned_distance_farther():
    shape = (1234, 4321, 2048)  # N = 4321 floats: rows of B start anywhere
    same = (4095, 4097, 4093)
    other = (1024, 4096, 2048)
    assert replay.reference_distance(shape, same, 4) == replay.shape_distance(shape, same)
    assert replay.reference_distance(shape, other, 4) == replay.shape_distance(shape, other) + 1.0
    assert replay.reference_distance(shape, other, 4) < replay.reference_distance(shape, same, 4)
    # Infinite: every shape of the same alignment first.
    assert replay.reference_distance(shape, other, 4, math.inf) > replay.reference_distance(shape, same, 4, math.inf)
    # 1000 doubles are 500 16-byte units: aligned in FP64, so no penalty there.
    assert replay.reference_distance((64, 5120, 1000), (64, 4096, 4096), 8) == pytest.approx(
        replay.shape_distance((64, 5120, 1000), (64, 4096, 4096))
    )


def test_the_tuned_rung_counts_the_configuration_tuned_at_the_nearest_cube(tmp_path):
    configs = tmp_path / "tuned_configs.inc"
    configs.write_text(
        "LADDER_TUNED(fp32, 1024, {.bm = 64, .bn = 128, .bk = 16, .wm = 32})\n"
        "LADDER_TUNED(fp32, 4096, {.bm = 128, .bn = 128, .bk = 32, .wm = 32, .mbar = true})\n"
    )
    tuned = replay.read_tuned_tiles(configs)
    # 1500^3 lies nearer 1024^3 than 4096^3 in log scale (3 ln 1500 = 21.9; 20.8 and 25.0).
    assert replay.tile_of("tuned", (1500, 1500, 1500), "fp32", tuned) == (64, 128, 16)
    assert replay.tile_of("tuned", (3000, 3000, 3000), "fp32", tuned) == (128, 128, 32)
    assert replay.tile_of("split_k/bm:32/bn:128/bk:16/slices:0", (1, 1, 1), "fp32", tuned) == (32, 128, 16)
    assert replay.tile_of("gemv_cols", (1, 1, 1), "fp32", tuned) == (0, 0, 1)


def test_the_committed_times_parse_into_every_arithmetic():
    times = replay.read_times()
    assert {arith for arith, _ in times} == {"fp32", "tf32", "fp64"}
    assert all(ms > 0 for entries in times.values() for _, ms in entries)


def _committed(name):
    benchmarks = []
    for precision in ("fp32", "fp64"):
        for order in ("listed", "reversed"):
            path = DISPATCH / name / f"tune_shapes_{precision}_{order}.json.gz"
            if path.exists():
                benchmarks += load_results(path)[1]
    return benchmarks


def _model(misaligned, evaluation):
    reference = _committed("table_sweep")
    return replay.Model(
        replay.read_times(),
        replay.launches(reference),
        replay.launches(evaluation),
        SMS,
        replay.read_tuned_tiles(),
        misaligned,
    )


def test_on_the_committed_evaluation_the_replay_picks_what_the_built_auto_picked():
    """The evaluation in dispatch/evaluation/ ran the build before a misaligned reference counted a
    finite distance farther: replayed with the other alignment last, every held-out pick agrees."""
    evaluation = _committed("evaluation")
    picks = [p for p in replay.replay(_model(math.inf, evaluation), evaluation, heldout_shapes()) if p.heldout]
    assert len(picks) == 60  # 20 held-out shapes in each of FP32, TF32 and FP64
    assert [p for p in picks if p.picked != p.recorded] == []


def test_on_an_evaluation_of_the_current_rule_the_replay_picks_what_auto_picked():
    """dispatch/evaluation_87b988a/ ran the build whose model counts a misaligned reference one unit
    farther (shape_model.h's kMisalignedDistance): replayed with that distance, every held-out pick
    agrees, and with the other alignment strictly last some do not (the rule is what moved them)."""
    evaluation = _committed("evaluation_87b988a")
    current = [p for p in replay.replay(_model(1.0, evaluation), evaluation, heldout_shapes()) if p.heldout]
    assert len(current) == 60
    assert [p for p in current if p.picked != p.recorded] == []
    strict = [p for p in replay.replay(_model(math.inf, evaluation), evaluation, heldout_shapes()) if p.heldout]
    assert any(p.picked != p.recorded for p in strict)


def test_the_replay_judges_picks_by_the_candidates_own_times():
    evaluation = _committed("evaluation")
    picks = replay.replay(_model(math.inf, evaluation), evaluation, heldout_shapes())
    counts = replay.tally(picks)
    # The committed auto.md counts 17 FP32 held-out picks within 5% by the pick's own time.
    assert counts[("fp32", "held out")] == (20, 17)
    assert {s for _, s in counts} == {"held out", "left out"}


def test_the_cli_refuses_a_negative_distance_and_a_sweep_without_shapes(tmp_path, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text('{"context": {"gpu_sm_count": "132"}, "benchmarks": []}')
    args = ["--references", str(empty), "--evaluation", str(empty)]
    assert cli.run_cli(cli.main, args + ["--misaligned", "-1"]) == 2
    assert "--misaligned" in capsys.readouterr().err
    assert cli.run_cli(cli.main, args) == 2
    assert "no shape" in capsys.readouterr().err
