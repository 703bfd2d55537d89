"""Sweeps into tables the C++ build compiles: the tuned rung's configuration per size, and the dispatcher's variant per shape, both through one sweep engine."""
