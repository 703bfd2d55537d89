"""The account's latency term: round trips and barriers read from a main loop's SASS, the chain's
arithmetic on hand-made facts, the limiter it becomes where one block cannot fill its own waits,
and, on the committed study, the rungs whose code waits on its loads."""

import math

import pytest
from conftest import SCRIPTS

from gemm_study.analysis import account, latency
from gemm_study.data.results import load_frame, one_row_per_benchmark, sm_clock_mhz

LATENCIES = {
    "latencies": [
        {"level": "shared", "cycles": 30.0},
        {"level": "l2", "cycles": 300.0},
        {"level": "dram", "cycles": 700.0},
        {"level": "barrier", "cycles": 20.0},
    ],
    "bandwidths": [{"level": "l2_read", "gbs": 4096.0}],
}

# A k-tile loop as an unpipelined kernel compiles it: two loads in flight together, their stores
# (which wait for both), a barrier, the math, a barrier, the branch back.
UNPIPELINED = [
    "LDG.E.128 R4, desc[UR4][R2.64]",
    "LDG.E R8, desc[UR4][R14.64]",
    "STS.128 [R10], R4",
    "STS [R11], R8",
    "BAR.SYNC.DEFER_BLOCKING 0x0",
    "LDS.128 R12, [R20]",
    "FFMA R16, R12, R13, R16",
    "BAR.SYNC.DEFER_BLOCKING 0x0",
    "@P0 BRA 0x0",
]


def test_loads_used_before_the_next_load_are_one_round_trip_each():
    assert latency.loop_waits(UNPIPELINED) == latency.LoopWaits(global_round_trips=1, barriers=2, loads=2)
    # The second load's address comes from the first: two round trips, one after the other.
    chained = ["LDG.E R4, desc[UR4][R2.64]", "IMAD.WIDE R6, R4, 0x4, R2", "LDG.E R8, desc[UR4][R6.64]", "STS [R1], R8"]
    assert latency.loop_waits(chained).global_round_trips == 2
    direct = ["LDG.E R4, desc[UR4][R2.64]", "LDG.E R5, desc[UR4][R4.64]", "STS [R1], R5"]
    assert latency.loop_waits(direct).global_round_trips == 2
    # A generic load (LD) is waited for like LDG.
    assert latency.loop_waits(["LD.E R4, [R2.64]", "STS [R1], R4"]).global_round_trips == 1
    # A predicated load is still a load; one whose value is never read in the loop stays one trip.
    assert latency.loop_waits(["@P1 LDG.E R4, desc[UR4][R2.64]", "FFMA R9, R7, R7, R9"]).global_round_trips == 1


def test_cp_async_and_tma_are_not_waited_for_in_their_loop():
    pipelined = ["LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]", "LDGDEPBAR", "DEPBAR.LE SB0, 0x2", "BAR.SYNC 0x0"]
    assert latency.loop_waits(pipelined) == latency.LoopWaits(global_round_trips=0, barriers=1)


def test_latencies_need_every_level():
    assert latency.latencies({"pipe_peaks": LATENCIES}) == {
        "shared": 30.0,
        "l2": 300.0,
        "dram": 700.0,
        "barrier": 20.0,
        "l2_read_gbs": 4096.0,
    }
    partial = {**LATENCIES, "latencies": LATENCIES["latencies"][:3]}
    assert latency.latencies({"pipe_peaks": partial}) == {}
    assert latency.latencies({"pipe_peaks": {"latencies": LATENCIES["latencies"]}}) == {}
    assert latency.latencies({}) == {}


def _context(body):
    sass = {
        "kernels": {"fp32/toy/bm:128/bn:128/bk:8": {"4096x4096x4096": "toy_kernel"}},
        "sass": {"toy_kernel": [[16 * i, t] for i, t in enumerate(body)]},
    }
    return {"gpu_sm_count": "128", "pipe_peaks": LATENCIES, "sass": sass}


def _row(blocks_per_sm, grid=1024, hit=0.75):
    return {
        "precision": "fp32",
        "variant": "toy/bm:128/bn:128/bk:8",
        "param_values": {"bm": 128, "bn": 128, "bk": 8},
        "shape": "4096x4096x4096",
        "blocks_per_sm": blocks_per_sm,
        "grid_blocks": grid,
        "sm_clock_mhz": 1000.0,
        "l2_read_hit_rate": hit,
    }


# UNPIPELINED's round trip waits for both its loads: L2's 300 cycles where both hit (0.75^2),
# DRAM's 700 where either misses.
TRIP = 0.75**2 * 300 + (1 - 0.75**2) * 700  # 475


def test_a_batch_of_loads_waits_for_its_slowest():
    lat = {"l2": 300.0, "dram": 700.0}
    assert latency.trip_latency(lat, 0.75, 1) == pytest.approx(0.75 * 300 + 0.25 * 700)  # one load: the mean
    assert latency.trip_latency(lat, 0.75, 0) == latency.trip_latency(lat, 0.75, 1)
    assert latency.trip_latency(lat, 0.75, 2) == pytest.approx(TRIP)
    assert latency.trip_latency(lat, 1.0, 8) == pytest.approx(300)  # every load hits
    assert latency.trip_latency(lat, 0.0, 8) == pytest.approx(700)  # every load misses
    many = [latency.trip_latency(lat, 0.9, n) for n in (1, 2, 4, 16, 64)]
    assert many == sorted(many) and many[-1] == pytest.approx(700, rel=0.01)
    # Batches of unequal size each wait for their own slowest load: the mean of their latencies,
    # not the latency of their mean size.
    uneven = latency.batch_latency(lat, 0.75, [1, 3])
    assert uneven == pytest.approx((latency.trip_latency(lat, 0.75, 1) + latency.trip_latency(lat, 0.75, 3)) / 2)
    assert uneven < latency.trip_latency(lat, 0.75, 2)
    assert latency.batch_latency(lat, 0.75, []) == latency.trip_latency(lat, 0.75, 1)


def test_a_loops_batches_are_its_round_trips_else_its_cp_async_groups():
    assert latency.global_batches(UNPIPELINED) == [2]
    four = ["LDG.E R4, desc[UR8][R2.64]", "LDG.E R5, desc[UR8][R6.64]", "LDG.E R7, desc[UR8][R8.64]"]
    four += ["LDG.E R9, desc[UR8][R10.64]", "STS [R1], R4", "STS [R1+0x4], R5", "STS [R1+0x8], R7", "STS [R1+0xc], R9"]
    assert latency.global_batches(four + four[:1] + four[4:5]) == [4, 1]
    copy = "LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]"
    # A group closes at LDGDEPBAR ...
    assert latency.global_batches([copy] * 3 + ["LDGDEPBAR", "DEPBAR.LE SB0, 0x2"]) == [3]
    # ... or at an mbarrier's ARRIVES.LDGSTSBAR; copies after the last close join the first group.
    ring = [copy, "ARRIVES.LDGSTSBAR.64 [R7+URZ+0x100]", copy, copy, "ARRIVES.LDGSTSBAR.64 [R7+URZ+0x108]", copy]
    assert latency.global_batches(ring) == [2, 2]
    # A loop with both: the loads it waits for in the loop are its LDG round trips.
    assert latency.global_batches(UNPIPELINED + [copy, "LDGDEPBAR"]) == [2]
    assert latency.global_batches(["FFMA R1, R2, R3, R1"]) == []


def test_the_chain_adds_the_waits_to_one_blocks_compute():
    # 32 x 32 tiles x 512 k-tiles over 128 SMs: 4096 block-k-tiles per SM. Units' bound 4.096 ms at
    # 1 GHz: 1,000 cycles of compute per block-k-tile. Waits: 1 round trip of two loads (TRIP,
    # 475), 2 barriers of 20, one shared load of 30: 545 cycles.
    chain = latency.chain(_row(blocks_per_sm=1), _context(UNPIPELINED), units_ms=4.096, tail=1.0)
    assert chain.wait_cycles == pytest.approx(TRIP + 70)
    assert chain.compute_cycles == pytest.approx(1000)
    assert chain.ms == pytest.approx(4096 * (1000 + TRIP + 70) / 1e6)  # one block: nothing fills its waits
    two = latency.chain(_row(blocks_per_sm=2), _context(UNPIPELINED), units_ms=4.096, tail=1.0)
    assert two.ms == pytest.approx(4096 / 2 * (1000 + TRIP + 70) / 1e6)  # below the units' 4.096 ms: covered
    persistent = latency.chain(_row(blocks_per_sm=2, grid=128), _context(UNPIPELINED), units_ms=4.096, tail=1.0)
    assert persistent.blocks == 1


def test_a_grid_smaller_than_the_sms_room_has_the_blocks_it_launched():
    # 128 blocks on 128 SMs with room for 2 each: one block per SM, nothing to cover its waits.
    row = {**_row(blocks_per_sm=2, grid=128), "param_values": {"bm": 512, "bn": 256, "bk": 8}}
    row["variant"] = "toy/bm:128/bn:128/bk:8"
    chain = latency.chain(row, _context(UNPIPELINED), units_ms=1.0, tail=1.0)
    assert chain.blocks == 1


def test_launch_facts_of_zero_give_no_number_and_no_crash():
    row = {**_row(blocks_per_sm=0), "gld_requests": 1e6, "theoretical_occupancy": 12.5}
    assert latency.chain(row, _context(UNPIPELINED), units_ms=1.0, tail=1.0) is None
    assert math.isnan(latency.outside_loop_share({**row, "warp_inst": 1e9}, _context(UNPIPELINED)))


def test_loads_in_a_loop_nested_in_the_ktile_loop_count_as_often_as_they_run():
    # The loop holds 2 LDGs in one round trip. 8 warps per block (theoretical occupancy 12.5% of
    # 2048 threads, one block per SM) executed 6 global load instructions each per k-tile (1024
    # tiles x 512 k-tiles): the loop's loads ran 3 times per k-tile, 3 round trips.
    row = {**_row(blocks_per_sm=1), "theoretical_occupancy": 12.5, "gld_requests": 6 * 8 * 1024 * 512}
    context = {**_context(UNPIPELINED), "gpu_max_threads_per_sm": "2048"}
    chain = latency.chain(row, context, units_ms=4.096, tail=1.0)
    assert chain.round_trips == pytest.approx(3)
    assert chain.wait_cycles == pytest.approx(3 * TRIP + 2 * 20 + 30)
    # Without the count, the loop as compiled.
    assert latency.chain(_row(blocks_per_sm=1), context, units_ms=4.096, tail=1.0).round_trips == 1


def test_the_chips_ktile_comes_through_l2_before_the_last_load_returns():
    # 16 KiB of L2 reads per block-k-tile (512 sectors), one block per SM on 128 SMs: 2 MiB per
    # k-tile for the chip. 4,096 GB/s at 1 GHz is 4,096 bytes per SM cycle: 512 cycles of burst.
    row = {**_row(blocks_per_sm=1), "l2_read_sectors": 512 * 1024 * 512}
    chain = latency.chain(row, _context(UNPIPELINED), units_ms=4.096, tail=1.0)
    assert chain.burst_cycles == pytest.approx(512)
    assert chain.wait_cycles == pytest.approx(512 + TRIP + 70)


def test_no_chain_without_the_sass_the_tiling_or_the_latencies():
    row, context = _row(1), _context(UNPIPELINED)
    assert latency.chain({**row, "param_values": {}}, context, 4.0, 1.0) is None
    assert latency.chain(row, {**context, "pipe_peaks": {}}, 4.0, 1.0) is None
    assert latency.chain({**row, "variant": "other/bm:128/bn:128/bk:8"}, context, 4.0, 1.0) is None
    assert latency.chain({**row, "l2_read_hit_rate": math.nan}, context, 4.0, 1.0) is None


STUDY = SCRIPTS.parent / "reports" / "h100-80gb-hbm3" / "results.json"


def _study_accounts():
    context, frame = load_frame(STUDY)
    kernel = one_row_per_benchmark(frame)
    kernel = kernel[~kernel.end_to_end & (kernel["shape"] == "4096x4096x4096")]
    rows, accounts = account.add_columns(kernel, context)
    return {r["variant"].split("/")[0] + "/" + r["precision"]: (r, a) for (_, r), a in zip(rows.iterrows(), accounts)}


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_on_the_h100_the_unpipelined_tensor_rung_is_latency_bound_and_its_pipelined_successor_is_not():
    """mma_tf32 loads each k-tile with element loads it stores to shared memory before a barrier
    (kernels/tensor/mma_tf32.cu: `for (c = tid; c < BM * BK; c += THREADS)`, then the same for B)
    and its 220 registers leave room for one 256-thread block per SM, so nothing fills its waits:
    its limiter must be latency where its loop, which holds loops of its own, is not simulated
    (without the source counters that give their trips). Each thread loads 256 x 32 / 256 = 32 elements of A and
    32 x 128 / 256 = 16 of B per k-tile, one 4-byte LDG each; the compiler unrolls each load loop
    into batches that it stores before the next batch, so a warp's round trips per k-tile are
    (32 + 16) over the loads of one batch. mma_tf32_pipelined loads with cp.async (LDGSTS, no LDG
    in its loop): no round trip is waited for in the loop, and it has no latency time."""
    from gemm_study.analysis import sass_loop

    found = _study_accounts()
    row, acc = found["mma_tf32/fp32"]
    context, _ = load_frame(STUDY)
    code = sass_loop.code_of(context["sass"], "fp32", row["variant"], "4096x4096x4096")
    batches = [latency.loop_waits(body) for body in sass_loop.inner_loop_bodies(code)]
    batches = [w for w in batches if w.loads]
    assert batches and all(w.global_round_trips == 1 for w in batches)
    per_trip = {w.loads for w in batches}
    assert len(per_trip) == 1
    assert acc.chain.blocks == 1
    assert acc.chain.round_trips == pytest.approx((32 + 16) / per_trip.pop())
    without = {k: v for k, v in context.items() if k != "source_counters"}
    assert account.account(row, without).limiter == "latency"
    row, acc = found["mma_tf32_pipelined/fp32"]
    assert acc.chain is not None and acc.chain.waits.global_round_trips == 0 and acc.chain.waits.barriers == 1
    assert "latency" not in acc.times_ms and acc.limiter != "latency"


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_on_the_h100_two_blocks_per_sm_cover_a_cuda_core_rungs_waits():
    """vectorized FP32 (128 x 128 tiles, 8 x 8 per thread) waits one round trip and two barriers per
    k-tile, but two blocks fit an SM and each k-tile's compute (64 FFMA per thread per k, 8 k)
    outlasts those waits: a unit, not latency, limits it."""
    row, acc = _study_accounts()["vectorized/fp32"]
    assert acc.chain.waits == latency.LoopWaits(global_round_trips=1, barriers=2, loads=2)
    assert acc.chain.round_trips == pytest.approx(1.0)  # two LDG.128 per warp and k-tile, both in the loop
    assert acc.chain.blocks == 2 and acc.chain.wait_cycles < acc.chain.compute_cycles
    assert acc.limiter != "latency"


def _study_steps(ladder_key):
    from gemm_study.analysis import ceilings
    from gemm_study.report.ladder_report import ShapeLadder, ladders_present
    from gemm_study.report.study_report import load_kernel_runs

    context, kernel, _, _ = load_kernel_runs(STUDY)
    kernel, _ = account.add_columns(kernel, context)
    table = ceilings.ceilings(context, kernel)
    lad = next(lad for lad in ladders_present(kernel) if lad.key == ladder_key)
    view = ShapeLadder(kernel, lad, "4096x4096x4096", context, table)
    return {(s.before["family"], s.after["family"]): s for s in view.steps}


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_on_the_h100_mbarrier_stages_pays_its_bookkeeping_not_its_spinning():
    """mbarrier_stages replaces cp.async's group waits and the block barrier with an mbarrier per
    stage: its k-tile loop, as compiled, gains the arrive and try-wait instructions (SYNCS). Its
    warps poll those mbarriers, but the instructions outside the loop (spinning with prologue and
    epilogue) stay a small share, so the step's extra instructions are the loop's own, and the
    limiter both rungs share predicts it."""
    step = _study_steps("fp32")[("rasterized", "mbarrier_stages")]
    a, b = step.before, step.after
    assert b["sass_loop"][0] > a["sass_loop"][0]
    assert any(op.startswith("SYNCS") for op in b["sass_loop"][1]) and not any(
        op.startswith("SYNCS") for op in a["sass_loop"][1]
    )
    # The instructions the step adds are the loop's: what it adds outside the loop (spinning with
    # prologue and epilogue) is the smaller part.
    loop_growth = b["sass_loop"][0] / a["sass_loop"][0] - 1
    outside_growth = b["account_outside_loop_share"] - a["account_outside_loop_share"]
    assert loop_growth > outside_growth
    assert a["account_unit"] == b["account_unit"] and step.verdict == "explained"


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_on_the_h100_warp_tiling_moves_no_work_and_the_step_is_in_cycles_per_instruction():
    """warptile keeps conflict_free's block tile, k-tile and shared-memory layout and changes
    which thread computes which outputs: per k-tile the same 32 LDS.128 and 512 FFMA per warp, so
    the same wavefronts and instructions. The work cannot explain a change of speed; what moves is
    how many cycles pass between a warp's instructions, and the step in warp states must carry
    the measured step with the instructions unchanged."""
    from gemm_study.analysis import warp_state_steps

    step = _study_steps("fp32")[("conflict_free", "warptile")]
    a, b = step.before, step.after
    ops_a, ops_b = a["sass_loop"][1], b["sass_loop"][1]
    assert ops_a["FFMA"] == ops_b["FFMA"] == 512 and ops_a["LDS.128"] == ops_b["LDS.128"] == 32
    assert b["smem_wavefronts"] / a["smem_wavefronts"] == pytest.approx(1, abs=0.01)
    d = warp_state_steps.decompose(a, b)
    assert d.instructions == pytest.approx(1, abs=0.02)
    assert warp_state_steps.holds(d, warp_state_steps.measured_in_cycles(a, b))


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_on_the_h100_mma_tf32_loses_to_tuned_by_waiting_for_the_slowest_load_of_each_batch():
    """tuned -> mma_tf32. mma_tf32 copies its k-tile with one 4-byte load per element (48 per
    thread, in batches the compiler unrolls) and stores each batch before the next (the element
    loop, kernels/tensor/mma_tf32.cu); 220 registers leave one 8-warp block per SM, which nothing
    else fills. Each batch is back when its slowest load is, so at the row's L2 read hit rate h a
    batch of n loads waits for DRAM with probability 1 - h^n, well above the 1 - h of one load:
    the schedule, on that latency, must carry the step, with long_scoreboard (waits on global
    memory) the state that grows most and the state it spends most in."""
    step = _study_steps("tf32")[("tuned", "mma_tf32")]
    b = step.after
    context, _ = load_frame(STUDY)
    from gemm_study.analysis import sass_loop, schedule

    code = sass_loop.code_of(context["sass"], "fp32", b["variant"], "4096x4096x4096")
    counts = sass_loop.executed_counts_of(context["sass"], context["source_counters"], "fp32", b["variant"], b["shape"])
    body = schedule.executed_loop(code, counts)
    batches = latency.global_batches(body)
    assert sum(batches) == (256 * 32 + 32 * 128) // 256 and min(batches) > 1
    # The latency term, on the nested loops as compiled, waits for batches of the same sizes.
    assert set(latency._nested_batches(sass_loop.inner_loop_bodies(code))) == set(batches)
    hit = b["l2_read_hit_rate"]
    lat = latency.latencies(context)
    assert latency.batch_latency(lat, hit, batches) > 1.2 * latency.trip_latency(lat, hit, 1)
    assert b["account_unit"] == "schedule" and b["blocks_per_sm"] == 1
    before = schedule.schedule(dict(step.before), context, step.before["account_tail"]).states
    after = schedule.schedule(dict(b), context, b["account_tail"]).states
    waits = {k: v for k, v in after.items() if k != "selected"}
    assert max(waits, key=waits.get) == "long_scoreboard"
    grew = {k: after[k] - before.get(k, 0.0) for k in waits}
    assert max(grew, key=grew.get) == "long_scoreboard"
    assert step.verdict == "explained" and step.predicted < 1


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_on_the_h100_the_persistent_grid_gains_no_wave_and_keeps_the_tensor_work():
    """At 4096^3 with 256 x 128 tiles there are 512 tiles: 512 blocks over 132 SMs run in 4 waves,
    the last 88% full, and a persistent grid of 132 blocks gives its busiest SM ceil(512 / 132) = 4
    tiles, the same. Same HGMMAs, same quantisation: the persistent rung cannot gain from its
    tail; its tile scheduler adds instructions, which stay far from limiting (the tensor pipe
    does), so the account predicts no gain."""
    import math as m

    step = _study_steps("tf32")[("wgmma_tma", "wgmma_persistent")]
    a, b = step.before, step.after
    assert m.ceil(512 / 132) == m.ceil(a["grid_blocks"] / 132) == 4 and b["grid_blocks"] == 132
    assert a["tensor_gmma_inst"] == b["tensor_gmma_inst"]
    assert b["account_tail"] / a["account_tail"] == pytest.approx(1, abs=0.02)
    assert b["warp_inst"] > a["warp_inst"]
    assert a["account_unit"] == b["account_unit"] == "tensor"
    assert b["account_issue_ms"] < 0.5 * b["account_tensor_ms"]
    # No gain predicted beyond the clocks the two rungs ran at (the units' time is at each one's own,
    # as the SMs counted it where the study has the count).
    assert step.predicted <= sm_clock_mhz(b) / sm_clock_mhz(a) * 1.01


def test_a_chain_longer_than_the_measured_time_is_said_to_have_overlapped_not_a_wrong_peak():
    acc = account.Account(times_ms={"latency": 1.2, "issue": 0.5}, limiter="latency", bound_ms=1.2, measured_ms=1.0)
    assert "some of them overlapped" in acc.summary() and "peak" not in acc.summary()
    unit = account.Account(times_ms={"issue": 1.2}, limiter="issue", bound_ms=1.2, measured_ms=1.0)
    assert "a peak or clock is off" in unit.summary()


def test_an_unexplained_step_names_the_measurement_that_would_settle_it():
    from gemm_study.analysis import prediction

    latency_row = {"account_unit": "latency", "account_warps_per_scheduler": 2.0}
    few_warps = {"account_unit": "issue", "account_warps_per_scheduler": 2.0}
    many_warps = {"account_unit": "issue", "account_warps_per_scheduler": 8.0}
    assert "phases (load wait, barrier, compute" in prediction.settle(few_warps, latency_row)
    assert "rate at 2.0 warps per scheduler" in prediction.settle(many_warps, few_warps)
    assert "per phase of its k-tile" in prediction.settle(many_warps, many_warps)
    # Without occupancy (NaN) the general measurement, never a number made up.
    assert "per phase" in prediction.settle({"account_unit": "issue"}, {"account_unit": "shared"})
    # A simulated rung: the state the run spends the most cycles in beyond the simulation.
    simulated = {"account_unit": "schedule", "account_schedule_cycles": 1000.0, "rung": 10, "family": "mma_tf32"}
    simulated |= {"stall_long_scoreboard": 5.0, "account_schedule_long_scoreboard": 3.2}
    simulated |= {"stall_not_selected": 1.0, "account_schedule_not_selected": 0.2}
    simulated |= {"stall_wait": 1.0, "account_schedule_wait": 1.1}
    text = prediction.settle(many_warps, simulated)
    assert "latency under the chip's load" in text and "10 mma_tf32 spends 5.00" in text and "simulation 3.20" in text
    # Where the simulation spends as much or more in every state, the general measurement.
    even = {k: (3.2 if k == "stall_long_scoreboard" else v) for k, v in simulated.items()}
    even["stall_not_selected"] = 0.1
    assert "per SASS line" in prediction.settle(even, even)


def test_the_settling_state_is_the_one_of_the_rung_whose_account_errs_the_steps_way():
    """Predicted over measured is a's explained share over b's: a step predicted too large (a at
    1.00, b at 0.85) is b's miss, even where a has the larger gap in some state."""
    from gemm_study.analysis import prediction

    def simulated(rung, explained, long_scoreboard, simulated_long):
        row = {"account_unit": "schedule", "account_schedule_cycles": 1000.0, "rung": rung, "family": f"r{rung}"}
        return row | {
            "account_explained": explained,
            "stall_long_scoreboard": long_scoreboard,
            "account_schedule_long_scoreboard": simulated_long,
        }

    a, b = simulated(10, 1.0, 4.96, 4.59), simulated(11, 0.85, 0.32, 0.0)
    assert "11 r11 spends 0.32" in prediction.settle(a, b)
    # The other way round (a's account too fast, b's right): a's state.
    a, b = simulated(10, 0.85, 0.50, 0.1), simulated(11, 1.0, 2.0, 1.0)
    assert "10 r10 spends 0.50" in prediction.settle(a, b)
    # Where the erring rung has no state beyond the simulation, the other's.
    a, b = simulated(10, 1.0, 4.96, 4.59), simulated(11, 0.85, 0.0, 0.3)
    assert "10 r10 spends 4.96" in prediction.settle(a, b)


def test_warps_per_scheduler_from_the_achieved_occupancy():
    assert account.warps_per_scheduler({"achieved_occupancy": 12.5}, {"gpu_max_threads_per_sm": "2048"}) == 2.0
    assert math.isnan(account.warps_per_scheduler({"achieved_occupancy": 12.5}, {}))


H200 = SCRIPTS.parent / "reports" / "h200" / "results.json"


@pytest.mark.skipif(not H200.is_file(), reason="no committed H200 study")
def test_a_study_without_latencies_says_no_rung_has_a_latency_time():
    from gemm_study.analysis import ceilings
    from gemm_study.report import ladder_report
    from gemm_study.report.study_report import load_kernel_runs

    context, kernel, _, _ = load_kernel_runs(H200)
    assert latency.latencies(context) == {}
    kernel, _ = account.add_columns(kernel, context)
    lines, _ = ladder_report.section(kernel, context, ceilings.ceilings(context, kernel))
    assert any("No rung has a simulated schedule or a latency time" in line for line in lines[:6])
    assert "latency" not in set(kernel["account_unit"])


def test_the_tally_says_what_the_units_alone_would_explain_and_the_typical_miss():
    from gemm_study.analysis import prediction

    def rung(issue_ms, latency_ms, time_ms):
        row = {f"account_{u.key}_ms": 0.0 for u in account.UNITS}
        return row | {"account_issue_ms": issue_ms, "account_latency_ms": latency_ms, "time_ms": time_ms}

    # Rung a: units 1 ms, latency 2 ms, ran 2 ms. Rung b: units 1 ms, no latency, ran 1 ms. Measured
    # x2.00; with the latency time predicted x2.00 (no miss), by the units alone x1.00 (a 100% miss).
    a, b = rung(1.0, 2.0, 2.0), rung(1.0, math.nan, 1.0)
    step = prediction.Step("l", "s", a, b, measured=2.0, predicted=2.0, verdict="explained", sentence="")
    assert step.predicted_by_units == pytest.approx(1.0)
    text = prediction.tally_sentence([step])
    assert "the units alone (no schedule or latency time) 0" in text
    assert "mean miss 0%, the units alone 100%" in text
    # Without a latency time on either side the sentence adds nothing.
    plain = prediction.Step("l", "s", b, b, measured=1.0, predicted=1.0, verdict="explained", sentence="")
    assert "units alone" not in prediction.tally_sentence([plain])
