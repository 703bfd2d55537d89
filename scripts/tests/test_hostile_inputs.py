"""Every tool on inputs it cannot use: one line on stderr and exit status 2, never a traceback
(the review's hostile-input pass). The loader's checks are shared, so each case runs through
every tool that reads results."""

import json

import pytest
from conftest import DATA, require

from gemm_study.cli.compare import main as compare_main
from gemm_study.cli.cross_gpu import main as cross_gpu_main
from gemm_study.cli.history import main as history_main
from gemm_study.cli.report import main as report_main
from gemm_study.cli.reproducibility import main as reproducibility_main
from gemm_study.cli.stages import main as stages_main
from gemm_study.cli.summary_table import main as summary_main
from gemm_study.data.errors import InputError, run_cli
from gemm_study.data.results import has_tag, load_results, to_frame
from gemm_study.ncu import session as ncu

CONTRACT = DATA / "cmp_contract_run.json"


def tools(bad, good, out):
    """(tool, argv) of every tool that reads a results file, given the bad file."""
    return {
        "report": (report_main, [bad, "--out", out / "report"]),
        "cross_gpu": (cross_gpu_main, [good, bad, "--out", out / "cross.md"]),
        "summary_table": (summary_main, [bad, "--shape", "1024x1024x1024", "--tags", "tracked"]),
        "compare": (compare_main, [good, bad]),
        "history": (history_main, [good, bad, "--out", out / "history"]),
        "reproducibility": (reproducibility_main, [good, bad]),
    }


def one_line_exit_2(capsys, main, argv):
    status = run_cli(main, [str(a) for a in argv])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("error: "), err
    assert "unexpected" not in err and "Traceback" not in err, err
    return err


def first_entry(**fields):
    return lambda data: data["benchmarks"][0].update(fields)


def first_variant(**fields):
    return lambda data: data["benchmarks"][0]["variant"].update(fields)


@pytest.mark.parametrize(
    "change, message",
    [
        (first_entry(name=3), "benchmark entry 0 has no name"),
        (first_entry(run_name=7), "run_name is 7"),
        (first_entry(real_time="x"), "real_time is 'x'"),
        (first_entry(real_time=None), "real_time is None"),
        (first_entry(time_unit=5), "time_unit 5"),
        (first_entry(time_unit=[]), "time_unit []"),
        (first_entry(variant=5), "'variant' must be an object"),
        (first_variant(params=5), "variant.params is 5"),
        (first_variant(tags="tracked"), "variant.tags is 'tracked'"),
        (first_variant(tags=[1]), "variant.tags is [1]"),
        (first_variant(rung="x"), "variant.rung is 'x'"),
        (first_variant(warps_launched=True), "variant.warps_launched is True"),
    ],
)
@pytest.mark.parametrize("tool", ["report", "cross_gpu", "summary_table", "compare", "history", "reproducibility"])
def test_entries_of_the_wrong_type_are_one_line_exit_2(tmp_path, capsys, tool, change, message):
    if tool == "history":
        require("otava", "apache-otava")
    data = json.loads(CONTRACT.read_text())
    change(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    main, argv = tools(bad, CONTRACT, tmp_path)[tool]
    err = one_line_exit_2(capsys, main, argv)
    assert "bad.json: " in err and message in err


def test_report_on_a_run_without_tile_sweep_variants(tmp_path):
    """No variant tagged tile_sweep (a tracking run): the report is written, without the tile
    figures. has_tag on the empty sweep frame used to select no columns at all."""
    assert report_main([str(CONTRACT), "--out", str(tmp_path)]) == 0
    assert "## Benchmarks that failed" in (tmp_path / "report.md").read_text()


def test_has_tag_on_an_empty_frame_keeps_the_columns():
    frame = to_frame(load_results(CONTRACT)[1])
    empty = frame[has_tag(frame, "no_such_tag")]
    assert list(empty.columns) == list(frame.columns)
    assert list(empty[has_tag(empty, "tracked")].columns) == list(frame.columns)


@pytest.mark.parametrize("tool", ["report", "cross_gpu", "history"])
def test_unwritable_out_is_one_line_exit_2(tmp_path, capsys, tool):
    if tool == "history":
        require("otava", "apache-otava")
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    main, argv = tools(CONTRACT, CONTRACT, blocker / "below")[tool]
    assert "cannot write" in one_line_exit_2(capsys, main, argv)


def test_unwritable_stages_file_is_one_line_exit_2(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    err = one_line_exit_2(capsys, stages_main, ["--stage", "build=1", "--out", blocker / "stages.json"])
    assert "stages.json: cannot write" in err


def test_an_unexpected_error_is_still_one_line_exit_2(capsys):
    def broken(argv):
        raise KeyError("boom")

    assert run_cli(broken) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected KeyError" in err


@pytest.mark.parametrize("shape", ["abc", "0x1x1", "1024x1024"])
def test_summary_table_bad_shape_says_so(capsys, shape):
    err = one_line_exit_2(capsys, summary_main, [CONTRACT, "--shape", shape, "--tags", "tracked"])
    assert f"shape {shape!r}: expected MxNxK" in err


def test_ncu_session_without_ncu_writes_nothing(tmp_path, capsys, monkeypatch):
    from gemm_study.cli.ncu_session import main as session_main

    def no_ncu():
        raise InputError("ncu (Nsight Compute) not found: install it or put it on PATH")

    monkeypatch.setattr(ncu, "find_ncu", no_ncu)
    out = tmp_path / "ncu_out"
    err = one_line_exit_2(capsys, session_main, ["--variant", "shared/tile:16", "--shape", "64x64x64", "--out", out])
    assert "ncu (Nsight Compute) not found" in err and not out.exists()
