"""One SM issuing a k-tile loop's SASS, simulated cycle by cycle: how many cycles the SM needs per
block and k-tile when its resident blocks' warps issue the loop as compiled (schedule.py gives it
a row's loop, machine and launch).

Why a simulation. The units' times (account.py) assume that every unit can be kept at its peak;
what keeps it below is the order the code imposes: a warp issues in order, waits for the
registers its next instruction reads, for a pipe that is still busy, for a barrier, for its
cp.async stages. Whether the other warps of the SM fill those waits depends on how many there
are and on where in the loop each one is, which no closed formula follows (the blocks of an SM
may run in phase or out of phase, a block alone issues below the units' peak). Played out cycle
by cycle on the loop's own instructions, with the latencies and rates the project measures, it
is a prediction made from the code and the hardware alone: nothing is fitted to the kernel's
measured time.

The machine (one SM, every number from pipe_peaks.json beside the study):
  schedulers   4 per SM; warp w of the SM's B blocks x W warps issues on scheduler w mod 4; each
               issues at most one instruction per cycle, from the warp it issued last if that one
               is ready, else the oldest ready warp (greedy, then oldest); the SM's shared pipe
               serves the schedulers in turn
  in order     a warp's next instruction waits until every register it reads or writes is ready,
               and until the stall count the compiler gave the warp's last instruction has run
               out (the control bits cuobjdump prints beside it: sass_loop.stall_cycles; where
               sass.json has none, no such wait)
  latencies    an instruction's result is ready after its pipe's dependent latency, in whole
               cycles
               (instruction_latencies: fma, alu, fp64, and the MMA form of the kernel), a
               shared-memory load's after the shared-memory latency (constants and special
               registers too), a global load's after the latency of the slowest load of its batch
               (latency.trip_latency: L2 unless one of them misses) plus the wait for the chip's
               k-tile through L2 (latency.py)
  pipes        per scheduler, the ALU, FP64 and tensor pipes each take one instruction per
               1 / rate cycles (forms' and issue_rates' warp instructions per SM per clock over 4);
               the FMA pipe is two halves, each taking an instruction every other cycle: FFMA
               goes to either, an integer multiply(-add) to the heavy half only
  registers    an instruction holds its scheduler while it reads its source registers: two banks
               (register r in bank r mod 2), two reads per bank and cycle, an operand the warp's
               previous instruction marked .reuse in the same slot not read again
               (register_read_cycles); a ready warp waits as dispatch_stall meanwhile
  shared       per SM, every LDS, LDSM, STS and LDGSTS holds the shared-memory pipe for its
               wavefronts (the row's smem_wavefronts per block and k-tile, shared among the loop's
               shared instructions in proportion to their widths; a 16-byte copy, which that
               counter leaves out, one per 128 bytes: schedule._wavefronts) at the peak
               wavefronts per cycle
  barriers     BAR.SYNC releases the block's warps the barrier latency after the last arrives
  cp.async     LDGDEPBAR closes a group of the warp's LDGSTS, which lands the global latency after
               its last one issued; DEPBAR.LE SB0, n waits until all but the n newest have landed
  mbarriers    a try-wait after the loop's ARRIVES.LDGSTSBAR waits for the stage it consumes (the
               LDGSTS every warp of the block issued stages - 1 iterations before); one before
               the loop's LDGSTS waits until every warp of the block arrived (SYNCS.ARRIVE) on the
               stage it refills, in the previous iteration
  control      every warp runs the loop until the last has run it `ktiles` times (so that all
               of them compete throughout)

The result: SM cycles per block and k-tile in the steady state (the slope of the iterations the
SM completes over time, past the first quarter of them, least squares), and
the warp states it predicts, per issued instruction, under the names ncu gives the measured ones
(long_scoreboard: a global load's register; short_scoreboard: a shared load's; wait: a math
result or a stall count; math_pipe_throttle: a busy pipe; mio_throttle: the busy shared-memory
pipe; barrier; stage_wait: cp.async and mbarrier waits; dispatch_stall: ready, its scheduler
still reading another instruction's registers; not_selected: ready, another warp issued).

What it leaves out: the operand collectors beyond the banks' reads, the instruction cache,
dual issue, the LSU's and L1's own queues, the memory system's queues beyond the L2 burst; the
control bits beside the stall count (yield, the scoreboards they name: a variable-latency result
is waited for through its register instead); uniform registers, predicates and
write-after-read hazards (an instruction waits only for general registers it reads or writes
that a pending instruction writes); an
instruction it does not know runs on the ALU pipe with its latency; predicated-off instructions
run. It does not simulate (unsupported(), schedule.py): warp-specialised kernels (wgmma with
TMA), MMA shapes and barrier forms without a measured rate or a model, cp.async waits on another
scoreboard, try-waits it cannot place; and a simulation in which
every warp waits on the others does not finish (no time). A loop nested in the k-tile loop is
simulated only on the path source counters measured (schedule.executed_indices)."""

import functools
import math
import re
from dataclasses import dataclass, field

from gemm_study.analysis import sass_loop

SCHEDULERS = 4
# Iterations simulated per warp (the first quarter is the pipeline's fill): as many as give the SM
# about WARP_INSTRUCTIONS to issue, at least MIN_KTILES, at most KTILES. A long loop with many
# warps settles in fewer iterations; the study's longest (the tuned FP32 rung, 2,263 instructions
# by 16 warps) runs 8, within 2% of 32 (test_schedule.py).
KTILES, MIN_KTILES, WARP_INSTRUCTIONS = 32, 8, 100_000


def iterations(warps, length):
    """Iterations to simulate for `warps` warps running a loop of `length` instructions."""
    return max(MIN_KTILES, min(KTILES, math.ceil(WARP_INSTRUCTIONS / max(1, warps * length))))


STAGES = re.compile(r"SB0,\s*0x([0-9a-f]+)")

FMA = {"FFMA", "FMUL", "FADD", "IMAD", "IMUL", "HFMA2", "HMUL2", "HADD2"}
FP64 = {"DFMA", "DADD", "DMUL"}
SHARED = {"LDS", "LDSM", "STS", "LDGSTS"}
GLOBAL_LOADS = {"LDG", "LD"}
SLOW_READS = {"LDC", "S2R", "S2UR", "CS2R", "ULDC"}  # served like a shared load (constant cache, special registers)
UNSUPPORTED = ("HGMMA", "WARPGROUP", "UTMALDG", "UBLKCP", "UTMASTG")  # warp-specialised wgmma with TMA
# The FMA pipe is two halves (ncu's pipe_fmaheavy and pipe_fmalite), each taking a warp
# instruction every other cycle: an FFMA goes to whichever is free, an integer multiply(-add) to
# the heavy half only, so alone it issues at half the FFMA's rate (the Programming Guide's
# throughput for compute capability 9.0: 64 results per clock per SM for 32-bit integer
# multiply-add, 128 for FP32 FMA).
INTEGER_MULTIPLY = ("IMAD", "IMUL")
# The registers each operand of an MMA covers: D, A, B, C.
# (the full shape and type: an HMMA.1688 of another type has another rate, and is refused)
MMA_WIDTHS = {"HMMA.1688.F32.TF32": (4, 4, 2, 4), "DMMA.8x8x4": (4, 2, 2, 4), "DMMA.16x8x16": (8, 16, 8, 8)}
MMA_FORMS = {"HMMA.1688.F32.TF32": "hmma_tf32", "DMMA.8x8x4": "dmma_884", "DMMA.16x8x16": "dmma_16816"}
STATES = (
    "selected",
    "not_selected",
    "long_scoreboard",
    "short_scoreboard",
    "wait",
    "math_pipe_throttle",
    "mio_throttle",
    "barrier",
    "stage_wait",
    "dispatch_stall",
)


@dataclass(frozen=True)
class Machine:
    """Rates (warp instructions per scheduler per cycle; shared: wavefronts per SM per cycle) and
    latencies (cycles) of one SM."""

    rates: tuple  # ((pipe, rate), ...)
    latencies: tuple  # ((kind, cycles), ...)
    shared_wavefronts_per_cycle: float

    def rate(self, pipe):
        return dict(self.rates)[pipe]

    def latency(self, kind):
        return dict(self.latencies)[kind]


@dataclass
class Schedule:
    cycles_per_block_ktile: float
    states: dict = field(default_factory=dict)  # warp state -> cycles per issued instruction
    ms: float = math.nan  # the busiest SM's block-k-tiles at that rate, at the row's clock


# ----------------------------------------------------------------------------- instructions


@dataclass(frozen=True)
class Instruction:
    text: str
    base: str  # opcode without modifiers
    kind: str  # fma | alu | fp64 | tensor | shared | global | slow | bar | depbar | commit | trywait | arrive | ldgsts_arrive | issue
    reads: tuple
    writes: tuple
    form: str = ""  # the MMA's pipe-peaks form


def _mma(op):
    return next((k for k in MMA_WIDTHS if op.startswith(k)), None)


def _width(op, base, position):
    """Registers operand `position` (0: the destination) covers."""
    mma = _mma(op)
    if mma:
        return MMA_WIDTHS[mma][position] if position < 4 else 1
    if base in FP64:
        return 2
    if position == 3 and ".WIDE" in op and base == "IMAD":
        return 2  # IMAD.WIDE adds a 64-bit C (a register pair) to the 64-bit product
    if position == 0 or base.startswith("ST"):
        words = sass_loop.access_words(op)
        return 2 if words == 1 and (".WIDE" in op or base == "CS2R") else words
    return 1


def decode(text):
    """The Instruction of one SASS line."""
    op, operands = sass_loop.operands(text)
    base = op.split(".")[0]
    no_destination = base.startswith("ST") or base in (
        "LDGSTS",
        "BAR",
        "BRA",
        "DEPBAR",
        "LDGDEPBAR",
        "SYNCS",
        "ARRIVES",
    )
    if no_destination:
        last = len(operands) - 1
        reads = sum(
            (sass_loop.registers(o, _width(op, base, 1) if k == last else 1) for k, o in enumerate(operands)), ()
        )
        writes = ()
    else:
        writes = sass_loop.registers(operands[0], _width(op, base, 0)) if operands else ()
        reads = sum((sass_loop.registers(o, _width(op, base, k)) for k, o in enumerate(operands[1:], 1)), ())
    mma = _mma(op)
    if mma:
        kind = "tensor"
    elif base in FMA:
        kind = "fma"
    elif base in FP64:
        kind = "fp64"
    elif base in SHARED:
        kind = "shared"
    elif base in GLOBAL_LOADS:
        kind = "global"
    elif base in SLOW_READS:
        kind = "slow"
    elif base == "BAR":
        kind = "bar"
    elif base == "DEPBAR":
        kind = "depbar"
    elif base == "LDGDEPBAR":
        kind = "commit"
    elif op.startswith("SYNCS.PHASECHK"):
        kind = "trywait"
    elif op.startswith("SYNCS.ARRIVE"):
        kind = "arrive"
    elif op.startswith("ARRIVES.LDGSTSBAR"):
        kind = "ldgsts_arrive"
    elif base.startswith("U") or base in ("BRA", "NOP", "EXIT"):
        kind = "issue"  # the uniform datapath and branches: an issue slot, no pipe modelled
    else:
        kind = "alu"
    return Instruction(text, base, kind, reads, writes, MMA_FORMS.get(mma, ""))


def unsupported(body):
    """Why the simulation does not model a loop ('' where it does): warp-specialised wgmma with
    TMA, an MMA shape or a barrier form it does not know, a cp.async wait on a scoreboard other
    than the cp.async groups' (SB0), an mbarrier try-wait it cannot place."""
    program = [decode(t) for t in body]
    for ins in program:
        op = sass_loop.opcode(ins.text)
        if op.startswith(UNSUPPORTED):
            return f"{op}: warp-specialised wgmma with TMA"
        if ins.base in ("HMMA", "DMMA", "IMMA") and not ins.form:
            return f"{op}: an MMA shape or type without a measured rate and latency"
        if ins.base == "BAR" and (not op.startswith("BAR.SYNC") or "," in ins.text):
            return f"{ins.text}: a barrier form other than BAR.SYNC of the whole block"
        if ins.kind == "depbar" and not STAGES.search(ins.text):
            return f"{ins.text}: a wait on another scoreboard than the cp.async groups'"
    roles = _wait_roles(program)
    if any(ins.kind == "trywait" and i not in roles for i, ins in enumerate(program)):
        return "an mbarrier try-wait neither after the loop's ARRIVES.LDGSTSBAR nor before its LDGSTS"
    return ""


# ----------------------------------------------------------------------------- the simulation


def simulate(body, machine, *, warps_per_block, blocks, wavefronts, stages=0, ktiles=None, stalls=()):
    """The Schedule (cycles per block and k-tile; warp states per issued instruction) of `blocks`
    resident blocks of `warps_per_block` warps running `body` (instruction texts) `ktiles` times
    (by default as many as iterations() gives).
    wavefronts[i]: the shared-memory wavefronts of body[i]; stages: the mbarrier ring's depth;
    stalls[i]: the compiler's stall count of body[i] (sass_loop.stall_cycles), () without them."""
    if stalls and len(stalls) != len(body):
        raise ValueError(f"{len(stalls)} stall counts for a loop of {len(body)} instructions")
    ktiles = ktiles or iterations(warps_per_block * blocks, len(body))
    return _simulate(
        tuple(body), machine, warps_per_block, blocks, tuple(sorted(wavefronts.items())), stages, ktiles, tuple(stalls)
    )


PIPES = ("fma_heavy", "fma_lite", "alu", "fp64", "tensor")
FMA_HALVES = (PIPES.index("fma_heavy"), PIPES.index("fma_lite"))
S_SELECTED, S_NOT_SELECTED, S_BARRIER, S_STAGE, S_PIPE, S_MIO, S_WAIT, S_DISPATCH = (
    STATES.index(k)
    for k in (
        "selected",
        "not_selected",
        "barrier",
        "stage_wait",
        "math_pipe_throttle",
        "mio_throttle",
        "wait",
        "dispatch_stall",
    )
)


@dataclass(frozen=True)
class _Step:
    """One instruction as the simulation needs it, worked out once."""

    ins: Instruction
    operands: tuple  # registers it reads or writes
    pipes: tuple  # indices into PIPES it may issue to (the one free soonest is taken), () for none
    issue_interval: float  # cycles its pipe is held
    shared_cycles: float  # cycles the SM's shared pipe is held
    latency: int  # cycles until its result is ready
    dependency_state: int  # the state of a warp waiting for its result
    stage_wait: bool  # a DEPBAR or an mbarrier try-wait
    read_cycles: int = 1  # cycles the scheduler spends reading its source registers


def _steps(program, machine, wavefronts):
    lat, rates = dict(machine.latencies), dict(machine.rates)
    reads = register_read_cycles([ins.text for ins in program])
    steps = []
    for i, ins in enumerate(program):
        k = ins.kind
        if k == "fma":
            pipes = FMA_HALVES[:1] if ins.base in INTEGER_MULTIPLY else FMA_HALVES
            interval = 2.0 / rates["fma"]  # each half: every other cycle at the measured FFMA rate
        elif k in PIPES:
            pipes = (PIPES.index(k),)
            interval = 1.0 / (rates[ins.form] if k == "tensor" else rates[k])
        else:
            pipes, interval = (), 0.0
        steps.append(
            _Step(
                ins,
                tuple(dict.fromkeys((*ins.reads, *ins.writes))),
                pipes,
                interval,
                wavefronts.get(i, 0.0) / machine.shared_wavefronts_per_cycle if k == "shared" else 0.0,
                _result_latency(ins, lat),
                STATES.index(_dependency_state(k)),
                k in ("depbar", "trywait"),
                reads[i],
            )
        )
    return steps


@functools.lru_cache(maxsize=256)
def _simulate(body, machine, warps_per_block, blocks, wavefronts, stages, ktiles, stalls):
    program = [decode(t) for t in body]
    steps = _steps(program, machine, dict(wavefronts))
    roles = _wait_roles(program)
    global_latency, barrier_latency = dict(machine.latencies)["global"], dict(machine.latencies)["barrier"]
    registers = 1 + max((x for st in steps for x in st.operands), default=0)
    n = warps_per_block * blocks
    block_of = [w // warps_per_block for w in range(n)]
    ready = [[0.0] * registers for _ in range(n)]  # register -> cycle its value is ready
    waited_as = [[0] * registers for _ in range(n)]  # register -> the state of a warp waiting for it
    pc, iteration = [0] * n, [0] * n
    release = [0.0] * n  # barrier or stage release
    next_issue = [0.0] * n  # the cycle the stall count of the warp's last instruction ends
    waiting = [0] * n  # state while released at `release`
    at_barrier = [False] * n
    arrived = [0] * blocks
    groups = [[] for _ in range(n)]  # landing cycle of each committed cp.async group
    open_group = [0.0] * n
    full = [{} for _ in range(blocks)]  # mbarrier stage g -> [warps arrived, landing cycle]
    empty = [{} for _ in range(blocks)]  # iteration -> [warps arrived, cycle]
    pipe_free = [[0.0] * len(PIPES) for _ in range(SCHEDULERS)]
    dispatch_free = [0.0] * SCHEDULERS  # the cycle each scheduler has read its last operands
    shared_free, shared_user = 0.0, SCHEDULERS - 1
    last = [-1] * SCHEDULERS
    ends = [[] for _ in range(n)]
    states = [0] * len(STATES)
    fill = n * ktiles // 4  # iterations completed before the steady state is measured
    completed, states_at_fill = 0, None
    running = n
    t = 0
    by_scheduler = [[w for w in range(n) if w % SCHEDULERS == s] for s in range(SCHEDULERS)]
    # Each scheduler's order of its warps with warp g first (greedy), the others oldest first.
    greedy_first = [{g: [g, *(w for w in ws if w != g)] for g in ws} for ws in by_scheduler]
    limit = 200_000 * ktiles
    length = len(steps)
    while running and t < limit:
        # This cycle's warp states, and the earliest cycle a blocked warp could go on: a cycle in
        # which no warp issues repeats itself until then, so the simulation skips to it.
        cycle = [0] * len(STATES)
        soonest = math.inf
        any_issued = False
        for turn in range(SCHEDULERS):
            s = (shared_user + 1 + turn) % SCHEDULERS  # the shared pipe serves the schedulers in turn
            order = by_scheduler[s] if last[s] < 0 else greedy_first[s][last[s]]
            issued = False
            for w in order:
                if at_barrier[w]:
                    cycle[S_BARRIER] += 1
                    continue
                if release[w] > t:
                    cycle[waiting[w]] += 1
                    if release[w] < soonest:
                        soonest = release[w]
                    continue
                if next_issue[w] > t:
                    cycle[S_WAIT] += 1
                    if next_issue[w] < soonest:
                        soonest = next_issue[w]
                    continue
                st = steps[pc[w]]
                r = ready[w]
                latest, last_ready = 0.0, -1  # the operand ready last: the warp waits for it
                for x in st.operands:
                    if r[x] > latest:
                        latest, last_ready = r[x], x
                if latest > t:
                    cycle[waited_as[w][last_ready]] += 1
                    if latest < soonest:
                        soonest = latest
                    continue
                pipe = min(st.pipes, key=pipe_free[s].__getitem__) if st.pipes else -1
                if pipe >= 0 and pipe_free[s][pipe] >= t + 1:  # busy through this whole cycle
                    cycle[S_PIPE] += 1
                    if pipe_free[s][pipe] - 1 < soonest:
                        soonest = pipe_free[s][pipe] - 1
                    continue
                if st.shared_cycles and shared_free >= t + 1:
                    cycle[S_MIO] += 1
                    if shared_free - 1 < soonest:
                        soonest = shared_free - 1
                    continue
                if st.stage_wait:
                    wait = _stage_wait(
                        st.ins,
                        roles.get(pc[w]),
                        w,
                        iteration[w],
                        groups,
                        full[block_of[w]],
                        empty[block_of[w]],
                        stages,
                        warps_per_block,
                    )
                    if wait is not None and wait > t:
                        if wait != UNKNOWN:
                            release[w], waiting[w] = wait, S_STAGE
                            soonest = wait if wait < soonest else soonest
                        cycle[S_STAGE] += 1
                        continue
                if issued:
                    cycle[S_NOT_SELECTED] += 1
                    continue
                if dispatch_free[s] > t:
                    cycle[S_DISPATCH] += 1
                    if dispatch_free[s] < soonest:
                        soonest = dispatch_free[s]
                    continue
                # issue
                issued = any_issued = True
                cycle[S_SELECTED] += 1
                last[s] = w
                dispatch_free[s] = t + st.read_cycles
                ins, k = st.ins, st.ins.kind
                if pipe >= 0:
                    pipe_free[s][pipe] = max(pipe_free[s][pipe], t) + st.issue_interval
                if k == "shared":
                    shared_free = max(shared_free, t) + st.shared_cycles
                    shared_user = s
                    if ins.base == "LDGSTS":
                        open_group[w] = max(open_group[w], t + global_latency)
                elif k == "commit":
                    groups[w] = (groups[w] + [open_group[w]])[-16:]
                    open_group[w] = 0.0
                elif k == "ldgsts_arrive":
                    g = full[block_of[w]].setdefault(iteration[w], [0, 0.0])
                    g[0] += 1
                    g[1] = max(g[1], open_group[w])
                    open_group[w] = 0.0
                elif k == "arrive":
                    e = empty[block_of[w]].setdefault(iteration[w], [0, 0.0])
                    e[0] += 1
                    e[1] = max(e[1], float(t))
                if stalls:
                    next_issue[w] = t + stalls[pc[w]]
                done = t + st.latency
                for x in ins.writes:
                    r[x] = done
                    waited_as[w][x] = st.dependency_state
                if k == "bar":
                    b = block_of[w]
                    at_barrier[w] = True
                    arrived[b] += 1
                    if arrived[b] == warps_per_block:
                        arrived[b] = 0
                        for v in range(n):
                            if block_of[v] == b:
                                at_barrier[v] = False
                                release[v], waiting[v] = t + barrier_latency, S_BARRIER
                pc[w] += 1
                if pc[w] == length:
                    pc[w] = 0
                    iteration[w] += 1
                    completed += 1
                    ends[w].append(t)
                    if iteration[w] == ktiles:  # it runs on, so that the others keep their company
                        running -= 1
        step = 1 if any_issued else max(1, math.ceil(soonest) - t) if soonest < math.inf else limit
        for i, count in enumerate(cycle):
            states[i] += count * step
        if states_at_fill is None and completed >= fill:
            states_at_fill = list(states)
        t += step
    if running:
        return Schedule(math.nan)
    # The SM's steady rate: the slope (least squares) of the iterations its warps complete over
    # time, past the first quarter of them (the pipeline's fill). Every warp runs until the last
    # one is done, so all of them compete throughout; the slope, unlike a window's two ends, is
    # not biased by where a period (cp.async stages go in pairs or threes) is cut.
    pooled = sorted(x for e in ends for x in e)
    times = pooled[fill:]
    if len(times) < 2:
        return Schedule(math.nan)
    mean_t, mean_i = sum(times) / len(times), (len(times) - 1) / 2
    spread = sum((x - mean_t) ** 2 for x in times)
    per_cycle = sum((x - mean_t) * (i - mean_i) for i, x in enumerate(times)) / spread if spread else 0.0
    if not per_cycle > 0:
        return Schedule(math.nan)
    steady = warps_per_block / per_cycle
    # The warp states over the same steady part.
    steady_states = [v - f for v, f in zip(states, states_at_fill or [0] * len(STATES))]
    issued_total = steady_states[S_SELECTED]
    return Schedule(steady, {k: v / issued_total for k, v in zip(STATES, steady_states)} if issued_total else {})


# The register file: two banks per scheduler, register r in bank r mod 2 (Volta onwards), each
# serving two reads per cycle. Two is the least that sustains what pipe-peaks measures: an FFMA
# per scheduler per cycle reads three registers, which two banks of one read each could not
# serve. A reuse flag (.reuse) keeps an operand in the slot's operand cache for the warp's next
# instruction, which then does not read it from its bank.
BANKS, READS_PER_BANK = 2, 2


def register_read_cycles(body):
    """Per instruction of a loop (texts, run in order and round), the cycles its scheduler spends
    reading its source registers: the busiest bank's reads over READS_PER_BANK, at least 1. An
    FFMA with its three sources in one bank takes 2; an HMMA.1688 reading A, B and C (ten
    registers) 3 or more. A source in the same operand slot (the first source, the second, ...,
    counted after the destination where there is one) that the previous instruction marked .reuse
    is not read."""
    sources = []
    for text in body:
        op, ops = sass_loop.operands(text)
        base, ins = op.split(".")[0], decode(text)
        first = 1 if ins.writes else 0  # the destination is written, not read
        last = len(ops) - 1
        slots = []  # (source slot: 0 for the first source, with or without a destination, ...)
        for k, o in enumerate(ops[first:], first):
            width = _width(op, base, k) if first else _width(op, base, 1) if k == last else 1
            slots.append((k - first, sass_loop.registers(o, width), ".reuse" in o))
        sources.append(slots)
    out = []
    for i, slots in enumerate(sources):
        cached = {(k, regs) for k, regs, reuse in sources[i - 1] if reuse}
        per_bank = [0] * BANKS
        for k, regs, _ in slots:
            if (k, regs) not in cached:
                for r in regs:
                    per_bank[r % BANKS] += 1
        out.append(max(1, *(-(-c // READS_PER_BANK) for c in per_bank)))
    return out


def _dependency_state(kind):
    if kind == "global":
        return "long_scoreboard"
    if kind in ("shared", "slow"):
        return "short_scoreboard"
    return "wait"


def _result_latency(ins, lat):
    if ins.kind == "tensor":
        return lat[ins.form]
    if ins.kind in ("fma", "alu", "fp64", "global", "shared", "slow"):
        return lat[ins.kind]
    return lat["alu"] if ins.kind == "issue" else 1.0


UNKNOWN = math.inf  # a wait whose release is not decided yet: the warp polls again next cycle


def _wait_roles(program):
    """{index: 'full' | 'empty'} of the loop's mbarrier try-waits: one after the loop's
    ARRIVES.LDGSTSBAR waits for a stage to be full, one before its first LDGSTS for it to be
    empty."""
    arrive = next((i for i, ins in enumerate(program) if ins.kind == "ldgsts_arrive"), None)
    load = next((i for i, ins in enumerate(program) if ins.base == "LDGSTS"), None)
    roles = {}
    for i, ins in enumerate(program):
        if ins.kind != "trywait":
            continue
        if arrive is not None and i > arrive:
            roles[i] = "full"
        elif load is not None and i < load:
            roles[i] = "empty"
    return roles


def _stage_wait(ins, role, w, iteration, groups, full, empty, stages, warps):
    """The cycle a cp.async or mbarrier wait releases warp w: None where ins is no such wait,
    UNKNOWN where the release is not decided yet."""
    if ins.kind == "depbar":
        m = STAGES.search(ins.text)
        keep = int(m.group(1), 16) if m else 0
        pending = groups[w][:-keep] if keep else groups[w]
        return max(pending, default=0.0)
    if ins.kind != "trywait" or not role or not stages:
        return None
    if role == "full":  # the stage this iteration consumes, loaded stages - 1 iterations before
        g = full.get(iteration - (stages - 1)) if iteration >= stages - 1 else [warps, 0.0]
    else:  # the stage this iteration refills, consumed in the previous iteration
        g = empty.get(iteration - 1) if iteration >= 1 else [warps, 0.0]
    return g[1] if g and g[0] >= warps else UNKNOWN
