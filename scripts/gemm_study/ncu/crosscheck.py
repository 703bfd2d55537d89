"""The rule by which gemm-bench's CUPTI counters and Nsight Compute's must agree on one benchmark.

docs/nsight-compute.md ("The rule") states it and why; the tolerances are the constants here.
Every catalogue metric both sides measured gets a row: required ones say whether they agree,
the others are shown (agree None) with the reason they are not required."""

import math

from gemm_study.analysis.footprint import working_set_bytes
from gemm_study.data import names
from gemm_study.data.catalogue import load_catalogue

# The tolerances (docs/nsight-compute.md, "The rule", says why each is what it is).
DRAM_RELATIVE_TOLERANCE = 0.10
DRAM_WORKING_SET_SHARE = 1 / 3
DRAM_ABSOLUTE_TOLERANCE_BYTES = 1 << 20
L2_READ_HIT_TOLERANCE_POINTS = 5.0
OCCUPANCY_TOLERANCE_POINTS = 1.0

# Exact counts that a kernel waiting on mbarriers in a loop executes a data-dependent number of:
# each poll that finds the phase incomplete runs the loop once more (SYNCS.PHASECHK and a branch,
# tests/cpu/sass_test.py), as often as the other warps' timing makes it.
SPIN_DEPENDENT = {
    "warp_inst": "counts every instruction, the polls of the mbarrier waits included",
    "alu_pipe_inst": "counts the polls' compare and loop instructions of the mbarrier waits",
    "lsu_pipe_inst": "counts the polls of the mbarrier waits (a try_wait is an LSU instruction)",
    "smem_wavefronts": "counts the shared-memory data stage's 'Misc' wavefronts too (ncu "
    "--query-metrics), and a poll reads its barrier in shared memory",
}
L2_HIT_RATE_WHY = (
    "shown: lts__t_sector_hit_rate divides hits by lookups of every client and "
    "operation (reads, writes, atomics, the L2's own traffic) and exceeds 100% "
    "within one pass; l2_read_lookup_hit_rate is required instead"
)
# The SMs' reads from L2, by the catalogue's short names.
L2_READ_HITS, L2_READ_MISSES, L2_READ_SECTORS = "l2_read_hits", "l2_read_misses", "l2_read_sectors"


def spin_reason(row):
    """Why this benchmark's instruction counts are data-dependent, or '' (the variant fact `spins`,
    False in files written before gemm-bench recorded it)."""
    return "waits on mbarriers in a loop (variant fact spins)" if row.get("spins") is True else ""


def uneven_residency(row, sm_count):
    """Why achieved occupancy is a timing measurement for this launch, or '': its first wave puts
    one block more on some SMs than on the others, or its last wave fills only part of the SMs'
    block slots, so the average weighs SMs holding different numbers of blocks by how long each
    ran (launch facts grid_blocks, blocks_per_sm)."""
    blocks, per_sm = _number(row.get("grid_blocks")), _number(row.get("blocks_per_sm"))
    if not (blocks > 0 and per_sm > 0 and sm_count > 0):
        return ""
    slots = int(per_sm * sm_count)
    resident = int(min(blocks, slots))
    fuller = resident % int(sm_count)
    if resident > sm_count and fuller != 0:
        fewer = resident // int(sm_count)
        return f"uneven first wave: {fuller} of {int(sm_count)} SMs hold {fewer + 1} blocks at once, the others {fewer}"
    last = int(blocks) % slots
    if blocks > slots and last != 0:
        return (
            f"partial last wave: {last} of {slots} block slots ({blocks / slots:.2f} waves), "
            f"so SMs run out of blocks at different times"
        )
    return ""


def _number(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


def dram_rule(cupti, ncu_value, working_set=0, l2_bytes=0):
    """(rule, agree) for DRAM bytes; `working_set`: A+B+C bytes; `l2_bytes`: the GPU's L2."""
    floor, why = DRAM_ABSOLUTE_TOLERANCE_BYTES, "1 MiB"
    if 0 < working_set <= l2_bytes and DRAM_WORKING_SET_SHARE * working_set > floor:
        floor, why = DRAM_WORKING_SET_SHARE * working_set, "1/3 of A+B+C, which fit in L2"
    allowed = max(DRAM_RELATIVE_TOLERANCE * max(abs(cupti), abs(ncu_value)), floor)
    return (
        f"within {DRAM_RELATIVE_TOLERANCE:.0%} or {floor / 2**20:.3g} MiB ({why})",
        abs(cupti - ncu_value) <= allowed,
    )


def agreement_rule(metric, cupti, ncu_value, working_set=0, l2_bytes=0, exceptions=None):
    """(rule, agree) for one catalogue metric: exact counts equal; occupancy and DRAM bytes within
    their tolerances; the rest shown (agree None). `exceptions`: metric name -> why this
    benchmark's value of it is not required (spin_reason, uneven_residency)."""
    why = (exceptions or {}).get(metric.name)
    if why:
        return f"shown: {why}", None
    if metric.stability == "exact":
        return "equal", cupti == ncu_value
    if metric.name == "achieved_occupancy":
        return (f"within {OCCUPANCY_TOLERANCE_POINTS:g} point", abs(cupti - ncu_value) <= OCCUPANCY_TOLERANCE_POINTS)
    if metric.name.startswith("dram_") and metric.name.endswith("_bytes"):
        return dram_rule(cupti, ncu_value, working_set, l2_bytes)
    if metric.name == "l2_hit_rate":
        return L2_HIT_RATE_WHY, None
    return "shown", None


def exceptions_for(row, sm_count=0):
    """metric name -> why it is not required for this benchmark (empty for most)."""
    out = {}
    spins = spin_reason(row)
    if spins:
        out.update({name: f"{spins}; {what}" for name, what in SPIN_DEPENDENT.items()})
    uneven = uneven_residency(row, sm_count)
    if uneven:
        out["achieved_occupancy"] = uneven
    return out


def l2_read_rows(cupti, ncu_values):
    """The L2 read rows of one benchmark from its hit, miss and sector counts on both sides:
    l2_read_lookup_hit_rate = hits / (hits + misses), in %, the share of the L2 lookups for the
    SMs' reads that hit (bounded by 100 by construction; required); l2_read_hit_rate = hits /
    sectors read (the catalogue's) and l2_read_lookups_per_sector = (hits + misses) / sectors
    read (1 where every sector read is looked up once), both shown."""
    catalogue = load_catalogue()
    keys = (L2_READ_HITS, L2_READ_MISSES, L2_READ_SECTORS)
    a = [_number(cupti.get(key)) for key in keys]
    b = [_number(ncu_values.get(catalogue[key].cupti)) for key in keys]
    rows = []
    for name, of in (
        ("l2_read_lookup_hit_rate", lambda h, m, s: 100 * h / (h + m)),
        ("l2_read_hit_rate", lambda h, m, s: h / s),
        ("l2_read_lookups_per_sector", lambda h, m, s: (h + m) / s),
    ):
        try:
            x, y = of(*a), of(*b)
        except ZeroDivisionError:
            continue
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        if name == "l2_read_lookup_hit_rate":
            rule = f"within {L2_READ_HIT_TOLERANCE_POINTS:g} points"
            agree = abs(x - y) <= L2_READ_HIT_TOLERANCE_POINTS
        else:
            rule, agree = "shown", None
        rows.append((name, x, y, rule, agree))
    return rows


def working_set_of(benchmark):
    """A, B and C once each, for a benchmark name; 0 when the name is not one of ours."""
    parsed = names.parse_benchmark(benchmark)
    return working_set_bytes(parsed) if parsed else 0


def crosscheck(cupti_rows, ncu_by_benchmark, l2_bytes=0, sm_count=0):
    """Per benchmark and metric: CUPTI value, ncu value, the rule and whether they agree.
    `cupti_rows`: benchmark name -> its results row (catalogue short names, launch facts, `spins`);
    `ncu_by_benchmark`: name without /manual_time -> ncu metric name -> value; `l2_bytes` and
    `sm_count`: the GPU's (the results context), for the DRAM and occupancy rules."""
    catalogue = {m.cupti: m for m in load_catalogue().values() if m.kind == "metric"}
    table = []
    for name, cupti in cupti_rows.items():
        ncu_values = ncu_by_benchmark.get(names.strip_manual_time(name))
        if not ncu_values:
            continue
        exceptions = exceptions_for(cupti, sm_count)
        for cupti_name, metric in catalogue.items():
            if metric.name not in cupti or cupti_name not in ncu_values:
                continue
            a, b = cupti[metric.name], ncu_values[cupti_name]
            if a is None or a != a:  # NaN: this benchmark has no such counter
                continue
            rule, agree = agreement_rule(metric, a, b, working_set_of(name), l2_bytes, exceptions)
            table.append({"benchmark": name, "metric": metric.name, "cupti": a, "ncu": b, "rule": rule, "agree": agree})
        for metric, a, b, rule, agree in l2_read_rows(cupti, ncu_values):
            table.append({"benchmark": name, "metric": metric, "cupti": a, "ncu": b, "rule": rule, "agree": agree})
    return table


def classified(cupti_rows, sm_count=0):
    """(benchmark, reason) of every benchmark with counters the rule does not require, and why."""
    out = []
    for name, row in cupti_rows.items():
        for why in dict.fromkeys(filter(None, (spin_reason(row), uneven_residency(row, sm_count)))):
            out.append((names.strip_manual_time(name), why))
    return out


def agreement_markdown(table, classes=()):
    """The CUPTI-vs-ncu table, the benchmarks classified out of some rules, and the tally."""
    lines = ["| benchmark | metric | CUPTI | ncu | rule | agree |", "|---|---|---:|---:|---|---|"]
    for row in table:
        agree = {True: "yes", False: "NO", None: "-"}[row["agree"]]
        lines.append(
            f"| {names.strip_manual_time(row['benchmark'])} | {row['metric']} | "
            f"{row['cupti']:.6g} | {row['ncu']:.6g} | {row['rule']} | {agree} |"
        )
    if classes:
        lines += ["", "Classified (their rows say which counters are shown instead of required):", ""]
        lines += [f"- {name}: {why}" for name, why in classes]
    checked = [r for r in table if r["agree"] is not None]
    lines.append(
        f"\n{sum(r['agree'] for r in checked)} of {len(checked)} required agreements hold "
        f"({len({r['benchmark'] for r in table})} benchmarks)."
    )
    return "\n".join(lines)
