"""Regression tracking: the comparison of two runs, histories of many, the dashboard, reproducibility."""
