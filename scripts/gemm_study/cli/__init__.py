"""Command-line faces: argument parsing and output files; the work is done by the library layers."""
