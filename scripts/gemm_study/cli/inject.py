"""Deliberate slowdowns in a copy of the tree, for recording a history whose regressions are
known (scripts/record_history.sh; gemm_study/regression/inject.py says how a spin is calibrated).

  gemm-inject check --tree TREE warptile               (exit 0 when the family's kernel takes a spin)
  gemm-inject plan --baseline RUN.json --tree TREE warptile=0.02 blocktile_2d=0.05
  gemm-inject apply --tree TREE warptile=812 ...      (cycles per block)
  gemm-inject apply --tree TREE --plan PLAN.json warptile   (the cycles the plan calibrated)
  gemm-inject remove --tree TREE                       (restores every file)
"""

import json
from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import InputError, run_cli
from gemm_study.regression.inject import apply, calibrate, kernel_file, remove


def _pairs(items, convert):
    out = {}
    for item in items:
        family, _, value = item.partition("=")
        try:
            out[family] = convert(value)
        except ValueError:
            raise InputError(f"{item!r}: expected FAMILY=NUMBER") from None
    return out


def _cycles(targets, plan_file):
    """FAMILY=CYCLES pairs, or bare FAMILY names looked up in the plan file."""
    if not plan_file:
        return _pairs(targets, int)
    try:
        plan = json.loads(plan_file.read_text())
        return {family: int(plan[family]["spin_cycles"]) for family in targets}
    except (OSError, ValueError, KeyError) as error:
        raise InputError(f"{plan_file}: no spin_cycles for {', '.join(targets)} ({error})") from None


def main(argv=None):
    parser = command_parser("gemm-inject", __doc__)
    parser.add_argument("action", choices=["check", "plan", "apply", "remove"])
    parser.add_argument("--tree", required=True, type=Path, help="the copy of the source tree")
    parser.add_argument("--baseline", type=Path, help="plan: the baseline tracking run")
    parser.add_argument(
        "--plan", type=Path, help="apply: the plan (gemm-inject plan's output) giving each FAMILY's cycles"
    )
    parser.add_argument(
        "targets", nargs="*", help="check: FAMILY; plan: FAMILY=SHARE; apply: FAMILY=CYCLES, or FAMILY with --plan"
    )
    args = parser.parse_intermixed_args(argv)
    if args.action == "remove":
        print(" ".join(str(p) for p in remove(args.tree)))
    elif args.action == "check":
        for family in args.targets:
            kernel_file(args.tree, family)
    elif args.action == "apply":
        for family, cycles in _cycles(args.targets, args.plan).items():
            print(f"{family}: {apply(args.tree, family, cycles)} spins {cycles} cycles per block")
    else:
        if not args.baseline:
            raise InputError("plan needs --baseline RUN.json")
        plan = {}
        for family, share in _pairs(args.targets, float).items():
            kernel_file(args.tree, family)
            name, cycles, kcycles, count = calibrate(args.baseline, family, share)
            plan[family] = {
                "benchmark": name,
                "share": share,
                "spin_cycles": cycles,
                "baseline_kcycles": kcycles,
                "waves": count,
            }
        print(json.dumps(plan, indent=1))
    return 0


def run():
    return run_cli(main)
