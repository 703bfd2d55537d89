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
  gemm-ncu-cache-states --shape 1536x1536x1536 --precisions fp64 --out xcheck/cache_states
"""

import json
import sys
from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data import names
from gemm_study.data.errors import InputError, run_cli, writing
from gemm_study.data.paths import DEFAULT_BENCH
from gemm_study.data.results import load_frame
from gemm_study.ncu import crosscheck_run as ncu_crosscheck
from gemm_study.ncu import session as ncu
from gemm_study.ncu.cache_states import (
    CUPTI_WAYS,
    DEFAULT_FILTER,
    NCU_STATES,
    cupti_bytes,
    findings,
    markdown,
    ncu_bytes,
)


def main(argv=None):
    parser = command_parser("gemm-ncu-cache-states", __doc__)
    parser.add_argument("--shape", default="1536x1536x1536")
    parser.add_argument("--precisions", default="fp64")
    parser.add_argument("--filter", default=DEFAULT_FILTER, help="regex over benchmark names")
    parser.add_argument("--bench", default=str(DEFAULT_BENCH))
    parser.add_argument(
        "--bench-warm",
        help="a second gemm-bench whose counter passes each follow an "
        "unprofiled launch (e.g. built at an earlier revision)",
    )
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
    listing = ncu_crosscheck.run_bench(
        args,
        "--list",
        f"--shapes={args.shape}",
        f"--precisions={args.precisions}",
        "--end-to-end=off",
        f"--benchmark_filter={args.filter}",
    )
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
    (args.out / "cache_states.json").write_text(
        json.dumps(
            {
                "shape": args.shape,
                "precisions": args.precisions,
                "l2_bytes": l2_bytes,
                "states": {label: {n: list(v) for n, v in by.items()} for label, by in states.items()},
                "findings": findings(states, benchmarks),
            },
            indent=2,
        )
    )
    print(text)
    return 0


def run():
    return run_cli(main)
