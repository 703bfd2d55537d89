"""The shape suite's table: auto against the best anchor of its arithmetic, per shape."""

import math

import pandas as pd
from conftest import SCRIPTS

from gemm_study.cli.summary_table import main as summary_main
from gemm_study.data.errors import run_cli
from gemm_study.report import suite_table

SUITE = SCRIPTS.parent / "reports" / "h100-80gb-hbm3" / "shapes" / "suite.json"


def frame(rows):
    return pd.DataFrame(
        [
            {"variant": v, "precision": p, "shape": s, "gflops": g, "name": f"gemm/{p}/{v}/{s}", "error": None}
            for v, p, s, g in rows
        ]
    )


def test_each_arithmetic_is_held_to_the_faster_of_its_own_anchors():
    rows = suite_table.rows(
        frame(
            [
                ("auto", "fp32", "8x8x8", 50.0),
                ("cublas", "fp32", "8x8x8", 80.0),
                ("cublaslt", "fp32", "8x8x8", 100.0),
                ("cublas_tf32", "fp32", "8x8x8", 400.0),  # another arithmetic: not auto's anchor
                ("auto_tf32", "fp32", "8x8x8", 300.0),
                ("cublaslt_tf32", "fp32", "8x8x8", 200.0),
                ("auto", "fp64", "8x8x8", 10.0),  # no FP64 anchor ran: no row
            ]
        ),
        {"gemm/fp32/auto/8x8x8": "split_k/slices:0"},
    )
    assert set(rows) == {"FP32 on the CUDA cores", "TF32 on the tensor cores"}
    fp32 = rows["FP32 on the CUDA cores"][0]
    assert (fp32["anchor"], fp32["pct"], fp32["picked"]) == ("cublaslt", 50.0, "split_k/slices:0")
    tf32 = rows["TF32 on the tensor cores"][0]
    assert (tf32["anchor"], tf32["pct"]) == ("cublas_tf32", 75.0)


def test_the_summary_is_a_geometric_mean_and_the_lowest_shapes_come_first():
    table = {
        "FP64": [
            {"shape": f"{i}x1x1", "auto": i, "anchor": "cublas", "anchor_gflops": 100.0, "pct": float(p), "picked": ""}
            for i, p in enumerate([90, 40, 100, 55, 80, 70, 30], 1)
        ]
    }
    text = suite_table.markdown(table, worst=3)
    mean = math.exp(sum(math.log(p) for p in [90, 40, 100, 55, 80, 70, 30]) / 7)
    assert f"| FP64 | 7 | {mean:.3g}% | 3 |" in text  # 40, 55 and 30 are below 60
    lowest = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ") and "x1x1" in line]
    assert lowest == ["7x1x1", "2x1x1", "4x1x1"]


def test_the_committed_suite_run_gives_a_table_for_each_arithmetic(capsys):
    assert run_cli(summary_main, [str(SUITE), "--suite"]) == 0
    text = capsys.readouterr().out
    for label in ("FP32 on the CUDA cores", "TF32 on the tensor cores", "FP64"):
        assert f"| {label} | 37 |" in text


def test_a_file_without_a_dispatcher_is_bad_input(capsys):
    study = SCRIPTS.parent / "reports" / "h200" / "times_only" / "results.json"
    assert run_cli(summary_main, [str(study), "--suite"]) == 2
    assert "no auto or auto_tf32 benchmark" in capsys.readouterr().err
