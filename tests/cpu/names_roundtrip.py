#!/usr/bin/env python3
"""The names gemm-bench writes, read back by the Python tools' parser (one grammar, two readers).

Usage: names_roundtrip.py GEMM_BENCH
Runs `GEMM_BENCH --list --tags=all` over an odd and a square shape (no GPU needed) and checks,
for every listed benchmark, that scripts/gemm_study/data/names.py parses it, that the parts rebuild
the same name, that the variant matches the variant grammar, and that the NVTX range name
converts back. Exit 0 when all do, 1 otherwise; one line per failure.
"""

import os
import subprocess
import sys
from pathlib import Path

CHECKOUT_PACKAGE = str(Path(__file__).resolve().parents[2] / "scripts")

try:
    from gemm_study.data import names
    from gemm_study.data.shape import Shape
except ModuleNotFoundError:
    # CTest runs this with the system python3, where the tools may not be installed: run again
    # with the checkout's package importable (once: a second failure is a real one).
    if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] == CHECKOUT_PACKAGE:
        raise
    path = os.pathsep.join(p for p in (CHECKOUT_PACKAGE, os.environ.get("PYTHONPATH")) if p)
    os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]], dict(os.environ, PYTHONPATH=path))


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    listing = subprocess.run(
        [argv[1], "--list", "--tags=all", "--shapes=7x13x5,4096x4096x4096"], capture_output=True, text=True, check=False
    )
    if listing.returncode != 0:
        print(f"FAIL gemm-bench --list exited {listing.returncode}: {listing.stderr.strip()[:300]}")
        return 1
    spec = names.load_spec()
    rows = [line.split("\t")[0] for line in listing.stdout.splitlines() if line.strip()]
    failures = 0
    for name in rows:
        parsed = names.parse_benchmark(name + spec.manual_time_suffix, spec)
        problem = None
        if parsed is None:
            problem = "not parsed"
        else:
            shape = Shape(parsed["m"], parsed["n"], parsed["k"])
            rebuilt = names.benchmark_name(parsed["precision"], parsed["variant"], shape, parsed["end_to_end"], spec)
            if rebuilt != name:
                problem = f"rebuilt as {rebuilt}"
            elif not spec.variant.match(parsed["variant"]):
                problem = f"variant {parsed['variant']} breaks the variant grammar"
            elif names.benchmark_from_nvtx(names.nvtx_range(name, spec), spec) != name:
                problem = "NVTX range name does not convert back"
        if problem:
            failures += 1
            print(f"FAIL {name}: {problem}")
    print(f"{len(rows) - failures} passed, {failures} failed")
    return 0 if rows and failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
