#!/usr/bin/env python3
"""The tile-size report: from one gemm-bench results JSON to report.md, CSV tables and figures.

Per family and precision, across tile/block sizes and shapes: GFLOP/s, % of cuBLAS, speedup over
the naive kernel and over the serial CPU, seed 001's efficiency, and the counters (global-load
sectors per request, shared wavefronts per request and bank conflicts, achieved vs theoretical
occupancy, registers, shared memory per block, DRAM bytes); one generated sentence per step
between neighbouring tile sizes; the seeds' tables next to this GPU's numbers; and, with
--ncu-crosscheck, the CUPTI-vs-ncu agreement table.

Example: scripts/report.py reports/h100/results.json --out reports/h100
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_study import ncu, report  # noqa: E402
from gemm_study.errors import InputError, run_cli  # noqa: E402
from gemm_study.results import load_results, to_frame  # noqa: E402

LADDER_COLUMNS = ["variant", "gflops", "pct_of_cublas", "speedup_vs_naive", "speedup_vs_cpu",
                  "gld_sectors_per_request", "smem_ld_wavefronts_per_request",
                  "achieved_occupancy", "theoretical_occupancy", "registers_per_thread"]
COUNTER_COLUMNS = ["variant", "shape", "gflops", "gld_sectors", "gld_sectors_per_request",
                   "smem_ld_wavefronts_per_request", "smem_ld_bank_conflicts",
                   "achieved_occupancy", "theoretical_occupancy", "registers_per_thread",
                   "smem_per_block_bytes", "dram_read_bytes", "l2_hit_rate"]


def ncu_agreement(kernel, exports):
    by_benchmark = {}
    for path in exports:
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        by_benchmark.update(ncu.sum_by_benchmark(ncu.parse_raw_csv(path.read_text())))
    cupti = {row["name"]: row.to_dict() for _, row in kernel.iterrows()}
    table = ncu.crosscheck(cupti, by_benchmark)
    if not table:
        return "No benchmark of the results appears in the ncu exports."
    return ncu.agreement_markdown(table)


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
    context, entries = load_results(args.results)
    frame = to_frame(entries)
    errors = frame[frame.error.notna()]
    frame = frame[frame.error.isna()]
    if "median_ms" not in frame or frame.empty:
        raise InputError(f"{args.results}: no successful gemm benchmark with timing counters")
    args.out.mkdir(parents=True, exist_ok=True)
    kernel = report.enrich(frame[~frame.end_to_end], context)
    kernel.to_csv(args.out / "results.csv", index=False)
    precisions = [p for p in ("fp32", "fp64") if p in set(kernel.precision)]

    md = [f"# GEMM study on {context.get('gpu_name', 'unknown GPU')}", ""]
    md.append(f"Source: `{args.results.name}`" + (f", produced by `{args.command}`" if args.command else "") + ".")
    md.append(f"GPU: {context.get('gpu_name')} (cc {context.get('gpu_compute_capability')}, "
              f"{context.get('gpu_sm_count')} SMs, max SM clock {context.get('gpu_max_sm_clock_mhz')} MHz), "
              f"driver {context.get('cuda_driver_version')}, CUDA runtime {context.get('cuda_runtime_version')}, "
              f"revision {context.get('git_revision')}.")
    md.append(f"Timing: {context.get('timing')}. L2: {context.get('l2_state')}. Counters: {context.get('counters')}.")
    md.append(f"Theoretical peaks: FP32 {context.get('peak_fp32_gflops', '?')} GFLOP/s, FP64 "
              f"{context.get('peak_fp64_gflops', '?')} GFLOP/s.")
    md.append("\nDefinitions: speedup_vs_naive = time of naive_row with the same block edge (16x16 for "
              "variants without one) / time; speedup_vs_cpu = serial CPU time at the same shape / time "
              "(only where the CPU baseline ran); efficiency (seed 001) = speedup_vs_cpu / min(warps "
              "launched, SMs x max warps per SM), the write-up's 'speedup per wavefront in use'. "
              "shared_register is the write-up's register variant: it stages through registers and "
              "is not register blocking.\n")

    for precision in precisions:
        data = kernel[kernel.precision == precision]
        shape = max(data["shape"].unique(), key=lambda s: int(s.split("x")[0]))
        ladder = data[data["shape"] == shape].sort_values("gflops", ascending=False)
        cols = [c for c in LADDER_COLUMNS if c in ladder]
        md += [f"## The ladder, {precision}, {shape}", "", report.markdown_table(ladder, cols), "",
               f"Open any row in Nsight Compute: `scripts/ncu_session.py --variant <variant> --shape {shape} "
               f"--precisions {precision} --set full`.", ""]

    md += ["## Tile and block sizes", ""]
    for precision in precisions:
        for family in report.TILE_FAMILIES:
            data = kernel[(kernel.precision == precision) & (kernel.family == family)]
            if data.empty:
                continue
            pivot = data.pivot_table(index="shape", columns="params", values="gflops")
            pivot.to_csv(args.out / f"gflops_{family}_{precision}.csv")
            table = data.sort_values(["m", "tile"])
            cols = [c for c in COUNTER_COLUMNS if c in table]
            md += [f"### {family}, {precision}", "", report.markdown_table(table, cols), ""]

    scaling = kernel[kernel.family.isin(["single_thread_blocks", "grid_stride", "cpu_serial"])]
    if not scaling.empty:
        cols = [c for c in ["variant", "precision", "shape", "median_ms", "gflops", "speedup_vs_cpu",
                            "warps_launched", "efficiency"] if c in scaling]
        md += ["## Seed 001: threads, speedup over the serial CPU and efficiency", "",
               report.markdown_table(scaling.sort_values(["precision", "m", "variant"]), cols), ""]
    e2e = frame[frame.end_to_end]
    if not e2e.empty:
        md += ["## End to end (host-device copies included, seed 001's other time)", "",
               report.markdown_table(e2e.sort_values(["precision", "m"]),
                                     ["variant", "precision", "shape", "median_ms", "gflops"]), ""]

    md += ["## What moved between neighbouring tile sizes", ""]
    md += [f"- {s}" for s in report.step_sentences(kernel, context)]
    md += ["", "## The write-ups' tables on this GPU", ""]
    for section in report.seed_comparisons(frame, context):
        md += [section, ""]
    if args.ncu_crosscheck:
        if not args.ncu_crosscheck.is_file():
            raise InputError(f"{args.ncu_crosscheck}: no such file")
        md += ["## CUPTI vs Nsight Compute", "", args.ncu_crosscheck.read_text(), ""]
    if args.ncu:
        md += ["## CUPTI vs Nsight Compute (from the given exports)", "", ncu_agreement(kernel, args.ncu), ""]
    if not errors.empty:
        md += ["## Benchmarks that failed", ""] + [f"- {r.name}: {r.error}" for r in errors.itertuples()]
    written = report.figures(frame.assign(**{c: kernel[c] for c in []}), args.out, precisions)
    md += ["", "## Figures", ""] + [f"![{p.stem}]({p.name})" for p in written if p.suffix == ".png"]
    (args.out / "report.md").write_text("\n".join(md) + "\n")
    print(f"wrote {args.out / 'report.md'}, results.csv and {len(written)} figure files")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
