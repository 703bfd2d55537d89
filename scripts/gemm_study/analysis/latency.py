"""The account's latency term: the time a kernel needs when each block waits, every k-tile, for
round trips its code does not overlap with compute.

Why a term of its own. The units' times (account.py) assume the SM always has other work to issue
while a load is under way. A block that loads its k-tile, waits for it, stores it to shared memory
and meets a barrier before it computes has nothing to overlap with inside itself; only the other
blocks resident on its SM can fill the wait. Per SM, B resident blocks each run a chain per k-tile

    chain = C + wait,   C = the block's share of the units' bound for one k-tile (cycles),
    wait  = burst + global round trips x L_global + barriers x L_barrier + L_shared,

and the SM needs at least max(B x C, chain) cycles for B block-k-tiles: the units' bound where
B blocks cover the wait (B x C >= chain), the chain where they do not. So

    latency time = busiest SM's block-k-tiles / B x chain / clock,

compared with the units' times like any other unit; where it is the largest, the account's
limiter is "latency". Only a loop that waits on a global load gets the term (account.py): in a
cp.async or TMA pipeline the stages cover the loads, and its barriers wait for the slowest warp,
which the units' time at the grid's tail already holds.

Where each factor comes from: the latencies and the L2's bandwidth are measured apart, on an idle
GPU; the rest are the kernel's code (SASS) and the row's work counters, as the units' work is:
  global round trips  from the kernel's main loop in SASS (sass.json beside the study): the
                      batches of global loads (LDG) whose results the loop uses before it issues
                      the next load, i.e. the loads it waits for one after another per iteration;
                      scaled by the global load instructions each warp executed per k-tile
                      (gld_requests) over the LDGs of the loop, so that loads in a loop nested in
                      it (in the SASS once) count as often as they run.
                      cp.async (LDGSTS) and TMA loads are not waited for in the loop they are
                      issued in (their stages cover them), so a pipelined kernel has none.
  barriers            BAR instructions per main-loop iteration (SASS).
  L_global            the idle latency of an L2 hit and of a DRAM access (pipe_peaks.json's
                      latencies, bench/memory_latency.cu: pointer chases), for a round trip of the
                      batch of loads issued together: the batch is back when its slowest load is,
                      so it waits for DRAM unless every load hits L2. Each load (a warp's
                      request, whose lines come and go together) hits with the row's L2 read
                      hit rate h, independently of the batch's other loads:
                          L_global(n loads) = L_L2 + (1 - h^n) x (L_DRAM - L_L2),
                      the mean latency for one load, nearly the DRAM's for a batch of many
                      (trip_latency), averaged over the loop's batches (batch_latency). n: the
                      loads of each round trip (SASS); in a cp.async loop the LDGSTS of each
                      group (closed by LDGDEPBAR or ARRIVES.LDGSTSBAR), whose wait is for all of
                      it. Independence is an assumption (the hit rate counts sectors, and rows of
                      one k-tile may miss together): fully correlated misses would make it the
                      mean latency, whatever n.
  L_shared, L_barrier the idle latencies of a shared-memory load and a 256-thread barrier (same).
  burst               blocks launched together run the same loop, so every resident block of
                      the chip asks for its k-tile at about the same time, and the last load
                      waits for all of them to come through L2: the L2 read bytes per block and
                      k-tile (l2_read_sectors x 32 over the block-k-tiles) x the resident blocks
                      of the chip, over the L2's read bandwidth (pipe_peaks.json's bandwidths,
                      every SM streaming from L2) in bytes per SM cycle at the row's clock.
  B                   blocks per SM (launch facts: registers and shared memory); a persistent
                      grid (fewer blocks than tiles) runs one block per SM.
  block-k-tiles       tiles (from the variant's bm, bn) x K / bk over the SMs, times the grid's tail.

What it does not see: the latencies are those of an idle GPU (in SM cycles at the clock
pipe-peaks ran at); a block alone on its SM issues more slowly than C where it has few warps per
scheduler; the blocks of an SM may run in phase (then none covers another's waits) or out of
phase (as the max assumes). A chain longer than the measured time means some of its waits
overlapped."""

import math
import re
from dataclasses import dataclass

from gemm_study.analysis import sass_loop
from gemm_study.data.results import field_number, max_warps_per_sm, sm_clock_mhz, sm_count

LEVELS = ("shared", "l2", "dram", "barrier")
# Global loads whose values the loop waits for: LDG, and the generic LD (LDS, LDSM are shared;
# LDGSTS, cp.async, and LDGDEPBAR are not waited for where they are issued).
LOAD = re.compile(r"^(?:LDG|LD)(?:\.|$)")
BARRIER = re.compile(r"^BAR\.(?:SYNC|RED)")


def latencies(context):
    """{level: SM cycles, and 'l2_read_gbs'} of the context's pipe peaks, {} unless every level
    and the L2's read bandwidth are there and > 0."""
    peaks = context.get("pipe_peaks") if isinstance(context, dict) else None
    peaks = peaks if isinstance(peaks, dict) else {}
    found = {r.get("level"): r.get("cycles") for r in peaks.get("latencies") or [] if isinstance(r, dict)}
    bandwidth = {r.get("level"): r.get("gbs") for r in peaks.get("bandwidths") or [] if isinstance(r, dict)}
    found["l2_read_gbs"] = bandwidth.get("l2_read")
    keys = (*LEVELS, "l2_read_gbs")
    ok = all(isinstance(found.get(k), (int, float)) and found[k] > 0 for k in keys)
    return {k: float(found[k]) for k in keys} if ok else {}


@dataclass(frozen=True)
class LoopWaits:
    global_round_trips: int
    barriers: int
    loads: int = 0  # LDG instructions in the loop, as compiled


def loop_waits(body):
    """The LoopWaits of a main loop's instruction texts: a round trip opens at a global load and
    closes at the first instruction that reads (or stores) a register one of its loads writes."""
    batches, barriers = _scan(body)
    return LoopWaits(len(batches), barriers, sum(batches))


def load_batches(body):
    """The loads of each round trip of a loop, in order (loop_waits' round trips)."""
    return _scan(body)[0]


def _scan(body):
    """([loads of each round trip], barriers) of a loop's instruction texts."""
    batches, pending, barriers = [], set(), 0
    for text in body:
        op, operands = sass_loop.operands(text)
        if BARRIER.match(op):
            barriers += 1
        read = {r for o in operands[1:] for r in sass_loop.registers(o)}
        if LOAD.match(op):
            if pending & read:  # its address is a pending load's value: the next round trip
                pending = set()
            if not pending:
                batches.append(0)
            batches[-1] += 1
            pending |= set(sass_loop.registers(operands[0], sass_loop.access_words(op))) if operands else set()
            continue
        if op.startswith("ST") and operands:
            read |= set(sass_loop.registers(operands[-1], sass_loop.access_words(op)))
        if pending & read:
            pending = set()
    return batches, barriers


@dataclass
class Chain:
    ms: float  # the latency term, tail included
    waits: LoopWaits
    round_trips: float  # per block-k-tile, the loop's scaled to the loads the warps executed
    wait_cycles: float  # per block-k-tile
    compute_cycles: float  # C
    blocks: int  # B
    burst_cycles: float = 0.0  # part of wait_cycles: the chip's k-tile through L2


def _tiling(row):
    """(bm, bn, bk) of the row's variant, or None where its name does not give them."""
    params = row.get("param_values")
    params = params if isinstance(params, dict) else {}
    tile = params.get("tile")
    bm, bn, bk = (params.get(k, tile) for k in ("bm", "bn", "bk"))
    if all(isinstance(x, (int, float)) and x > 0 for x in (bm, bn, bk)):
        return int(bm), int(bn), int(bk)
    return None


def _shape(row):
    parts = str(row.get("shape", "")).split("x")
    return tuple(int(p) for p in parts) if len(parts) == 3 and all(p.isdigit() for p in parts) else None


def chain(row, context, units_ms, tail):
    """The Chain of one row, given the units' bound (ms, tail included) and the tail, or None where
    a fact is missing: latencies, the variant's tiling, the kernel's SASS, the launch facts."""
    lat, tiling, shape = latencies(context), _tiling(row), _shape(row)
    sms = sm_count(context)
    if not lat or not tiling or not shape or not sms > 0:
        return None
    body = sass_loop.body_of(context.get("sass"), row.get("precision"), row.get("variant"), row.get("shape"))
    blocks, grid, clock = field_number(row, "blocks_per_sm"), field_number(row, "grid_blocks"), sm_clock_mhz(row)
    hit = field_number(row, "l2_read_hit_rate")
    if not body or not blocks > 0 or not grid > 0 or not clock > 0 or not 0 <= hit <= 1:
        return None
    (bm, bn, bk), (m, n, k) = tiling, shape
    tiles = math.ceil(m / bm) * math.ceil(n / bn)
    block_ktiles = tiles * math.ceil(k / bk) / sms * tail  # on the busiest SM
    # A persistent grid (fewer blocks than tiles) runs one block per SM; a grid smaller than the
    # SMs' room runs the blocks it has.
    resident = 1 if grid < tiles else max(1, min(int(blocks), math.ceil(grid / sms)))
    waits = loop_waits(body)
    code = sass_loop.code_of(context.get("sass"), row.get("precision"), row.get("variant"), row.get("shape"))
    inner = sass_loop.inner_loop_bodies(code)
    trips = _round_trips_per_ktile(row, context, waits, inner, tiles * math.ceil(k / bk))
    burst = _burst_cycles(row, lat, tiles * math.ceil(k / bk), sms) if trips > 0 else 0.0
    batches = _waited_batches(body, inner)
    wait = burst + trips * batch_latency(lat, hit, batches) + waits.barriers * lat["barrier"] + lat["shared"]
    cycles_per_ms = clock * 1e3
    compute = units_ms * cycles_per_ms / block_ktiles
    ms = block_ktiles / resident * (compute + wait) / cycles_per_ms
    return Chain(ms, waits, trips, wait, compute, resident, burst)


# A cp.async group is closed by LDGDEPBAR (a DEPBAR waits for it) or by an mbarrier's
# ARRIVES.LDGSTSBAR (a try-wait waits for it).
COMMIT = re.compile(r"^(?:LDGDEPBAR|ARRIVES\.LDGSTSBAR)")


def global_batches(body):
    """The loads a warp waits for together, batch by batch, in a loop: its round trips' loads
    (LDG), else its cp.async groups' LDGSTS (a group's wait is for all of it; the copies after the
    loop's last commit close with its first, the loop running round); [] for a loop of neither."""
    batches = load_batches(body)
    if batches:
        return batches
    groups, open_copies = [], 0
    for text in body:
        op = sass_loop.opcode(text)
        if op.startswith("LDGSTS"):
            open_copies += 1
        elif COMMIT.match(op) and open_copies:
            groups.append(open_copies)
            open_copies = 0
    if groups and open_copies:
        groups[0] += open_copies
    return groups


def trip_latency(lat, hit, loads):
    """SM cycles until the slowest of `loads` global loads issued together is back, each an L2 hit
    with probability `hit`, independently: the L2's latency where every one hits, the DRAM's
    otherwise. One load (or none): the mean of the two at the hit rate."""
    all_hit = hit ** max(1, loads)
    return all_hit * lat["l2"] + (1 - all_hit) * lat["dram"]


def batch_latency(lat, hit, batches):
    """The mean over a loop's batches of each one's trip_latency (batches of unequal size each
    wait for their own slowest load); a single load's where the loop has none."""
    return sum(trip_latency(lat, hit, n) for n in batches) / len(batches) if batches else trip_latency(lat, hit, 1)


def _burst_cycles(row, lat, block_ktiles, in_phase_on_chip):
    """SM cycles for L2 to serve one k-tile of each in-phase block of the chip, one per SM: the
    cover model lets the other blocks of an SM run out of phase with it (0 without the row's L2
    read sectors)."""
    sectors = field_number(row, "l2_read_sectors")
    if not sectors > 0:
        return 0.0
    bytes_per_cycle = lat["l2_read_gbs"] * 1e3 / sm_clock_mhz(row)
    return sectors * 32 / block_ktiles * in_phase_on_chip / bytes_per_cycle


def _warps_per_block(row, context):
    """The variant's threads per block over 32; else, from the launch facts, the theoretical
    occupancy's warps per SM over the blocks per SM."""
    threads = field_number(row, "threads_per_block")
    if threads > 0:
        return math.ceil(threads / 32)
    per_sm = field_number(row, "theoretical_occupancy") / 100 * max_warps_per_sm(context)
    blocks = field_number(row, "blocks_per_sm")
    return per_sm / blocks if blocks > 0 else math.nan


def outside_loop_share(row, context):
    """The share of the executed warp instructions that are not the main loop as compiled, run once
    per k-tile by every warp: spin loops (mbarrier waits, a tile scheduler's), prologue and
    epilogue. NaN without the SASS, tiling or counts, and where the loop is not one k-tile per
    warp (a share below 0: warps that run another loop, as a producer warp does)."""
    tiling, shape = _tiling(row), _shape(row)
    body = sass_loop.body_of(context.get("sass"), row.get("precision"), row.get("variant"), row.get("shape"))
    executed = field_number(row, "warp_inst")
    if not tiling or not shape or not body or not executed > 0:
        return math.nan
    (bm, bn, bk), (m, n, k) = tiling, shape
    block_ktiles = math.ceil(m / bm) * math.ceil(n / bn) * math.ceil(k / bk)
    share = 1 - _warps_per_block(row, context) * block_ktiles * len(body) / executed
    return share if share >= 0 else math.nan


def _round_trips_per_ktile(row, context, waits, inner, block_ktiles):
    """A warp's global round trips per k-tile. A loop that is one k-tile: its own. Otherwise the
    global load instructions each warp executed per k-tile (gld_requests, one per warp
    instruction) at the loop's loads per round trip: those of the loops nested in it where they
    hold loads (they run; the single loads beside them are their unrolling's remainder), else the
    main loop's. The loop's own where a count is missing."""
    executed = field_number(row, "gld_requests") / (_warps_per_block(row, context) * block_ktiles)
    nested = _nested_batches(inner)
    trips, loads = (len(nested), sum(nested)) if nested else (waits.global_round_trips, waits.loads)
    if not loads or not executed > 0:
        return float(waits.global_round_trips)
    return executed * trips / loads


def _nested_batches(inner):
    """The round trips' loads of the loops nested in the main loop that hold loads (they run; the
    single loads beside them are their unrolling's remainder); [] where none does."""
    return [n for body in inner for n in load_batches(body)]


def _waited_batches(body, inner):
    """The batches a warp waits for: the nested loops' (_nested_batches), else the main loop's
    (global_batches)."""
    return _nested_batches(inner) or global_batches(body)
