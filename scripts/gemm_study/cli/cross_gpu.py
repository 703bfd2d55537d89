"""The cross-GPU page: two gemm-bench results files (two GPUs), the same variant at the same
shape side by side. For the ladder (the rungs and cuBLAS at the largest shape each precision has
rungs on both) and for every benchmark: the speedup of B over A, the SM clock ratio (at the
clocks each ran at) and the HBM bandwidth ratio, which of the two the speedup moved with, and
whether A's counters (the bottleneck account's limiter, else DRAM and pipe utilization)
predicted it. Files with per-sample clocks and a power state and older files both work.

Example: gemm-cross-gpu reports/h100-80gb-hbm3/results.json reports/h200/results.json --out reports/cross_gpu.md
"""

from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import run_cli, writing
from gemm_study.data.results import load_frame, one_row_per_benchmark
from gemm_study.report import cross_gpu


def load(path):
    context, frame = load_frame(path)
    return context, one_row_per_benchmark(frame)


def main(argv=None):
    parser = command_parser("gemm-cross-gpu", __doc__)
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


def run():
    return run_cli(main)
