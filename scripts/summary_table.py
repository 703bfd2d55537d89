#!/usr/bin/env python3
"""A compact markdown table of one shape from a gemm-bench results JSON (the README's table):
GFLOP/s, % of cuBLAS, and the counters that explain each step.

Example: scripts/summary_table.py reports/h200/results.json --shape 4096x4096x4096
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_study.errors import InputError, run_cli  # noqa: E402
from gemm_study.report import markdown_table  # noqa: E402
from gemm_study.results import load_results, to_frame  # noqa: E402

DEFAULT_VARIANTS = ["naive_col/block:32x32", "naive_row/block:32x32", "grid_stride/threads:256",
                    "shared_col/tile:32", "shared_col_padded/tile:32", "shared_dynamic/tile:32",
                    "shared/tile:8", "shared/tile:16", "shared/tile:32", "shared_register/tile:32",
                    "cublas", "cublas_tf32"]
COLUMNS = ["variant", "precision", "gflops", "pct_of_cublas", "gld_sectors_per_request",
           "gld_sectors", "smem_ld_wavefronts_per_request", "achieved_occupancy"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("--shape", required=True, help="MxNxK")
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    args = parser.parse_args(argv)
    frame = to_frame(load_results(args.results)[1])
    frame = frame[(frame["shape"] == args.shape) & ~frame.end_to_end & frame.error.isna()]
    order = {v: i for i, v in enumerate(args.variants.split(","))}
    frame = frame[frame.variant.isin(order)]
    if frame.empty:
        raise InputError(f"no benchmark of shape {args.shape} among the chosen variants")
    frame = frame.assign(order=frame.variant.map(order)).sort_values(["precision", "order"])
    print(markdown_table(frame, [c for c in COLUMNS if c in frame]))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
