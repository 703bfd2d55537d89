"""Readers of what gemm-bench and the C++ side write: results, names, manifest, catalogue; the errors and formatting every layer shares."""
