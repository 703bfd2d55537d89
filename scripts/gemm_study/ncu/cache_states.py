"""The L2-state probe of DRAM bytes: one benchmark's bytes under each way CUPTI and ncu can leave
the L2 (warm, flushed), and what the differences say."""

import argparse
import statistics

from gemm_study.analysis.footprint import compulsory_read_bytes
from gemm_study.data import names
from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.results import load_frame, one_row_per_benchmark
from gemm_study.ncu import crosscheck
from gemm_study.ncu import crosscheck_run as ncu_crosscheck
from gemm_study.ncu import session as ncu

# Write-up kernels of every mapping (rows, tiles, shared tiles, grid-stride) and three ladder rungs.
DEFAULT_FILTER = (
    r"/(naive_row/block:16x16|naive_tile/tile:16x16|shared/tile:32|shared_register/tile:32|"
    r"grid_stride/threads:256|blocktile_2d/.*|warptile/.*|tuned)/m:"
)


NCU_STATES = {
    "ncu warm": ("application", "none"),
    "ncu flushed": ("application", "all"),
    "ncu kernel replay": ("kernel", "none"),
}


CUPTI_WAYS = {
    "CUPTI as cross-checked": ("--uncapped",),
    "CUPTI --flush-l2": ("--uncapped", "--flush-l2"),
    "CUPTI hardware counters only": ("--counters-cap=1",),
}


READ, WRITE = "dram_read_bytes", "dram_write_bytes"


MIB = 2.0**20


def cupti_bytes(args, bench, extra, stem):
    """benchmark -> (read, write) bytes from one gemm-bench run with counters."""
    out = args.out / f"{stem}.json"
    ncu_crosscheck.run_bench(
        argparse.Namespace(bench=bench),
        f"--shapes={args.shape}",
        f"--precisions={args.precisions}",
        "--end-to-end=off",
        "--min-time=0.02",
        *extra,
        f"--benchmark_filter={args.benchmark_filter}",
        f"--benchmark_out={out}",
        "--benchmark_out_format=json",
    )
    _, frame = load_frame(out)
    frame = one_row_per_benchmark(frame)
    return {
        names.strip_manual_time(r["name"]): (_finite(r.get(READ)), _finite(r.get(WRITE))) for _, r in frame.iterrows()
    }


def ncu_bytes(args, tool, replay, control, stem):
    """benchmark -> (read, write) bytes from one ncu session on the DRAM counters."""
    catalogue = load_catalogue()
    metrics = ncu.cache_state_metrics()
    rep, _ = ncu.run_session(
        args.bench,
        args.benchmark_filter,
        args.shape,
        args.precisions,
        args.out / stem,
        metrics=metrics,
        ncu=tool,
        cache_control=control,
        replay_mode=replay,
    )
    text = ncu.export_raw(rep, metrics, tool)
    rows, _ = ncu.read_kernels(rep, text, tool)
    return {
        name: (_finite(v.get(catalogue[READ].cupti)), _finite(v.get(catalogue[WRITE].cupti)))
        for name, v in ncu.sum_by_benchmark(rows).items()
    }


def _finite(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if value == value and abs(value) != float("inf") else None


def relative(a, b):
    """|a - b| over the larger, or None where either is missing."""
    if a is None or b is None:
        return None
    return abs(a - b) / max(abs(a), abs(b), 1.0)


def findings(states, benchmarks):
    """Sentences on the measured states (states: label -> benchmark -> (read, write))."""
    out = []
    cupti_ways = [label for label in states if not label.startswith("ncu")]
    for way in cupti_ways:
        nearest = {}
        for name in benchmarks:
            gaps = {
                label: relative(states[way].get(name, (None,))[0], states[label].get(name, (None,))[0])
                for label in ("ncu warm", "ncu flushed")
            }
            gaps = {label: gap for label, gap in gaps.items() if gap is not None}
            if gaps:
                best = min(gaps, key=gaps.get)
                nearest.setdefault(best, []).append(gaps[best])
        parts = [
            f"{label} for {len(gaps)} (median {statistics.median(gaps):.1%} apart, at most {max(gaps):.1%})"
            for label, gaps in sorted(nearest.items())
        ]
        if parts:
            out.append(f"DRAM bytes read by {way} are nearest {' and '.join(parts)} of the benchmarks.")
    for a, b, what in (
        ("CUPTI --flush-l2", "ncu flushed", "both flushed: the counters in one known state"),
        (
            "CUPTI as cross-checked",
            "CUPTI hardware counters only",
            "the SASS-instrumented passes' effect on the DRAM pass",
        ),
        ("ncu warm", "ncu flushed", "what the L2 a launch leaves is worth to the next"),
        ("ncu kernel replay", "ncu warm", "kernel replay's save and restore against none"),
    ):
        gaps = [
            relative(states[a].get(n, (None,))[0], states[b].get(n, (None,))[0])
            for n in benchmarks
            if a in states and b in states
        ]
        gaps = [g for g in gaps if g is not None]
        if gaps:
            out.append(
                f"{a} against {b} ({what}): DRAM bytes read median {statistics.median(gaps):.1%} "
                f"apart, at most {max(gaps):.1%}, over {len(gaps)} benchmarks."
            )
    return out


def markdown(args, states, benchmarks, l2_bytes, argv):
    labels = list(states)
    head = "| benchmark | A+B+C MiB | A+B MiB | " + " | ".join(f"{label} read / write" for label in labels) + " |"
    lines = [
        f"DRAM bytes read / written, MiB, shape {args.shape}, {args.precisions}; GPU L2 "
        f"{l2_bytes / MIB:.0f} MiB. ncu sessions: --clock-control none, the DRAM and L2 read "
        f"counters only. Command: gemm-ncu-cache-states {' '.join(argv)}",
        "",
        head,
        "|---" * (3 + len(labels)) + "|",
    ]
    for name in benchmarks:
        parsed = names.parse_benchmark(name)
        cells = []
        for label in labels:
            read, write = states[label].get(name, (None, None))
            cells.append("-" if read is None else f"{read / MIB:.1f} / {write / MIB:.1f}")
        lines.append(
            f"| {name} | {crosscheck.working_set_of(name) / MIB:.1f} | "
            f"{compulsory_read_bytes(parsed) / MIB:.1f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines + ["", *(f"- {s}" for s in findings(states, benchmarks))]) + "\n"
