"""Nsight Compute: sessions over gemm-bench, its reports read back, and the rule by which its counters and CUPTI's agree."""
