"""The family manifest (kernels/manifest.inc) and the tag list (kernels/tags.inc), read from the
files the C++ registry compiles, so that a renamed tag or a reordered rung fails here too.

  GEMM_FAMILY(level, family, build, "rung name", "origin")   one line per kernel file, study order
  GEMM_LADDER_SEED("variant", "rung name")   the write-ups' rungs below rung 0, in ladder order
  GEMM_LADDER_START("variant")               rung 0 of the CUDA-core ladders
  GEMM_TAG(name, "what it means")

A rung is a line of level ladder or tensor_core; its number is its position among those lines
(1-based). Tools name tags through TAGS (TAGS.tile_sweep), never as string literals: an unknown
name raises AttributeError at import time of the code that uses it."""

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gemm_study.data.errors import InputError
from gemm_study.data.paths import CHECKOUT

KERNELS = CHECKOUT / "kernels"
MANIFEST_FILE = KERNELS / "manifest.inc"
TAGS_FILE = KERNELS / "tags.inc"
RUNG_LEVELS = ("ladder", "tensor_core")

_FAMILY = re.compile(r'^GEMM_FAMILY\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*\)\s*$')
_TAG = re.compile(r'^GEMM_TAG\(\s*(\w+)\s*,\s*"([^"]*)"\s*\)\s*$')
_LADDER_START = re.compile(r'^GEMM_LADDER_START\(\s*"([^"]*)"\s*\)\s*$')
_LADDER_SEED = re.compile(r'^GEMM_LADDER_SEED\(\s*"([^"]*)"\s*,\s*"([^"]*)"\s*\)\s*$')


@dataclass(frozen=True)
class Family:
    level: str
    family: str
    build: str  # any | sm90a
    rung_name: str
    origin: str
    rung: int = 0  # 1-based position among the rung lines; 0 for other levels


def _lines(path, pattern, what):
    """The groups of every `what(...)` line of the file; InputError for a line that starts so
    but does not parse (a format change the C++ side made must not be skipped silently)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file ({what})")
    found = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if text.startswith(what + "("):
            match = pattern.match(text)
            if not match:
                raise InputError(f"{path}:{number}: cannot parse {text!r}")
            found.append(match.groups())
    if not found:
        raise InputError(f"{path}: no {what} line")
    return found


@lru_cache(maxsize=None)
def load_families(path=MANIFEST_FILE):
    """The manifest's families in study order, rung numbers assigned."""
    families, rung = [], 0
    for level, family, build, rung_name, origin in _lines(path, _FAMILY, "GEMM_FAMILY"):
        if level in RUNG_LEVELS:
            rung += 1
        families.append(Family(level, family, build, rung_name, origin, rung if level in RUNG_LEVELS else 0))
    return tuple(families)


@lru_cache(maxsize=None)
def ladder_start(path=MANIFEST_FILE):
    """Rung 0 of the CUDA-core ladders, a variant name: the manifest's GEMM_LADDER_START line,
    which the registry reads too."""
    (found,) = _lines(path, _LADDER_START, "GEMM_LADDER_START")[0]
    return found


@dataclass(frozen=True)
class Seed:
    variant: str
    rung_name: str
    rung: int  # -n for the first of n seed rungs, ..., -1 for the last


@lru_cache(maxsize=None)
def ladder_seeds(path=MANIFEST_FILE):
    """The write-ups' rungs below rung 0 (GEMM_LADDER_SEED lines), in ladder order, numbered
    up to -1; () where the manifest names none."""
    path = Path(path)
    if path.is_file() and not any(
        line.strip().startswith("GEMM_LADDER_SEED(") for line in path.read_text().splitlines()
    ):
        return ()
    found = _lines(path, _LADDER_SEED, "GEMM_LADDER_SEED")
    return tuple(Seed(variant, name, i - len(found)) for i, (variant, name) in enumerate(found))


@lru_cache(maxsize=None)
def load_tags(path=TAGS_FILE):
    """tag name -> what it means, in the file's order."""
    return dict(_lines(path, _TAG, "GEMM_TAG"))


class _Tags:
    """Attribute access to the tag names of tags.inc: TAGS.tracked == "tracked"."""

    def __init__(self, tags):
        self._tags = tags

    def __getattr__(self, name):
        tags = self.__dict__["_tags"]
        if name not in tags:
            raise AttributeError(f"no tag {name!r} in {TAGS_FILE} (tags: {', '.join(tags)})")
        return name

    def __iter__(self):
        return iter(self._tags)


TAGS = _Tags(load_tags())


def rungs():
    """family -> its Family line, for the rung levels only."""
    return {f.family: f for f in load_families() if f.level in RUNG_LEVELS}
