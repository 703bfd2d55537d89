"""The study's report: its sections, tables and figures."""
