"""Each ladder step as a prediction: the ratio of the limiters' bounds, held to the measured
speedup within 10%; an unexplained step shows the counters it has; losing steps alike."""

import pandas as pd
import pytest
import study_rows
from test_ladder import kernel_of, view

from gemm_study.analysis import prediction


@pytest.fixture
def fp32_steps(tmp_path):
    context, kernel = kernel_of(study_rows.write(tmp_path / "study.json"))
    return view(kernel, context, "fp32").steps


def test_the_prediction_is_the_ratio_of_the_bounds(fp32_steps):
    first = fp32_steps[0]
    assert first.label == "0 shared/tile:32 -> 1 blocktile_1d"
    assert first.predicted == pytest.approx(first.before["account_bound_ms"] / first.after["account_bound_ms"])
    assert first.measured == pytest.approx(16000 / 9000)
    assert first.verdict == "explained" and abs(first.off) < 1e-9
    # shared memory's wavefronts are the L1 data stage's (the synthetic rows have no others)
    assert "L1 data stage limits both; its work l1_wavefronts falls 1.78x" in first.sentence


def test_verdicts_follow_the_explained_share(fp32_steps):
    """The synthetic ladder keeps explained at 0.8 except warptile (0.6): the step into warptile
    and the one out of it miss by 25% and 33%, every other step is predicted exactly."""
    verdicts = [s.verdict for s in fp32_steps]
    assert verdicts == ["explained"] * 4 + ["unexplained"] * 2 + ["explained"] * 3
    into, out_of = fp32_steps[4], fp32_steps[5]
    assert into.off == pytest.approx(0.6 / 0.8 - 1) and out_of.off == pytest.approx(0.8 / 0.6 - 1)
    assert "unexplained; explained share 0.80 -> 0.60" in into.sentence
    assert "the counters that moved: " in into.sentence
    assert prediction.tally(fp32_steps) == (7, 2, 0)
    null = sum(abs(s.measured - 1) <= 0.10 for s in fp32_steps)
    assert prediction.tally_sentence(fp32_steps) == (
        "7 of 9 predicted steps within 10% of the measured speedup (78%), 2 unexplained; "
        f"predicting x1.00 for every step would explain {null} of 9."
    )


def test_the_null_model_explains_the_steps_that_barely_move(fp32_steps):
    """The null model predicts x1.00: a step is its hit where the time moved by 10% or less."""
    flat = [s for s in fp32_steps if 0.9 <= s.measured <= 1.1]
    assert prediction.null_tally(fp32_steps) == len(flat)
    assert prediction.TOLERANCE == 0.10


def test_a_step_that_loses_time_is_predicted_too(fp32_steps):
    slower = fp32_steps[7]  # rasterized -> mbarrier_stages: 47,200 -> 44,900 GFLOP/s
    assert slower.label == "7 rasterized -> 8 mbarrier_stages"
    assert slower.measured < 1 and slower.verdict == "explained"
    assert "its work fma_pipe_inst rises 1.05x" in slower.sentence


def test_a_limiter_that_moves_and_a_tail_that_grows_are_named():
    base = dict(
        rung=1,
        family="a",
        variant="a",
        time_ms=2.0,
        account_unit="shared",
        account_bound_ms=1.6,
        account_explained=0.8,
        account_tail=1.0,
        smem_wavefronts=4e8,
        fma_pipe_inst=1e8,
    )
    after = dict(
        base, rung=2, family="b", variant="b", time_ms=1.0, account_unit="fma", account_bound_ms=0.8, account_tail=2.06
    )
    step = prediction.step(pd.Series(base), pd.Series(after), "fp32", "s")
    assert step.verdict == "explained" and step.predicted == pytest.approx(2.0)
    assert "the limiter moves from shared memory (smem_wavefronts 4.000e+08) to FMA pipe (FP32)" in step.sentence
    assert "the grid's tail (busiest SM's work over the mean) 1.00 -> 2.06" in step.sentence


def test_without_an_account_on_one_side_there_is_no_prediction():
    a = pd.Series(
        dict(
            rung=1,
            family="a",
            variant="a",
            time_ms=2.0,
            account_unit="fma",
            account_bound_ms=1.0,
            account_explained=0.5,
            m=64,
            n=64,
            k=64,
            precision="fp32",
            gld_requests=10.0,
        )
    )
    b = pd.Series(
        dict(
            rung=2,
            family="b",
            variant="b",
            time_ms=1.0,
            account_unit="",
            account_reason="no warp_inst",
            m=64,
            n=64,
            k=64,
            precision="fp32",
            gld_requests=5.0,
        )
    )
    step = prediction.step(a, b, "fp32", "s")
    assert step.verdict == "no prediction" and step.predicted != step.predicted
    assert step.sentence == (
        "measured x2.00; no prediction, no account on rung 2: no warp_inst; the counters that "
        "moved: gld_requests falls 2.00x (10 -> 5) (better)."
    )
    assert (
        prediction.tally_sentence([step]) == "no step has a prediction (1 steps lack an account on one side or both)."
    )


def test_the_steps_table_has_every_step(fp32_steps):
    from gemm_study.report.ladder_report import steps_table

    table = steps_table(fp32_steps)
    assert list(table.verdict) == [s.verdict for s in fp32_steps]
    assert set(table.columns) >= {"ladder", "shape", "step", "measured", "predicted", "off", "sentence"}


def test_a_loop_without_a_k_tile_below_its_limiters_peak_says_what_would_model_it():
    """naive_row on an H100: its L1 data stage busy 76% of the time, and a loop over K with no
    k-tile (its parameters name no block tile), so no simulated schedule can exist; its warps wait
    on their loads. What would settle the step is a simulation of those loads. A tiled rung
    without a schedule (no SASS at this shape) gets no such sentence: its loop is one the
    simulation models."""

    def rung(**fields):
        return pd.Series({"start": True, "time_ms": 1.4, "account_tail": 1.0, **fields})

    naive = rung(
        rung=-1,
        family="naive_row",
        variant="naive_row/block:32x32",
        param_values={"block_x": 32, "block_y": 32},
        time_ms=2.0,
        account_unit="l1",
        account_limiter="L1 data stage",
        account_bound_ms=1.52,
        account_explained=0.76,
        stall_long_scoreboard=3.2,
        stall_lg_throttle=2.4,
        stall_wait=0.3,
    )
    rung_0 = dict(rung=0, family="shared", variant="shared/tile:32", param_values={"tile": 32})
    tiled = rung(
        **rung_0,
        account_unit="schedule",
        account_limiter="schedule (simulated)",
        account_bound_ms=1.46,
        account_explained=1.04,
        account_schedule_cycles=1970.0,
    )
    step = prediction.step(naive, tiled, "fp32", "s")
    assert step.verdict == "unexplained"
    assert (
        "would settle it: a simulation of -1 naive_row/block:32x32's loop, which has no k-tile for the "
        "schedule to model, with its global loads served from L1, L2 and DRAM at their hit rates and "
        "latencies under this load; it runs its limiter (L1 data stage) at 76% of peak, "
        "its warps waiting per issued instruction in long_scoreboard 3.20 and lg_throttle 2.40" in step.sentence
    )
    unsimulated_tile = rung(
        **rung_0,
        account_unit="l1",
        account_limiter="L1 data stage (shared memory 96%)",
        account_bound_ms=1.1,
        account_explained=0.79,
        stall_mio_throttle=5.0,
    )
    assert prediction.settle(unsimulated_tile, tiled).startswith(
        "would settle it: the warp states per SASS line (ncu's source counters) against the simulation's"
    )
