#!/usr/bin/env python3
"""The study's report: from one gemm-bench results JSON to report.md, CSV tables and figures.

Every variant at the largest shape; the ladder (variants tagged ladder/tensor_core, from the
seeds' best kernel to cuBLAS: % of cuBLAS, % of peak, what moved at each step, the ncu command of
each row) and its roofline; per tile_sweep family and precision across tile/block sizes and
shapes: GFLOP/s and the counters, one generated sentence per step between neighbouring tile sizes;
seed 001's speedups and efficiency; the seeds' tables next to this GPU's numbers; and, with
--ncu-crosscheck / --ncu, the CUPTI-vs-ncu agreement. Runs with repetitions show the median.

Example: scripts/report.py reports/h100/results.json --out reports/h100
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_study import ladder, ncu, roofline, seeds, stages, tile_sweep  # noqa: E402
from gemm_study.errors import InputError, run_cli, writing  # noqa: E402
from gemm_study.formatting import markdown_table  # noqa: E402
from gemm_study.manifest import TAGS  # noqa: E402
from gemm_study.results import (context_value, has_tag, load_frame, one_row_per_benchmark,  # noqa: E402
                                 shapes_by_size)

OVERVIEW_COLUMNS = ["variant", "gflops", "pct_of_cublas", "speedup_vs_naive", "speedup_vs_cpu",
                    "gld_sectors_per_request", "smem_ld_wavefronts_per_request",
                    "achieved_occupancy", "theoretical_occupancy", "registers_per_thread"]
COUNTER_COLUMNS = ["variant", "shape", "gflops", "gld_sectors", "gld_sectors_per_request",
                   "smem_ld_wavefronts_per_request", "smem_ld_bank_conflicts",
                   "achieved_occupancy", "theoretical_occupancy", "registers_per_thread",
                   "smem_per_block_bytes", "dram_read_bytes", "l2_hit_rate"]
SCALING_COLUMNS = ["variant", "precision", "shape", "median_ms", "gflops", "speedup_vs_cpu",
                   "warps_launched", "efficiency"]


def ncu_agreement(kernel, exports, l2_bytes=0):
    by_benchmark = {}
    for path in exports:
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        # Several exports of one run (counts, and the cache-state session) add up per benchmark.
        by_benchmark = ncu.merge_by_benchmark(by_benchmark,
                                              ncu.sum_by_benchmark(ncu.parse_raw_csv(path.read_text())))
    cupti = {row["name"]: row.to_dict() for _, row in kernel.iterrows()}
    table = ncu.crosscheck(cupti, by_benchmark, l2_bytes)
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


def header(context, results, command):
    md = [f"# GEMM study on {context.get('gpu_name', 'unknown GPU')}", ""]
    md.append(f"Source: `{results.name}`" + (f", produced by `{command}`" if command else "") + ".")
    md.append(f"GPU: {context.get('gpu_name')} (cc {context.get('gpu_compute_capability')}, "
              f"{context.get('gpu_sm_count')} SMs, max SM clock {context.get('gpu_max_sm_clock_mhz')} MHz), "
              f"driver {context.get('cuda_driver_version')}, CUDA runtime {context.get('cuda_runtime_version')}, "
              f"revision {context.get('git_revision')}.")
    md.append(f"Timing: {context.get('timing')}. L2: {context.get('l2_state')}. Counters: {context.get('counters')}.")
    peaks = ", ".join(f"{c.upper()} {context[k]} GFLOP/s" for c, k in ladder.PEAK_KEYS.items() if k in context)
    md.append(f"Theoretical peaks: {peaks or 'not recorded'}.")
    md.append("\nDefinitions: speedup_vs_naive = time of naive_row with the same block edge (16x16 for "
              "variants without one) / time; speedup_vs_cpu = serial CPU time at the same shape / time "
              "(only where the CPU baseline ran); efficiency (seed 001) = speedup_vs_cpu / min(warps "
              "launched, SMs x max warps per SM), the write-up's 'speedup per wavefront in use', with "
              "the warps the variant's launch facts give. shared_register is the write-up's register "
              "variant: it stages through registers and is not register blocking. Runs with "
              "repetitions are shown as the median over the repetitions.\n")
    return md


def overview_section(kernel, precision):
    data = kernel[kernel.precision == precision]
    shape = shapes_by_size(data)[-1]
    every = data[data["shape"] == shape].sort_values("gflops", ascending=False)
    cols = [c for c in OVERVIEW_COLUMNS if c in every]
    return [f"## Every variant, {precision}, {shape}", "", markdown_table(every, cols), "",
            f"Open any row in Nsight Compute: `{ladder.NCU_COMMAND.format(name='<benchmark name>')}` prints "
            f"the command, or `scripts/ncu_session.py --variant <variant> --shape {shape} "
            f"--precisions {precision} --set full` runs it.", ""]


def tile_section(kernel, precisions, out):
    md = ["## Tile and block sizes (families tagged tile_sweep)", ""]
    for precision in precisions:
        for family in tile_sweep.tile_sweep_families(kernel):
            data = kernel[(kernel.precision == precision) & (kernel.family == family)]
            if data.empty:
                continue
            data.pivot_table(index="shape", columns="params", values="gflops").to_csv(
                out / f"gflops_{family}_{precision}.csv")
            table = data.sort_values(["m", "tile"])
            cols = [c for c in COUNTER_COLUMNS if c in table]
            md += [f"### {family}, {precision}", "", markdown_table(table, cols), ""]
    return md


def scaling_section(kernel):
    """Seed 001's table: the variants it compares (tagged cpu, or seeds without a tile sweep)."""
    seeds_without_sweep = has_tag(kernel, TAGS.seed) & ~has_tag(kernel, TAGS.tile_sweep)
    scaling = kernel[has_tag(kernel, TAGS.cpu) | seeds_without_sweep]
    if scaling.empty:
        return []
    cols = [c for c in SCALING_COLUMNS if c in scaling]
    return ["## Seed 001: threads, speedup over the serial CPU and efficiency", "",
            markdown_table(scaling.sort_values(["precision", "m", "variant"]), cols), ""]


def end_to_end_section(e2e):
    if e2e.empty:
        return []
    return ["## End to end (host-device copies included, seed 001's other time)", "",
            markdown_table(e2e.sort_values(["precision", "m"]),
                                  ["variant", "precision", "shape", "median_ms", "gflops"]), ""]


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="gemm-bench JSON (--benchmark_out)")
    parser.add_argument("--out", type=Path, required=True, help="folder for report.md, CSV and figures")
    parser.add_argument("--ncu-crosscheck", type=Path, help="ncu_crosscheck.md to include")
    parser.add_argument("--ncu", type=Path, action="append", default=[],
                        help="an ncu raw CSV export (ncu -i R --csv --page raw) of the same benchmarks: "
                             "adds a CUPTI-vs-ncu agreement table (repeatable)")
    parser.add_argument("--command", default="", help="the command that produced the results, for the report")
    args = parser.parse_args(argv)
    context, kernel, e2e, errors = load_kernel_runs(args.results)
    if args.ncu_crosscheck and not args.ncu_crosscheck.is_file():
        raise InputError(f"{args.ncu_crosscheck}: no such file")
    with writing(args.out):
        write_report(args, context, kernel, e2e, errors)
    return 0


def write_report(args, context, kernel, e2e, errors):
    """report.md, results.csv, the CSV tables and the figures in args.out."""
    args.out.mkdir(parents=True, exist_ok=True)
    kernel.drop(columns=["param_values"], errors="ignore").to_csv(args.out / "results.csv", index=False)
    precisions = [p for p in ("fp32", "fp64") if p in set(kernel.precision)]

    md = header(context, args.results, args.command)
    for precision in precisions:
        md += overview_section(kernel, precision)
    figures = []
    for precision in precisions:
        md += ladder.section(kernel, context, precision)
        figures += roofline.figure(kernel, context, args.out, precision)
    md += tile_section(kernel, precisions, args.out)
    md += scaling_section(kernel)
    md += end_to_end_section(e2e)
    md += ["## What moved between neighbouring tile sizes", ""]
    md += [f"- {s}" for s in tile_sweep.step_sentences(kernel, context)]
    md += ["", "## The write-ups' tables on this GPU", ""]
    for section in seeds.seed_comparisons(kernel.assign(end_to_end=False), context):
        md += [section, ""]
    if args.ncu_crosscheck:
        md += ["## CUPTI vs Nsight Compute", "", args.ncu_crosscheck.read_text(), ""]
    if args.ncu:
        l2_bytes = context_value(context, "gpu_l2_bytes", default=0)
        md += ["## CUPTI vs Nsight Compute (from the given exports)", "",
               ncu_agreement(kernel, args.ncu, l2_bytes), ""]
    md += stages_section(args.results)
    if not errors.empty:
        md += ["## Benchmarks that failed", ""] + [f"- {r.name}: {r.error}" for r in errors.itertuples()]
    figures += tile_sweep.figures(kernel, args.out, precisions)
    md += ["", "## Figures", ""] + [f"![{p.stem}]({p.name})" for p in figures if p.suffix == ".png"]
    (args.out / "report.md").write_text("\n".join(md) + "\n")
    print(f"wrote {args.out / 'report.md'}, results.csv and {len(figures)} figure files")


def cli():
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
