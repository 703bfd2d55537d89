#!/usr/bin/env python3
"""The cross-GPU page: two gemm-bench results files (two GPUs), the same variant at the same
shape side by side. For the ladder (the rungs and cuBLAS at the largest shape each precision has
rungs on both) and for every benchmark: the speedup of B over A, the SM clock ratio (at the
clocks each ran at) and the HBM bandwidth ratio, which of the two the speedup moved with, and
whether A's counters (the bottleneck account's limiter, else DRAM and pipe utilization)
predicted it. Files with per-sample clocks and a power state and older files both work.

Example: scripts/cross_gpu.py reports/h100-80gb-hbm3/results.json reports/h200/results.json --out reports/cross_gpu.md
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_study import cross_gpu  # noqa: E402
from gemm_study.errors import run_cli, writing  # noqa: E402
from gemm_study.results import load_frame, one_row_per_benchmark  # noqa: E402


def load(path):
    context, frame = load_frame(path)
    return context, one_row_per_benchmark(frame)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path, help="results JSON of GPU A (the baseline of the ratios)")
    parser.add_argument("b", type=Path, help="results JSON of GPU B")
    parser.add_argument("--out", type=Path, required=True, help="markdown page to write, e.g. reports/cross_gpu.md")
    args = parser.parse_args(argv)
    (context_a, frame_a), (context_b, frame_b) = load(args.a), load(args.b)
    text = cross_gpu.page(context_a, frame_a, context_b, frame_b, str(args.a), str(args.b))
    with writing(args.out):
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


def cli():
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
