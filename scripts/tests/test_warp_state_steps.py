"""A ladder step in warp states: instructions x cycles per issued instruction / occupancy, the
states that moved most, and where the decomposition does not hold. The four Hopper steps of the
committed H100 study, each held to what its kernel's code says should move."""

import math

import pytest
from conftest import SCRIPTS

from gemm_study.analysis import warp_state_steps as steps
from gemm_study.data.results import load_frame, one_row_per_benchmark

STATES = (
    "long_scoreboard",
    "barrier",
    "mio_throttle",
    "short_scoreboard",
    "math_pipe_throttle",
    "not_selected",
    "wait",
    "dispatch_stall",
    "no_instruction",
    "selected",
)


def row(time_ms, warp_inst, occupancy, **cycles):
    out = {"time_ms": time_ms, "warp_inst": warp_inst, "achieved_occupancy": occupancy}
    out.update({f"stall_{s}": cycles.get(s, 0.1) for s in STATES})
    return out


def test_the_three_factors_multiply_to_the_time_ratio():
    a = row(2.0, 1e6, 50.0, long_scoreboard=2.0)
    # Twice the instructions, the same cycles per instruction, twice the warps: the same time.
    b = row(2.0, 2e6, 100.0, long_scoreboard=2.0)
    d = steps.decompose(a, b)
    assert d.instructions == 2 and d.cpi[0] == pytest.approx(d.cpi[1]) and d.product == pytest.approx(1.0)
    assert steps.holds(d, 1.0) and "together x1.00" in steps.sentence(a, b)
    # Waits on global memory doubled: half the speed, long_scoreboard named first.
    c = row(4.0, 1e6, 50.0, long_scoreboard=2.0 + steps.decompose(a, a).cpi[0])
    sentence = steps.sentence(a, c)
    assert "(long_scoreboard +" in sentence and "together x0.50" in sentence and "does not hold" not in sentence
    # Measured faster than the decomposition says: work outside the instructions, said so.
    fast = dict(c, time_ms=1.0)
    assert "does not hold here (measured x2.00 in SM cycles): none of the counters" in steps.sentence(a, fast)
    # The decomposition counts cycles: the same time at a 10% lower clock is 10% fewer cycles,
    # a speedup of 1 / 0.9 in cycles.
    slow_clock = steps.measured_in_cycles(dict(a, sm_clock_mhz=1980.0), dict(a, sm_clock_mhz=1782.0))
    assert slow_clock == pytest.approx(1 / 0.9)
    # Where the SMs counted their clock, that count is the clock, whatever NVML read.
    counted = steps.measured_in_cycles(
        dict(a, sm_clock_mhz=1980.0, sm_clock_counted_mhz=1980.0),
        dict(a, sm_clock_mhz=1980.0, sm_clock_counted_mhz=1584.0),
    )
    assert counted == pytest.approx(1980 / 1584)
    # One side without a count: NVML's clock on both, never one of each.
    mixed = steps.measured_in_cycles(
        dict(a, sm_clock_mhz=1980.0, sm_clock_counted_mhz=1995.0), dict(a, sm_clock_mhz=1800.0)
    )
    assert mixed == pytest.approx(1980 / 1800)
    tail = steps.sentence(dict(a, sm_imbalance=1.0), dict(fast, sm_imbalance=1.5))
    assert "the grid's tail (busiest SM over the mean) moved 1.00 -> 1.50" in tail
    assert "wgmma runs asynchronously" in steps.sentence(a, dict(fast, tensor_gmma_inst=8.0))


def test_no_decomposition_without_the_states_instructions_or_occupancy():
    a = row(1.0, 1e6, 50.0)
    assert steps.decompose(a, {"time_ms": 1.0, "warp_inst": 1e6, "achieved_occupancy": 50.0}) is None
    assert steps.decompose(a, dict(a, warp_inst=math.nan)) is None
    assert steps.decompose(a, dict(a, achieved_occupancy=0.0)) is None
    assert steps.sentence(a, dict(a, warp_inst=math.nan)) == ""


@pytest.fixture(scope="module")
def h100():
    _, frame = load_frame(SCRIPTS.parent / "reports" / "h100-80gb-hbm3" / "results.json")
    kernel = one_row_per_benchmark(frame)
    kernel = kernel[~kernel.end_to_end & (kernel.m == 4096) & (kernel.precision == "fp32")]
    kernel = kernel.assign(time_ms=kernel.median_ms)
    return {r["family"]: r for _, r in kernel.iterrows() if r.get("counters_available") == 1}


def test_mma_tf32_waits_on_global_memory_with_half_the_warps(h100):
    """mma_tf32 loads each k-tile with plain loads and waits for them before its MMAs (one stage,
    no pipeline), and its accumulators and fragments take more registers than the tuned CUDA-core
    kernel: the step must show fewer resident warps and long_scoreboard as the state that grew."""
    a, b = h100["tuned"], h100["mma_tf32"]
    assert b["theoretical_occupancy"] < a["theoretical_occupancy"]  # the launch facts: registers
    d = steps.decompose(a, b)
    grew = max(d.moves, key=lambda m: m[1])
    assert grew[0] == "long_scoreboard" and d.occupancy[1] < d.occupancy[0]
    assert steps.holds(d, steps.measured_in_cycles(a, b))


def test_mbarrier_stages_trades_the_block_barrier_for_polling(h100):
    """mbarrier_stages replaces the k-loop's __syncthreads with mbarrier waits that poll
    (try_wait): the barrier state must fall most and the instructions rise."""
    a, b = h100["rasterized"], h100["mbarrier_stages"]
    d = steps.decompose(a, b)
    assert min(d.moves, key=lambda m: m[1])[0] == "barrier"
    assert d.instructions > 1.0 and steps.holds(d, steps.measured_in_cycles(a, b))


def test_warptile_moves_cycles_per_instruction_not_the_work(h100):
    """warptile regroups the same FMAs and shared-memory loads by warp: its instruction count stays
    within 2% and the step's time must be in the cycles per issued instruction."""
    a, b = h100["conflict_free"], h100["warptile"]
    d = steps.decompose(a, b)
    assert abs(d.instructions - 1) < 0.02
    assert abs(d.cpi[1] / d.cpi[0] - 1) > abs(d.instructions - 1)
    assert steps.holds(d, steps.measured_in_cycles(a, b))


def test_the_persistent_grid_runs_the_same_mainloop_with_a_scheduler_loop(h100):
    """wgmma_persistent runs every tile through the same wgmma mainloop (same HGMMA count, same
    tensor-pipe work) and adds its tile scheduler's loop: more instructions, and tensor work that
    the issued instructions do not carry."""
    a, b = h100["wgmma_tma"], h100["wgmma_persistent"]
    assert a["tensor_gmma_inst"] == b["tensor_gmma_inst"]
    d = steps.decompose(a, b)
    assert d.instructions > 1.1


def test_mma_tf32s_inner_loop_loads_a_fragment_word_per_mma_and_its_registers_fit_one_block(h100):
    """The machine code behind the mma_tf32 step: its main loop replaces FFMA by HMMA m16n8k8 and
    loads every fragment word with a scalar LDS. Per k8 step a warp's 64 x 64 tile takes
    (64 / 16) x (64 / 8) = 32 MMAs and 4 A words x 4 row tiles + 2 B words x 8 column tiles = 32
    loads, one per MMA. Its registers times its 256 threads exceed half the 64K-register file, so
    one block fits an SM: the 8 warps the step's occupancy falls to."""
    from gemm_study.analysis import sass_loop
    from gemm_study.data.results import sass_beside

    sass = sass_beside(SCRIPTS.parent / "reports" / "h100-80gb-hbm3" / "results.json")
    assert sass is not None, "the committed study holds the build's SASS (sass.json.gz)"
    tuned, mma = h100["tuned"], h100["mma_tf32"]
    length, ops = sass_loop.loop_of(sass, "fp32", mma["variant"], "4096x4096x4096")
    hmma = sum(n for o, n in ops.items() if o.startswith("HMMA"))
    assert hmma > 0 and ops.get("FFMA", 0) == 0
    assert ops.get("LDS", 0) == hmma
    assert sass_loop.loop_of(sass, "fp32", tuned["variant"], "4096x4096x4096")[1].get("HMMA.1688.F32.TF32", 0) == 0
    assert mma["registers_per_thread"] * mma["threads_per_block"] > 65536 / 2
    assert mma["blocks_per_sm"] == 1 < tuned["blocks_per_sm"]
