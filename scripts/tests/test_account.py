"""The bottleneck account: a kernel with known counts gives its known bounds and limiter; the tail
of the grid; no account, with the reason, wherever a counter, peak or clock is missing."""

import math

import pytest
import study_rows
from conftest import SCRIPTS

from gemm_study.analysis import account
from gemm_study.data.results import load_frame, one_row_per_benchmark

H100 = {"gpu_sm_count": "132"}
N = 4096
MNK = N**3
CLOCK_HZ = 1.98e9
# 128 x 128 block tiles: each element of A and B read from L2 N/128 times, C written once.
L2_SECTORS = (2 * N * N * 8 * (N / 128) + N * N * 8) / 32


def dfma_kernel(measured_ms=5.0, **changes):
    """An FP64 GEMM of 4096^3 doing one DFMA per multiply-add (MNK/32 warp DFMAs) with 8x8 thread
    tiles from shared memory (two 16-byte loads of 4 wavefronts per warp per k: MNK/256), 128 x 128
    block tiles through L2, reading A and B once from DRAM and writing C once, on the H100's peaks."""
    row = {
        "precision": "fp64",
        "m": N,
        "n": N,
        "k": N,
        "time_ms": measured_ms,
        "counters_available": 1.0,
        "sm_clock_mhz": 1980.0,
        "l2_clock_hz": 1.755e9,
        "dram_clock_hz": 2.619e9,
        "fma_pipe_inst": MNK / 32 * 0.05,
        "fp64_pipe_inst": MNK / 32,
        "tensor_pipe_cycles": 0.0,
        "warp_inst": MNK / 32 * 1.2,
        "smem_wavefronts": MNK / 256,
        "l2_sectors": L2_SECTORS,
        "dram_read_bytes": 2 * N * N * 8,
        "dram_write_bytes": N * N * 8,
        "sm_active_cycles_avg": 1e7,
        "sm_active_cycles_max": 1e7,
        **study_rows.PEAKS,
    }
    row.update(changes)
    return row


def test_a_kernel_with_known_counts_gives_the_known_bounds_and_limiter():
    acc = account.account(dfma_kernel(), H100)
    assert acc.reason == ""
    expected_ms = {
        "fp64": MNK / 32 / 264 / CLOCK_HZ * 1e3,  # 4.108 ms: the FP64 pipe at half the issue rate
        "issue": MNK / 32 * 1.2 / 528 / CLOCK_HZ * 1e3,  # 2.465 ms
        "shared": MNK / 256 / 132 / CLOCK_HZ * 1e3,  # 2.054 ms
        "fma": MNK / 32 * 0.05 / 528 / CLOCK_HZ * 1e3,
        "tensor": 0.0,
        "l2": L2_SECTORS / 96 / 1.755e9 * 1e3,  # 1.67 ms
        "dram": 3 * N * N * 8 / 1280 / 2.619e9 * 1e3,  # 0.120 ms: 402 MB at 3.35 TB/s
    }
    for unit, ms in expected_ms.items():
        assert acc.times_ms[unit] == pytest.approx(ms, rel=1e-9), unit
    assert acc.limiter == "fp64" and acc.limiter_label == "FP64 pipe"
    assert acc.bound_ms == pytest.approx(4.1083, rel=1e-4)
    assert acc.explained == pytest.approx(4.1083 / 5.0, rel=1e-4)
    assert acc.share("dram") == pytest.approx(expected_ms["dram"] / 5.0)
    assert acc.summary() == "FP64 pipe, explained 0.82"


def test_the_sm_units_run_at_the_clock_the_sms_counted_where_the_row_has_it():
    """NVML read 1980 MHz; the SMs counted 1584 MHz across the samples (as on an H100 under
    tensor-core load): the SM units' peaks are per counted cycle, so their times grow by
    1980/1584, and the L2 and DRAM, on their own clocks, do not move."""
    nvml_only = account.account(dfma_kernel(), H100)
    counted = account.account(dfma_kernel(sm_clock_counted_mhz=1584.0), H100)
    for unit in ("fp64", "issue", "shared", "fma"):
        assert counted.times_ms[unit] == pytest.approx(nvml_only.times_ms[unit] * 1980 / 1584), unit
    for unit in ("l2", "dram"):
        assert counted.times_ms[unit] == pytest.approx(nvml_only.times_ms[unit]), unit
    assert account.account(dfma_kernel(sm_clock_counted_mhz=0.0), H100).times_ms == nvml_only.times_ms


def test_the_limiter_follows_the_work():
    shared_bound = account.account(dfma_kernel(smem_wavefronts=MNK / 16), H100)  # 4-way conflicts
    assert shared_bound.limiter == "shared"
    assert shared_bound.bound_ms == pytest.approx(MNK / 16 / 132 / CLOCK_HZ * 1e3)
    memory_bound = account.account(dfma_kernel(dram_read_bytes=40e9), H100)
    assert memory_bound.limiter == "dram"


def test_a_grid_that_fills_16_of_132_sms_gets_16_sms_peak():
    """Measured: the busiest SM is active 8.25x the mean; from the launch facts: 16 blocks."""
    busy = dfma_kernel(sm_active_cycles_avg=16 / 132 * 1e7, sm_active_cycles_max=1e7)
    whole = account.account(dfma_kernel(), H100)
    partial = account.account(busy, H100)
    assert partial.tail == pytest.approx(132 / 16) and partial.tail_from == "sm_active_cycles max/avg"
    assert partial.times_ms["fp64"] == pytest.approx(whole.times_ms["fp64"] * 132 / 16)
    assert partial.times_ms["dram"] == pytest.approx(whole.times_ms["dram"])  # shared by all SMs: no tail
    facts = dfma_kernel(sm_active_cycles_avg=math.nan, sm_active_cycles_max=math.nan, grid_blocks=16.0)
    assert account.tail_of(facts, H100) == (pytest.approx(132 / 16), "grid_blocks over the SMs")
    assert account.tail_of(dfma_kernel(grid_blocks=264.0, sm_active_cycles_avg=math.nan), H100)[0] == 1.0
    assert account.tail_of(dfma_kernel(grid_blocks=133.0, sm_active_cycles_avg=math.nan), H100)[0] == pytest.approx(
        2 * 132 / 133
    )
    unknown = dfma_kernel(sm_active_cycles_avg=math.nan)
    assert account.tail_of(unknown, {})[0] == 1.0 and "unknown" in account.tail_of(unknown, {})[1]


def test_a_bound_above_the_measured_time_is_said_to_be_wrong():
    acc = account.account(dfma_kernel(measured_ms=3.0), H100)
    assert acc.explained > account.OVER_BOUND
    assert "a peak or clock is off" in acc.summary()


@pytest.mark.parametrize(
    "changes,reason",
    [
        ({"fp64_pipe_inst": math.nan}, "no fp64_pipe_inst"),
        ({"issue_peak_per_cycle": 0.0}, "no issue_peak_per_cycle"),
        ({"dram_clock_hz": math.nan}, "no dram_clock_hz"),
        ({"sm_clock_mhz": None}, "no sm_clock_mhz"),
        ({"counters_available": 0.0}, "counters not collected (counters_available = 0)"),
        ({"error": "wrong result"}, "the benchmark failed"),
        ({"time_ms": math.nan}, "no measured time"),
    ],
)
def test_no_account_without_a_counter_peak_or_clock(changes, reason):
    acc = account.account(dfma_kernel(**changes), H100)
    assert reason in acc.summary()
    assert math.isnan(acc.explained) and acc.limiter == "" and acc.limiter_label == "no account"
    assert account.columns(acc)["account_reason"] == acc.reason


def test_the_committed_study_accounts_for_every_kernel_it_counted():
    """reports/h100-80gb-hbm3/results.json carries the account's counters: every GPU kernel
    benchmark with counters gets a limiter and a number; those without (the write-ups' kernels
    above their counter cap, counters_capped 2, and seed 001's series, run without counters) and
    the CPU baseline get a reason, never a number."""
    context, frame = load_frame(SCRIPTS.parent / "reports" / "h100-80gb-hbm3" / "results.json")
    kernel = one_row_per_benchmark(frame)
    kernel = kernel[~kernel.end_to_end]
    with_accounts, accounts = account.add_columns(kernel, context)
    for (_, row), acc in zip(with_accounts.iterrows(), accounts):
        counted = row.get("counters_available") == 1
        if counted:
            assert not acc.reason and acc.limiter and math.isfinite(acc.explained), row["name"]
        else:
            assert acc.reason and math.isnan(acc.explained), row["name"]
            assert (
                row.get("counters_capped") == 2 or "single_thread_blocks" in row["name"] or "cpu_serial" in row["name"]
            ), row["name"]
    assert sum(1 for a in accounts if not a.reason) > 200


def test_columns_and_json_of_an_account():
    row = dict(dfma_kernel(), name="gemm/fp64/x/m:1/n:1/k:1")
    import pandas as pd

    frame, accounts = account.add_columns(pd.DataFrame([row]), H100)
    assert frame.account_unit.iloc[0] == "fp64" and frame.account_limiter.iloc[0] == "FP64 pipe"
    assert frame.account_fp64_ms.iloc[0] == pytest.approx(accounts[0].bound_ms)
    entry = account.as_json(frame, accounts)[row["name"]]
    assert entry["limiter"] == "fp64" and set(entry["units"]) == {u.key for u in account.UNITS if not u.optional}
    assert entry["units"]["fp64"]["share"] == pytest.approx(entry["explained"])


def test_a_row_recorded_before_the_l1_counter_has_the_account_without_that_unit():
    acc = account.account(dfma_kernel(), H100)
    assert not acc.reason and "l1" not in acc.times_ms
    assert account.account(dfma_kernel(l1_wavefronts=MNK / 256), H100).times_ms["l1"] > 0


def test_an_uncoalesced_load_fills_the_l1_data_stage_with_shared_memory_idle():
    """naive_col: each warp's load of A reads one element of 32 rows, 32 lines of 128 bytes, so
    the L1 data stage takes 32 wavefronts for it (and one for B's broadcast) per k: MNK/32 loads
    of 33 wavefronts, no shared memory. At 1 wavefront per SM per cycle that is the limiter."""
    loads = MNK / 32  # warp loads of A, one per output warp and k
    row = dfma_kernel(
        measured_ms=300.0,
        smem_wavefronts=0.0,
        l1_wavefronts=loads * 33,
        l1_wavefronts_peak_per_cycle=132.0,
    )
    acc = account.account(row, H100)
    expected_ms = loads * 33 / (132.0 * 1980e6) * 1e3
    assert acc.limiter == "l1" and acc.limiter_label == "L1 data stage"  # no shared part to name
    assert acc.times_ms["l1"] == pytest.approx(expected_ms) and acc.times_ms["shared"] == 0
    assert 0.9 < acc.explained < 1.0  # 271 ms of the 300 measured


def test_the_counters_dram_peak_against_the_context():
    import pandas as pd

    frame = pd.DataFrame([dfma_kernel()])
    from_counters, from_context = account.dram_bandwidth_check(frame, {"peak_dram_gbs": "3352.32"})
    assert from_counters == pytest.approx(1280 * 2.619) and from_context == pytest.approx(3352.32)
    assert math.isnan(account.dram_bandwidth_check(pd.DataFrame([{"x": 1}]), {})[0])


PIPE_PEAKS = {
    "forms": [
        {"form": "hmma_tf32", "inst_per_clk_per_sm": 0.5},  # 1024 FLOP/clk/SM
        {"form": "dmma_884", "inst_per_clk_per_sm": 0.25},
        {"form": "dmma_16816", "inst_per_clk_per_sm": 0.0625},
        {"form": "gmma_tf32", "inst_per_clk_per_sm": 1 / 32},  # 2048 FLOP/clk/SM
        {"form": "gmma_tf32_n128", "inst_per_clk_per_sm": 1 / 16},
    ]
}


def tensor_kernel(family, counter, insts, **changes):
    """A TF32 or FP64 tensor-core GEMM of 4096^3 whose only heavy work is `insts` tensor instructions."""
    return dfma_kernel(
        family=family,
        compute="fp64" if counter == "tensor_dmma_inst" else "tf32",
        fp64_pipe_inst=0.0,
        warp_inst=insts * 4,
        tensor_pipe_cycles=1.0,
        **{counter: insts},
        **changes,
    )


@pytest.mark.parametrize(
    "family, counter, flop_per_inst, params, rate",
    [
        ("mma_tf32", "tensor_hmma_inst", 2048, {}, 0.5),
        ("mma_fp64", "tensor_dmma_inst", 512, {}, 0.25),
        ("mma_fp64_m16n8k16", "tensor_dmma_inst", 4096, {}, 0.0625),
        ("wgmma_tma", "tensor_gmma_inst", 65536, {"bm": 256}, 1 / 32),
        ("wgmma_persistent", "tensor_gmma_inst", 32768, {"bm": 128}, 1 / 16),
    ],
)
def test_tensor_work_is_its_instructions_at_their_forms_measured_peak(family, counter, flop_per_inst, params, rate):
    insts = 2 * MNK / flop_per_inst  # the GEMM's FLOP in instructions of the form
    row = tensor_kernel(family, counter, insts, param_values=params)
    acc = account.account(row, {**H100, "pipe_peaks": PIPE_PEAKS})
    assert acc.tensor_from == account.BY_FORM
    assert acc.times_ms["tensor"] == pytest.approx(insts / (rate * 132 * CLOCK_HZ) * 1e3)
    # Without the measured peaks, or for a form the kernel does not name, the busy cycles count.
    assert account.account(row, H100).tensor_from == account.BUSY_CYCLES
    unnamed = tensor_kernel("cublas", counter, insts, param_values={}, backend="cublas")
    assert account.account(unnamed, {**H100, "pipe_peaks": PIPE_PEAKS}).tensor_from == account.BUSY_CYCLES


def test_hgmma_counted_again_as_hmma_is_counted_once():
    """On Hopper the HMMA counter counts the HGMMAs too: a wgmma kernel's tensor time is its
    HGMMAs alone, and HMMA on a CUDA-core kernel (a residue) keeps the busy cycles."""
    insts = 2 * MNK / 65536
    wgmma = tensor_kernel("wgmma_tma", "tensor_gmma_inst", insts, tensor_hmma_inst=insts, param_values={"bm": 256})
    acc = account.account(wgmma, {**H100, "pipe_peaks": PIPE_PEAKS})
    assert acc.times_ms["tensor"] == pytest.approx(
        insts / (PIPE_PEAKS["forms"][3]["inst_per_clk_per_sm"] * 132 * CLOCK_HZ) * 1e3
    )
    cuda_core = dfma_kernel(family="shared", compute="fp64", tensor_hmma_inst=1e6, tensor_pipe_cycles=5.0)
    assert account.account(cuda_core, {**H100, "pipe_peaks": PIPE_PEAKS}).tensor_from == account.BUSY_CYCLES


def test_pipe_peaks_beside_the_results_join_their_context_and_a_bad_file_is_refused(tmp_path):
    import json

    from gemm_study.data.errors import InputError
    from gemm_study.data.results import load_results

    results = tmp_path / "results.json"
    study_rows.write(results, study_rows.study())
    assert "pipe_peaks" not in load_results(results)[0]
    (tmp_path / "pipe_peaks.json").write_text(json.dumps(PIPE_PEAKS))
    assert load_results(results)[0]["pipe_peaks"] == PIPE_PEAKS
    gpu = load_results(results)[0]["gpu_name"]
    (tmp_path / "pipe_peaks.json").write_text(json.dumps({**PIPE_PEAKS, "gpu_name": gpu}))
    assert load_results(results)[0]["pipe_peaks"]["gpu_name"] == gpu
    (tmp_path / "pipe_peaks.json").write_text(json.dumps({**PIPE_PEAKS, "gpu_name": "another GPU"}))
    assert "pipe_peaks" not in load_results(results)[0]
    (tmp_path / "pipe_peaks.json").write_text(json.dumps({"forms": [{"form": "ffma", "inst_per_clk_per_sm": 0}]}))
    with pytest.raises(InputError, match="pipe-peaks"):
        load_results(results)


def test_the_l1_data_stage_covers_shared_memory_and_names_its_share():
    """Shared memory's wavefronts are the L1 data stage's too (same stage, same peak): where a row
    has l1_wavefronts, shared memory is never the limiter, and the label gives its share."""
    smem = MNK / 256
    # 1.03 ms of shared memory, 2.05 more of global loads: above the issue slots' 2.46 ms
    row = dfma_kernel(measured_ms=3.5, fp64_pipe_inst=MNK / 320, smem_wavefronts=smem, l1_wavefronts=smem * 3)
    acc = account.account(row, H100)
    assert acc.limiter == "l1" and acc.limiter_label == "L1 data stage (shared memory 33%)"
    assert acc.times_ms["shared"] == pytest.approx(acc.times_ms["l1"] / 3)
    # Shared memory alone, four times the wavefronts: the stage is still the limiter, by its name.
    heavy = account.account(
        dfma_kernel(fp64_pipe_inst=MNK / 320, smem_wavefronts=smem * 4, l1_wavefronts=smem * 4), H100
    )
    assert heavy.limiter == "l1" and heavy.limiter_label == "L1 data stage (shared memory 100%)"
    older = account.account(dfma_kernel(fp64_pipe_inst=MNK / 320, smem_wavefronts=smem * 4), H100)
    assert older.limiter == "shared"  # recorded before the counter: shared memory is the unit
