#!/usr/bin/env python3
"""DRAM bytes of the same benchmarks in every L2 state each profiler can start a launch in: the
evidence for which state gemm-bench's counter passes start in, and for what moves DRAM bytes
apart when the two profilers disagree.

One shape, a few benchmarks (--filter, a regex over benchmark names; --precisions). CUPTI
(gemm-bench's counters) three ways: as the cross-check runs it (--uncapped: every counter,
SASS-instrumented passes included); with --flush-l2 (every pass after a flush); and with the
hardware counters alone (--counters-cap=1, the write-ups' kernels without their instrumented
passes). Optionally a second gemm-bench (--bench-warm), e.g. one built where every counter pass
follows an unprofiled launch. ncu three ways, on the DRAM and L2 read counters only: application
replay after the --profile warm-up launch (--cache-control none), the same flushed first
(--cache-control all), and kernel replay (memory saved and restored around its passes).

Writes cache_states.md (per benchmark and state the DRAM bytes read and written, MiB, and the
findings: which ncu state each CUPTI way is nearest, and how far apart) and cache_states.json
under --out. Exit status 0 when it ran (the findings are the result), 2 for bad input or no GPU.

Example (the FP64 1536^3 disagreement: A+B+C are 54 MiB, just above the H100's 50 MiB of L2):
  scripts/ncu_cache_states.py --shape 1536x1536x1536 --precisions fp64 --out xcheck/cache_states
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ncu_crosscheck  # noqa: E402
from gemm_study import crosscheck, names, ncu  # noqa: E402
from gemm_study.catalogue import load_catalogue  # noqa: E402
from gemm_study.errors import InputError, run_cli, writing  # noqa: E402
from gemm_study.footprint import compulsory_read_bytes  # noqa: E402
from gemm_study.results import load_frame, one_row_per_benchmark  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# Write-up kernels of every mapping (rows, tiles, shared tiles, grid-stride) and three ladder rungs.
DEFAULT_FILTER = (r"/(naive_row/block:16x16|naive_tile/tile:16x16|shared/tile:32|shared_register/tile:32|"
                  r"grid_stride/threads:256|blocktile_2d/.*|warptile/.*|tuned)/m:")
NCU_STATES = {"ncu warm": ("application", "none"), "ncu flushed": ("application", "all"),
              "ncu kernel replay": ("kernel", "none")}
CUPTI_WAYS = {"CUPTI as cross-checked": ("--uncapped",), "CUPTI --flush-l2": ("--uncapped", "--flush-l2"),
              "CUPTI hardware counters only": ("--counters-cap=1",)}
READ, WRITE = "dram_read_bytes", "dram_write_bytes"
MIB = 2.0 ** 20


def cupti_bytes(args, bench, extra, stem):
    """benchmark -> (read, write) bytes from one gemm-bench run with counters."""
    out = args.out / f"{stem}.json"
    ncu_crosscheck.run_bench(argparse.Namespace(bench=bench), f"--shapes={args.shape}",
                             f"--precisions={args.precisions}", "--end-to-end=off", "--min-time=0.02",
                             *extra, f"--benchmark_filter={args.benchmark_filter}",
                             f"--benchmark_out={out}", "--benchmark_out_format=json")
    _, frame = load_frame(out)
    frame = one_row_per_benchmark(frame)
    return {names.strip_manual_time(r["name"]): (_finite(r.get(READ)), _finite(r.get(WRITE)))
            for _, r in frame.iterrows()}


def ncu_bytes(args, tool, replay, control, stem):
    """benchmark -> (read, write) bytes from one ncu session on the DRAM counters."""
    catalogue = load_catalogue()
    metrics = ncu.cache_state_metrics()
    rep, _ = ncu.run_session(args.bench, args.benchmark_filter, args.shape, args.precisions, args.out / stem,
                             metrics=metrics, ncu=tool, cache_control=control, replay_mode=replay)
    text = ncu.export_raw(rep, metrics, tool)
    rows, _ = ncu.read_kernels(rep, text, tool)
    return {name: (_finite(v.get(catalogue[READ].cupti)), _finite(v.get(catalogue[WRITE].cupti)))
            for name, v in ncu.sum_by_benchmark(rows).items()}


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
            gaps = {label: relative(states[way].get(name, (None,))[0], states[label].get(name, (None,))[0])
                    for label in ("ncu warm", "ncu flushed")}
            gaps = {label: gap for label, gap in gaps.items() if gap is not None}
            if gaps:
                best = min(gaps, key=gaps.get)
                nearest.setdefault(best, []).append(gaps[best])
        parts = [f"{label} for {len(gaps)} (median {statistics.median(gaps):.1%} apart, at most {max(gaps):.1%})"
                 for label, gaps in sorted(nearest.items())]
        if parts:
            out.append(f"DRAM bytes read by {way} are nearest {' and '.join(parts)} of the benchmarks.")
    for a, b, what in (("CUPTI --flush-l2", "ncu flushed", "both flushed: the counters in one known state"),
                       ("CUPTI as cross-checked", "CUPTI hardware counters only",
                        "the SASS-instrumented passes' effect on the DRAM pass"),
                       ("ncu warm", "ncu flushed", "what the L2 a launch leaves is worth to the next"),
                       ("ncu kernel replay", "ncu warm", "kernel replay's save and restore against none")):
        gaps = [relative(states[a].get(n, (None,))[0], states[b].get(n, (None,))[0])
                for n in benchmarks if a in states and b in states]
        gaps = [g for g in gaps if g is not None]
        if gaps:
            out.append(f"{a} against {b} ({what}): DRAM bytes read median {statistics.median(gaps):.1%} "
                       f"apart, at most {max(gaps):.1%}, over {len(gaps)} benchmarks.")
    return out


def markdown(args, states, benchmarks, l2_bytes, argv):
    labels = list(states)
    head = "| benchmark | A+B+C MiB | A+B MiB | " + " | ".join(f"{label} read / write" for label in labels) + " |"
    lines = [f"DRAM bytes read / written, MiB, shape {args.shape}, {args.precisions}; GPU L2 "
             f"{l2_bytes / MIB:.0f} MiB. ncu sessions: --clock-control none, the DRAM and L2 read "
             f"counters only. Command: scripts/ncu_cache_states.py {' '.join(argv)}", "", head, "|---" * (3 + len(labels)) + "|"]
    for name in benchmarks:
        parsed = names.parse_benchmark(name)
        cells = []
        for label in labels:
            read, write = states[label].get(name, (None, None))
            cells.append("-" if read is None else f"{read / MIB:.1f} / {write / MIB:.1f}")
        lines.append(f"| {name} | {crosscheck.working_set_of(name) / MIB:.1f} | "
                     f"{compulsory_read_bytes(parsed) / MIB:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ["", *(f"- {s}" for s in findings(states, benchmarks))]) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="1536x1536x1536")
    parser.add_argument("--precisions", default="fp64")
    parser.add_argument("--filter", default=DEFAULT_FILTER, help="regex over benchmark names")
    parser.add_argument("--bench", default=str(ROOT / "build" / "bench" / "gemm-bench"))
    parser.add_argument("--bench-warm", help="a second gemm-bench whose counter passes each follow an "
                                             "unprofiled launch (e.g. built at an earlier revision)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    names.check_shape(args.shape)
    if not ncu.gpu_present():
        raise InputError("no NVIDIA GPU here (nvidia-smi -L lists none): the ncu sessions need one")
    tool = ncu.check_tools(args.bench)
    if args.bench_warm:
        ncu.check_tools(args.bench_warm, tool)
    with writing(args.out):
        args.out.mkdir(parents=True, exist_ok=True)
    listing = ncu_crosscheck.run_bench(args, "--list", f"--shapes={args.shape}", f"--precisions={args.precisions}",
                                       "--end-to-end=off", f"--benchmark_filter={args.filter}")
    benchmarks = [n for n in ncu.parse_listing(listing) if n.startswith("gemm/")]
    if not benchmarks:
        raise InputError(f"no benchmark matches {args.filter!r} at {args.shape} ({args.precisions})")
    args.benchmark_filter = ncu.exact_filter(benchmarks)
    states = {}
    for label, extra in CUPTI_WAYS.items():
        states[label] = cupti_bytes(args, args.bench, extra, "cupti_" + ncu.slug(label))
    if args.bench_warm:
        states["CUPTI warmed before every pass"] = cupti_bytes(args, args.bench_warm, ("--uncapped",), "cupti_warm")
    for label, (replay, control) in NCU_STATES.items():
        states[label] = ncu_bytes(args, tool, replay, control, ncu.slug(label))
    context, _ = load_frame(args.out / f"cupti_{ncu.slug('CUPTI as cross-checked')}.json")
    l2_bytes = float(context.get("gpu_l2_bytes", 0) or 0)
    text = markdown(args, states, benchmarks, l2_bytes, sys.argv[1:] if argv is None else argv)
    (args.out / "cache_states.md").write_text(text)
    (args.out / "cache_states.json").write_text(json.dumps(
        {"shape": args.shape, "precisions": args.precisions, "l2_bytes": l2_bytes,
         "states": {label: {n: list(v) for n, v in by.items()} for label, by in states.items()},
         "findings": findings(states, benchmarks)}, indent=2))
    print(text)
    return 0


def cli():
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
