"""The account's schedule time of one row (account.py): the row's main loop as a full tile runs it
(executed_loop), the SM the study's
pipe_peaks.json measured, the row's launch (blocks per SM, warps per block) and its work counters
(shared-memory wavefronts, L2 hit rate, the chip's k-tile burst through L2), handed to the
simulation (sm_simulation.py); its cycles per block and k-tile times the busiest SM's block-k-tiles
over the row's clock is the time."""

import dataclasses
import math

from gemm_study.analysis import latency as latency_term  # the global latency, its burst, the loop's loads
from gemm_study.analysis import sass_loop
from gemm_study.analysis.sm_simulation import (
    MMA_FORMS,
    SCHEDULERS,
    SHARED,
    Machine,
    simulate,
    unsupported,
)
from gemm_study.data.results import field_number, sm_clock_mhz, sm_count


def executed_indices(code, counts=None):
    """The indices into code of the main loop's issued instructions in the order one iteration of
    a full tile runs them: forward branches not taken (the guards of the last k-tile's prefetch and
    of partial tiles). Where a loop is nested in it, its trip count and the remainder guards beside
    it are not in the SASS: they come from `counts` (each instruction's executed warp instructions
    per warp and k-tile, one per instruction of code: Nsight Compute's source counters,
    source_counters.json), which gives each line of the main loop once or not at all and each
    nested loop its trips; [] without them, or where they do not fit that shape (an mbarrier
    try-wait's retry is no such loop: the simulation waits at the try-wait)."""
    span = sass_loop.main_loop_span(code)
    if not span:
        return []
    first, last = span
    nested = [r for r in _nested_ranges(code, span) if not _spin([code[i][1] for i in range(r[0], r[1] + 1)])]
    if not nested:
        return [i for i in range(first, last + 1) if sass_loop.issued(code[i][1])]
    if counts is None or len(counts) != len(code) or not _whole(counts[last]) or round(counts[last]) != 1:
        return []
    spins = {a: b for a, b in _nested_ranges(code, span) if (a, b) not in nested}
    starts = dict(nested)
    out, i = [], first
    while i <= last:
        end = starts.get(i)
        if end is not None:  # a nested loop: its lines, its trips times over
            trips = counts[end]
            lines = [j for j in range(i, end + 1) if sass_loop.issued(code[j][1])]
            if not _whole(trips) or any(abs(counts[j] - trips) > WHOLE for j in lines):
                return []  # a guarded line or a loop inside it: its path is not one body per trip
            out += [j for _ in range(round(trips)) for j in lines]
            i = end + 1
            continue
        end = spins.get(i)
        if end is not None:  # an mbarrier try-wait and its retry: issued once, the wait simulated
            out += [j for j in range(i, end + 1) if sass_loop.issued(code[j][1])]
            i = end + 1
            continue
        if not _whole(counts[i]) or round(counts[i]) > 1:  # run part of the k-tiles, or more than once
            return []
        if round(counts[i]) == 1 and sass_loop.issued(code[i][1]):
            out.append(i)
        i += 1
    return out


WHOLE = 0.05  # how far a count per warp and k-tile may be from a whole number (a partial tile's share)


def _whole(x):
    return abs(x - round(x)) <= WHOLE


def _nested_ranges(code, span):
    """[(first, last)] index ranges of the loops nested in the main loop (a backward branch inside
    it to a target inside it); loops nested in those are inside their ranges."""
    first, last = span
    index = {address: j for j, (address, _) in enumerate(code)}
    ranges = []
    for j in range(first, last):
        m = sass_loop.BRANCH.match(code[j][1])
        if m and m.group(1):
            target = index.get(int(m.group(1), 16))
            if target is not None and first <= target <= j:
                ranges.append((target, j))
    # Only the outermost: a range inside another runs as part of it.
    return [r for r in ranges if not any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in ranges)]


def executed_loop(code, counts=None):
    """The texts of executed_indices."""
    return [code[i][1] for i in executed_indices(code, counts)]


def executed_stalls(code, stalls, counts=None):
    """The stall counts of executed_loop's instructions, in its order (stalls: one per instruction
    of code, sass_loop.stalls_of), or () without them."""
    return tuple(stalls[i] for i in executed_indices(code, counts)) if stalls else ()


def _spin(body):
    """Whether a nested loop is an mbarrier try-wait and its retry branch."""
    return all(sass_loop.opcode(t).startswith(("SYNCS.PHASECHK", "BRA")) for t in body)


RATE_FORMS = {"fma": "ffma", "fp64": "dfma"}  # pipe -> pipe-peaks form of its rate
LATENCY_PIPES = ("fma", "alu", "fp64", *MMA_FORMS.values())


def machine_inputs(context):
    """({pipe or form: warp instructions per scheduler per cycle}, {pipe or form: dependent
    latency}) from the context's pipe peaks; ({}, {}) unless every one of them is there."""
    peaks = context.get("pipe_peaks") if isinstance(context, dict) else None
    peaks = peaks if isinstance(peaks, dict) else {}
    forms = {f.get("form"): f.get("inst_per_clk_per_sm") for f in peaks.get("forms") or [] if isinstance(f, dict)}
    issue = {r.get("pipe"): r.get("inst_per_clk_per_sm") for r in peaks.get("issue_rates") or [] if isinstance(r, dict)}
    lat = {r.get("pipe"): r.get("cycles") for r in peaks.get("instruction_latencies") or [] if isinstance(r, dict)}
    rates = {pipe: forms.get(form) for pipe, form in RATE_FORMS.items()}
    rates |= {form: forms.get(form) for form in MMA_FORMS.values()}
    rates["alu"] = issue.get("alu")
    latencies = {pipe: lat.get(pipe) for pipe in LATENCY_PIPES}
    ok = all(isinstance(v, (int, float)) and v > 0 for v in (*rates.values(), *latencies.values()))
    if not ok:
        return {}, {}
    return {k: v / SCHEDULERS for k, v in rates.items()}, dict(latencies)


def without_ktile(row):
    """Whether the row's variant names its parameters and none of them is a block tile (bm, bn,
    bk, tile): a loop over K with no k-tile, which the simulation does not model (the write-ups'
    naive kernels: block:32x32, threads:256). False where the variant names none (tuned, the
    libraries): their tile, if any, is not in the name."""
    params = row.get("param_values")
    return isinstance(params, dict) and bool(params) and not any(k in params for k in ("bm", "bn", "bk", "tile"))


def _params(row, context):
    """The variant's parameters ({'bm': 128, ...}); for a rung whose configuration is chosen per
    shape (tuned), the configuration whose kernel the SASS shows at the row's shape."""
    params = row.get("param_values")
    params = dict(params) if isinstance(params, dict) else {}
    if params:
        return params
    kernels = (context.get("sass") or {}).get("kernels") or {}
    own = (kernels.get(f"{row.get('precision')}/{row.get('variant')}") or {}).get(row.get("shape"))
    prefix = f"tuned_config:{row.get('precision')}/{row.get('variant')}/"
    for key, by_shape in kernels.items():
        if own and key.startswith(prefix) and by_shape.get(row.get("shape")) == own:
            pairs = (p.split(":") for p in key[len(prefix) :].split("/"))
            return {k: int(v) for k, v in pairs if v.isdigit()}
    return {}


def schedule(row, context, tail):
    """The Schedule of one row (its ms: the busiest SM's block-k-tiles at the simulated rate), or
    None where the SASS, the pipe peaks' latencies and rates, the tiling or a launch fact is
    missing, where the loop is one the simulation does not model (executed_loop,
    sm_simulation.unsupported), or where it did not finish (every warp waiting on the others)."""
    rates, pipe_latencies = machine_inputs(context)
    lat = latency_term.latencies(context)
    params = _params(row, context)
    bm, bn, bk = (params.get(k, params.get("tile")) for k in ("bm", "bn", "bk"))
    shape = latency_term._shape(row)
    sms = sm_count(context)
    code = sass_loop.code_of(context.get("sass"), row.get("precision"), row.get("variant"), row.get("shape"))
    if (
        not rates
        or not lat
        or not shape
        or not code
        or not sms > 0
        or not all(isinstance(x, int) and x > 0 for x in (bm, bn, bk))
    ):
        return None
    counts = sass_loop.executed_counts_of(
        context.get("sass"), context.get("source_counters"), row.get("precision"), row.get("variant"), row.get("shape")
    )
    body = executed_loop(code, counts)
    if not body or unsupported(body):
        return None
    stalls = executed_stalls(
        code,
        sass_loop.stalls_of(context.get("sass"), row.get("precision"), row.get("variant"), row.get("shape")),
        counts,
    )
    stages = int(params.get("stages", 0)) if params.get("mbar") else 0
    if not stages and any(sass_loop.opcode(t).startswith("SYNCS.PHASECHK") for t in body):
        return None  # an mbarrier ring whose depth the variant does not give
    blocks, grid, clock = field_number(row, "blocks_per_sm"), field_number(row, "grid_blocks"), sm_clock_mhz(row)
    hit, peak = field_number(row, "l2_read_hit_rate"), field_number(row, "smem_wavefronts_peak_per_cycle")
    warps = latency_term._warps_per_block(row, context)
    if not blocks > 0 or not grid > 0 or not clock > 0 or not 0 <= hit <= 1 or not peak > 0 or not warps > 0:
        return None
    m, n, k = shape
    tiles, ktiles = math.ceil(m / bm) * math.ceil(n / bn), math.ceil(k / bk)
    resident = 1 if grid < tiles else max(1, min(int(blocks), math.ceil(grid / sms)))
    warps = int(warps)
    # The chip's k-tile through L2 delays a k-tile's loads once: shared among its round trips.
    trips = max(1, latency_term.loop_waits(body).global_round_trips)
    burst = latency_term._burst_cycles(row, lat, tiles * ktiles, sms) / trips
    latencies = dict(pipe_latencies) | {
        "shared": lat["shared"],
        "slow": lat["shared"],
        "barrier": lat["barrier"],
        "global": latency_term.batch_latency(lat, hit, latency_term.global_batches(body)) + burst,
    }
    # Whole cycles: a chain's measured 4.06 per link is 4 and the loop's share of a cycle.
    whole = {key: max(1, round(v)) for key, v in latencies.items()}
    machine = Machine(tuple(sorted(rates.items())), tuple(sorted(whole.items())), peak / sms)
    out = simulate(
        body,
        machine,
        warps_per_block=warps,
        blocks=resident,
        wavefronts=_wavefronts(body, field_number(row, "smem_wavefronts") / (tiles * ktiles * warps)),
        stages=stages,
        stalls=stalls,
    )
    if not math.isfinite(out.cycles_per_block_ktile):  # every warp waiting: the simulation did not finish
        return None
    block_ktiles = tiles * ktiles / sms * tail
    # A copy: the simulation's result is cached, and the time is this row's.
    return dataclasses.replace(
        out, states=dict(out.states), ms=block_ktiles * out.cycles_per_block_ktile / (clock * 1e3)
    )


def _wavefronts(body, per_warp_iteration):
    """{index: wavefronts} of the loop's shared-memory instructions.

    The row's counter (smem_wavefronts, l1tex__data_pipe_lsu_wavefronts_mem_shared) is shared
    among the instructions it counts in proportion to each one's width (a 128-bit access is 4
    words). It does not count the 16-byte cp.async copies (LDGSTS....BYPASS.128, which write
    shared memory without passing L1): on the H100 it holds the fragment loads' wavefronts and
    2.5% more on rungs whose only copies are those, where the copies would add a third
    (tests/gpu/tensor_counters_test.cpp, SixteenByteCopiesAreNotInTheSharedWavefrontCount),
    while Nsight Compute's per-instruction source counters give each such copy the wavefronts of
    its 512 bytes, 4, and its stall samples put mma_tf32_pipelined's first LDSM after the copies
    waiting for their registers and the loads after it for their data. So each gets the ideal
    of its width on top: one wavefront per
    128 bytes of the warp's copy (its swizzled destination is conflict-free). Spread over the
    copies too, the counter gave mma_tf32_pipelined's LDSM and LDS.128 3 of the 4 wavefronts
    each moves. 4- and 8-byte copies stay in the counter's share, as they run through L1; the
    project has not measured their part of it apart."""
    widths, copies = {}, {}
    for i, text in enumerate(body):
        op = sass_loop.opcode(text)
        if uncounted_copy(op):
            copies[i] = float(sass_loop.access_words(op))
        elif op.split(".")[0] in SHARED:
            widths[i] = sass_loop.access_words(op)
    total = sum(widths.values())
    if not total or not per_warp_iteration > 0:
        return copies
    return copies | {i: w * per_warp_iteration / total for i, w in widths.items()}


def uncounted_copy(op):
    """Whether an opcode is a copy the shared-memory wavefront counter leaves out (_wavefronts):
    a 16-byte cp.async, which runs in L1 BYPASS mode (the CUDA Programming Guide, "Asynchronous
    Data Copies"; SASS: LDGSTS.E.BYPASS.128). 4- and 8-byte copies run in L1 ACCESS mode,
    through L1, and stay in the counter's share."""
    return op.startswith("LDGSTS") and ".BYPASS" in op
