"""Nsight Compute's source page read as each SASS line's executed count per warp and k-tile
(ncu/source_page.py, gemm-source-counters), and where the account uses it."""

import json
import shutil

import pytest
from conftest import SCRIPTS

from gemm_study.cli import source_counters
from gemm_study.data.errors import InputError
from gemm_study.data.results import load_results
from gemm_study.ncu import source_page

PAGE = "\n".join(
    [
        '"Kernel Name","void k(float *)",',
        '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_long_sb",'
        '"stall_wait","stall_long_sb (Not Issued)"',
        '"0x7f0000000000","      ISETP.GT.AND P0, PT, R1, 0x1fff, PT","3","1,024","0","1","0"',
        '"0x7f0000000010","      @!P0 BRA 0x7f0000000040","0","1,024","0","0","0"',
        '"0x7f0000000020","      LDG.E R4, desc[UR4][R6.64]","0","0","0","0","0"',
        '"0x7f0000000030","      STS [R3], R4","9","3,072","9","0","9"',
    ]
)
CODE = [
    (0, "ISETP.GT.AND P0, PT, R1, 0x1fff, PT"),
    (16, "@!P0 BRA 0x40"),
    (32, "LDG.E R4, desc[UR4][R6.64]"),
    (48, "STS [R3], R4"),
]


def test_the_page_gives_each_lines_executed_count_and_warp_state_samples():
    lines = source_page.parse_source_csv(PAGE)
    assert [(a - lines[0][0], e) for a, _, e, _ in lines] == [(0, 1024), (16, 1024), (32, 0), (48, 3072)]
    assert lines[3][1] == "STS [R3], R4"
    assert lines[3][3] == {"long_sb": 9.0, "wait": 0.0}  # all samples; the not-issued column apart
    # Per warp and k-tile: 1,024 warp-k-tiles ran the loop.
    assert source_page.aligned_counts(CODE, lines, 1024) == [1, 1, 0, 3]


def test_a_page_of_another_build_or_kernel_is_not_used():
    lines = source_page.parse_source_csv(PAGE)
    assert source_page.aligned_counts(CODE[:3], lines, 1024) is None  # another length
    other = [*CODE[:3], (48, "STS.128 [R3], R4")]
    assert source_page.aligned_counts(other, lines, 1024) is None  # another instruction
    moved = [*CODE[:3], (64, "STS [R3], R4")]
    assert source_page.aligned_counts(moved, lines, 1024) is None  # another address
    assert source_page.aligned_counts(CODE, lines, 0) is None
    with pytest.raises(InputError, match="Address"):
        source_page.parse_source_csv('"Kernel Name","k"\n"ID","Value"\n"1","2"')
    with pytest.raises(InputError, match="executed count"):
        source_page.parse_source_csv(PAGE.replace('"1,024"', '"n/a"', 1))


STUDY = SCRIPTS.parent / "reports" / "h100-80gb-hbm3"


@pytest.mark.skipif(not (STUDY / "results.json").is_file(), reason="no committed H100 study")
def test_the_counts_attach_beside_the_results_and_a_malformed_file_is_refused(tmp_path):
    shutil.copy(STUDY / "results.json", tmp_path / "results.json")
    shutil.copy(STUDY / "sass.json.gz", tmp_path / "sass.json.gz")
    context, _ = load_results(tmp_path / "results.json")
    assert "source_counters" not in context
    (tmp_path / "source_counters.json").write_text(json.dumps({"kernels": {"k": {"per_warp_ktile": [1, 0]}}}))
    assert load_results(tmp_path / "results.json")[0]["source_counters"]["kernels"]["k"]["per_warp_ktile"] == [1, 0]
    (tmp_path / "source_counters.json").write_text(json.dumps({"kernels": {"k": {"counts": [1]}}}))
    with pytest.raises(InputError, match="per_warp_ktile"):
        load_results(tmp_path / "results.json")


@pytest.mark.skipif(not (STUDY / "results.json").is_file(), reason="no committed H100 study")
def test_on_the_h100_only_the_rung_with_element_loops_needs_counts(capsys):
    """mma_tf32 loads its k-tile element by element (kernels/tensor/mma_tf32.cu: `for (c = tid;
    c < BM * BK; c += THREADS)`), loops the compiler keeps: the one rung at 4096^3 whose main loop
    holds a loop of its own. Listing it needs no GPU."""
    assert source_counters.main([str(STUDY / "results.json"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:-1] == [
        "fp32/mma_tf32/bm:256/bn:128/bk:32/wm:64/wn:64 at 4096x4096x4096: a loop nested in its main loop"
    ]


def test_without_the_sass_there_is_nothing_to_place_the_counts_on(tmp_path):
    src = STUDY / "results.json"
    if not src.is_file():
        pytest.skip("no committed H100 study")
    shutil.copy(src, tmp_path / "results.json")
    with pytest.raises(InputError, match="sass.json"):
        source_counters.main([str(tmp_path / "results.json"), "--dry-run"])


@pytest.mark.skipif(not (STUDY / "source_counters.json").is_file(), reason="no committed source counters")
def test_on_the_h100_mma_tf32_is_simulated_on_its_measured_path():
    """With the counts, mma_tf32's loop is simulated: its path through a k-tile loads each
    thread's (BM x BK + BK x BN) / THREADS = (256 x 32 + 32 x 128) / 256 = 48 elements, one LDG
    each, and no remainder runs (48 is a whole number of the unrolled loops' trips). Simulated, its
    schedule time stands in the account where the latency term stood (account.py: the latency term
    only where there is no schedule)."""
    from gemm_study.analysis import account, sass_loop, schedule
    from gemm_study.report.study_report import load_kernel_runs

    context, kernel, _, _ = load_kernel_runs(STUDY / "results.json")
    row = kernel[(kernel.variant == "mma_tf32/bm:256/bn:128/bk:32/wm:64/wn:64") & (kernel["shape"] == "4096x4096x4096")]
    row = row.iloc[0].to_dict()
    code = sass_loop.code_of(context["sass"], "fp32", row["variant"], row["shape"])
    counts = sass_loop.executed_counts_of(
        context["sass"], context["source_counters"], "fp32", row["variant"], row["shape"]
    )
    body = schedule.executed_loop(code, counts)
    assert sum(1 for t in body if sass_loop.opcode(t).startswith("LDG")) == (256 * 32 + 32 * 128) // 256
    acc = account.account(row, context)
    assert acc.schedule is not None and "schedule" in acc.times_ms and "latency" not in acc.times_ms


def test_a_states_samples_are_shared_among_the_opcodes_of_the_lines_it_was_sampled_on(tmp_path, capsys):
    from gemm_study.cli import source_states

    lines = source_page.parse_source_csv(PAGE)
    assert source_page.samples_by_opcode(lines, "long_sb") == ({"STS": 1.0}, 9 / 10)
    assert source_page.samples_by_opcode(lines, "wait") == ({"ISETP.GT.AND": 1.0}, 1 / 10)
    page = tmp_path / "k.csv"
    page.write_text(PAGE)
    assert source_states.main([str(page), "--state", "long_sb"]) == 0
    assert capsys.readouterr().out == "k.csv: long_sb 90.0% of the samples; on STS 100%\n"
    with pytest.raises(InputError, match="no state 'dispatch'"):
        source_states.main([str(page), "--state", "dispatch"])
    with pytest.raises(InputError, match="no such file"):
        source_states.main([str(tmp_path / "none.csv.gz"), "--state", "wait"])
    with pytest.raises(InputError, match="--top 0"):
        source_states.main([str(page), "--state", "wait", "--top", "0"])


@pytest.mark.skipif(not (STUDY / "results.json").is_file(), reason="no committed H100 study")
def test_bad_input_to_the_counters_is_one_line_and_a_bad_file_of_its_own_does_not_block_it(tmp_path, capsys):
    for name in ("results.json", "sass.json.gz"):
        shutil.copy(STUDY / name, tmp_path / name)
    (tmp_path / "source_counters.json").write_text("{}")  # malformed: the command rewrites it
    assert source_counters.main([str(tmp_path / "results.json"), "--dry-run"]) == 0
    with pytest.raises(InputError, match="no benchmark at that shape"):
        source_counters.main([str(tmp_path / "results.json"), "--shape", "12x12x12", "--dry-run"])
    with pytest.raises(InputError, match="has no SASS"):
        source_page.parse_source_csv(PAGE.replace("STS [R3], R4", " "))
