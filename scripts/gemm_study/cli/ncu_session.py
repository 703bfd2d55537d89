"""Nsight Compute session on chosen gemm-bench benchmarks.

Runs `ncu` over `gemm-bench --profile`, selecting each benchmark's kernels by its NVTX range
(gemm@<benchmark>/timed/), one launch per benchmark. Metrics: the study's catalogue by default,
or --set full / --section NAME. Clocks: --clock-control none by default, so durations compare
with gemm-bench's. Writes <gpu>_<selection>_<shape>_<revision>.ncu-rep plus the raw page's CSV
export and a .json of its kernels next to it, read with Nsight Compute's own report reader
(ncu_report) where it loads, else from the CSV.

Examples:
  gemm-ncu-session --variant shared/tile:16 --shape 1024x1024x1024
  gemm-ncu-session --filter 'naive_(row|col)/block:32x32' --shape 2048x2048x2048 --set full
"""

import json
import os
import re
import subprocess
from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data import names
from gemm_study.data.errors import run_cli, writing
from gemm_study.data.paths import CHECKOUT, DEFAULT_BENCH
from gemm_study.ncu import session as ncu

ROOT = CHECKOUT


def _revision():
    if os.environ.get("GEMM_GIT_REVISION"):
        return os.environ["GEMM_GIT_REVISION"]
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--abbrev=12"], capture_output=True, text=True
    )
    return proc.stdout.strip() or "unknown"


def _gpu():
    try:
        proc = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True
        )
        return ncu.slug(proc.stdout.splitlines()[0].replace("NVIDIA", "")) if proc.stdout else "gpu"
    except (OSError, IndexError):
        return "gpu"


def main(argv=None):
    parser = command_parser("gemm-ncu-session", __doc__)
    pick = parser.add_mutually_exclusive_group(required=True)
    pick.add_argument("--filter", help="regex over variant names, e.g. 'shared/tile:(16|32)'")
    pick.add_argument("--variant", help="one variant, e.g. naive_col/block:32x32")
    parser.add_argument("--shape", required=True, help="MxNxK, e.g. 1024x1024x1024")
    parser.add_argument("--precisions", default="fp32,fp64")
    parser.add_argument("--set", dest="ncu_set", help="an ncu section set, e.g. full")
    parser.add_argument("--section", action="append", default=[], help="an ncu section (repeatable)")
    parser.add_argument("--metrics", help="comma-separated metrics (default: the catalogue)")
    parser.add_argument("--clock-control", default="none", choices=["none", "base"])
    parser.add_argument(
        "--cache-control",
        default="none",
        choices=["none", "all"],
        help="none keeps L2 warm, as gemm-bench times by default; all flushes it (matches gemm-bench --flush-l2)",
    )
    parser.add_argument("--bench", default=str(DEFAULT_BENCH))
    parser.add_argument("--out", type=Path, default=Path("ncu"))
    args = parser.parse_args(argv)
    names.check_shape(args.shape)
    selection = re.escape(args.variant) if args.variant else args.filter
    bench_filter = names.benchmark_filter(("fp32", "fp64"), selection, args.shape)
    tool = ncu.check_tools(args.bench)
    with writing(args.out):
        args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"{_gpu()}_{ncu.slug(args.variant or args.filter)}_{args.shape}_{_revision()}"
    metrics = args.metrics.split(",") if args.metrics else None
    print(f"clock control: {args.clock_control} (ncu's default 'base' locks clocks below gemm-bench's)")
    rep, cmd = ncu.run_session(
        args.bench,
        bench_filter,
        args.shape,
        args.precisions,
        stem,
        metrics,
        args.ncu_set,
        args.section,
        args.clock_control,
        ncu=tool,
        cache_control=args.cache_control,
    )
    print("ran: " + " ".join(f"'{c}'" if any(x in c for x in " |()$^*") else c for c in cmd))
    text = ncu.export_raw(rep, metrics or (None if args.ncu_set or args.section else ncu.default_metrics()), tool)
    rows, reader = ncu.read_kernels(rep, text, tool)
    with writing(args.out):
        Path(str(stem) + ".csv").write_text(text)
        Path(str(stem) + ".json").write_text(
            json.dumps(
                {
                    "command": cmd,
                    "clock_control": args.clock_control,
                    "cache_control": args.cache_control,
                    "read_with": reader,
                    "kernels": rows,
                },
                indent=2,
            )
        )
    print(f"{len(rows)} kernel(s) profiled: {rep} (read with {reader})")
    for row in rows:
        print(f"  {row['benchmark']}: {row['kernel'][:60]}")
    return 0 if rows else 1


def run():
    return run_cli(main)
