"""`auto`'s model replayed on sweep JSON without a GPU (gemm_study/tuning/model_replay.py): per
arithmetic, how many held-out shapes its pick serves within 5% of the fastest candidate, how many
suite shapes it does with each shape left out of its own references, and how many picks agree
with what `auto` ran in the sweep; once per distance given to a reference shape of the other
16-byte alignment (kernels/dispatch/shape_model.h's kMisalignedDistance; `inf`: every shape of the
same alignment first, the rule before it) and per number of fastest predictions the first run
times (kernels/dispatch/timed_choice.h's kTimedCandidates; 1: the first prediction alone, as auto
ran before it timed). With more than one timed, a pick agrees where `auto` ran one of them.

  gemm-auto-replay --evaluation evaluation/tune_shapes_*.json.gz [--misaligned 0 0.5 1 inf]
      [--timed 1 2 3 4] [--times auto_times.inc] [--tuned tuned_configs.inc]
      [--references SWEEP.json ...] [--shapes]

--evaluation: a sweep that timed every candidate at the suite's and the judged shapes
(scripts/tune_shapes.sh). --times and --tuned: the model's times and the tuned rung's
configurations as the judged build had them (default: this checkout's kernels/dispatch/
auto_times.inc and kernels/ladder/tuned_configs.inc; .gz snapshots are read as well).
--references: the grids at the suite's shapes from another sweep (default: the evaluation's own).
Exit status: 0, or 2 on bad input (no shape the model can replay).
"""

import math
import sys
from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import InputError, run_cli
from gemm_study.data.results import context_value, load_results
from gemm_study.tuning import model_replay
from gemm_study.tuning.shape_table import heldout_shapes

SETS = ("held out", "left out")


def _load(paths):
    contexts, benchmarks = [], []
    for path in paths:
        context, entries = load_results(path)
        contexts.append(context)
        benchmarks += entries
    return contexts, benchmarks


def _sms(contexts):
    for context in contexts:
        sms = context_value(context, "gpu_sm_count", default=math.nan)
        if math.isfinite(sms) and sms >= 1 and sms == int(sms):
            return int(sms)
    raise InputError("the evaluation's context has no gpu_sm_count that is a whole number >= 1")


def _read(reader, path):
    try:
        return reader(path)
    except (OSError, UnicodeDecodeError, EOFError) as error:
        raise InputError(f"{path}: cannot read: {error}") from None


def lines(picks_by_rule, show_shapes):
    out = [
        "| misaligned distance | timed | arithmetic | held out: within 5% | left out: within 5% | picks as `auto` ran |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for (distance, timed), picks in picks_by_rule.items():
        counts = model_replay.tally(picks)
        for arith in sorted({p.arithmetic for p in picks}):
            cells = [
                f"{counts[(arith, s)][1]} of {counts[(arith, s)][0]}" if (arith, s) in counts else "-" for s in SETS
            ]
            ran = [p for p in picks if p.arithmetic == arith and p.heldout and p.recorded]
            agree = f"{sum(p.agrees for p in ran)} of {len(ran)}" if ran else "-"
            out.append(f"| {distance:g} | {timed} | {arith} | {cells[0]} | {cells[1]} | {agree} |")
    if show_shapes:
        for (distance, timed), picks in picks_by_rule.items():
            out += [
                "",
                f"Misaligned distance {distance:g}, {timed} timed, held-out picks not within 5% of the fastest:",
                "",
            ]
            out += [
                f"- {p.arithmetic} {'x'.join(map(str, p.shape))}: {p.picked}, "
                f"{100 * p.best_ms / p.picked_ms:.1f}% of {p.best}"
                for p in picks
                if p.heldout and not p.near_best
            ]
    return out


def main(argv=None):
    parser = command_parser("gemm-auto-replay", __doc__, first_line_only=True)
    parser.add_argument("--evaluation", type=Path, nargs="+", required=True)
    parser.add_argument("--references", type=Path, nargs="+", help="default: the evaluation's own grids")
    parser.add_argument("--times", type=Path, default=model_replay.TIMES_PATH)
    parser.add_argument("--tuned", type=Path, default=model_replay.TUNED_PATH)
    parser.add_argument("--misaligned", type=float, nargs="+", default=[model_replay.MISALIGNED_DISTANCE])
    parser.add_argument("--timed", type=int, nargs="+", default=[model_replay.TIMED_CANDIDATES])
    parser.add_argument("--shapes", action="store_true", help="list the held-out misses")
    args = parser.parse_args(argv)
    if any(not d >= 0 for d in args.misaligned):
        raise InputError("--misaligned: distances are >= 0 (inf: the other alignment last)")
    if any(t < 1 for t in args.timed):
        raise InputError("--timed: the candidates timed are 1 or more (1: the first prediction alone)")
    contexts, evaluation = _load(args.evaluation)
    reference = _load(args.references)[1] if args.references else evaluation
    times, tuned = (
        _read(reader, path)
        for reader, path in ((model_replay.read_times, args.times), (model_replay.read_tuned_tiles, args.tuned))
    )
    if not times:
        raise InputError(f"{args.times}: no GEMM_AUTO_TIME entry")
    base = model_replay.Model(
        times,
        model_replay.launches(reference),
        model_replay.launches(evaluation),
        _sms(contexts),
        tuned,
    )
    heldout = heldout_shapes()
    picks = {}
    for distance in args.misaligned:
        base.misaligned = distance
        for timed in args.timed:
            picks[(distance, timed)] = model_replay.replay(base, evaluation, heldout, timed)
    if not any(picks.values()):
        raise InputError("no shape where the model has references and the evaluation timed a candidate")
    sys.stdout.write("\n".join(lines(picks, args.shapes)) + "\n")
    return 0


def run():
    return run_cli(main)
