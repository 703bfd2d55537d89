"""The cross-check run: gemm-bench's CUPTI counters and ncu's on the same benchmarks (the sessions, the\nrows each side measured, the rule applied; crosscheck.py holds the rule), or an earlier run re-read."""

import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gemm_study.data import names
from gemm_study.data.errors import ExternalToolError, InputError, writing
from gemm_study.data.manifest import TAGS
from gemm_study.data.results import context_value, load_results, one_row_per_benchmark, to_frame
from gemm_study.ncu import crosscheck, crosscheck_cache
from gemm_study.ncu import session as ncu

CROSSCHECK_TAG = TAGS.crosscheck


def run_bench(args, *options):
    """Runs gemm-bench; its stdout, or ExternalToolError with its last error line."""
    cmd = [args.bench, *options]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 2:
        raise InputError(f"gemm-bench refused {' '.join(options)}: {ncu.last_line(proc.stderr)}")
    if proc.returncode != 0:
        raise ExternalToolError(f"gemm-bench exited with {proc.returncode}: {ncu.last_line(proc.stderr + proc.stdout)}")
    return proc.stdout


def select_benchmarks(args):
    """Kernel-only benchmarks tagged crosscheck (and --also-tagged) at the shape, at most --limit."""
    listing = run_bench(
        args,
        "--list",
        f"--tags={args.tags}",
        f"--shapes={args.shape}",
        f"--precisions={args.precisions}",
        "--end-to-end=off",
    )
    also = [t for t in args.also_tagged.split(",") if t]
    chosen = [name for name in ncu.parse_listing(listing, also) if name.startswith("gemm/")]
    if not chosen:
        raise InputError(
            f"no benchmark tagged {args.tags}{' and ' + args.also_tagged if also else ''} "
            f"at {args.shape} ({args.precisions})"
        )
    return chosen[: args.limit] if args.limit else chosen


def launch_of(variant, row, max_threads_per_sm):
    """grid_blocks and blocks_per_sm for a file written before gemm-bench recorded them: the
    variant's grid, and the blocks its theoretical occupancy puts on an SM; {} without them."""
    grid, threads = variant.get("grid"), variant.get("threads_per_block")
    occupancy = row.get("theoretical_occupancy")
    if not (
        isinstance(grid, list)
        and grid
        and isinstance(threads, int)
        and threads > 0
        and isinstance(occupancy, (int, float))
        and max_threads_per_sm > 0
    ):
        return {}
    blocks = 1
    for edge in grid:
        blocks *= int(edge)
    warps_per_block = -(-threads // 32)
    return {"grid_blocks": blocks, "blocks_per_sm": round(occupancy / 100 * max_threads_per_sm / 32 / warps_per_block)}


def cupti_rows(results):
    """(context, benchmark name -> its results row, with the variant fact `spins` (False where
    gemm-bench did not record it) and the launch facts (derived in older files))."""
    context, entries = load_results(results)
    max_threads = context_value(context, "gpu_max_threads_per_sm", default=0)
    facts = {}
    for e in entries:
        variant = e.get("variant") if isinstance(e.get("variant"), dict) else {}
        extra = {"spins": variant.get("spins") is True}
        if "grid_blocks" not in e:
            extra.update(launch_of(variant, e, max_threads))
        facts[names.strip_manual_time(str(e.get("run_name", e.get("name", ""))))] = extra
    frame = one_row_per_benchmark(to_frame(entries, results))
    rows = {}
    for _, row in frame.iterrows():
        rows[row["name"]] = {**row.to_dict(), **facts.get(names.strip_manual_time(row["name"]), {})}
    return context, rows


def sessions(shape, benchmarks, context, l2_bytes):
    """(report stem, metrics, replay mode, cache control, benchmarks) of each ncu session: the
    counts by kernel replay, then the cache-state counters by application replay, one session per
    L2 state the benchmarks' counter passes start with (ncu.counter_pass_cache_control)."""
    cache_metrics = ncu.cache_state_metrics()
    counts = [m for m in ncu.default_metrics() if m not in cache_metrics]
    out = [(f"ncu_{shape}", counts, "kernel", ncu.cache_control_for(context.get("l2_state")), benchmarks)]
    groups = {}
    for name in benchmarks:
        control = ncu.counter_pass_cache_control(context, crosscheck.working_set_of(name), l2_bytes)
        groups.setdefault(control, []).append(name)
    for control, chosen in groups.items():
        suffix = "" if len(groups) == 1 else f"_{control}"
        out.append((f"ncu_{shape}_cache{suffix}", cache_metrics, "application", control, chosen))
    return out


def measure(args):
    """Runs gemm-bench and the ncu sessions; (context, CUPTI rows, ncu values, sessions run)."""
    if not ncu.gpu_present():
        raise InputError("no NVIDIA GPU here (nvidia-smi -L lists none): the ncu cross-check needs one")
    tool = ncu.check_tools(args.bench)
    with writing(args.out):
        args.out.mkdir(parents=True, exist_ok=True)
    benchmarks = select_benchmarks(args)
    results = args.out / f"cupti_{args.shape}.json"
    missing = benchmarks
    if args.cupti:
        # The study's own counters at this shape: what it measured is what ncu is held to.
        missing = crosscheck_cache.copy_rows(args.cupti, benchmarks, results)
        if missing:
            print(
                f"{len(missing)} of {len(benchmarks)} benchmarks lack full counters in {args.cupti}: measured again",
                file=sys.stderr,
            )
    if missing:
        # --uncapped: the write-ups' kernels collect counters only up to 1024^3 by default; here
        # every selected benchmark needs them (the filter runs nothing else).
        fresh = results.with_suffix(".measured.json") if args.cupti else results
        run_bench(
            args,
            f"--shapes={args.shape}",
            f"--precisions={args.precisions}",
            "--end-to-end=off",
            "--uncapped",
            f"--benchmark_filter={ncu.exact_filter(missing)}",
            f"--benchmark_out={fresh}",
            "--benchmark_out_format=json",
        )
        if fresh != results:
            crosscheck_cache.merge_files(results, fresh)
    context, cupti = cupti_rows(results)
    l2_bytes = context_value(context, "gpu_l2_bytes", default=0)
    measured, ran = {}, []
    for stem, metrics, replay, control, chosen in sessions(args.shape, benchmarks, context, l2_bytes):
        rep, cmd = ncu.run_session(
            args.bench,
            ncu.exact_filter(chosen),
            args.shape,
            args.precisions,
            args.out / stem,
            metrics=metrics,
            ncu=tool,
            cache_control=control,
            replay_mode=replay,
        )
        text = ncu.export_raw(rep, metrics, tool)
        (args.out / f"{stem}.csv").write_text(text)
        rows, reader = ncu.read_kernels(rep, text, tool)
        measured = ncu.merge_by_benchmark(measured, ncu.sum_by_benchmark(rows))
        ran.append(
            {
                "report": rep.name,
                "replay_mode": replay,
                "cache_control": control,
                "benchmarks": len(chosen),
                "read_with": reader,
                "command": cmd,
            }
        )
    return context, cupti, measured, ran


def reread(args):
    """The same from an earlier cross-check's folder (--reread): its gemm-bench JSON and its ncu
    reports (read with Nsight Compute's reader, or their CSV exports), without a GPU."""
    results = args.reread / f"cupti_{args.shape}.json"
    if not results.is_file():
        raise InputError(f"{results}: no such file (an earlier cross-check at {args.shape}?)")
    context, cupti = cupti_rows(results)
    measured, ran = {}, []
    with tempfile.TemporaryDirectory() as unpacked:
        # Reports are committed gzipped (an .ncu-rep compresses about 7x): read from a copy.
        reports = sorted(args.reread.glob(f"ncu_{args.shape}*.ncu-rep"))
        for packed in sorted(args.reread.glob(f"ncu_{args.shape}*.ncu-rep.gz")):
            if packed.with_suffix("") not in reports:
                copy = Path(unpacked) / packed.with_suffix("").name
                with gzip.open(packed, "rb") as source, open(copy, "wb") as target:
                    shutil.copyfileobj(source, target)
                reports.append(copy)
        for rep in sorted(reports, key=lambda path: path.name):
            csv_export = args.reread / rep.with_suffix(".csv").name
            rows, reader = ncu.read_kernels(rep, csv_export.read_text() if csv_export.is_file() else "")
            measured = ncu.merge_by_benchmark(measured, ncu.sum_by_benchmark(rows))
            ran.append({"report": rep.name, "read_with": reader})
    if not ran:
        raise InputError(f"{args.reread}: no ncu_{args.shape}*.ncu-rep (or .ncu-rep.gz) in it")
    return context, cupti, measured, ran
