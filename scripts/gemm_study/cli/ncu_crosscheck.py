"""Cross-check CUPTI's counters (gemm-bench) with Nsight Compute's on the same kernels.

Selects the benchmarks tagged `crosscheck` at one shape, runs gemm-bench with counters on them,
then ncu on the same benchmarks in the L2 state gemm-bench's counter passes start with, reads
the reports back (with Nsight Compute's own reader where it is installed), and writes per
benchmark and metric both values and whether they agree. docs/nsight-compute.md ("The
cross-check") states the rule and how each side's state is matched. Exit status 1 if a required
agreement fails, 2 for bad input or no GPU.
"""

import json
from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data import names
from gemm_study.data.errors import ExternalToolError, InputError, run_cli, writing
from gemm_study.data.paths import CHECKOUT, DEFAULT_BENCH
from gemm_study.data.results import context_value
from gemm_study.ncu import crosscheck, crosscheck_cache
from gemm_study.ncu.crosscheck_run import CROSSCHECK_TAG, measure, reread


def main(argv=None):
    parser = command_parser("gemm-ncu-crosscheck", __doc__)
    parser.add_argument("--shape", default="1024x1024x1024")
    parser.add_argument("--precisions", default="fp32,fp64")
    parser.add_argument("--tags", default=CROSSCHECK_TAG, help="select the variants having any of these tags")
    parser.add_argument(
        "--also-tagged",
        default="",
        help="of those, only the ones also having any of these tags, e.g. ladder,tensor_core",
    )
    parser.add_argument("--limit", type=int, default=0, help="check only the first N selected benchmarks")
    parser.add_argument("--bench", default=str(DEFAULT_BENCH))
    parser.add_argument(
        "--reread",
        type=Path,
        help="apply the rule to an earlier cross-check's folder instead of measuring (no GPU needed)",
    )
    parser.add_argument(
        "--cupti",
        type=Path,
        help="take CUPTI's side from this study's results (the same benchmarks at --shape) instead of "
        "running gemm-bench again",
    )
    parser.add_argument(
        "--reuse-if-unchanged",
        action="store_true",
        help="if --out holds a cross-check measured with the same driver, CUDA, GPU, metric catalogue, "
        "collection code and selection (its key), apply the rule to those measurements instead of running ncu",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for the JSON, report and table")
    args = parser.parse_args(argv)
    names.check_shape(args.shape)
    if args.limit < 0:
        raise InputError(f"--limit {args.limit}: expected a count >= 0")
    key = crosscheck_cache.recorded_key(args.reread) if args.reread else crosscheck_cache.key(args, CHECKOUT)
    if not args.reread and args.reuse_if_unchanged:
        kept = crosscheck_cache.kept(args.out, key)
        if kept is not None:
            # The measurements stand; the rule (this code) is applied to them again.
            print(
                f"cross-check reused: the measurements in {args.out} were made with the same key "
                f"({', '.join(f'{k}={v}' for k, v in key.items() if k != 'files')}); "
                "a change of driver, CUDA, GPU, catalogue or collection code measures again"
            )
            args.reread, key = args.out, kept
    context, cupti, measured, ran = reread(args) if args.reread else measure(args)
    sms = context_value(context, "gpu_sm_count", default=0)
    table = crosscheck.crosscheck(cupti, measured, context_value(context, "gpu_l2_bytes", default=0), sms)
    if not table:
        raise ExternalToolError("no benchmark was measured by both CUPTI and ncu")
    classes = crosscheck.classified(cupti, sms)
    readers = sorted({session["read_with"] for session in ran})
    lines = [
        f"CUPTI (gemm-bench counters, L2 {context.get('l2_state')}) vs ncu, shape {args.shape}, "
        f"ncu --clock-control none; {len(cupti)} benchmarks tagged {args.tags}. DRAM bytes and the L2 "
        f"counters from application-replay sessions in the L2 state each benchmark's counter passes "
        f"start with (docs/nsight-compute.md). ncu's values read with {' and '.join(readers)}.",
        *(f"ncu command: {' '.join(s['command'])}" for s in ran if "command" in s),
        *([f"Reread from {args.reread}: {', '.join(s['report'] for s in ran)}."] if args.reread else []),
        "",
        crosscheck.agreement_markdown(table, classes),
    ]
    report = "\n".join(lines) + "\n"
    status = 1 if any(r["agree"] is False for r in table) else 0
    recorded = {
        "l2_state": context.get("l2_state"),
        "cache_control": ran[0].get("cache_control"),
        "sessions": ran,
        "classified": [{"benchmark": name, "why": why} for name, why in classes],
        "rows": table,
        "status": status,
    }
    if key is not None:
        recorded["key"] = key if args.reread else crosscheck_cache.completed(key, context)
    with writing(args.out):
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "ncu_crosscheck.md").write_text(report)
        (args.out / "ncu_crosscheck.json").write_text(json.dumps(recorded, indent=2))
    print(report[-4000:])
    return status


def run():
    return run_cli(main)
