"""What every command line shares: a parser that names its command (so usage lines read
`usage: gemm-report ...` however the command was launched) and the parsers of option values."""

import argparse
from pathlib import Path

from gemm_study.data.errors import InputError


def command_parser(prog, doc, first_line_only=False):
    """The argument parser of command `prog`, described by its module's docstring."""
    if first_line_only:
        return argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    return argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def sweep_parser(prog, doc, default_out, printed):
    """The parser of a sweep command (gemm-tune-ladder, gemm-tune-shapes): sweep files, where to
    write the table, and --dry-run, which prints the `printed` thing instead."""
    parser = command_parser(prog, doc, first_line_only=True)
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--dry-run", action="store_true", help=f"print the {printed} instead of writing it")
    return parser


def fraction(name, low=0.0, high=1.0):
    """A parser of option `name`'s value: a number in [low, high), else one line of bad input."""

    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or not low <= value < high:
            raise InputError(f"{name} {text}: expected a fraction in [{low:g}, {high:g})")
        return value

    return parse
