"""The cross-GPU page: which ratio each benchmark moved with between two GPUs, and whether the
counters on the first predicted it."""

import json

import pytest
from conftest import ladder_entry, recorded_entry, write_contract_run

from gemm_study.analysis import account
from gemm_study.data.results import load_results, one_row_per_benchmark, to_frame
from gemm_study.report import cross_gpu

TEMPLATE = "gemm/fp32/shared/tile:32/m:512/n:512/k:512/manual_time"
PEAK_DRAM_A = 3352.0
FAST_HBM = {"gpu_name": "Faster HBM", "peak_dram_gbs": str(1.44 * PEAK_DRAM_A)}


def _rung(name, rung, gflops, counters, **extra):
    entry = ladder_entry(recorded_entry(TEMPLATE), name, rung, name, gflops, counters)
    entry.update(extra)
    return entry


def _ladder_runs(tmp_path, speedups, clock_b=1980.0, new_format=False):
    """A: two rungs at 512^3, one pipe-bound and one DRAM-bound by its counters; B: the same with
    1.44x the HBM bandwidth, each rung `speedups[i]` times faster, every row at `clock_b` MHz."""
    ms = 2.0 * 512**3 / 40000 / 1e6  # the compute-bound rung's time at 40,000 GFLOP/s
    compute = {
        "fma_pipe_util_pct": 90.0,
        "fp64_pipe_util_pct": 0.0,
        "tensor_pipe_util_pct": 0.0,
        "dram_read_bytes": 0.05 * PEAK_DRAM_A * 1e9 * ms / 1e3,
        "dram_write_bytes": 0.0,
    }
    memory = {
        "fma_pipe_util_pct": 20.0,
        "fp64_pipe_util_pct": 0.0,
        "tensor_pipe_util_pct": 0.0,
        "dram_read_bytes": 0.8 * PEAK_DRAM_A * 1e9 * ms / 1e3,
        "dram_write_bytes": 0.0,
    }
    extra = (
        {"sustained": 1.0, "samples": {"ms": [ms], "sm_clock_mhz": [1980.0], "flagged": [0], "slowdown": []}}
        if new_format
        else {}
    )
    runs = []
    for gpu, context in (("a", {"peak_dram_gbs": str(PEAK_DRAM_A)}), ("b", FAST_HBM)):
        entries = [
            _rung("warptile/bm:128", 5, 40000, {**compute, "sm_clock_mhz": 1980.0}, **extra),
            _rung("vectorized/bm:128", 3, 40000, {**memory, "sm_clock_mhz": 1980.0}, **extra),
        ]
        if gpu == "b":
            for entry, speedup in zip(entries, speedups):
                entry["median_ms"] /= speedup
                entry["real_time"] /= speedup
                entry["sm_clock_mhz"] = clock_b
        runs.append(write_contract_run(tmp_path / f"{gpu}.json", entries, context=context))
    return runs


def _page(a, b):
    (ca, ea), (cb, eb) = load_results(a), load_results(b)
    return cross_gpu.page(ca, one_row_per_benchmark(to_frame(ea)), cb, one_row_per_benchmark(to_frame(eb)))


def test_the_compute_bound_rung_moves_with_the_clock_and_the_memory_bound_one_with_hbm(tmp_path):
    text = _page(*_ladder_runs(tmp_path, speedups=(1.0, 1.44)))
    assert "## The ladder" in text and "fp32, 512x512x512:" in text
    assert (
        "| 3 | vectorized/bm:128 | 0.00671 | 0.00466 | 1.44 | 1,980 | 1,980 | 1 | 1.44 | - | - | HBM bandwidth | "
        "DRAM 80% of peak, pipes 20% | HBM bandwidth | yes |"
    ) in text
    assert "| 5 | warptile/bm:128 |" in text and "| SM clock | pipes 90% of peak, DRAM 5% | SM clock | yes |" in text
    # The rung and the two cuBLAS references beside it (DRAM 18% and 4% of peak, no pipe counters).
    assert (
        "- 3 predicted to move with the SM clock ratio (median 1x) by the counters on NVIDIA H200: "
        "median speedup on Faster HBM 1.00x; the prediction held for 3 of 3."
    ) in text
    assert "|  | cublas | 0.0157 | 0.0157 | 1 |" in text
    assert "- 1 predicted to move with the HBM bandwidth ratio (median 1.44x)" in text


def test_a_prediction_that_fails_says_no(tmp_path):
    # The DRAM-bound rung did not speed up on the faster HBM.
    text = _page(*_ladder_runs(tmp_path, speedups=(1.0, 1.0)))
    assert "| HBM bandwidth | DRAM 80% of peak, pipes 20% | SM clock | no |" in text
    assert "the prediction held for 0 of 1" in text


def test_the_clock_ratio_is_the_clocks_each_benchmark_ran_at(tmp_path):
    # B's samples ran at 1,800 MHz: the compute-bound rung took 10% longer, and that is the clock.
    text = _page(*_ladder_runs(tmp_path, speedups=(1800 / 1980, 1.44), clock_b=1800.0, new_format=True))
    assert (
        "| 5 | warptile/bm:128 | 0.00671 | 0.00738 | 0.909 | 1,980 | 1,800 | 0.909 | 1.44 | sustained | sustained |"
        in text
    )


@pytest.mark.parametrize(
    "speedup,clock,bandwidth,moved",
    [
        (1.44, 1.0, 1.44, cross_gpu.BANDWIDTH),
        (1.02, 1.0, 1.44, cross_gpu.SM_CLOCK),
        (1.2, 1.0, 1.44, "neither"),
        (1.3, 1.0, 1.05, "either"),
    ],
)
def test_moved_with_is_the_ratio_within_10_percent(speedup, clock, bandwidth, moved):
    by_mover = {cross_gpu.SM_CLOCK: clock, cross_gpu.BANDWIDTH: bandwidth}
    assert cross_gpu.moved_with(speedup, by_mover) == moved


def test_a_prediction_holds_within_the_tolerance_though_another_ratio_is_nearer():
    """H100 against H200: SM clock ratio 1, L2 clock ratio 1.02; a speedup of 1.01 is nearer the
    L2 clock's ratio, and the SM clock ratio the counters predicted holds all the same."""
    by_mover = {cross_gpu.SM_CLOCK: 1.0, cross_gpu.BANDWIDTH: 1.44, cross_gpu.L2_CLOCK: 1.02}
    assert cross_gpu.moved_with(1.012, by_mover) == cross_gpu.L2_CLOCK
    assert cross_gpu.within(1.012, by_mover) == {cross_gpu.SM_CLOCK, cross_gpu.L2_CLOCK}
    assert cross_gpu.within(1.4, by_mover) == {cross_gpu.BANDWIDTH}


@pytest.mark.parametrize(
    "limiter,mover,source",
    [
        ("dram", cross_gpu.BANDWIDTH, "account: DRAM"),
        ("l2", cross_gpu.L2_CLOCK, "account: L2"),
        ("fp64", cross_gpu.SM_CLOCK, "account: FP64 pipe"),
    ],
)
def test_the_accounts_limiter_is_the_prediction_where_the_row_has_one(monkeypatch, limiter, mover, source):
    monkeypatch.setattr(account, "account", lambda row, context: account.Account(limiter=limiter))
    gpu = type("G", (), {"context": {}, "dram_gbs": PEAK_DRAM_A})()
    assert cross_gpu.predicted({"time_ms": 1.0}, gpu) == (mover, source)


def test_without_counters_the_prediction_says_so():
    gpu = type("G", (), {"context": {}, "dram_gbs": PEAK_DRAM_A})()
    assert cross_gpu.predicted({"time_ms": 1.0}, gpu) == (cross_gpu.SM_CLOCK, "no DRAM or pipe counters")
    assert (
        cross_gpu.predicted({"time_ms": 1.0, "dram_read_bytes": 3e9, "dram_write_bytes": 0.0}, gpu)[0]
        == cross_gpu.BANDWIDTH
    )  # 3 GB in 1 ms: 90% of the peak, no pipe counters


def test_the_l2_clock_ratio_needs_both_rows_to_have_measured_it():
    gpu = type("G", (), {"sms": 132.0, "max_clock": 1980.0, "dram_gbs": PEAK_DRAM_A})()
    both = cross_gpu.ratios({"l2_clock_hz": 1.6e9}, {"l2_clock_hz": 1.8e9}, gpu, gpu)
    assert both[cross_gpu.L2_CLOCK] == pytest.approx(1.125) and both[cross_gpu.SM_CLOCK] == 1.0
    assert cross_gpu.L2_CLOCK not in cross_gpu.ratios({"l2_clock_hz": 1.6e9}, {}, gpu, gpu)


def test_without_a_common_rung_the_page_says_so(tmp_path):
    a = write_contract_run(tmp_path / "a.json")
    data = json.loads(a.read_text())
    data["context"]["gpu_name"] = "Other"
    b = tmp_path / "b.json"
    b.write_text(json.dumps(data))
    text = _page(a, b)
    assert "No rung of the ladder ran on both GPUs." in text and "### fp32, 512x512x512" in text
