"""The machine code of a step's inner loop: from the SASS of the study's build (`sass.json` beside
the results, written by tests/cpu/sass_compare.py collect), each rung's main loop (of the loops
of its kernel, the one with the most math instructions: FFMA, DFMA, HMMA, DMMA, HGMMA), its length
and opcode histogram, and what changed in it from one rung to the next, with the registers."""

import collections
import re

MATH = re.compile(r"^(FFMA|DFMA|HMMA|DMMA|HGMMA)\b")
BRANCH = re.compile(r"^(?:@!?U?P\w+\s+)?BRA(?:\.\S+)?\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))")
SHOWN = 5  # opcodes named per step, the largest changes first
PREDICATE = re.compile(r"^@!?U?P\w+\s+")  # a guard: @P0, @!UP1
REGISTER = re.compile(r"\bR(\d+)\b")  # a general register (not RZ, not a uniform UR)


def opcode(text):
    """The opcode with its modifiers, without the predicate: 'LDS.128'."""
    return PREDICATE.sub("", text).split()[0]


def operands(text):
    """(opcode with modifiers, [operand texts]) of one instruction, the predicate dropped."""
    op, _, rest = PREDICATE.sub("", text).partition(" ")
    return op, [o.strip() for o in rest.rstrip(" ;").split(",")] if rest else []


def registers(operand, width=1):
    """The general registers an operand names, each with the `width` - 1 that follow it (a 64-bit
    or 128-bit value spans consecutive registers)."""
    return tuple(int(r) + i for r in REGISTER.findall(operand) for i in range(width))


def access_words(op):
    """32-bit words per thread a load or store moves: 4 for .128 and LDSM's four matrices (.M88.4,
    .MT88.4), 2 for .64 and two matrices, else 1."""
    if ".128" in op or "88.4" in op:
        return 4
    return 2 if ".64" in op or "88.2" in op else 1


def issued(text):
    """Whether an instruction does anything: not a NOP, nor one predicated on never (@!PT, the
    compiler's padding)."""
    return opcode(text) != "NOP" and not text.startswith("@!PT ")


def main_loop_span(instructions):
    """(first, last) indices into [(address, text)] of the kernel's main loop: a loop is a backward
    branch (last) and what lies between its target (first) and it; the main one has the most math
    instructions, the shortest where several tie (the innermost). None without a loop with math."""
    best = None
    for i, (address, text) in enumerate(instructions):
        m = BRANCH.match(text)
        if not m or not m.group(1):
            continue
        target = int(m.group(1), 16)
        if target > address:
            continue
        first = next(j for j, (a, _) in enumerate(instructions) if a >= target)
        body = [t for _, t in instructions[first : i + 1] if issued(t)]
        math = sum(1 for t in body if MATH.match(opcode(t)))
        key = (math, -len(body))
        if math and (best is None or key > best[0]):
            best = (key, (first, i))
    return best[1] if best else None


def main_loop_body(instructions):
    """The issued instructions' texts of the kernel's main loop (main_loop_span), from
    [(address, text)]; [] when it has no loop with a math instruction. A loop nested in it is in it
    once, as compiled."""
    span = main_loop_span(instructions)
    return [t for _, t in instructions[span[0] : span[1] + 1] if issued(t)] if span else []


def inner_loop_bodies(instructions):
    """The issued instructions' texts of each loop nested in the main loop (a backward branch
    inside it that is not its own), from [(address, text)]; [] where there is none."""
    main = main_loop_body(instructions)
    if not main:
        return []
    loops = []
    for i, (address, text) in enumerate(instructions):
        m = BRANCH.match(text)
        if not m or not m.group(1) or int(m.group(1), 16) > address:
            continue
        target = int(m.group(1), 16)
        body = [t for a, t in instructions[: i + 1] if a >= target and issued(t)]
        if len(body) < len(main) and _inside(body, main):
            loops.append(body)
    return loops


def _inside(body, main):
    """Whether body is a contiguous run of main (a loop nested in it)."""
    n = len(body)
    return any(main[i : i + n] == body for i in range(len(main) - n + 1))


def main_loop(instructions):
    """(length, Counter of opcodes) of the kernel's main loop (main_loop_body); (0, {}) without one."""
    body = main_loop_body(instructions)
    return len(body), collections.Counter(opcode(t) for t in body)


# Where the compiler's stall count sits in an instruction's control bits: bits 105 to 108 of the
# 128-bit encoding on sm_70 and later, so bits 41 to 44 of the upper 64-bit word that cuobjdump
# prints on the line after the instruction. The count is how many cycles the warp waits before it
# issues its next instruction: the fixed latencies the compiler schedules for (a result read by
# the next instruction, a pipe's issue interval) where no scoreboard tracks them. ncu counts a
# warp held by it as `wait`.
STALL_SHIFT, STALL_MASK = 41, 0xF


def stall_cycles(upper_word):
    """The stall count of an instruction whose encoding's upper 64 bits are `upper_word`."""
    return (upper_word >> STALL_SHIFT) & STALL_MASK


CUOBJDUMP_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
# The line after an instruction holds the upper 64 bits of its 128-bit encoding.
CUOBJDUMP_UPPER_WORD = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")


def cuobjdump_instructions(lines):
    """[(address, instruction text, stall count)] of one kernel's `cuobjdump -sass` lines; the
    stall count None where the instruction's upper word does not follow it."""
    out = []
    for line in lines:
        m = CUOBJDUMP_INSTRUCTION.match(line)
        if m:
            out.append((int(m.group(1), 16), m.group(2), None))
            continue
        c = CUOBJDUMP_UPPER_WORD.match(line)
        if c and out and out[-1][2] is None:
            out[-1] = (*out[-1][:2], stall_cycles(int(c.group(1), 16)))
    return out


def _code(sass, precision, variant, shape):
    name = (sass.get("kernels") or {}).get(f"{precision}/{variant}", {}).get(shape)
    code = (sass.get("sass") or {}).get(name) if name else None
    return [(int(address), str(text)) for address, text in code] if code else None


def code_of(sass, precision, variant, shape):
    """[(address, text)] of the kernel `variant` launches at `shape`, or None where sass.json does
    not have it."""
    return _code(sass, precision, variant, shape) if isinstance(sass, dict) else None


def stalls_of(sass, precision, variant, shape):
    """The stall counts of the kernel `variant` launches at `shape`, one per instruction of
    code_of, or None where sass.json has none for it (files collected before it recorded them)."""
    if not isinstance(sass, dict):
        return None
    name = (sass.get("kernels") or {}).get(f"{precision}/{variant}", {}).get(shape)
    stalls = (sass.get("stalls") or {}).get(name) if name else None
    code = (sass.get("sass") or {}).get(name) if name else None
    if not isinstance(stalls, list) or not code or len(stalls) != len(code):
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= STALL_MASK for x in stalls):
        return None
    return stalls


def executed_counts_of(sass, source_counters, precision, variant, shape):
    """Each instruction's executed warp instructions per warp and k-tile of the kernel `variant`
    launches at `shape` (source_counters.json, gemm-source-counters: Nsight Compute's source
    counters, for the kernel whichever shape they were measured at), one per instruction of
    code_of; None where there are none for it."""
    if not isinstance(sass, dict) or not isinstance(source_counters, dict):
        return None
    name = (sass.get("kernels") or {}).get(f"{precision}/{variant}", {}).get(shape)
    entry = (source_counters.get("kernels") or {}).get(name) if name else None
    counts = entry.get("per_warp_ktile") if isinstance(entry, dict) else None
    code = (sass.get("sass") or {}).get(name)
    if not isinstance(counts, list) or not code or len(counts) != len(code):
        return None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in counts):
        return None
    return counts


def body_of(sass, precision, variant, shape):
    """The main loop's instruction texts of the kernel `variant` launches at `shape`, or None where
    sass.json does not have it."""
    code = _code(sass, precision, variant, shape) if isinstance(sass, dict) else None
    return main_loop_body(code) if code else None


def loop_of(sass, precision, variant, shape):
    """(length, Counter) of the main loop of the kernel `variant` launches at `shape` ('MxNxK'),
    or None where sass.json does not have it (another shape, a library's kernel)."""
    code = _code(sass, precision, variant, shape) if isinstance(sass, dict) else None
    return main_loop(code) if code else None


def _number(x):
    return isinstance(x, (int, float)) and x == x and x > 0


def change_sentence(a, b, registers=(None, None), blocks=(None, None)):
    """'inner loop (SASS): ...' for main loops a -> b ((length, Counter) each), naming the math
    instructions per iteration, the opcodes whose count moved most, the registers per thread and,
    where they changed, the blocks per SM (the launch facts: what the registers and shared memory
    leave room for); '' without both loops."""
    if not a or not b or not a[0] or not b[0]:
        return ""
    (len_a, ops_a), (len_b, ops_b) = a, b
    math_a = sum(n for o, n in ops_a.items() if MATH.match(o))
    math_b = sum(n for o, n in ops_b.items() if MATH.match(o))
    text = f"inner loop (SASS): {len_a} -> {len_b} instructions, {math_a} -> {math_b} math"
    moved = sorted(
        (o for o in set(ops_a) | set(ops_b) if ops_a.get(o, 0) != ops_b.get(o, 0)),
        key=lambda o: (-abs(ops_b.get(o, 0) - ops_a.get(o, 0)), o),
    )
    if moved:
        text += "; " + ", ".join(f"{o} {ops_a.get(o, 0)} -> {ops_b.get(o, 0)}" for o in moved[:SHOWN])
    ra, rb = registers
    if _number(ra) and _number(rb):
        text += f"; registers {int(ra)} -> {int(rb)}"
    ba, bb = blocks
    if _number(ba) and _number(bb) and int(ba) != int(bb):
        text += f", blocks per SM {int(ba)} -> {int(bb)}"
    return text
