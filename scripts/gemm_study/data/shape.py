"""A GEMM shape, M x N x K: parsed once from the 'MxNxK' text that gemm-bench's --shapes and the
tools' tables use, compared and sorted as numbers, and written back the same way."""

import re
from dataclasses import dataclass

from gemm_study.data.errors import InputError

_TEXT = re.compile(r"[1-9]\d*x[1-9]\d*x[1-9]\d*")


@dataclass(frozen=True, order=True)
class Shape:
    m: int
    n: int
    k: int

    @classmethod
    def parse(cls, text):
        """'1024x1024x1024' -> Shape(1024, 1024, 1024); InputError unless MxNxK of positive integers."""
        if not isinstance(text, str) or not _TEXT.fullmatch(text):
            raise InputError(f"shape {text!r}: expected MxNxK with positive integers, e.g. 1024x1024x1024")
        return cls(*(int(x) for x in text.split("x")))

    def __str__(self):
        return f"{self.m}x{self.n}x{self.k}"

    @property
    def dims(self):
        return (self.m, self.n, self.k)


def shape_order(text):
    """Sort key of an 'MxNxK' text: by M, then N, then K, as numbers (so 512 comes before 1024)."""
    return [int(x) for x in text.split("x")]
