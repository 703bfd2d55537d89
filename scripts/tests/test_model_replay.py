"""`auto`'s model replayed without a GPU (gemm_study/tuning/model_replay.py): the same arithmetic and
constants as kernels/dispatch/shape_model.h and auto.cu (cases of tests/cpu/shape_model_test.cpp,
counted by hand from the geometry), and on the committed evaluation sweeps the same references,
predicted times and picks as the built `auto` recorded in each result's rule."""

import json
import math
import re
from dataclasses import replace

import pytest

from gemm_study.cli import auto_replay as cli
from gemm_study.data.paths import CHECKOUT
from gemm_study.data.results import load_results
from gemm_study.tuning import auto_report
from gemm_study.tuning import model_replay as replay
from gemm_study.tuning.shape_table import heldout_shapes

SMS = 132
TILE_WORK = 128.0 * 128.0 * (128 + 1) * 32  # a 128 x 128 tile over K = 4096 in k-tiles of 32
DISPATCH = CHECKOUT / "reports" / "h100-80gb-hbm3" / "shapes" / "dispatch"
# The model's inputs as both evaluated builds (b7f2e83, 87b988a) had them: the times the table's
# sweep wrote and the tuned rung's configurations, kept beside that sweep.
TIMES = DISPATCH / "table_sweep" / "auto_times.inc.gz"
TUNED = DISPATCH / "table_sweep" / "tuned_configs.inc.gz"
RULE = re.compile(r"model: ([0-9.e+-]+) ms, scaled from its times at (\d+)x(\d+)x(\d+)(?: and (\d+)x(\d+)x(\d+))?")


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
    for path in (replay.TIMES_PATH, TIMES):
        times = replay.read_times(path)
        assert {arith for arith, _ in times} == {"fp32", "tf32", "fp64"}
        assert all(ms > 0 for entries in times.values() for _, ms in entries)


def test_the_constants_are_the_cpp_models():
    model = (CHECKOUT / "kernels" / "dispatch" / "shape_model.h").read_text()
    auto = (CHECKOUT / "kernels" / "dispatch" / "auto.cu").read_text()
    assert float(re.search(r"kMisalignedDistance = ([0-9.]+);", model)[1]) == replay.MISALIGNED_DISTANCE
    assert float(re.search(r"kFixedMs = ([0-9.]+);", model)[1]) == replay.FIXED_MS
    assert int(re.search(r"kModelReferences = (\d+);", auto)[1]) == replay.REFERENCES
    timed = (CHECKOUT / "kernels" / "dispatch" / "timed_choice.h").read_text()
    assert int(re.search(r"kTimedCandidates = (\d+);", timed)[1]) == replay.TIMED_CANDIDATES
    assert float(re.search(r"kKeepMargin = ([0-9.]+);", timed)[1]) == replay.KEEP_MARGIN


def test_the_strict_order_ranks_every_shape_of_the_same_alignment_first_each_group_nearest_first():
    shape = (1, 4096, 4093)  # K = 4093 floats: not aligned
    refs = [(1, 1024, 4096), (1, 4096, 14336), (1, 4096, 4096), (7, 4096, 4093), (1, 8192, 4093)]
    strict = sorted(refs, key=lambda r: replay.reference_rank(shape, r, 4, math.inf))
    # The two misaligned ones first, nearest first; then the aligned ones, nearest first.
    assert strict == [(1, 8192, 4093), (7, 4096, 4093), (1, 4096, 4096), (1, 4096, 14336), (1, 1024, 4096)]
    finite = sorted(refs, key=lambda r: replay.reference_rank(shape, r, 4, 1.0))
    # 1x4096x4096 is 0.0007 + 1 away, 7x4096x4093 ln 7 = 1.95: the aligned neighbour goes first.
    assert finite.index((1, 4096, 4096)) < finite.index((7, 4096, 4093))


def test_a_tie_between_candidates_goes_to_the_first_by_name_as_in_autos_map():
    class Fixed(replay.Model):
        def predict(self, arith, shape, name, leave_out=None):
            return 1.0

    v = {"precision": "fp32", "compute": "fp32", "tags": ["shapes"], "params": {}}
    benchmarks = [
        {
            "median_ms": ms,
            "variant": {**v, "name": name, "family": name.split("/")[0], "shape": {"m": 64, "n": 64, "k": 64}},
        }
        for name, ms in (("split_k/bm:64", 0.02), ("gemv", 0.01))
    ]
    model = Fixed({}, {}, {}, SMS, {})
    picks = replay.replay(model, benchmarks, {(64, 64, 64)})
    assert picks and {p.picked for p in picks} == {"gemv"}  # FP32, and TF32 (an FP32 kernel serves it)


def _ranked_sweep(predicted, measured):
    """A model predicting `predicted` ms per candidate at 64x64x64, and a sweep where they took
    `measured` ms there."""

    class Fixed(replay.Model):
        def predict(self, arith, shape, name, leave_out=None):
            return predicted[name]

    v = {"precision": "fp32", "compute": "fp32", "tags": ["shapes"], "params": {}}
    benchmarks = [
        {"median_ms": ms, "variant": {**v, "name": name, "family": name, "shape": {"m": 64, "n": 64, "k": 64}}}
        for name, ms in measured.items()
    ]
    return Fixed({}, {}, {}, SMS, {}), benchmarks


def test_timed_the_pick_is_the_fastest_measured_of_the_fastest_predictions_only():
    # Predicted order a, b, c, d, e; measured fastest e (outside any top four), then c; each more
    # than 2% apart, so the margin keeps none of the earlier ones.
    predicted = {"a": 1.0, "b": 1.1, "c": 1.2, "d": 1.3, "e": 2.0}
    measured = {"a": 0.30, "b": 0.25, "c": 0.20, "d": 0.22, "e": 0.10}
    model, benchmarks = _ranked_sweep(predicted, measured)
    picks = {t: replay.replay(model, benchmarks, {(64, 64, 64)}, t) for t in (1, 2, 4, 5)}
    assert {p.picked for p in picks[1]} == {"a"}  # the model alone: its first prediction
    assert {p.picked for p in picks[2]} == {"b"}
    assert {p.picked for p in picks[4]} == {"c"}
    assert {p.picked for p in picks[5]} == {"e"}
    assert [p.timed for p in picks[4]][0] == ("a", "b", "c", "d")


def test_timed_a_measured_tie_goes_to_the_earlier_prediction_and_agreement_is_membership():
    model, benchmarks = _ranked_sweep({"a": 1.0, "b": 1.5, "c": 3.0}, {"a": 0.2, "b": 0.2, "c": 0.1})
    (pick, *_) = replay.replay(model, benchmarks, {(64, 64, 64)}, 2)
    assert pick.picked == "a"
    # Within the 2% margin the earlier rank is kept too (0.203 against 0.2); beyond it, not.
    for slower, kept in ((0.203, "a"), (0.21, "b")):
        model, benchmarks = _ranked_sweep({"a": 1.0, "b": 1.5}, {"a": slower, "b": 0.2})
        assert [p.picked for p in replay.replay(model, benchmarks, {(64, 64, 64)}, 2)][0] == kept
    # auto may rank two candidates within its own samples' noise the other way: a recorded pick
    # among those timed agrees; one outside them (or, untimed, any but the first) does not.
    assert replace(pick, recorded=("b",)).agrees and not replace(pick, recorded=("c",)).agrees
    # Every run's pick counts: one outside the timed candidates in either run disagrees.
    assert replace(pick, recorded=("a", "b")).agrees and not replace(pick, recorded=("a", "c")).agrees
    (alone, *_) = replay.replay(model, benchmarks, {(64, 64, 64)}, 1)
    assert replace(alone, recorded=("a",)).agrees and not replace(alone, recorded=("b",)).agrees


def _committed(name):
    benchmarks = []
    for precision in ("fp32", "fp64"):
        for order in ("listed", "reversed"):
            path = DISPATCH / name / f"tune_shapes_{precision}_{order}.json.gz"
            if path.exists():
                benchmarks += load_results(path)[1]
    return benchmarks


@pytest.fixture(scope="module")
def evaluations():
    return {name: _committed(name) for name, _, _ in BUILDS}


def _model(misaligned, evaluation):
    return replay.Model(
        replay.read_times(TIMES),
        replay.launches(evaluation),
        replay.launches(evaluation),
        SMS,
        replay.read_tuned_tiles(TUNED),
        misaligned,
    )


# Each evaluation with the rule its build ran: b7f2e83 took the other alignment last,
# 87b988a counts it one unit farther, and bdeb004 and 6ab2bfb time the model's four fastest
# predictions at the first run (the rule names the pick's own prediction: "timed: ... (model: ...)").
BUILDS = [
    ("evaluation", math.inf, 1),
    ("evaluation_87b988a", 1.0, 1),
    ("evaluation_bdeb004", 1.0, 4),
    ("evaluation_6ab2bfb", 1.0, 4),
]


@pytest.mark.parametrize("name, misaligned, timed", BUILDS)
def test_the_replay_scales_from_the_references_auto_named_to_the_time_it_printed(evaluations, name, misaligned, timed):
    evaluation = evaluations[name]
    model = _model(misaligned, evaluation)
    checked = 0
    for b in evaluation:
        choice = b.get("choice")
        rule = str(choice.get("rule", "")) if isinstance(choice, dict) else ""
        if not rule.startswith("model:" if timed == 1 else "timed:"):
            continue
        m = RULE.search(rule)
        v = b["variant"]
        shape = (v["shape"]["m"], v["shape"]["n"], v["shape"]["k"])
        arith = choice["arithmetic"]
        ms, refs = model.explain(arith, shape, choice["variant"])
        expected = [tuple(int(x) for x in m.groups()[i : i + 3]) for i in (1, 4) if m.group(i + 1)]
        assert refs == expected, (arith, shape, choice["variant"])
        assert f"{ms:.4g}" == m.group(1), (arith, shape, choice["variant"])
        checked += 1
    assert checked >= 60  # every held-out shape of three arithmetics, in one order or both


@pytest.mark.parametrize("name, misaligned, timed", BUILDS)
def test_on_each_committed_evaluation_the_replay_picks_what_the_built_auto_picked(evaluations, name, misaligned, timed):
    """The model's first prediction where the build did not time; one of its four fastest where
    it did (which of them its own samples ranked fastest is the GPU's, not the replay's)."""
    evaluation = evaluations[name]
    model = _model(misaligned, evaluation)
    picks = [p for p in replay.replay(model, evaluation, heldout_shapes(), timed) if p.heldout]
    assert len(picks) == 60  # 20 held-out shapes in each of FP32, TF32 and FP64
    assert [p for p in picks if not p.agrees] == []
    if timed > 1:
        assert all(len(p.timed) == timed for p in picks)


def test_the_rule_is_what_moved_the_picks_between_the_builds(evaluations):
    evaluation = evaluations["evaluation_87b988a"]
    strict = [p for p in replay.replay(_model(math.inf, evaluation), evaluation, heldout_shapes()) if p.heldout]
    assert any(not p.agrees for p in strict)


def test_the_replays_count_is_gemm_auto_reports_count_of_picks_by_their_own_time(evaluations):
    """Both judge the same picks by the same candidates' times, from the same JSON."""
    evaluation = evaluations["evaluation"]
    counts = replay.tally(replay.replay(_model(math.inf, evaluation), evaluation, heldout_shapes()))
    rows = auto_report.rows(evaluation, heldout_shapes())
    for arith in ("fp32", "tf32", "fp64"):
        held = [r for r in rows if r.arithmetic == arith and r.heldout]
        assert counts[(arith, "held out")] == (len(held), auto_report.summary(held).pick_near_best)


def test_the_cli_refuses_bad_input_in_one_line(tmp_path, capsys):
    def sweep(context, benchmarks):
        path = tmp_path / f"s{len(list(tmp_path.iterdir()))}.json"
        path.write_text(json.dumps({"context": context, "benchmarks": benchmarks}))
        return str(path)

    good = {"gpu_sm_count": "132"}
    entry = {
        "name": "gemm/fp32/gemv/m:0/n:1/k:x/manual_time",
        "median_ms": 0.1,
        "grid_blocks": 0.5,
        "variant": {
            "name": "gemv",
            "family": "gemv",
            "precision": "fp32",
            "compute": "fp32",
            "shape": {"m": 0, "n": 1, "k": "x"},
        },
    }
    cases = [
        (["--evaluation", sweep(good, []), "--misaligned", "-1"], "--misaligned"),
        (["--evaluation", sweep(good, []), "--timed", "0"], "--timed"),
        (["--evaluation", sweep(good, [])], "no shape"),
        (["--evaluation", sweep(good, [entry])], "no shape"),
        (["--evaluation", sweep({"gpu_sm_count": "0.5"}, [])], "gpu_sm_count"),
        (["--evaluation", sweep({"gpu_sm_count": "1e400"}, [])], "gpu_sm_count"),
        (["--evaluation", sweep(good, []), "--times", str(tmp_path / "missing.inc")], "cannot read"),
        (["--evaluation", str(tmp_path / "missing.json")], "missing.json"),
    ]
    for args, message in cases:
        assert cli.run_cli(cli.main, args) == 2, args
        err = capsys.readouterr().err
        assert message in err and "unexpected" not in err and err.count("\n") == 1, (args, err)
