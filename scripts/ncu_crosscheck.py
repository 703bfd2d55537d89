#!/usr/bin/env python3
"""Cross-check CUPTI's counters (gemm-bench) with Nsight Compute's on the same kernels.

Runs gemm-bench with counters on the seed variants at one shape, then ncu (--clock-control
none, the catalogue's metrics) on the same benchmarks, and prints per benchmark and metric
both values. Counts must be equal; achieved occupancy within one percentage point; DRAM
bytes, L2 hit rate and durations are shown. Exit status 1 if any required agreement fails.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_study import ncu  # noqa: E402
from gemm_study.errors import InputError, run_cli  # noqa: E402
from gemm_study.results import load_results, to_frame  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEED_VARIANTS = (r"naive_row/block:(8x8|16x16|32x32)|naive_col/block:(8x8|16x16|32x32)|"
                 r"naive_tile/tile:16x16|grid_stride/threads:256|shared/tile:(8|16|32)|"
                 r"shared_col/tile:(8|16|32)|shared_col_padded/tile:(8|16|32)|"
                 r"shared_dynamic/tile:(8|16|32)|shared_register/tile:(8|16|32)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="1024x1024x1024")
    parser.add_argument("--precisions", default="fp32,fp64")
    parser.add_argument("--filter", default=SEED_VARIANTS, help="regex over variant names")
    parser.add_argument("--bench", default=str(ROOT / "build" / "bench" / "gemm-bench"))
    parser.add_argument("--out", type=Path, required=True, help="folder for the JSON, report and table")
    args = parser.parse_args(argv)
    m, n, k = ncu.check_shape(args.shape).split("x")
    args.out.mkdir(parents=True, exist_ok=True)
    bench_filter = f"^gemm/(fp32|fp64)/({args.filter})/m:{m}/n:{n}/k:{k}(/manual_time)?$"
    results = args.out / f"cupti_{args.shape}.json"
    subprocess.run([args.bench, f"--shapes={args.shape}", f"--precisions={args.precisions}",
                    "--end-to-end=off", "--min-time=0.02", f"--benchmark_filter={bench_filter}",
                    f"--benchmark_out={results}", "--benchmark_out_format=json"],
                   check=True, stdout=subprocess.DEVNULL)
    frame = to_frame(load_results(results)[1])
    cupti = {row["name"]: row.to_dict() for _, row in frame.iterrows()}
    rep, cmd = ncu.run_session(args.bench, bench_filter, args.shape, args.precisions,
                               args.out / f"ncu_{args.shape}")
    text = ncu.export_raw(rep, ncu.default_metrics())
    (args.out / f"ncu_{args.shape}.csv").write_text(text)
    table = ncu.crosscheck(cupti, ncu.sum_by_benchmark(ncu.parse_raw_csv(text)))
    if not table:
        raise InputError("no benchmark was measured by both CUPTI and ncu")
    lines = [f"CUPTI (gemm-bench counters) vs ncu, shape {args.shape}, ncu --clock-control none.",
             f"ncu command: {' '.join(cmd)}", "", ncu.agreement_markdown(table)]
    failures = sum(r["agree"] is False for r in table)
    report = "\n".join(lines) + "\n"
    (args.out / "ncu_crosscheck.md").write_text(report)
    (args.out / "ncu_crosscheck.json").write_text(json.dumps(table, indent=2))
    print(report[-4000:])
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(run_cli(main))
    except (RuntimeError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
