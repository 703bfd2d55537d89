#!/usr/bin/env python3
"""Cross-check CUPTI's counters (gemm-bench) with Nsight Compute's on the same kernels.

Selects the benchmarks tagged `crosscheck` at one shape (`gemm-bench --list --tags=crosscheck`),
runs gemm-bench with counters on them, then ncu on the same benchmarks with --clock-control none
and the --cache-control that matches the L2 state gemm-bench collected its counters in
(context l2_state: warm -> none, cold -> all), and prints per benchmark and metric both values.
DRAM bytes and the L2 hit rate come from a second ncu session with application replay (one
pass, no memory save and restore between passes, so L2 holds what the benchmark left there).

Required agreements: exact counts equal; achieved occupancy within 1 percentage point; DRAM
read and write bytes within 10% or 1 MiB, or, where A+B+C fit in L2, within a third of that
working set (half the gap between a warm and a cold launch); L2 hit rate within 5 points.
Other noisy counters and durations are shown. Exit status 1 if a required agreement fails,
2 for bad input or no GPU.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_study import names, ncu  # noqa: E402
from gemm_study.errors import ExternalToolError, InputError, run_cli, writing  # noqa: E402
from gemm_study.manifest import TAGS  # noqa: E402
from gemm_study.results import context_value, load_frame, one_row_per_benchmark  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CROSSCHECK_TAG = TAGS.crosscheck


def run_bench(args, *options):
    """Runs gemm-bench; its stdout, or ExternalToolError with its last error line."""
    cmd = [args.bench, *options]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 2:
        raise InputError(f"gemm-bench refused {' '.join(options)}: {ncu.last_line(proc.stderr)}")
    if proc.returncode != 0:
        raise ExternalToolError(f"gemm-bench exited with {proc.returncode}: {ncu.last_line(proc.stderr + proc.stdout)}")
    return proc.stdout


def select_benchmarks(args):
    """Kernel-only benchmarks tagged crosscheck at the shape, at most --limit of them."""
    listing = run_bench(args, "--list", f"--tags={args.tags}", f"--shapes={args.shape}",
                        f"--precisions={args.precisions}", "--end-to-end=off")
    chosen = [name for name in ncu.parse_listing(listing) if name.startswith("gemm/")]
    if not chosen:
        raise InputError(f"no benchmark tagged {args.tags} at {args.shape} ({args.precisions})")
    return chosen[:args.limit] if args.limit else chosen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="1024x1024x1024")
    parser.add_argument("--precisions", default="fp32,fp64")
    parser.add_argument("--tags", default=CROSSCHECK_TAG, help="select the variants having any of these tags")
    parser.add_argument("--limit", type=int, default=0, help="check only the first N selected benchmarks")
    parser.add_argument("--bench", default=str(ROOT / "build" / "bench" / "gemm-bench"))
    parser.add_argument("--out", type=Path, required=True, help="folder for the JSON, report and table")
    args = parser.parse_args(argv)
    names.check_shape(args.shape)
    if args.limit < 0:
        raise InputError(f"--limit {args.limit}: expected a count >= 0")
    if not ncu.gpu_present():
        raise InputError("no NVIDIA GPU here (nvidia-smi -L lists none): the ncu cross-check needs one")
    tool = ncu.check_tools(args.bench)
    with writing(args.out):
        args.out.mkdir(parents=True, exist_ok=True)
    benchmarks = select_benchmarks(args)
    bench_filter = ncu.exact_filter(benchmarks)
    results = args.out / f"cupti_{args.shape}.json"
    # --uncapped: the write-ups' kernels collect counters only up to 1024^3 by default; here
    # every selected benchmark needs them (the filter runs nothing else).
    run_bench(args, f"--shapes={args.shape}", f"--precisions={args.precisions}", "--end-to-end=off",
              "--uncapped", "--min-time=0.02", f"--benchmark_filter={bench_filter}", f"--benchmark_out={results}",
              "--benchmark_out_format=json")
    context, frame = load_frame(results)
    cache_control = ncu.cache_control_for(context.get("l2_state"))
    frame = one_row_per_benchmark(frame)
    cupti = {row["name"]: row.to_dict() for _, row in frame.iterrows()}
    cache_metrics = ncu.cache_state_metrics()
    counts_metrics = [m for m in ncu.default_metrics() if m not in cache_metrics]
    measured, commands = {}, []
    for stem, metrics, replay in ((f"ncu_{args.shape}", counts_metrics, "kernel"),
                                  (f"ncu_{args.shape}_cache", cache_metrics, "application")):
        rep, cmd = ncu.run_session(args.bench, bench_filter, args.shape, args.precisions, args.out / stem,
                                   metrics=metrics, ncu=tool, cache_control=cache_control,
                                   replay_mode=replay)
        text = ncu.export_raw(rep, metrics, tool)
        (args.out / f"{stem}.csv").write_text(text)
        measured = ncu.merge_by_benchmark(measured, ncu.sum_by_benchmark(ncu.parse_raw_csv(text)))
        commands.append(cmd)
    l2_bytes = context_value(context, "gpu_l2_bytes", default=0)
    table = ncu.crosscheck(cupti, measured, l2_bytes)
    if not table:
        raise ExternalToolError("no benchmark was measured by both CUPTI and ncu")
    lines = [f"CUPTI (gemm-bench counters, L2 {context.get('l2_state')}) vs ncu, shape {args.shape}, "
             f"ncu --clock-control none --cache-control {cache_control}; {len(benchmarks)} benchmarks "
             f"tagged {args.tags}. DRAM bytes and L2 hit rate from the second session "
             f"(application replay: one pass, L2 as the benchmark left it).",
             *(f"ncu command: {' '.join(cmd)}" for cmd in commands), "", ncu.agreement_markdown(table)]
    failures = sum(r["agree"] is False for r in table)
    report = "\n".join(lines) + "\n"
    (args.out / "ncu_crosscheck.md").write_text(report)
    (args.out / "ncu_crosscheck.json").write_text(json.dumps(
        {"cache_control": cache_control, "l2_state": context.get("l2_state"), "rows": table}, indent=2))
    print(report[-4000:])
    return 1 if failures else 0


def cli():
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
