"""Warp states per rung: every state the scheduler reports, in warp cycles per issued instruction."""

import json

import numpy as np
import pytest
from conftest import SCRIPTS

from gemm_study.analysis import account, ceilings
from gemm_study.data import manifest
from gemm_study.data.results import load_frame, one_row_per_benchmark
from gemm_study.report import warp_states

STUDY = SCRIPTS.parent / "reports" / "h100-80gb-hbm3" / "results.json"


def committed():
    context, frame = load_frame(STUDY)
    kernel = one_row_per_benchmark(frame)
    kernel = kernel[~kernel.end_to_end]
    kernel, _ = account.add_columns(kernel, context)
    return context, kernel, ceilings.ceilings(context, kernel)


def test_the_catalogue_holds_every_state_the_scheduler_reports():
    assert len(warp_states.states()) == 18
    assert {"stall_selected", "stall_dispatch_stall", "stall_long_scoreboard"} <= set(warp_states.states())


def test_selected_is_one_cycle_per_issued_instruction_on_every_counted_kernel():
    """By the definition (warps in a state per cycle an instruction issued), the issuing warp is in
    `selected` exactly one cycle per instruction: the check that the unit is what the page says."""
    _, kernel, _ = committed()
    selected = warp_states.cycles(kernel)["selected"].dropna()
    assert np.allclose(selected, 1.0, atol=0.01)
    # Every counted kernel but the write-ups' (which leave the account's details out) has them.
    counted = kernel[kernel.counters_available == 1]
    writeups = counted.tags.apply(lambda tags: "seed" in tags) & (counted.variant != manifest.ladder_start())
    assert len(counted[~writeups]) > 100 and set(counted[~writeups].index) <= set(selected.index)


def test_the_report_section_the_figures_and_the_json(tmp_path):
    context, kernel, table = committed()
    lines = warp_states.section(kernel, context, table)
    assert lines[0] == "## Warp states per rung"
    assert any(line.startswith("**FP32 on the CUDA cores, 4096x4096x4096**") for line in lines)
    paths = warp_states.figures(kernel, context, tmp_path, table)
    assert {p.name for p in paths} >= {"warp_states_fp32.png", "warp_states_fp64.svg"}
    warp_states.write_json(kernel, tmp_path)
    table_json = json.loads((tmp_path / "warp_states.json").read_text())
    tuned = table_json["gemm/fp32/tuned/m:4096/n:4096/k:4096/manual_time"]
    assert tuned["total"] == pytest.approx(sum(v for k, v in tuned.items() if k != "total"), rel=1e-5)
    assert set(tuned) - {"total"} <= {s.removeprefix("stall_") for s in warp_states.states()}


def test_results_without_warp_states_give_no_table_and_no_figure(tmp_path):
    context, kernel, table = committed()
    bare = kernel.drop(columns=[c for c in kernel if c.startswith("stall_")])
    assert warp_states.section(bare, context, table)[-1] == ""
    assert not any(line.startswith("**") for line in warp_states.section(bare, context, table))
    assert warp_states.figures(bare, context, tmp_path, table) == []


def test_the_figure_cuts_a_naive_kernels_bar_that_would_flatten_the_tiled_rungs():
    """naive_col waits ~460 cycles per instruction on a full LSU queue; the register-blocked rungs
    4 to 16. The axis stops at three times the longest bar from rung 1 up, and only where a bar
    is longer."""
    assert warp_states._axis_limit([460.0, 43.0, 36.0, 39.0, 16.0, 4.5], [-3, -2, -1, 0, 1, 9]) == pytest.approx(48.0)
    assert warp_states._axis_limit([40.0, 39.0, 16.0], [-1, 0, 1]) is None
    assert warp_states._axis_limit([40.0, 39.0], None) is None
