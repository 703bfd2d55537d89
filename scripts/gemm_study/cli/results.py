"""Small edits and reads of gemm-bench results files, for the shell scripts.

  gemm-results context FILE FIELD [--default VALUE]   print one context field
  gemm-results append INTO FROM                       append FROM's benchmarks to INTO
  gemm-results relabel FILE LABEL                     set the run's git_revision to LABEL
                                                      (its own is kept as build_git_revision)
  gemm-results gtest REPORT...                        "passed N, skipped N, failed N" over
                                                      GoogleTest JSON reports
Exit status 2 on a file that is not a results file.
"""

from pathlib import Path

from gemm_study.cli.common import command_parser
from gemm_study.data.errors import run_cli
from gemm_study.data.run_files import append_benchmarks, context_field, gtest_counts, relabel


def main(argv=None):
    parser = command_parser("gemm-results", __doc__)
    actions = parser.add_subparsers(dest="action", required=True)
    context = actions.add_parser("context", help="print one context field")
    context.add_argument("file", type=Path)
    context.add_argument("field")
    context.add_argument("--default", help="printed when the field is missing or empty")
    append = actions.add_parser("append", help="append the benchmarks of FROM to INTO")
    append.add_argument("into", type=Path)
    append.add_argument("source", type=Path, metavar="from")
    label = actions.add_parser("relabel", help="label the run LABEL (context git_revision)")
    label.add_argument("file", type=Path)
    label.add_argument("label")
    gtest = actions.add_parser("gtest", help="count the tests of GoogleTest JSON reports")
    gtest.add_argument("reports", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.action == "context":
        print(context_field(args.file, args.field, args.default))
    elif args.action == "append":
        append_benchmarks(args.into, args.source)
    elif args.action == "gtest":
        passed, skipped, failed = gtest_counts(args.reports)
        print(f"passed {passed}, skipped {skipped}, failed {failed}")
    else:
        relabel(args.file, args.label)
    return 0


def run():
    return run_cli(main)
