"""What every command line shares: a parser that names its command (so usage lines read
`usage: gemm-report ...` however the command was launched) and the parsers of option values."""

import argparse

from gemm_study.data.errors import InputError


def command_parser(prog, doc, first_line_only=False):
    """The argument parser of command `prog`, described by its module's docstring."""
    if first_line_only:
        return argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    return argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


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
