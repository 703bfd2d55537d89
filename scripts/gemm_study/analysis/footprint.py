"""Bytes a GEMM of one shape must move, the yardsticks of its DRAM traffic. One definition of
each, used by the report, the roofline, the cross-GPU page and the ncu cross-check:

  working set     A, B and C once each (M·K + K·N + M·N elements): what the launch touches;
                  where it fits in L2, DRAM traffic is a residue, not a bound. It is also the
                  compulsory traffic of the roofline: A and B read once, C written once
  compulsory read A and B once each (M·K + K·N elements): the least a launch can read from DRAM
                  when nothing is resident"""

ELEMENT_BYTES = {"fp32": 4, "fp64": 8}


def element_bytes(precision):
    return ELEMENT_BYTES[precision]


def working_set_bytes(row):
    """A, B and C once each (row: m, n, k, precision)."""
    return (row["m"] * row["k"] + row["k"] * row["n"] + row["m"] * row["n"]) * element_bytes(row["precision"])


def compulsory_read_bytes(row):
    """A and B read once each (row: m, n, k, precision)."""
    return (row["m"] * row["k"] + row["k"] * row["n"]) * element_bytes(row["precision"])


def flop(row):
    """2·M·N·K: a multiply and an add per term."""
    return 2.0 * row["m"] * row["n"] * row["k"]
