"""The bottleneck account of one benchmark: for each unit of the GPU, the time the benchmark's
work on that unit needs at the unit's peak rate; the largest of them is the bound and its unit
the limiter; explained = bound / measured time (1: the kernel runs at its limiter's peak; 0.5:
half its time is not accounted for by any unit at peak).

Units, their work and its peak. The work counters are the catalogue's
(profiling/metric_catalogue.inc); their meanings are the descriptions `ncu --query-metrics
--chip gh100` prints. Each peak is the same counter's `.peak_sustained` submetric, which Nsight
Compute's Profiling Guide ("Metrics Structure") defines as the peak sustained rate of the counter
per cycle of its unit's clock; for a `.sum` rollup that is the rate of all instances of the unit
on the chip (every SM sub-partition, every SM, every L2 slice, every HBM channel).

  unit     work (catalogue name, ncu metric)                    ncu's description
  fma      fma_pipe_inst   smsp__inst_executed_pipe_fma.sum      "# of warp instructions executed by fma pipes"
                           (FFMA, FMUL, FADD and IMAD: the FP32 pipe's issue slots)
  fp64     fp64_pipe_inst  smsp__inst_executed_pipe_fp64.sum     "# of warp instructions executed by fp64 pipe"
  tensor   tensor_pipe_cycles  sm__pipe_tensor_cycles_active.sum "# of cycles where tensor pipe was active"
                           (the tensor pipe's work is counted in its busy cycles, which an MMA of a
                           given shape and type keeps busy for a fixed number of cycles)
  issue    warp_inst       smsp__inst_executed.sum               "# of warp instructions executed"
  shared   smem_wavefronts l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
                           "# of shared memory wavefronts processed by Data-Stage for LDS, LD, ...,
                           LDSM, STS, ..., STSM, LDGSTS, HGMMA, ..." (wgmma's shared operands included;
                           on the H100 not the 16-byte cp.async copies, which bypass L1: the
                           schedule adds those, schedule._wavefronts)
  l1       l1_wavefronts   l1tex__data_pipe_lsu_wavefronts.sum
                           "# of wavefronts processed by Data-Stage for LSU" (the same stage's
                           shared-memory wavefronts and those of global and local accesses: an
                           uncoalesced kernel fills this stage with shared memory idle). It covers
                           the shared-memory unit: where a row has it, shared memory is a part of
                           the L1 data stage's work (the limiter's label gives its share), never a
                           limiter of its own. Results recorded before this counter have the account
                           without it, and shared memory as a unit.
  l2       l2_sectors      lts__t_sectors.sum                    "# of LTS sectors" (every source and operation)
  dram     dram_read_bytes + dram_write_bytes   dram__bytes_read.sum + dram__bytes_write.sum
                           (peak: dram__bytes.sum.peak_sustained) "# of bytes accessed in DRAM"

time(unit) = work / (peak per cycle x clock) x tail (SM units only). Clocks: the SM units at the
benchmark's own timed clock, `sm_clock_counted_mhz` (the SMs' own clock64 cycles over
%globaltimer across the timed samples median_ms comes from, the median over samples), else
`sm_clock_mhz` (NVML's reading around them) in files without the count; L2 and DRAM at the clocks
measured over the profiled launch (lts__cycles_elapsed.avg.per_second,
dram__cycles_elapsed.avg.per_second). The count matters on the tensor rungs: there an H100's SMs
run up to a quarter below the clock NVML reports, and the peaks (pipe_peaks.json) are per counted cycle.

The tail. The SM units' peaks are the whole chip's, reached only when every SM has its share of
the work. The busiest SM has `tail` times the mean SM's work, and the kernel cannot finish
before it: measured, tail = sm__cycles_active.max / sm__cycles_active.avg (sm_imbalance: 8.25 for
a grid that keeps 16 of 132 SMs busy, so the bound is that of 16 SMs); without those counters,
from the launch facts, ceil(grid_blocks / SMs) x SMs / grid_blocks (the busiest SM's share of
equal blocks); without either, 1 and said so. L2 and DRAM are shared by all SMs: no tail.

The tensor pipe by instruction form. Its busy cycles do not say how much work a busy cycle did:
on an H100 an mma.sync (HMMA m16n8k8) keeps the pipe busy for less work per cycle than a wgmma
(HGMMA). Where the study measured each form's peak (`pipe_peaks.json` beside the results,
written by bench/pipe_peaks.cu: warp instructions per SM per clock, each form alone in a loop),
the tensor unit's time is instead the sum over its forms of instructions / (that form's peak x
SMs x clock) x tail, the instructions counted per form (tensor_hmma_inst, tensor_dmma_inst,
tensor_gmma_inst) and the form named by the kernel (TENSOR_FORMS); the account says which
(`tensor_from`). Where a form is unknown (a library's kernels) it keeps the busy cycles.

The schedule. Beside the units, the time the SM needs when its warps issue the main loop as
compiled, in order, each waiting for its operands, its pipe, its barriers and its cp.async or
mbarrier stages (schedule.py: the loop's SASS played out cycle by cycle on one SM with the rates
and latencies pipe-peaks measures). Where that is the largest time, the limiter is "schedule":
no unit is at its peak, and the order of the code is what the SM waits on; the simulation's warp
states say for what. A loop the simulation does not model (wgmma with TMA, a loop with loops
of its own: schedule.executed_loop, sm_simulation.unsupported) has none.

Latency. Where there is no simulated schedule (such a loop, or pipe peaks that hold the memory
latencies but not the pipes' own: a study recorded before those), the time each block needs where it waits, every k-tile, for round trips its code
does not overlap with compute stands in for the schedule (latency.py: global round trips and
barriers per main-loop iteration from the SASS, the blocks per SM that can fill the wait); where
that is the largest time, the limiter is "latency". A loop that waits on no global load (cp.async
and TMA pipelines) has no latency time. Without the SASS or the latencies the account has the
units alone.

A row without every work counter, peak and clock (files recorded before these counters, rows
whose counters were not collected) gets no account and the reason, never a number."""

import math
from dataclasses import dataclass, field

from gemm_study.analysis import latency as latency_term
from gemm_study.analysis import schedule as schedule_term
from gemm_study.analysis import sm_simulation
from gemm_study.data.results import context_value, field_number, max_warps_per_sm, sm_clock_mhz, sm_count


@dataclass(frozen=True)
class Unit:
    key: str
    label: str
    work: tuple  # counters whose sum is the unit's work
    peak: str  # the work's peak per cycle of the unit's clock
    domain: str  # sm | l2 | dram: which clock, and whether the grid's tail applies
    # A counter added after studies were recorded: rows without it have the account without it.
    optional: bool = False
    # A unit whose work this one's includes, on the same stage at the same peak: where this one
    # has its inputs, the other is a part of it, shown but never the limiter.
    covers: str = ""

    def has_inputs(self, row):
        return all(math.isfinite(value(row, c)) for c in self.work) and value(row, self.peak) > 0


UNITS = (
    Unit("fma", "FMA pipe (FP32)", ("fma_pipe_inst",), "fma_pipe_peak_per_cycle", "sm"),
    Unit("fp64", "FP64 pipe", ("fp64_pipe_inst",), "fp64_pipe_peak_per_cycle", "sm"),
    Unit("tensor", "tensor pipe", ("tensor_pipe_cycles",), "tensor_pipe_peak_per_cycle", "sm"),
    Unit("issue", "issue slots", ("warp_inst",), "issue_peak_per_cycle", "sm"),
    Unit("shared", "shared memory", ("smem_wavefronts",), "smem_wavefronts_peak_per_cycle", "sm"),
    Unit(
        "l1", "L1 data stage", ("l1_wavefronts",), "l1_wavefronts_peak_per_cycle", "sm", optional=True, covers="shared"
    ),
    Unit("l2", "L2", ("l2_sectors",), "l2_sectors_peak_per_cycle", "l2"),
    Unit("dram", "DRAM", ("dram_read_bytes", "dram_write_bytes"), "dram_bytes_peak_per_cycle", "dram"),
)
# Not a unit of work: the waits the code leaves unoverlapped (latency.py), compared with the units.
LATENCY = Unit("latency", "latency (unoverlapped waits)", (), "", "sm")
# Not a unit either: the loop's issue order, simulated (schedule.py).
SCHEDULE = Unit("schedule", "schedule (simulated)", (), "", "sm")
ORDER_TIMES = (LATENCY, SCHEDULE)  # the times that are not a unit's work at its peak
BY_KEY = {unit.key: unit for unit in (*UNITS, *ORDER_TIMES)}
# The pipe-peaks form of each tensor instruction counter, per family where the counter alone
# does not say: every HMMA of the project's TF32 kernels is mma.sync m16n8k8 (kernels/tensor/tensor_ptx.cuh);
# mma_fp64 issues m8n8k4 and mma_fp64_m16n8k16 m16n8k16 DMMAs; the wgmma rungs' N is their bm
# (kernels/tensor/wgmma_tile.cuh).
DMMA_FORMS = {"mma_fp64": "dmma_884", "mma_fp64_m16n8k16": "dmma_16816"}
GMMA_FORMS = {128: "gmma_tf32_n128", 256: "gmma_tf32"}
BUSY_CYCLES = "busy cycles"
BY_FORM = "instruction forms at their measured peaks"

CLOCK_HZ = {"l2": "l2_clock_hz", "dram": "dram_clock_hz"}
# A bound this far above the measured time means a peak or a clock is wrong, not a fast kernel.
OVER_BOUND = 1.05


@dataclass
class Account:
    """The account of one row: `reason` is empty when there is one."""

    reason: str = ""
    times_ms: dict = field(default_factory=dict)  # unit key -> ms at peak (tail included)
    limiter: str = ""
    bound_ms: float = math.nan
    measured_ms: float = math.nan
    tail: float = math.nan
    tail_from: str = ""
    tensor_from: str = ""  # BY_FORM or BUSY_CYCLES
    chain: object = None  # latency.Chain, None where the SASS, latencies or tiling are missing
    schedule: object = None  # schedule.Schedule, None where the simulation has no inputs or model
    outside_loop: float = math.nan  # share of warp instructions outside the main loop (spins among them)
    warps_per_scheduler: float = math.nan  # achieved: resident warps per SM sub-partition

    @property
    def explained(self):
        return self.bound_ms / self.measured_ms if not self.reason else math.nan

    def share(self, unit):
        """Time of `unit` at peak over the measured time."""
        return self.times_ms.get(unit, math.nan) / self.measured_ms

    @property
    def limiter_label(self):
        """The limiter's name; a unit that covers another says the covered part's share of its work
        where it has any ('L1 data stage (shared memory 96%)'): the same stage at the same peak and
        clock, so the ratio of their times is the ratio of their work."""
        if not self.limiter:
            return "no account"
        unit = BY_KEY[self.limiter]
        part = self.times_ms.get(unit.covers) if unit.covers else None
        whole = self.times_ms.get(unit.key)
        if part is None or not whole or not math.isfinite(part) or part < 0.005 * whole:
            return unit.label
        return f"{unit.label} ({BY_KEY[unit.covers].label} {100 * part / whole:.0f}%)"

    def work(self, row, unit=None):
        """The limiter's (or unit's) work counted in row."""
        return sum(value(row, c) for c in BY_KEY[unit or self.limiter].work)

    def summary(self):
        """'shared memory, explained 0.81' or 'no account: <reason>'."""
        if self.reason:
            return f"no account: {self.reason}"
        text = f"{self.limiter_label}, explained {self.explained:.2f}"
        if self.explained <= OVER_BOUND:
            return text
        if self.limiter == LATENCY.key:  # a chain of waits, not a peak: some of them overlapped
            return text + " (the chain of waits is longer than the measured time: some of them overlapped)"
        if self.limiter == SCHEDULE.key:  # a simulation, not a peak: the SM overlapped more than it
            return text + " (the simulated schedule is slower than the measured one)"
        return text + " (bound above the measured time: a peak or clock is off)"


def value(row, key):
    """A row's field as a finite float, NaN where it is absent, not a number or not finite."""
    return field_number(row, key)


def units_bound(row):
    """The largest of a row's units' times at peak (account_*_ms columns), NaN without any."""
    times = [value(row, f"account_{u.key}_ms") for u in UNITS]
    times = [t for t in times if math.isfinite(t)]
    return max(times) if times else math.nan


SCHEDULERS_PER_SM = 4  # SM sub-partitions, each with its warp scheduler, on sm_70 to sm_90


def warps_per_scheduler(row, context):
    """The achieved occupancy's warps per scheduler (NaN without it or the SM's thread limit)."""
    return value(row, "achieved_occupancy") / 100 * max_warps_per_sm(context) / SCHEDULERS_PER_SM


def tail_of(row, context):
    """(factor >= 1, where it comes from) of the busiest SM's work over the mean SM's."""
    busiest, mean = value(row, "sm_active_cycles_max"), value(row, "sm_active_cycles_avg")
    if busiest > 0 and mean > 0:
        return max(busiest / mean, 1.0), "sm_active_cycles max/avg"
    blocks, sms = value(row, "grid_blocks"), sm_count(context)
    if blocks > 0 and sms > 0:
        return math.ceil(blocks / sms) * sms / blocks, "grid_blocks over the SMs"
    return 1.0, "unknown (no SM cycle counters or grid size): taken as 1"


def _clock_hz(row, domain):
    if domain == "sm":
        return sm_clock_mhz(row) * 1e6
    return value(row, CLOCK_HZ[domain])


def tensor_instructions(row):
    """{counter: warp instructions} of the row's tensor work. On Hopper the HMMA counter counts
    the HGMMAs too (equal in every wgmma row), so HMMA is what it counts beyond them."""
    gmma = value(row, "tensor_gmma_inst")
    gmma = gmma if gmma > 0 else 0.0
    hmma = value(row, "tensor_hmma_inst")
    return {
        "tensor_hmma_inst": max(hmma - gmma, 0.0) if hmma > 0 else 0.0,
        "tensor_dmma_inst": max(value(row, "tensor_dmma_inst"), 0.0) if value(row, "tensor_dmma_inst") > 0 else 0.0,
        "tensor_gmma_inst": gmma,
    }


def tensor_forms(row):
    """{tensor instruction counter: pipe-peaks form} of the row's tensor instructions, the form
    None where the kernel does not say which: a library's kernels, and any row but the project's
    TF32 kernels for HMMA (the counter reads a residue on CUDA-core kernels too)."""
    forms = {}
    insts = tensor_instructions(row)
    own_kernel = row.get("backend") in (None, "cuda_kernel")
    if insts["tensor_hmma_inst"] > 0:
        forms["tensor_hmma_inst"] = "hmma_tf32" if own_kernel and row.get("compute") == "tf32" else None
    if insts["tensor_dmma_inst"] > 0:
        forms["tensor_dmma_inst"] = DMMA_FORMS.get(row.get("family"))
    if insts["tensor_gmma_inst"] > 0:
        params = row.get("param_values")
        n = params.get("bm") if isinstance(params, dict) else None
        forms["tensor_gmma_inst"] = GMMA_FORMS.get(int(n)) if isinstance(n, (int, float)) else None
    return forms


def form_rates(context):
    """{form: warp instructions per SM per clock} of the context's pipe peaks ({} without)."""
    peaks = context.get("pipe_peaks") if isinstance(context, dict) else None
    if not isinstance(peaks, dict):
        return {}
    return {f["form"]: f["inst_per_clk_per_sm"] for f in peaks.get("forms", []) if f.get("inst_per_clk_per_sm", 0) > 0}


def tensor_seconds_by_form(row, context):
    """Seconds (before the tail) the tensor instructions need at their forms' measured peaks, or
    None where a form or its peak is unknown."""
    forms, rates = tensor_forms(row), form_rates(context)
    sms, clock = sm_count(context), _clock_hz(row, "sm")
    if not forms or not rates or not sms > 0 or not clock > 0:
        return None
    if any(form not in rates for form in forms.values()):
        return None
    insts = tensor_instructions(row)
    return sum(insts[counter] / (rates[form] * sms * clock) for counter, form in forms.items())


def missing_inputs(row):
    """The counters, peaks and clocks the account needs that the row lacks (or has as 0)."""
    required = [unit for unit in UNITS if not unit.optional]
    needed = [c for unit in required for c in unit.work] + [unit.peak for unit in required]
    missing = [c for c in needed if math.isnan(value(row, c))]
    missing += [c for c in (unit.peak for unit in required) if value(row, c) == 0]
    if not sm_clock_mhz(row) > 0:
        missing.append("sm_clock_mhz")
    for key in CLOCK_HZ.values():
        if not value(row, key) > 0:
            missing.append(key)
    return list(dict.fromkeys(missing))


def no_account_reason(row):
    """Why the row has no account, or ''."""
    if row.get("error") not in (None, "") and not (isinstance(row.get("error"), float) and math.isnan(row["error"])):
        return "the benchmark failed"
    if value(row, "counters_available") == 0:
        return "counters not collected (counters_available = 0)"
    missing = missing_inputs(row)
    if not missing:
        return ""
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    return f"no {shown} (results recorded before the account's counters, or without them)"


def account(row, context):
    """The Account of one benchmark row (a dict or pandas Series with the catalogue's names)."""
    reason = no_account_reason(row)
    measured = value(row, "time_ms")
    if math.isnan(measured):
        measured = value(row, "median_ms")
    if not reason and not measured > 0:
        reason = "no measured time"
    if reason:
        return Account(reason=reason)
    tail, tail_from = tail_of(row, context)
    times = {}
    for unit in UNITS:
        if unit.optional and not unit.has_inputs(row):
            continue
        work = sum(value(row, c) for c in unit.work)
        seconds = work / (value(row, unit.peak) * _clock_hz(row, unit.domain))
        times[unit.key] = seconds * 1e3 * (tail if unit.domain == "sm" else 1.0)
    by_form = tensor_seconds_by_form(row, context)
    if by_form is not None:
        times["tensor"] = by_form * 1e3 * tail
    # The chain's compute is the SM's: L2's and DRAM's time is the loads the chain waits for.
    chain = latency_term.chain(row, context, max(t for u, t in times.items() if BY_KEY[u].domain == "sm"), tail)
    simulated = schedule_term.schedule(row, context, tail)
    if simulated is not None:
        times[SCHEDULE.key] = simulated.ms
    elif chain is not None and chain.waits.global_round_trips > 0:
        times[LATENCY.key] = chain.ms
    covered = {BY_KEY[u].covers for u in times if BY_KEY[u].covers}
    limiter = max((u for u in times if u not in covered), key=times.get)
    return Account(
        times_ms=times,
        limiter=limiter,
        bound_ms=times[limiter],
        measured_ms=measured,
        tail=tail,
        tail_from=tail_from,
        tensor_from=BY_FORM if by_form is not None else BUSY_CYCLES,
        chain=chain,
        schedule=simulated,
        outside_loop=latency_term.outside_loop_share(row, context),
        warps_per_scheduler=warps_per_scheduler(row, context),
    )


# ----------------------------------------------------------------------------- tables


def columns(acc):
    """The account as flat row fields (account_*), for results.csv and the tables."""
    out = {
        "account_limiter": acc.limiter_label,
        "account_unit": acc.limiter,
        "account_explained": acc.explained,
        "account_bound_ms": acc.bound_ms,
        "account_tail": acc.tail,
        "account_reason": acc.reason,
    }
    for unit in (*UNITS, *ORDER_TIMES):
        out[f"account_{unit.key}_ms"] = acc.times_ms.get(unit.key, math.nan)
    simulated = acc.schedule
    out["account_schedule_cycles"] = simulated.cycles_per_block_ktile if simulated else math.nan
    for state in sm_simulation.STATES:
        out[f"account_schedule_{state}"] = simulated.states.get(state, math.nan) if simulated else math.nan
    chain = acc.chain
    out["account_wait_cycles"] = chain.wait_cycles if chain else math.nan
    out["account_compute_cycles"] = chain.compute_cycles if chain else math.nan
    out["account_global_round_trips"] = chain.round_trips if chain else math.nan
    out["account_barriers"] = chain.waits.barriers if chain else math.nan
    out["account_chain_blocks"] = chain.blocks if chain else math.nan
    out["account_burst_cycles"] = chain.burst_cycles if chain else math.nan
    out["account_outside_loop_share"] = acc.outside_loop
    out["account_warps_per_scheduler"] = acc.warps_per_scheduler
    return out


def add_columns(frame, context):
    """frame with the account_* columns of every row, and the Account objects as a list."""
    accounts = [account(row, context) for _, row in frame.iterrows()]
    out = frame.copy()
    for key in columns(Account()):
        out[key] = [columns(a)[key] for a in accounts]
    return out, accounts


def as_json(frame, accounts):
    """{benchmark name: account} for account.json: per unit ms at peak and share of the measured time."""
    out = {}
    for (_, row), acc in zip(frame.iterrows(), accounts):
        if acc.reason:
            out[row["name"]] = {"account": None, "reason": acc.reason}
            continue
        out[row["name"]] = {
            "limiter": acc.limiter,
            "limiter_label": acc.limiter_label,
            "explained": acc.explained,
            "bound_ms": acc.bound_ms,
            "measured_ms": acc.measured_ms,
            "tail": acc.tail,
            "tail_from": acc.tail_from,
            "tensor_from": acc.tensor_from,
            "units": {
                u.key: {"ms_at_peak": acc.times_ms[u.key], "share": acc.share(u.key)}
                for u in (*UNITS, *ORDER_TIMES)
                if u.key in acc.times_ms
            },
        }
        if acc.schedule:
            out[row["name"]]["schedule"] = {
                "cycles_per_block_ktile": acc.schedule.cycles_per_block_ktile,
                "warp_states_per_issued_instruction": acc.schedule.states,
            }
        if acc.chain:
            c = acc.chain
            out[row["name"]]["latency"] = {
                "wait_cycles_per_block_ktile": c.wait_cycles,
                "burst_cycles_per_block_ktile": c.burst_cycles,
                "compute_cycles_per_block_ktile": c.compute_cycles,
                "global_round_trips_per_ktile": c.round_trips,
                "global_round_trips_per_loop": c.waits.global_round_trips,
                "barriers": c.waits.barriers,
                "blocks_per_sm": c.blocks,
            }
    return out


def dram_bandwidth_check(frame, context):
    """(GB/s from the counters' DRAM peak x clock, GB/s of the context) for a consistency note."""
    rates = frame.get("dram_bytes_peak_per_cycle")
    clocks = frame.get("dram_clock_hz")
    if rates is None or clocks is None:
        return math.nan, context_value(context, "peak_dram_gbs")
    product = (rates * clocks).dropna()
    product = product[product > 0]
    return (float(product.median()) / 1e9 if len(product) else math.nan), context_value(context, "peak_dram_gbs")
