"""How often each SASS line of a ladder rung runs per warp and k-tile, from Nsight Compute's
source counters, for the rungs whose main loop holds a nested loop: the account's simulation
(analysis/schedule.py) needs the path a warp takes through a k-tile, and where a loop is nested
in the main loop (a rung that loads its tile element by element, in a loop the compiler unrolls
with remainders beside it) the SASS does not give its trip count or which remainders run.

For each such row of the results at the shape (default: the largest square one), runs ncu's
SourceCounters section on its timed launch (gemm-bench --profile, one launch, clocks not
locked), exports the source page (`ncu -i R --csv --page source --print-source sass`; kept as
source/<row>.csv.gz beside --out, with every line's warp-state samples) and divides each line's
executed warp instructions by the warps and k-tiles of the launch (full tiles). The counts are
written per kernel (sass.json's names), so every shape that runs the kernel uses them.

  gemm-source-counters reports/h100/results.json [--shape 4096x4096x4096] [--out FILE] [--dry-run]

Needs sass.json beside the results (the study's sass stage), a GPU and ncu with counter access.
Exit status: 0; 1 where a row's page did not match its SASS; 2 on bad input.
"""

import gzip
import json
import re
import sys
from pathlib import Path

from gemm_study.analysis import latency, sass_loop, schedule
from gemm_study.cli.common import command_parser
from gemm_study.data import names
from gemm_study.data.errors import ExternalToolError, InputError, run_cli, writing
from gemm_study.data.manifest import RUNG_LEVELS
from gemm_study.data.paths import DEFAULT_BENCH
from gemm_study.data.results import SOURCE_COUNTERS_FILE, has_tag, load_frame, one_row_per_benchmark
from gemm_study.ncu import session as ncu
from gemm_study.ncu import source_page
from gemm_study.report.ladder_report import headline_shape


def needs_counts(code):
    """Whether the main loop of `code` holds a loop the simulation cannot place without counts."""
    span = sass_loop.main_loop_span(code) if code else None
    if not span:
        return False
    ranges = schedule._nested_ranges(code, span)
    return any(not schedule._spin([code[i][1] for i in range(a, b + 1)]) for a, b in ranges)


def rows_to_count(context, frame, shape):
    """The rung rows at `shape` whose kernel needs counts, as dicts."""
    sass = context.get("sass")
    if not isinstance(sass, dict):
        raise InputError("no sass.json beside the results: run the study's sass stage first")
    rungs = frame[(frame["shape"] == shape) & has_tag(frame, *RUNG_LEVELS) & frame["error"].isna()]
    out = []
    for _, row in rungs.iterrows():
        row = row.to_dict()
        if needs_counts(sass_loop.code_of(sass, row["precision"], row["variant"], shape)):
            out.append(row)
    return out


def per_warp_ktile(row, context):
    """The warps and k-tiles of the row's launch, full tiles; None where a fact is missing."""
    tiling, dims = latency._tiling(row), latency._shape(row)
    warps = latency._warps_per_block(row, context)
    if not tiling or not dims or not warps > 0:
        return None
    (bm, bn, bk), (m, n, k) = tiling, dims
    return warps * -(-m // bm) * -(-n // bn) * -(-k // bk)


def count_row(row, context, bench, folder, tool):
    """(kernel name, entry) of one row, profiled now; InputError where the page does not match."""
    precision, variant, shape = row["precision"], row["variant"], row["shape"]
    stem = folder / ncu.slug(f"{precision}-{variant}-{shape}")
    rep, cmd = ncu.run_session(
        bench,
        names.benchmark_filter((precision,), re.escape(variant), shape),
        shape,
        precision,
        stem,
        sections=["SourceCounters"],
        ncu=tool,
    )
    text = source_page.export_source(rep, tool)
    with gzip.open(str(stem) + ".csv.gz", "wt") as f:
        f.write(text)
    sass = context["sass"]
    code = sass_loop.code_of(sass, precision, variant, shape)
    per = per_warp_ktile(row, context)
    if per is None:
        raise InputError(f"{precision}/{variant} at {shape}: no tiling or warps per block to count k-tiles by")
    counts = source_page.aligned_counts(code, source_page.parse_source_csv(text), per)
    if counts is None:
        raise InputError(f"{precision}/{variant} at {shape}: the source page does not list the SASS of sass.json")
    kernel = sass["kernels"][f"{precision}/{variant}"][shape]
    return kernel, {
        "variant": f"{precision}/{variant}",
        "shape": shape,
        "command": cmd,
        "page": f"{stem.parent.name}/{stem.name}.csv.gz",
        "per_warp_ktile": counts,
    }


def main(argv=None):
    parser = command_parser("gemm-source-counters", __doc__)
    parser.add_argument("results", type=Path, help="the study's gemm-bench JSON (sass.json beside it)")
    parser.add_argument("--shape", help="MxNxK (default: the largest square shape of the results)")
    parser.add_argument("--out", type=Path, help=f"default: {SOURCE_COUNTERS_FILE} beside the results")
    parser.add_argument("--bench", default=str(DEFAULT_BENCH))
    parser.add_argument("--dry-run", action="store_true", help="list the rows that need counts, run nothing")
    args = parser.parse_args(argv)
    context, frame = load_frame(args.results, source_counters=False)  # the file it rewrites
    frame = one_row_per_benchmark(frame)
    shape = args.shape or headline_shape(frame)  # the largest square, as the report's summary
    names.check_shape(shape)
    if shape not in set(frame["shape"]):
        raise InputError(f"--shape {shape}: the results hold no benchmark at that shape")
    rows = rows_to_count(context, frame, shape)
    for row in rows:
        print(f"{row['precision']}/{row['variant']} at {shape}: a loop nested in its main loop")
    if args.dry_run or not rows:
        print("nothing to profile" if not rows else "dry run: nothing profiled")
        return 0
    out = args.out or args.results.with_name(SOURCE_COUNTERS_FILE)
    folder = out.parent / "source"
    tool = ncu.check_tools(args.bench)
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
    kernels, failed = {}, 0
    for row in rows:
        try:
            with writing(folder):
                kernel, entry = count_row(row, context, args.bench, folder, tool)
        except (InputError, ExternalToolError) as error:
            print(f"not counted: {error}", file=sys.stderr)
            failed += 1
            continue
        kernels[kernel] = entry
        print(f"counted: {entry['variant']} ({len(entry['per_warp_ktile'])} lines)")
    with writing(out):
        out.write_text(json.dumps({"shape": shape, "kernels": kernels}, indent=1) + "\n")
    print(f"wrote {out}")
    return 1 if failed else 0


def run():
    return run_cli(main)
