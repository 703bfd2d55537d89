"""The simulated schedule of a k-tile loop (sm_simulation.py, schedule.py): the SASS it reads, loops whose cycles
follow by hand from the machine's rates and latencies, and, on the committed H100 study, what the
kernels' code says their schedules must wait on."""

import pytest
from conftest import SCRIPTS

from gemm_study.analysis import account, schedule, sm_simulation

# A machine with round numbers: one FFMA per scheduler per cycle, an ALU instruction every 2,
# FFMA and ALU results after 4 cycles, shared loads after 30, global loads after 600.
MACHINE = sm_simulation.Machine(
    rates=(
        ("alu", 0.5),
        ("fma", 1.0),
        ("fp64", 0.5),
        ("hmma_tf32", 0.25),
        ("dmma_884", 0.0625),
        ("dmma_16816", 0.015625),
    ),
    latencies=(
        ("alu", 4),
        ("barrier", 20),
        ("dmma_16816", 80),
        ("dmma_884", 26),
        ("fma", 4),
        ("fp64", 8),
        ("global", 600),
        ("hmma_tf32", 24),
        ("shared", 30),
        ("slow", 30),
    ),
    shared_wavefronts_per_cycle=1.0,
)


def _cycles(body, warps=4, blocks=1, wavefronts=None, stages=0, ktiles=None, stalls=()):
    return sm_simulation.simulate(
        body,
        MACHINE,
        warps_per_block=warps,
        blocks=blocks,
        wavefronts=wavefronts or {},
        stages=stages,
        ktiles=ktiles,
        stalls=stalls,
    ).cycles_per_block_ktile


def test_each_operand_covers_the_registers_its_instruction_reads_or_writes():
    hmma = sm_simulation.decode("HMMA.1688.F32.TF32 R4, R8, R12, R4")
    assert hmma.kind == "tensor" and hmma.form == "hmma_tf32"
    assert hmma.writes == (4, 5, 6, 7) and set(hmma.reads) == {8, 9, 10, 11, 12, 13, 4, 5, 6, 7}
    dmma = sm_simulation.decode("DMMA.16x8x16 R128, R32, R192, R128")
    assert dmma.form == "dmma_16816" and len(dmma.writes) == 8 and len(dmma.reads) == 16 + 8 + 8
    assert sm_simulation.decode("LDS.128 R12, [R20+0x40]").writes == (12, 13, 14, 15)
    assert sm_simulation.decode("DFMA R96, R76, R80, R36").reads == (76, 77, 80, 81, 36, 37)
    store = sm_simulation.decode("STS.128 [R10], R4")
    assert store.writes == () and set(store.reads) == {10, 4, 5, 6, 7}
    assert sm_simulation.decode("@!P0 LDG.E.128 R96, desc[UR8][R10.64]").kind == "global"
    assert sm_simulation.decode("IMAD.MOV.U32 R9, RZ, RZ, R199").kind == "fma"
    assert sm_simulation.decode("FSETP.GEU.AND P1, PT, |R84|, +INF , PT").kind == "alu"
    assert sm_simulation.decode("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR13], R109").kind == "trywait"


def test_independent_ffmas_issue_one_per_cycle_on_each_scheduler():
    # 4 warps, one per scheduler, each 64 independent FFMAs per iteration: 64 cycles for the block.
    body = [f"FFMA R{2 * i}, R200, R201, R{2 * i}" for i in range(64)]
    assert _cycles(body) == pytest.approx(64, rel=0.02)
    # At half the rate (the ALU pipe's) the pipe, not the issue slot, sets it: 128 cycles.
    alu = [f"LOP3.LUT R{2 * i}, R200, R201, R{2 * i}, 0x96, !PT" for i in range(64)]
    assert _cycles(alu) == pytest.approx(128, rel=0.02)


def test_a_stall_count_holds_the_warp_and_another_warp_issues_in_it():
    # 64 independent FFMAs, each with a stall count of 3: one warp per scheduler issues one every
    # 3 cycles, 192 cycles per iteration; no stall counts, 64 (as above).
    body = [f"FFMA R{2 * i}, R200, R201, R{2 * i}" for i in range(64)]
    assert _cycles(body, stalls=(3,) * 64) == pytest.approx(3 * 64, rel=0.02)
    # Two warps per scheduler (8 per block) with a count of 2 fill each other's stalls: the issue
    # slot, one FFMA per cycle, sets it again, 2 x 64 cycles for the block's two warps per scheduler.
    assert _cycles(body, warps=8, stalls=(2,) * 64) == pytest.approx(2 * 64, rel=0.02)
    # A chain's own latency (4) is longer than a stall count of 1: the count changes nothing.
    chain = ["FFMA R0, R0, R200, R201"] * 32
    assert _cycles(chain, stalls=(1,) * 32) == pytest.approx(_cycles(chain), rel=1e-9)
    # A held warp is in `wait`, one cycle per held cycle: 2 per instruction at a count of 3.
    states = sm_simulation.simulate(body, MACHINE, warps_per_block=4, blocks=1, wavefronts={}, stalls=(3,) * 64).states
    assert states["wait"] == pytest.approx(2.0, rel=0.02)
    with pytest.raises(ValueError, match="2 stall counts for a loop of 64"):
        _cycles(body, stalls=(1, 1))


def test_integer_multiply_adds_have_half_the_fma_pipe_and_ffmas_fill_the_other_half():
    # 64 independent IMADs per warp: the heavy half alone, one every 2 cycles: 128 cycles.
    imad = [f"IMAD R{2 * i}, R200, R201, R{2 * i}" for i in range(64)]
    assert _cycles(imad) == pytest.approx(128, rel=0.02)
    # IMAD and FFMA in turn: each half takes one of them every other cycle, 1 per cycle in all.
    mixed = [f"{'IMAD' if i % 2 else 'FFMA'} R{2 * i}, R200, R201, R{2 * i}" for i in range(64)]
    assert _cycles(mixed) == pytest.approx(64, rel=0.02)


def test_a_dependent_chain_waits_its_latency_and_a_second_warp_fills_it():
    # One chain of 32 FFMAs, each reading the previous: 32 x 4 cycles per iteration.
    chain = ["FFMA R0, R0, R200, R201"] * 32
    assert _cycles(chain) == pytest.approx(32 * 4, rel=0.02)
    # Two warps per scheduler (8 per block): each issues in the other's waits, and the block's
    # k-tile still takes 32 x 4 cycles.
    assert _cycles(chain, warps=8) == pytest.approx(32 * 4, rel=0.02)


def test_a_loop_that_waits_for_its_global_load_pays_the_round_trip_unless_another_block_covers_it():
    # Load, use, 64 independent FFMAs: 600 + 64 cycles per iteration for one block alone.
    loop = ["LDG.E R100, desc[UR4][R2.64]", "STS [R3], R100", "BAR.SYNC.DEFER_BLOCKING 0x0"]
    loop += [f"FFMA R{2 * i}, R200, R201, R{2 * i}" for i in range(64)]
    one = _cycles(loop)
    assert 600 + 64 <= one <= 600 + 64 + 30 + 20 + 4  # the store's and the barrier's latencies at most
    # Eight blocks: their compute (8 x 64 cycles per scheduler) is still shorter than one round
    # trip, so the SM waits: 600-odd cycles per 8 block-k-tiles.
    assert _cycles(loop, blocks=8) == pytest.approx(one / 8, rel=0.05)


def test_cp_async_stages_keep_loads_in_flight():
    # DEPBAR.LE SB0, n waits for all but the n newest groups: with no compute, each iteration
    # waits for the group committed n + 1 iterations before, so n + 1 round trips overlap (one warp
    # alone completes its iterations in bursts of n + 1, which the steady rate averages out).
    for newest in (1, 2):
        loop = ["LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]", "LDGDEPBAR", f"DEPBAR.LE SB0, 0x{newest}"]
        assert _cycles(loop, warps=1) == pytest.approx(600 / (newest + 1), rel=0.05)


def test_the_shared_memory_pipe_is_the_sms():
    # 4 warps each issue 8 LDS.128 of 4 wavefronts: 128 wavefronts per iteration at 1 per cycle.
    loop = [f"LDS.128 R{4 * i}, [R200+0x{16 * i:x}]" for i in range(8)]
    assert _cycles(loop, wavefronts=dict.fromkeys(range(8), 4.0)) == pytest.approx(128, rel=0.02)


def test_the_warp_states_are_counted_per_issued_instruction():
    chain = ["FFMA R0, R0, R200, R201"] * 32
    states = sm_simulation.simulate(chain, MACHINE, warps_per_block=4, blocks=1, wavefronts={}).states
    assert states["selected"] == pytest.approx(1)
    assert states["wait"] == pytest.approx(3, rel=0.05)  # 3 cycles between dependent FFMAs


def test_no_machine_without_every_pipes_rate_and_latency():
    assert schedule.machine_inputs({}) == ({}, {})
    peaks = {"forms": [{"form": "ffma", "inst_per_clk_per_sm": 4.0}], "instruction_latencies": []}
    assert schedule.machine_inputs({"pipe_peaks": peaks}) == ({}, {})


STUDY = SCRIPTS.parent / "reports" / "h100-80gb-hbm3" / "results.json"


def _study_rows():
    from gemm_study.report.study_report import load_kernel_runs

    context, kernel, _, _ = load_kernel_runs(STUDY)
    kernel = kernel[~kernel.end_to_end & (kernel["shape"] == "4096x4096x4096")]
    rows, accounts = account.add_columns(kernel, context)
    return {r["variant"].split("/")[0] + "/" + r["precision"]: (r, a) for (_, r), a in zip(rows.iterrows(), accounts)}


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_on_the_h100_a_loop_with_loops_of_its_own_needs_its_counts_and_a_cp_async_one_does_not():
    """mma_tf32 loads each k-tile with element loops (kernels/tensor/mma_tf32.cu: `for (c = tid;
    c < BM * BK; c += THREADS)`), which the compiler unrolls by 4 behind remainder guards: their
    trip counts are not in the SASS, so without the source counters the simulation refuses the
    loop and the latency term stands in. mma_tf32_pipelined loads with cp.async in 3 stages: its
    loop waits at DEPBAR for all but the newest stages - 2 = 1 group, and it is simulated."""
    from gemm_study.analysis import sass_loop
    from gemm_study.report.study_report import load_kernel_runs

    context = load_kernel_runs(STUDY)[0]
    found = _study_rows()
    row, _ = found["mma_tf32/fp32"]
    without = {k: v for k, v in context.items() if k != "source_counters"}
    acc = account.account(row, without)
    assert acc.schedule is None and acc.limiter == "latency"
    row, acc = found["mma_tf32_pipelined/fp32"]
    body = schedule.executed_loop(sass_loop.code_of(context["sass"], "fp32", row["variant"], row["shape"]))
    waits = [t for t in body if t.startswith("DEPBAR")]
    assert waits == [f"DEPBAR.LE SB0, 0x{int(row['param_values']['stages']) - 2}"]
    assert acc.schedule is not None and acc.limiter == "schedule"


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_on_the_h100_the_wgmma_rungs_are_not_simulated():
    """wgmma_tma's loop issues HGMMA from a consumer warpgroup while a producer warp loads with
    TMA: the simulation does not model that, and the account keeps the units alone for it."""
    _, acc = _study_rows()["wgmma_tma/fp32"]
    assert acc.schedule is None and "schedule" not in acc.times_ms


def test_an_mbarrier_ring_of_s_stages_overlaps_s_round_trips():
    # A stage is refilled once every warp arrived on it (the empty wait) and consumed once its
    # loads landed (the full wait). With no compute, iteration i waits for the loads issued in
    # iteration i - (stages - 1), and the loop moves on one iteration past them: the round trip
    # spans `stages` iterations, each L / stages (as DEPBAR.LE 1 above is a ring of 2).
    loop = [
        "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR16+0x8220], R9",
        "LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]",
        "ARRIVES.LDGSTSBAR.64.ARVCNT [UR13]",
        "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR13], R109",
        "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR6+0x8220], RZ",
    ]
    for stages in (3, 4):
        assert _cycles(loop, warps=4, stages=stages) == pytest.approx(600 / stages, rel=0.05)


def test_a_loop_is_simulated_as_a_full_tile_runs_it_or_refused():
    def code(texts):
        return [(16 * i, t) for i, t in enumerate(texts)]

    loop = ["FFMA R0, R1, R2, R0", "@P0 BRA 0x40", "LDG.E R4, desc[UR4][R6.64]", "FFMA R8, R1, R2, R8", "@!P1 BRA 0x0"]
    # The forward branch (a guard) is not taken: every instruction of the loop runs.
    assert schedule.executed_loop(code(loop)) == loop
    # A loop nested in it (its trip count is not in the SASS): refused.
    nested = ["FFMA R0, R1, R2, R0", "LDG.E R4, desc[UR4][R6.64]", "@P2 BRA 0x10", "@!P1 BRA 0x0"]
    assert schedule.executed_loop(code(nested)) == []
    # An mbarrier try-wait's retry is a wait, not a loop.
    spin = ["SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR16], R9", "@!P1 BRA 0x0", "FFMA R0, R1, R2, R0", "@!P2 BRA 0x0"]
    assert schedule.executed_loop(code(spin)) == spin
    assert sm_simulation.unsupported(["HGMMA.64x128x8.F32.TF32 R0, gdesc[UR4], R0"])
    assert sm_simulation.unsupported(["HMMA.16816.F32 R0, R4, R8, R0"])  # no measured rate for that shape
    assert sm_simulation.unsupported(["BAR.ARV 0x1, 0x80"])
    assert sm_simulation.unsupported(["DEPBAR.LE SB1, 0x1"])
    assert not sm_simulation.unsupported(loop)
    assert sm_simulation.decode("LDSM.16.MT88.4 R8, [R20]").writes == (8, 9, 10, 11)


def test_each_executed_instruction_keeps_its_own_stall_count():
    # A prologue (stall 9), the loop with padding the warp never issues (NOP, @!PT: stall 15 each),
    # an epilogue (stall 7): the loop's issued instructions keep theirs, 1 to 4, in order.
    texts = ["MOV R1, RZ", "FFMA R0, R1, R2, R0", "NOP", "LDS R4, [R6]", "@!PT LDS RZ, [RZ]"]
    texts += ["FFMA R8, R4, R2, R8", "@!P1 BRA 0x10", "EXIT"]
    stalls = [9, 1, 15, 2, 15, 3, 4, 7]
    code = [(16 * i, t) for i, t in enumerate(texts)]
    assert schedule.executed_loop(code) == [texts[1], texts[3], texts[5], texts[6]]
    assert schedule.executed_stalls(code, stalls) == (1, 2, 3, 4)
    assert schedule.executed_stalls(code, None) == ()


def test_a_waiting_warp_is_in_the_state_of_the_operand_it_waits_for_longest():
    # The last FFMA reads R1 (an FFMA's result, 4 cycles) and R0 (a shared load's, 30): the warp
    # waits for the shared load, whichever operand comes first.
    loop = ["LDS R0, [R10]", "FFMA R1, R2, R3, R1", "FFMA R4, R1, R0, R4"]
    states = sm_simulation.simulate(loop, MACHINE, warps_per_block=4, blocks=1, wavefronts={0: 1.0}).states
    assert states["short_scoreboard"] > 5 * states["wait"]


def test_the_warp_states_are_those_of_the_steady_part():
    # One warp, DEPBAR.LE SB0, 0x1: every iteration issues its 3 instructions and then waits, in
    # the steady part, the rest of 600 / 2 cycles (the first iterations, which do not wait, are
    # the fill, outside it): (300 - 3) / 3 cycles of stage_wait per issued instruction.
    loop = ["LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]", "LDGDEPBAR", "DEPBAR.LE SB0, 0x1"]
    states = sm_simulation.simulate(loop, MACHINE, warps_per_block=1, blocks=1, wavefronts={0: 4.0}).states
    assert states["stage_wait"] == pytest.approx((300 - 3) / 3, rel=0.05)


def test_shared_wavefronts_follow_each_instructions_width_and_a_ring_without_a_depth_is_refused():
    body = ["LDS R0, [R1]", "LDS.64 R2, [R1]", "LDSM.16.MT88.4 R4, [R1]", "STS.128 [R1], R8"]
    assert schedule._wavefronts(body, 11.0) == {0: 1.0, 1: 2.0, 2: 4.0, 3: 4.0}
    # A 16-byte copy is not in the counter: it gets one wavefront per 128 bytes of its warp's
    # 512, and the counter's 8 go to the loads alone; a 4-byte copy runs through L1 and shares them.
    copies = ["LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64]", "LDS.128 R8, [R1]", "LDGSTS.E [R5], desc[UR4][R6.64]"]
    assert schedule._wavefronts(copies, 10.0) == {0: 4.0, 1: 8.0, 2: 2.0}
    assert schedule._wavefronts(copies[:1], 10.0) == {0: 4.0}  # nothing else to give the count to
    assert schedule.uncounted_copy("LDGSTS.E.BYPASS.128") and not schedule.uncounted_copy("LDGSTS.E.64")
    # A try-wait that is neither after the loop's ARRIVES.LDGSTSBAR nor before its LDGSTS.
    stray = ["FFMA R0, R1, R2, R0", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR13], R109"]
    assert sm_simulation.unsupported(stray)


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_each_row_gets_its_own_schedule_from_the_cached_simulation():
    from gemm_study.report.study_report import load_kernel_runs

    context, kernel, _, _ = load_kernel_runs(STUDY)
    row = kernel[(kernel["shape"] == "4096x4096x4096") & (kernel["family"] == "warptile")].iloc[0]
    one, two = schedule.schedule(row, context, 1.0), schedule.schedule(row, context, 2.0)
    assert one is not two and one.states is not two.states
    assert two.ms == pytest.approx(2 * one.ms)  # the busiest SM's block-k-tiles scale with the tail


@pytest.mark.skipif(not STUDY.is_file(), reason="no committed H100 study")
def test_a_long_loop_settles_in_the_fewer_iterations_it_is_given():
    """The tuned FP32 rung's loop (2,263 instructions, 16 warps on an SM) gets the fewest
    iterations; its rate must be that of 32 iterations within 2%."""
    from gemm_study.report.study_report import load_kernel_runs

    context, kernel, _, _ = load_kernel_runs(STUDY)
    row = kernel[
        (kernel["shape"] == "4096x4096x4096") & (kernel["family"] == "tuned") & (kernel["precision"] == "fp32")
    ]
    calls = []

    def recording(body, machine, **kw):
        calls.append((body, machine, kw))
        return sm_simulation.simulate(body, machine, **kw)

    original = schedule.simulate
    schedule.simulate = recording
    try:
        short = schedule.schedule(row.iloc[0], context, 1.0)
    finally:
        schedule.simulate = original
    body, machine, kw = calls[0]
    assert sm_simulation.iterations(kw["warps_per_block"] * kw["blocks"], len(body)) == sm_simulation.MIN_KTILES
    full = sm_simulation.simulate(body, machine, **{**kw, "ktiles": sm_simulation.KTILES})
    assert short.cycles_per_block_ktile == pytest.approx(full.cycles_per_block_ktile, rel=0.02)


def test_the_register_banks_serve_two_reads_each_per_cycle_and_the_reuse_cache_none():
    reads = sm_simulation.register_read_cycles
    # Three sources in one bank (even registers): 2 cycles; spread over both banks: 1.
    assert reads(["FFMA R0, R2, R4, R6"]) == [2]
    assert reads(["FFMA R0, R2, R5, R6"]) == [1]
    # The previous instruction kept R2 in slot 1's operand cache: it is not read again.
    assert reads(["FFMA R8, R2.reuse, R11, R9", "FFMA R0, R2, R4, R6"]) == [1, 1]
    # ...but only for the same slot.
    assert reads(["FFMA R8, R11, R2.reuse, R9", "FFMA R0, R2, R4, R6"]) == [1, 2]
    # The loop runs round: its first instruction follows its last.
    assert reads(["FFMA R0, R2, R4, R6", "FFMA R8, R2.reuse, R11, R9"]) == [1, 1]
    # HMMA.1688 TF32 reads A (4 registers), B (2) and C (4): five per bank, 3 cycles.
    assert reads(["HMMA.1688.F32.TF32 R4, R8, R12, R4"]) == [3]
    # DFMA's 64-bit sources are pairs, one register in each bank: three per bank, 2 cycles.
    assert reads(["DFMA R96, R76, R80, R36"]) == [2]
    # Slots count sources, not operands: a store's first source (its address) is an FFMA's first
    # source (A) too, so a reuse flag carries between an instruction with a destination and one
    # without. R2 and R4 would share bank 0 with R6 (3 reads, 2 cycles); R2 cached, 1 cycle.
    assert reads(["STS [R2.reuse], R7", "FFMA R0, R2, R4, R6"]) == [1, 1]
    # And the other way: STS.128 reads its address and four data registers, R2, R8 and R10 in
    # bank 0 (2 cycles), R2 from the cache after an FFMA that kept it in the first slot (1 cycle).
    assert reads(["STS.128 [R2], R8", "FFMA R1, R3, R4, R7"]) == [2, 1]
    assert reads(["FFMA R1, R2.reuse, R4, R7", "STS.128 [R2], R8"]) == [1, 1]
    # IMAD.WIDE's C is a register pair: R4 and R5, one read in each bank; with A and B in bank 0
    # that is three reads there, 2 cycles, where a 32-bit C would have left 2 reads, 1 cycle.
    assert reads(["IMAD.WIDE R8, R2, R6, R4"]) == [2]
    assert reads(["IMAD R8, R2, R6, R5"]) == [1]
    # A uniform register, RZ and constants are not general registers.
    assert reads(["IMAD R0, R2, UR4, RZ", "IADD3 R0, R2, c[0x0][0x0], R4"]) == [1, 1]


def test_an_instruction_whose_sources_share_a_bank_holds_its_scheduler_a_cycle_more():
    # 4 warps, one per scheduler, 64 independent FFMAs each: 64 cycles with sources in both banks;
    # with all three in one bank each takes 2 cycles to read, so 128, and the warp's second cycle
    # is a dispatch stall, one per issued instruction.
    spread = [f"FFMA R{2 * i}, R201, R203, R{2 * i}" for i in range(64)]
    assert _cycles(spread) == pytest.approx(64, rel=0.02)
    one_bank = [f"FFMA R{2 * i}, R200, R202, R{2 * i}" for i in range(64)]
    assert _cycles(one_bank) == pytest.approx(128, rel=0.02)
    states = sm_simulation.simulate(
        one_bank, MACHINE, warps_per_block=4, blocks=1, wavefronts={}, stages=0, ktiles=None, stalls=()
    ).states
    assert states["dispatch_stall"] == pytest.approx(1.0, rel=0.02)


def test_a_nested_loop_runs_its_measured_trips_and_a_remainder_that_never_runs_is_left_out():
    def code(texts):
        return [(16 * i, t) for i, t in enumerate(texts)]

    texts = [
        "ISETP.GT.AND P0, PT, R1, 0x1fff, PT",  # 0  the main loop starts
        "@!P0 BRA 0x40",  # 1  over the remainder
        "LDG.E R4, desc[UR4][R6.64]",  # 2  the remainder: never runs here
        "STS [R3], R4",  # 3
        "LDG.E R8, desc[UR4][R6.64]",  # 4  the nested loop
        "STS [R3+0x4], R8",  # 5
        "@!P1 BRA 0x40",  # 6  its back branch
        "FFMA R10, R11, R12, R10",  # 7
        "@!P2 BRA 0x0",  # 8  the main loop's back branch
    ]
    counts = [1, 1, 0, 0, 3, 3, 3, 1, 1]
    path = schedule.executed_indices(code(texts), counts)
    assert path == [0, 1, 4, 5, 6, 4, 5, 6, 4, 5, 6, 7, 8]
    # Without counts the loop is refused, as are counts of another shape of path.
    assert schedule.executed_indices(code(texts)) == []
    assert schedule.executed_indices(code(texts), [1, 1, 0, 0, 3, 3, 3, 2, 1]) == []  # a line twice, outside
    assert schedule.executed_indices(code(texts), [1, 1, 0, 0, 3, 3, 3, 1, 2]) == []  # not one k-tile a trip
    assert schedule.executed_indices(code(texts), counts[:-1]) == []
    # A line inside the nested loop that runs fewer times than its trips (a guard in it): its path is
    # not one body per trip, so refused; as are trips or lines that are not whole per k-tile.
    assert schedule.executed_indices(code(texts), [1, 1, 0, 0, 3, 1, 3, 1, 1]) == []
    assert schedule.executed_indices(code(texts), [1, 1, 0, 0, 2.5, 2.5, 2.5, 1, 1]) == []
    assert schedule.executed_indices(code(texts), [1, 1, 0.5, 0.5, 3, 3, 3, 1, 1]) == []
    # An mbarrier try-wait's retry beside it is issued once (the simulation waits at it), however
    # often the run retried.
    spin = ["SYNCS.PHASECHK.TRANS64.TRYWAIT P3, [UR16], R9", "@!P3 BRA 0x80"]
    with_spin = [*texts[:8], *spin, "@!P2 BRA 0x0"]
    assert schedule.executed_indices(code(with_spin), [*counts[:8], 7, 7, 1]) == [*path[:-1], 8, 9, 10]
