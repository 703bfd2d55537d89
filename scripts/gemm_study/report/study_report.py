"""The study's report.md and the tables beside it (results.csv, account.json, ladder_steps.csv),
section by section: the summary and contents, the ladders, the ceilings and roofline, every
variant, the tile sweeps, seed 001's series, end-to-end times, the write-ups' tables, the
CUPTI-vs-ncu agreement and the time breakdown. `args` is gemm-report's parsed command line
(out, ncu, ncu_crosscheck, command)."""

import json
import re

import numpy as np
import pandas as pd

from gemm_study.analysis import account, ceilings, ladder
from gemm_study.data.errors import InputError
from gemm_study.data.formatting import markdown_table, number
from gemm_study.data.manifest import TAGS
from gemm_study.data.results import context_value, has_tag, load_frame, one_row_per_benchmark, shapes_by_size
from gemm_study.ncu import session as ncu
from gemm_study.report import (
    ladder_figure,
    ladder_report,
    roofline,
    seed_series,
    seeds,
    stages,
    tile_sweep,
    warp_states,
)

OVERVIEW_COLUMNS = [
    "variant",
    "gflops",
    "pct_of_same_arithmetic",
    "account_limiter",
    "account_explained",
    "speedup_vs_naive",
    "speedup_vs_cpu",
    "gld_sectors_per_request",
    "smem_ld_wavefronts_per_request",
    "achieved_occupancy",
    "theoretical_occupancy",
    "registers_per_thread",
]


OVERVIEW_HEADERS = {
    "pct_of_same_arithmetic": "% of cuBLAS (same arithmetic)",
    "account_limiter": "limiter",
    "account_explained": "explained",
}


# The tile tables: the SASS-instrumented columns (wavefronts per request) stop at the counter cap,
# the hardware ones (smem_wavefronts, sectors, occupancy, L2, DRAM, the account) go on at every size.
COUNTER_COLUMNS = [
    "variant",
    "shape",
    "gflops",
    "account_limiter",
    "account_explained",
    "gld_sectors",
    "gld_sectors_per_request",
    "smem_wavefronts",
    "smem_ld_wavefronts_per_request",
    "smem_ld_bank_conflicts",
    "achieved_occupancy",
    "theoretical_occupancy",
    "registers_per_thread",
    "smem_per_block_bytes",
    "dram_read_bytes",
    "l2_read_hit_rate",
    "l2_hit_rate",
]


SCALING_COLUMNS = [
    "variant",
    "precision",
    "shape",
    "median_ms",
    "gflops",
    "speedup_vs_cpu",
    "warps_launched",
    "efficiency",
]


NCU_FOLDER = "ncu"


def ncu_agreement(kernel, exports, l2_bytes=0, sm_count=0):
    by_benchmark = {}
    for path in exports:
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        # Several exports of one run (counts, and the cache-state session) add up per benchmark.
        by_benchmark = ncu.merge_by_benchmark(by_benchmark, ncu.sum_by_benchmark(ncu.parse_raw_csv(path.read_text())))
    # As the cross-check script gives them: the variant fact `spins` a plain bool (False where the
    # results did not record it), the GPU's SM count for the occupancy rules.
    cupti = {row["name"]: {**row.to_dict(), "spins": bool(row.get("spins") == 1)} for _, row in kernel.iterrows()}
    table = ncu.crosscheck(cupti, by_benchmark, l2_bytes, sm_count)
    if not table:
        return "No benchmark of the results appears in the ncu exports."
    return ncu.agreement_markdown(table)


def load_kernel_runs(path):
    """(context, kernel rows enriched, end-to-end rows, failed rows): one row per benchmark."""
    context, frame = load_frame(path)
    frame = one_row_per_benchmark(frame)
    errors = frame[frame.error.notna()]
    frame = frame[frame.error.isna()]
    if "median_ms" not in frame or frame.empty:
        raise InputError(f"{path}: no successful gemm benchmark with timing counters")
    kernel = seeds.enrich(frame[~frame.end_to_end], context)
    return context, kernel, frame[frame.end_to_end], errors


def header(context, results, command, table):
    md = [f"# GEMM study on {context.get('gpu_name', 'unknown GPU')}", ""]
    md.append(f"Source: `{results.name}`" + (f", produced by `{command}`" if command else "") + ".")
    md.append(
        f"GPU: {context.get('gpu_name')} (cc {context.get('gpu_compute_capability')}, "
        f"{context.get('gpu_sm_count')} SMs, max SM clock {context.get('gpu_max_sm_clock_mhz')} MHz), "
        f"driver {context.get('cuda_driver_version')}, CUDA runtime {context.get('cuda_runtime_version')}, "
        f"revision {context.get('git_revision')}."
    )
    md.append(f"Timing: {context.get('timing')}. L2: {context.get('l2_state')}. Counters: {context.get('counters')}.")
    if context.get("power_state"):
        md.append(f"Power state: {context.get('power_state')}.")
    peaks = ", ".join(f"{c.label} {number(c.value)} {c.unit}" for c in table.values())
    md.append(f"Ceilings: {peaks or 'not recorded'} (see [Ceilings and the roofline](#ceilings-and-the-roofline)).")
    md.append(
        "\nDefinitions: speedup_vs_naive = time of naive_row with the same block edge (16x16 for "
        "variants without one) / time; speedup_vs_cpu = serial CPU time at the same shape / time "
        "(only where the CPU baseline ran); efficiency (seed 001) = speedup_vs_cpu / min(warps "
        "launched, SMs x max warps per SM), the write-up's 'speedup per wavefront in use', with "
        "the warps the variant's launch facts give. shared_register is the write-up's register "
        "variant: it stages through registers and is not register blocking. Runs with "
        "repetitions are shown as the median over the repetitions.\n"
    )
    return md


def anchor(title):
    """GitHub's anchor of a heading (docs/check_links.py applies the same rule)."""
    return re.sub(r"[^\w\- ]", "", title.replace("`", "").lower()).replace(" ", "-")


def contents(md):
    """The table of contents of the level-2 headings in md."""
    titles = [line[3:] for line in md if line.startswith("## ")]
    return ["## Contents", ""] + [f"- [{t}](#{anchor(t)})" for t in titles] + [""]


def overview_section(kernel, precision):
    data = kernel[kernel.precision == precision]
    shape = shapes_by_size(data)[-1]
    every = data[data["shape"] == shape].sort_values("gflops", ascending=False)
    cols = [c for c in OVERVIEW_COLUMNS if c in every]
    return [
        f"## Every variant, {precision}, {shape}",
        "",
        markdown_table(every, cols, [OVERVIEW_HEADERS.get(c, c) for c in cols]),
        "",
        f"Open any row in Nsight Compute: `{ladder.NCU_COMMAND.format(name='<benchmark name>')}` prints "
        f"the command, or `gemm-ncu-session --variant <variant> --shape {shape} "
        f"--precisions {precision} --set full` runs it.",
        "",
    ]


def pipe_peaks_lines(context):
    """The instruction forms' measured peaks (pipe_peaks.json), as the account uses them."""
    peaks = context.get("pipe_peaks")
    if not isinstance(peaks, dict):
        return []
    lines = [
        "Each instruction form alone in a loop (`bench/pipe_peaks.cu`, `pipe_peaks.json`): warp "
        "instructions and FLOP per SM per SM clock. The account counts the tensor pipe's work with "
        "these. Documented dense tensor peaks, FLOP per SM per clock: "
        + (", ".join(f"{k} {v}" for k, v in ceilings.tensor_flop_per_cycle_doc(context).items()) or "none for this GPU")
        + ".",
        "",
        "| form | SASS | FLOP per warp instruction | warps per SM | FLOP/clk/SM | instructions/clk/SM |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for f in peaks.get("forms", []):
        lines.append(
            f"| {f['form']} | {f.get('sass', '')} | {number(f.get('flop_per_warp_inst'))} | "
            f"{f.get('warps_per_sm', '')} | {number(f.get('flop_per_clk_per_sm'))} | "
            f"{f['inst_per_clk_per_sm']:.4g} |"
        )
    return lines + [""]


def ceilings_section(context, table, kernel, figures):
    lines = [
        "## Ceilings and the roofline",
        "",
        "Compute ceilings at the maximum SM clock; a kernel that runs at a lower clock stays "
        "below them. Each roofline point is a rung or library at the headline shape, under the "
        "roof of the unit it runs on.",
        "",
    ]
    lines += ceilings.markdown(context, table, kernel)
    lines += pipe_peaks_lines(context)
    counters_bw, context_bw = account.dram_bandwidth_check(kernel, context)
    if counters_bw == counters_bw:
        lines += [
            f"DRAM bandwidth from the counters (dram__bytes.sum.peak_sustained x the HBM clock): "
            f"{number(counters_bw)} GB/s; from the context: {number(context_bw)} GB/s.",
            "",
        ]
    for precision in ("fp32", "fp64"):
        shape = roofline.shape_of(kernel, precision)
        if shape is None:
            continue
        frame = roofline.points(kernel, precision, shape, context, table)
        above = roofline.above_ceiling(frame, table, context)
        lines += [
            f"Above its own ceiling ({precision}): {label} at {level}, {number(g)} GFLOP/s over a roof of "
            f"{number(roof)}."
            for label, level, g, roof in above
        ]
        if not above:
            lines.append(f"Every {precision} point ({len(frame)} at {shape}) is under its own ceiling at every level.")
    lines.append("")
    lines += [f"![{p.stem}]({p.name})" for p in figures if p.suffix == ".png"] + [""]
    return lines


def tile_section(kernel, precisions, out):
    md = ["## Tile and block sizes (families tagged tile_sweep)", ""]
    for precision in precisions:
        for family in tile_sweep.tile_sweep_families(kernel):
            data = kernel[(kernel.precision == precision) & (kernel.family == family)]
            if data.empty:
                continue
            data.pivot_table(index="shape", columns="params", values="gflops").to_csv(
                out / f"gflops_{family}_{precision}.csv"
            )
            table = data.sort_values(["m", "tile"])
            cols = [c for c in COUNTER_COLUMNS if c in table]
            headers = [OVERVIEW_HEADERS.get(c, c) for c in cols]
            md += [f"### {family}, {precision}", "", markdown_table(table, cols, headers), ""]
    return md


def scaling_section(kernel):
    """Seed 001's other kernels (tagged cpu, or seeds without a tile sweep, except the
    one-thread-per-block series, which has its own section)."""
    seeds_without_sweep = has_tag(kernel, TAGS.seed) & ~has_tag(kernel, TAGS.tile_sweep)
    threads = pd.to_numeric(kernel.get("threads_per_block", pd.Series(np.nan, index=kernel.index)), errors="coerce")
    scaling = kernel[(has_tag(kernel, TAGS.cpu) | seeds_without_sweep) & (threads != 1)]
    if scaling.empty:
        return []
    cols = [c for c in SCALING_COLUMNS if c in scaling]
    return [
        "## Seed 001: threads, speedup over the serial CPU and efficiency",
        "",
        markdown_table(scaling.sort_values(["precision", "m", "variant"]), cols),
        "",
    ]


def end_to_end_section(e2e):
    if e2e.empty:
        return []
    return [
        "## End to end (host-device copies included, seed 001's other time)",
        "",
        markdown_table(e2e.sort_values(["precision", "m"]), ["variant", "precision", "shape", "median_ms", "gflops"]),
        "",
    ]


def stages_section(results):
    """The study's time breakdown, when run_study.sh left stages.json next to the results."""
    path = results.parent / stages.STAGES_FILE
    if not path.is_file():
        return []
    try:
        recorded = json.loads(path.read_text())
    except json.JSONDecodeError:
        raise InputError(f"{path}: not valid JSON") from None
    return ["## Where the study's time went", "", stages.markdown(recorded), ""]


def ncu_section(args, kernel, context):
    """The CUPTI-vs-ncu cross-check: its long table in ncu/ beside the report, linked, with its tally."""
    if not (args.ncu_crosscheck or args.ncu):
        return []
    folder = args.out / NCU_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["## CUPTI vs Nsight Compute", ""]
    if args.ncu_crosscheck:
        target = folder / "ncu_crosscheck.md"
        text = args.ncu_crosscheck.read_text()
        if args.ncu_crosscheck.resolve() != target.resolve():
            target.write_text(text)
        lines += [
            f"The cross-check of the study's counters against ncu's on the same launches: "
            f"[{NCU_FOLDER}/{target.name}]({NCU_FOLDER}/{target.name}). {tally_line(text)}",
            "",
        ]
    if args.ncu:
        l2_bytes = context_value(context, "gpu_l2_bytes", default=0)
        text = ncu_agreement(kernel, args.ncu, l2_bytes, context_value(context, "gpu_sm_count", default=0))
        if text.startswith("|"):
            (folder / "agreement.md").write_text(text + "\n")
            lines += [
                f"From the given exports ({', '.join(p.name for p in args.ncu)}): "
                f"[{NCU_FOLDER}/agreement.md]({NCU_FOLDER}/agreement.md). {tally_line(text)}",
                "",
            ]
        else:
            lines += [f"From the given exports: {text}", ""]
    return lines


def tally_line(text):
    """The '<n> of <m> required agreements hold ...' line of a cross-check table, or ''."""
    return next((line.strip() for line in reversed(text.splitlines()) if "required agreements" in line), "")


def write_tables(out, kernel, accounts, steps):
    """results.csv (account columns included), account.json and ladder_steps.csv."""
    kernel.drop(columns=["param_values"], errors="ignore").to_csv(out / "results.csv", index=False)
    (out / "account.json").write_text(
        json.dumps(account.as_json(kernel, accounts), indent=1, allow_nan=False, default=_json_number) + "\n"
    )
    ladder_report.steps_table(steps).to_csv(out / "ladder_steps.csv", index=False)


def _json_number(value):
    return float(value) if isinstance(value, (np.floating, np.integer)) else str(value)


def write_report(args, context, kernel, e2e, errors):
    """report.md, the tables and the figures in args.out."""
    args.out.mkdir(parents=True, exist_ok=True)
    kernel, accounts = account.add_columns(kernel, context)
    kernel["pct_of_same_arithmetic"] = ladder.pct_of_same_arithmetic(kernel)
    table = ceilings.ceilings(context, kernel)
    precisions = [p for p in ("fp32", "fp64") if p in set(kernel.precision)]
    ladder_lines, steps = ladder_report.section(kernel, context, table)
    write_tables(args.out, kernel, accounts, steps)

    ladder_figures, roofline_figures = [], []
    for precision in precisions:
        ladder_figures += ladder_figure.figure(kernel, context, args.out, precision, table)
        roofline_figures += roofline.figure(kernel, context, args.out, precision, table)
    l2_bytes = context_value(context, "gpu_l2_bytes", default=np.inf)
    tile_figures = tile_sweep.figures(kernel, args.out, precisions, l2_bytes)
    state_figures = warp_states.figures(kernel, context, args.out, table)
    warp_states.write_json(kernel, args.out)

    body = ladder_report.summary(kernel, context, table, steps)
    body += [f"![{p.stem}]({p.name})" for p in ladder_figures if p.suffix == ".png"] + [""]
    body += ladder_lines
    body += warp_states.section(kernel, context, table)
    body += [f"![{p.stem}]({p.name})" for p in state_figures if p.suffix == ".png"] + [""]
    body += ceilings_section(context, table, kernel, roofline_figures)
    for precision in precisions:
        body += overview_section(kernel, precision)
    body += tile_section(kernel, precisions, args.out)
    body += seed_series.section(kernel, e2e, context)
    body += scaling_section(kernel)
    body += end_to_end_section(e2e)
    body += ["## What moved between neighbouring tile sizes", ""]
    body += [f"- {s}" for s in tile_sweep.step_sentences(kernel, context)]
    body += ["", "## The write-ups' tables on this GPU", ""]
    for section in seeds.seed_comparisons(kernel.assign(end_to_end=False), context):
        body += [section, ""]
    body += ncu_section(args, kernel, context)
    body += stages_section(args.results)
    if not errors.empty:
        body += ["## Benchmarks that failed", ""] + [f"- {r.name}: {r.error}" for r in errors.itertuples()] + [""]
    figures = ladder_figures + state_figures + roofline_figures + tile_figures
    body += ["## Figures", ""] + [f"![{p.stem}]({p.name})" for p in figures if p.suffix == ".png"]
    md = header(context, args.results, args.command, table) + contents(body) + body
    (args.out / "report.md").write_text("\n".join(md) + "\n")
    print(
        f"wrote {args.out / 'report.md'}, results.csv, account.json, ladder_steps.csv, warp_states.json and "
        f"{len(figures)} figure files"
    )
