"""Errors the command-line tools report in one line instead of a traceback: bad input (exit
status 2) and a failure of an external tool such as ncu or gemm-bench (exit status 1)."""

from contextlib import contextmanager


class InputError(Exception):
    """A results file, export or argument that cannot be used, with the reason."""


class ExternalToolError(RuntimeError):
    """An external program (ncu, gemm-bench) failed; the message says how and what to do."""


EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2
EXIT_TOOL_FAILED = 1


@contextmanager
def writing(path):
    """Turns an OSError while writing `path` (a missing or read-only folder, a full disk) into
    an InputError naming it."""
    try:
        yield
    except OSError as error:
        raise InputError(f"{path}: cannot write: {error.strerror or error}") from None


def run_cli(main, argv=None):
    """Runs main(argv) and maps InputError to a one-line message and exit status 2,
    ExternalToolError to a message and exit status 1, and anything else to one line and exit
    status 2 (a CI must get one line and a status that is not 'regression', never a traceback)."""
    import sys

    try:
        return main(argv)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ExternalToolError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_TOOL_FAILED
    except Exception as error:  # noqa: BLE001 - see the docstring
        print(f"error: unexpected {type(error).__name__}: {error} (please report this input)", file=sys.stderr)
        return EXIT_BAD_INPUT
