"""Compact markdown tables of a gemm-bench results JSON.

--shape S: the variants tagged `summary` (in the order gemm-bench ran them), or --tags, or an
explicit --variants list (needed for results written before gemm-bench recorded tags), at shape S:
GFLOP/s, % of cuBLAS and the counters that explain each step.

--ladders: the README's ladder table, from the same data and code as the report: per ladder (FP32
and FP64 on the CUDA cores, TF32 and FP64 on the tensor cores) its fastest rung at the headline
shape (the largest square), its GFLOP/s, % of cuBLAS of the same arithmetic, % of the ceiling of
the unit it runs on, its limiter and explained share, and the clock and power state it ran at;
--also FILE@SHAPE adds a column of % of cuBLAS of the same rung family in another file.
--readme README.md writes the table between the README's ladder-table markers instead of printing it.

--suite: the shape suite's table (a run of tests/gpu/shapes_gpu.sh study): per arithmetic, auto's
share of the best anchor (the faster of cuBLAS and cuBLASLt of the same arithmetic) over the
suite's shapes, their geometric mean, how many are below 60%, and the five lowest shapes with the
kernel auto picked there.

Examples: gemm-summary-table reports/h200/results.json --shape 4096x4096x4096
          gemm-summary-table reports/h100-80gb-hbm3/results.json --ladders --readme README.md
          gemm-summary-table reports/h100-80gb-hbm3/shapes/suite.json --suite
"""

from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import InputError, run_cli
from gemm_study.data.formatting import markdown_table
from gemm_study.data.manifest import TAGS
from gemm_study.data.names import check_shape
from gemm_study.data.results import has_tag, load_frame, load_results, one_row_per_benchmark
from gemm_study.report import readme_table, suite_table

DEFAULT_TAGS = TAGS.summary
COLUMNS = [
    "variant",
    "precision",
    "gflops",
    "pct_of_cublas",
    "gld_sectors_per_request",
    "gld_sectors",
    "smem_ld_wavefronts_per_request",
    "achieved_occupancy",
]


def chosen_variants(frame, variants, tags):
    """variant -> its position in the table: the --variants list, else the tagged variants."""
    if variants:
        return {v: i for i, v in enumerate(variants.split(","))}
    tagged = frame[has_tag(frame, *tags.split(","))]
    if tagged.empty:
        raise InputError(
            f"no variant tagged {tags} in the results (results written before gemm-bench "
            "recorded tags need --variants a,b,...)"
        )
    return {v: i for i, v in enumerate(dict.fromkeys(tagged.variant))}


def main(argv=None):
    parser = command_parser("gemm-summary-table", __doc__)
    parser.add_argument("results", type=Path)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--shape", help="MxNxK")
    what.add_argument("--ladders", action="store_true", help="the README's ladder table (see above)")
    what.add_argument(
        "--suite",
        action="store_true",
        help="the shape suite's table (see above): a run of tests/gpu/shapes_gpu.sh study",
    )
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="FILE@SHAPE",
        help="with --ladders: a column of %% of cuBLAS in another results file at a shape",
    )
    parser.add_argument("--readme", type=Path, help="with --ladders: write the table into this README's markers")
    parser.add_argument("--tags", default=DEFAULT_TAGS, help="variants having any of these tags (default summary)")
    parser.add_argument("--variants", help="comma-separated variants, in table order (overrides --tags)")
    args = parser.parse_args(argv)
    if args.ladders:
        return readme_table.main(args)
    if args.also or args.readme:
        raise InputError("--also and --readme go with --ladders")
    if args.suite:
        return suite(args.results)
    check_shape(args.shape)
    frame = one_row_per_benchmark(load_frame(args.results)[1])
    frame = frame[(frame["shape"] == args.shape) & ~frame.end_to_end & frame.error.isna()]
    order = chosen_variants(frame, args.variants, args.tags)
    frame = frame[frame.variant.isin(order)]
    if frame.empty:
        raise InputError(f"no benchmark of shape {args.shape} among the chosen variants")
    frame = frame.assign(order=frame.variant.map(order)).sort_values(["precision", "order"])
    print(markdown_table(frame, [c for c in COLUMNS if c in frame]))
    return 0


def suite(path):
    """Prints the shape suite's table; InputError where the file holds no dispatcher with an anchor."""
    _, entries = load_results(path)
    frame = one_row_per_benchmark(load_frame(path)[1])
    frame = frame[~frame.end_to_end]
    by_arithmetic = suite_table.rows(frame, suite_table.choices(entries))
    if not by_arithmetic:
        raise InputError(f"{path}: no auto or auto_tf32 benchmark with a cuBLAS or cuBLASLt anchor at its shape")
    print(suite_table.markdown(by_arithmetic))
    return 0


def run():
    return run_cli(main)
