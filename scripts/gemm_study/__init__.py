"""Python side of gemm-study: read gemm-bench results, report, compare, drive ncu."""
