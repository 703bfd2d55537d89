"""The README's ladder table (summary_table.py --ladders): per ladder its fastest rung at the
headline shape, from the same code as the report (ladder_report), written between the README's
markers so that the README's numbers are regenerated, never typed."""

import math

from gemm_study.analysis import account, ceilings
from gemm_study.data.errors import InputError
from gemm_study.data.formatting import number
from gemm_study.data.names import check_shape
from gemm_study.data.results import load_frame, one_row_per_benchmark
from gemm_study.data.shape import Shape
from gemm_study.report.ladder_report import ShapeLadder, best_rungs, ladder_headline_shape

BEGIN = "<!-- ladder-table:begin -->"
END = "<!-- ladder-table:end -->"


def study(path):
    """(context, kernel rows with the account's columns, ceilings) of a results file."""
    context, frame = load_frame(path)
    frame = one_row_per_benchmark(frame)
    kernel = frame[~frame.end_to_end & frame.error.isna()]
    if kernel.empty:
        raise InputError(f"{path}: no successful kernel benchmark")
    kernel, _ = account.add_columns(kernel, context)
    return context, kernel, ceilings.ceilings(context, kernel)


def _state(row):
    sustained = row.get("sustained")
    if sustained is None or (isinstance(sustained, float) and math.isnan(sustained)):
        return "state not recorded"
    return "sustained" if sustained == 1 else "burst"


def _also(spec):
    path, _, shape = spec.rpartition("@")
    if not path:
        raise InputError(f"--also {spec!r}: expected FILE@MxNxK")
    return path, check_shape(shape)


def _cube(shape):
    dims = Shape.parse(shape)
    return f"{dims.m}³" if dims.m == dims.n == dims.k else shape


def lines(path, also=(), command=""):
    """The block's markdown lines (without the markers)."""
    context, kernel, table = study(path)
    shape = ladder_headline_shape(kernel)
    if shape is None:
        raise InputError(f"{path}: no ladder rung, so no ladder table")
    others = []
    for spec in also:
        other_path, other_shape = _also(spec)
        other_context, other_kernel, other_table = study(other_path)
        views = {
            lad.key: ShapeLadder(other_kernel, lad, other_shape, other_context, other_table)
            for lad, _ in best_rungs(other_kernel, other_context, other_table, other_shape)
        }
        others.append((other_path, other_shape, views))
    head = [
        "ladder",
        "fastest rung",
        "GFLOP/s",
        "% of cuBLAS, same arithmetic",
        "the same in SM cycles",
        "% of its ceiling",
        "limiter (explained)",
        "SM clock, power state",
    ] + [f"at {_cube(s)}: % of cuBLAS" for _, s, _ in others]
    out = [
        f"{context.get('gpu_name', 'unknown GPU')}, {_cube(shape)}, kernel time, L2 {context.get('l2_state', '?')}, "
        "each kernel against cuBLAS measured in the same run:",
        "",
        "| " + " | ".join(head) + " |",
        "|---|---|" + "---:|" * 4 + "---|---|" + "---:|" * len(others),
    ]
    for lad, row in best_rungs(kernel, context, table, shape):
        explained = row.get("account_explained")
        limiter = (
            f"{row['account_limiter']} ({explained:.2f})"
            if isinstance(explained, float) and explained == explained
            else "no account"
        )
        cells = [
            lad.title,
            f"{int(row['rung'])} `{row['variant']}`",
            number(row["gflops"]),
            f"{number(row['pct_of_reference'])}%",
            _percent(row.get("pct_of_reference_cycles")),
            f"{number(row['pct_of_peak'])}%",
            limiter,
            f"{_clock(row)}, {_state(row)}",
        ]
        for _, _, views in others:
            view = views.get(lad.key)
            same = view.rows[view.rows.family == row["family"]] if view is not None else None
            cells.append(f"{number(same.pct_of_reference.iloc[0])}%" if same is not None and len(same) else "")
        out.append("| " + " | ".join(cells) + " |")
    sources = ", ".join([f"`{path}`"] + [f"`{p}` ({_cube(s)})" for p, s, _ in others])
    out += ["", f"From {sources}; written by `{command}`." if command else f"From {sources}."]
    return out


def _percent(x):
    return f"{number(x)}%" if isinstance(x, float) and math.isfinite(x) else "n/a"


def _clock(row):
    """'1,646 MHz (NVML 1,920)' where the SMs counted their clock and NVML read another, else the
    one reading there is."""
    nvml, counted = row.get("sm_clock_mhz"), row.get("sm_clock_counted_mhz")
    if isinstance(counted, float) and counted > 0:
        if isinstance(nvml, float) and nvml > 0 and abs(nvml / counted - 1) > 0.01:
            return f"{number(counted)} MHz (NVML {number(nvml)})"
        return f"{number(counted)} MHz"
    return f"{number(nvml)} MHz"


def write_into(readme, block):
    """Replaces the text between the README's markers with block (lines)."""
    if not readme.is_file():
        raise InputError(f"{readme}: no such file")
    text = readme.read_text()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise InputError(f"{readme}: needs one {BEGIN} line and one {END} line after it")
    before, rest = text.split(BEGIN)
    _, after = rest.split(END)
    readme.write_text(before + BEGIN + "\n" + "\n".join(block) + "\n" + END + after)


def main(args):
    command = "gemm-summary-table " + " ".join(
        [str(args.results), "--ladders"]
        + [f"--also {a}" for a in args.also]
        + ([f"--readme {args.readme}"] if args.readme else [])
    )
    block = lines(args.results, args.also, command)
    if args.readme:
        write_into(args.readme, block)
        print(f"wrote the ladder table into {args.readme}")
    else:
        print("\n".join(block))
    return 0
