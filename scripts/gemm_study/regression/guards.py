"""Guarded counters (guards.tsv): per family, the counters whose worsening is a regression even
when the time did not get worse, or got better. They are the claims a family stands for (the
conflict-free rung's one wavefront per shared load, the vectorized rung's quarter of the global
load requests), so a change that gives them up is a regression of that family whatever else it
gained. Kept beside the tools that use them (the C++ harness does not read guards); every counter
must be in the metric catalogue, checked on load."""

from functools import lru_cache
from pathlib import Path

from gemm_study.data.catalogue import load_catalogue
from gemm_study.data.errors import InputError

GUARDS_FILE = Path(__file__).with_name("guards.tsv")


@lru_cache(maxsize=None)
def load_guards(path=GUARDS_FILE):
    """family -> frozenset of guarded counter names."""
    catalogue, guards = load_catalogue(), {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2 or fields[1] not in catalogue:
            raise InputError(f"{path}:{number}: expected 'family counter' with a catalogue counter, got {line!r}")
        guards.setdefault(fields[0], set()).add(fields[1])
    return {family: frozenset(counters) for family, counters in guards.items()}


def guarded(family, counter):
    return counter in load_guards().get(family, ())
