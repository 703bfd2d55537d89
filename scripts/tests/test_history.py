"""history.py on a synthetic history of five revisions (clocks recorded, as gemm-bench now does):
r2 reruns r1 at a lower clock, r3 removes the padding of shared_col_padded (2x slower, 4x the
shared-load wavefronts), r4 breaks shared (wrong results) and keeps the slow layout, r5 fixes both."""
import json

import pytest

from gemm_study.errors import run_cli
from conftest import DATA
from history import main as history_main
from test_compare import jitter, write_run

PADDED = "gemm/fp32/shared_col_padded/tile:32/m:1024/n:1024/k:1024"
SHARED = "gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024"
NAIVE = "gemm/fp32/naive_row/block:16x16/m:1024/n:1024/k:1024"


def bench(time, clock=1980.0, seed=0, wavefronts=1.0, error=None):
    if error:
        return {"error": error}
    return {"times": jitter(time * 1980.0 / clock, seed=seed), "clocks": [clock] * 10,
            "counters": {"smem_ld_wavefronts_per_request": wavefronts, "gld_sectors_per_request": 4.0}}


REVISIONS = [  # revision, date, clock, padded (time, wavefronts), shared error
    ("r1aaaaaaaaaa", "2026-01-01T00:00:00", 1980.0, (0.58, 1.0), None),
    ("r2bbbbbbbbbb", "2026-01-02T00:00:00", 1900.0, (0.58, 1.0), None),
    ("r3cccccccccc", "2026-01-03T00:00:00", 1980.0, (1.17, 4.0), None),
    ("r4dddddddddd", "2026-01-04T00:00:00", 1950.0, (1.17, 4.0), "wrong result: max_rel_err 0.5"),
    ("r5eeeeeeeeee", "2026-01-05T00:00:00", 1980.0, (0.58, 1.0), None),
]


@pytest.fixture
def runs(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    paths = []
    for i, (rev, date, clock, (padded, wavefronts), error) in enumerate(REVISIONS):
        benches = {PADDED: bench(padded, clock, seed=i, wavefronts=wavefronts),
                   SHARED: bench(0.28, clock, seed=10 + i, error=error), NAIVE: bench(0.43, clock, seed=20 + i)}
        paths.append(write_run(folder / f"{i + 1:02d}_{rev[:2]}.json", benches,
                               context={"git_revision": rev, "date": date}))
    return paths


def history(tmp_path, *argv):
    out = tmp_path / "out"
    status = history_main([*map(str, argv), "--out", str(out)])
    return status, json.loads((out / "history.json").read_text()), (out / "history.md").read_text()


def firsts(result):
    return [(e["benchmark"].split("/")[2], e["first_revision"], e["recovered"]) for e in result["regressions"]]


def test_names_the_first_revision_of_each_regression_and_its_recovery(tmp_path, runs):
    status, result, text = history(tmp_path, *runs)
    assert status == 0
    assert firsts(result) == [("shared_col_padded", "r3cccccccccc", "r5eeeeeeeeee"),
                              ("shared", "r4dddddddddd", "r5eeeeeeeeee")]
    assert "| gemm/fp32/shared_col_padded/tile:32/m:1024/n:1024/k:1024/manual_time | r3cccccccccc | r2bbbbbbbbbb |" in text
    assert "smem_ld_wavefronts_per_request WORSE (1 -> 4)" in text
    assert "FAILED: wrong result: max_rel_err 0.5" in text


def test_a_benchmark_failing_since_the_first_run_is_dated_there(tmp_path, runs):
    """shared fails in r4 and r5: given r4 and r5 only, the failure is r4's, with nothing before it."""
    broken = write_run(tmp_path / "r5_broken.json", {SHARED: bench(0.28, error="wrong result: max_rel_err 0.5")},
                       context={"git_revision": "r5eeeeeeeeee"})
    status, result, text = history(tmp_path, runs[3], broken)
    assert status == 0 and firsts(result) == [("shared", "r4dddddddddd", None)]
    assert "| gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024/manual_time | r4dddddddddd | - |" in text


def test_clock_change_alone_is_no_verdict(tmp_path, runs):
    """r2 ran at a 4% lower clock: 4% slower in time, the same in cycles."""
    _, result, _ = history(tmp_path, *runs)
    assert {s["verdicts"][1]["verdict"] for s in result["series"].values()} == {"SAME"}


def test_marks_and_counts_per_revision(tmp_path, runs):
    _, result, text = history(tmp_path, *runs)
    padded = result["series"][PADDED + "/manual_time"]
    assert [v and v["verdict"] for v in padded["verdicts"]] == [None, "SAME", "SLOWER", "SAME", "FASTER"]
    assert [c.get("SLOWER", 0) for c in result["counts"]] == [0, 1, 0, 0]
    assert "| r3cccccccccc | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in text
    gflops = padded["metrics"]["gflops"]
    assert gflops[0][1] == pytest.approx(1 / 0.58, rel=0.01) and gflops[0][0] < gflops[0][1] < gflops[0][2]


def test_a_failure_lasting_two_revisions_is_one_regression(tmp_path, runs):
    broken = json.loads(runs[3].read_text())
    again = runs[3].with_name("04b_r4.json")
    broken["context"]["git_revision"] = "r4ffffffffff"
    again.write_text(json.dumps(broken))
    _, result, _ = history(tmp_path, *runs[:4], again, runs[4])
    assert [f for f in firsts(result) if f[0] == "shared"] == [("shared", "r4dddddddddd", "r5eeeeeeeeee")]


def test_figure_marks(tmp_path, runs):
    from gemm_study.history import marks
    _, result, _ = history(tmp_path, *runs)
    padded, shared = result["series"][PADDED + "/manual_time"], result["series"][SHARED + "/manual_time"]
    assert marks(padded, "gflops") == [(2, "SLOWER"), (4, "FASTER")]
    assert marks(padded, "smem_ld_wavefronts_per_request") == [(2, "WORSE"), (4, "BETTER")]
    assert marks(padded, "gld_sectors_per_request") == []
    assert marks(shared, "gflops") == [(3, "FAILED")]


def test_failed_points_are_gaps_and_figures_are_written(tmp_path, runs):
    _, result, text = history(tmp_path, *runs)
    assert result["series"][SHARED + "/manual_time"]["metrics"]["gflops"][3] == [None, None, None]
    for family in ("shared", "shared_col_padded", "naive_row"):
        assert (tmp_path / "out" / f"history_{family}.png").stat().st_size > 1000
        assert f"![{family}](history_{family}.png)" in text


def test_folder_gives_file_name_order_and_may_hold_the_output(tmp_path, runs):
    folder = runs[0].parent
    for _ in range(2):  # the second time, the folder holds history.json
        assert history_main([str(folder), "--out", str(folder), "--counters="]) == 0
    result = json.loads((folder / "history.json").read_text())
    assert [r["label"] for r in result["runs"]] == [r[0] for r in REVISIONS]


def test_arguments_give_the_order_unless_order_by(tmp_path, runs):
    _, result, _ = history(tmp_path, *reversed(runs))
    assert result["runs"][0]["label"] == "r5eeeeeeeeee" and firsts(result)[0][1] == "r4dddddddddd"
    _, result, _ = history(tmp_path, *reversed(runs), "--order-by", "date")
    assert firsts(result)[0] == ("shared_col_padded", "r3cccccccccc", "r5eeeeeeeeee")


def test_unknown_revision_is_labelled_by_file_and_duplicates_numbered(tmp_path, runs):
    for path in runs[:2]:
        data = json.loads(path.read_text())
        data["context"]["git_revision"] = "unknown" if path == runs[0] else "r1aaaaaaaaaa"
        path.write_text(json.dumps(data))
    _, result, _ = history(tmp_path, runs[0], runs[1], runs[1])
    assert [r["label"] for r in result["runs"]] == ["01_r1", "r1aaaaaaaaaa", "r1aaaaaaaaaa (2)"]


def test_real_runs_without_clocks(tmp_path):
    folder = DATA.parents[2] / "reports" / "h200" / "regression"
    status, result, text = history(tmp_path, folder / "track_baseline.json", folder / "track_rerun.json", "--counters=")
    assert status == 0 and result["regressions"] == [] and "no sm_clock_mhz recorded" in text


def bad(capsys, *argv):
    assert run_cli(history_main, [str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_bad_inputs_are_one_line_exit_2(tmp_path, runs, capsys):
    out = ["--out", tmp_path / "out"]
    assert "at least two tracking runs" in bad(capsys, runs[0], *out)
    assert "context has no 'build_number'" in bad(capsys, *runs, "--order-by", "build_number", *out)
    assert "not in the metric catalogue" in bad(capsys, *runs, "--counters", "bank_conflictz", *out)
    assert "no *.json tracking runs" in bad(capsys, tmp_path / "out" if (tmp_path / "out").mkdir() is None else "", *out)
    (tmp_path / "runs" / "notes.json").write_text("{}")
    assert "notes.json: not a Google Benchmark results file" in bad(capsys, tmp_path / "runs", *out)
    (tmp_path / "runs" / "notes.json").unlink()
    (tmp_path / "file").write_text("")
    assert "cannot write" in bad(capsys, *runs, "--out", tmp_path / "file")


def test_context_mismatch_names_both_files(tmp_path, runs, capsys):
    data = json.loads(runs[2].read_text())
    data["context"]["gpu_name"] = "NVIDIA H100 80GB HBM3"
    runs[2].write_text(json.dumps(data))
    err = bad(capsys, *runs, "--out", tmp_path / "out")
    assert "02_r2.json and " in err and "03_r3.json: the runs were not made in the same context" in err


def test_revision_label_keeps_what_follows_the_hash():
    from gemm_study.history import revision_label
    assert revision_label("50cbe9466b08aa11") == "50cbe9466b08"
    assert revision_label("50cbe9466b08+unpadded") == "50cbe9466b08+unpadded"
    assert revision_label("c933aeef88c0aaaa-dirty") == "c933aeef88c0-dirty"
    assert revision_label("v1.2") == "v1.2"
