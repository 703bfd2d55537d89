"""Errors that mean "bad input": the command line tools turn them into exit status 2."""


class InputError(Exception):
    """A results file, export or argument that cannot be used, with the reason."""


EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2


def run_cli(main, argv=None):
    """Runs main(argv) and maps InputError to a one-line message and exit status 2."""
    import sys

    try:
        return main(argv)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
