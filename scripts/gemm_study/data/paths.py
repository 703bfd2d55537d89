"""Where the checkout is: the tools read the files the C++ harness compiles (the name grammar,
the metric catalogue, the family manifest) from the same tree, so both sides agree by
construction. The package lives at scripts/gemm_study/ of the checkout, editable-installed."""

from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[3]
DEFAULT_BENCH = CHECKOUT / "build" / "bench" / "gemm-bench"
