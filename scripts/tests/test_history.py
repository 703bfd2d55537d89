"""history.py: change points over the whole series, on synthetic histories (clocks recorded, 10
repetitions with 0.2% noise, a little drift per run) and on the committed runs.

Mutations (each must make the tests after the arrow fail; test_mutations.py applies them one at a
time to a copy of the tools and runs those tests, and checks that they pass without it):
  - the 3% floor of the pair rule made 1%: gemm_study/regression/compare.py: `min_effect: float = 0.03` -> `min_effect: float = 0.01` => test_compare.py -k min_effect_rule
  - the floor made 2.5%: gemm_study/regression/compare.py: `min_effect: float = 0.03` -> `min_effect: float = 0.025` => test_compare.py -k floor_is_three
  - the significance made 10%: gemm_study/regression/compare.py: `alpha: float = 0.05` -> `alpha: float = 0.10` => test_compare.py -k significance_is_five
  - the exact-count tolerance made 2%: gemm_study/regression/compare.py: `count_tolerance: float = 0.001` -> `count_tolerance: float = 0.02` => test_compare.py -k exact_count_tolerance
  - a higher-is-better count read as lower-is-better: gemm_study/regression/compare.py: `(metric.better == "lower")` -> `(metric.better != "none")` => test_compare.py -k higher_is_better
  - cycles from the run's median clock, not each repetition's: gemm_study/regression/compare.py: `return cycles_of(bench, counted) if statistic == "kcycles" else bench.times` -> `return [t * float(np.median(bench.clocks)) for t in bench.times] if statistic == "kcycles" else bench.times` => test_compare.py -k each_repetitions_clock
  - the SMs' count and NVML's clock mixed in one comparison: gemm_study/data/results.py: `return bool(ran) and all(len(b.counted_cycles) == len(b.times) for b in ran)` -> `return any(b.counted_cycles for b in ran)` => test_compare.py -k counted_clock_cancels
  - a two-sided rank test: gemm_study/regression/compare.py: `alternative="greater"` -> `alternative="two-sided"` => test_compare.py -k one_sided
  - means instead of medians: gemm_study/regression/compare.py: `base_med, cand_med = float(np.median(base)), float(np.median(cand))` -> `base_med, cand_med = float(np.mean(base)), float(np.mean(cand))` => test_compare.py -k outliers
  - fewer than 4 repetitions a side allowed: gemm_study/regression/compare.py: `MIN_REPETITIONS = 4` -> `MIN_REPETITIONS = 2` => test_compare.py -k ten_against_two
  - new and failed passes: gemm_study/regression/compare.py: `            if new.errors:` -> `            if False:` => test_compare.py -k new_and_failed
  - a worse count while faster is a regression again: gemm_study/regression/compare.py: `time_verdict != "FASTER"` -> `True` => test_compare.py -k while_faster
  - guards ignored: gemm_study/regression/compare.py: `if guarded(family, name) or` -> `if` => test_compare.py -k guarded
  - the revisions skipped by a step not named: gemm_study/regression/series.py: `gap = [(p.index, p.status) for p in points if before.index < p.index < after.index]` -> `gap = []` => test_history.py -k missing_revision
  - a failure hides the steps before it: gemm_study/regression/series.py: `    steps = change_points(points, settings)` -> `    steps = change_points(points[max((i for i, p in enumerate(points) if p.status != "ok"), default=-1) + 1:], settings)` => test_history.py -k failed_revision
  - no merge of small steps (a creep): gemm_study/regression/series.py: `        weakest = min(failing,` -> `        return [(f, t) for f, t in zip(found, tests) if _accepted(t)]
        weakest = min(failing,` => test_history.py -k creep
  - the drift of a segment's runs not pooled: gemm_study/regression/compare.py: `settings.drift**2 * (1 / runs[0] + 1 / runs[1])` -> `settings.drift**2 * 2` => test_history.py -k pool_their_drift
  - file order instead of dates: gemm_study/regression/history.py: `    if order_by == "args":` -> `    if True:` => test_history.py -k dates_not_file_names
  - spikes not split out: gemm_study/regression/series.py: `found |= {tau} | ({kappa} if kappa < stop else set())` -> `found |= {tau}` => test_history.py -k injected
"""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, require
from test_compare import write_run

from gemm_study.cli.history import main as history_main
from gemm_study.data.errors import run_cli

require("otava", "apache-otava")  # the history's change-point search

TUNED = "gemm/fp32/tuned/bm:128/m:1024/n:1024/k:1024"
WARP = "gemm/fp32/warptile/bm:128/m:1024/n:1024/k:1024"
NAIVE = "gemm/fp32/naive_row/block:16x16/m:1024/n:1024/k:1024"
PADDED = "gemm/fp32/shared_col_padded/tile:32/m:1024/n:1024/k:1024"


def samples(level, rng, clock=1980.0, drift=0.001, noise=0.002, reps=10):
    """Times of one run at `level` (relative cycles x 1 ms): the run's drift, then per-repetition noise."""
    run_level = level * (1 + rng.normal(0, drift))
    return {"times": list(run_level * 1980.0 / clock * (1 + rng.normal(0, noise, reps))), "clocks": [clock] * reps}


def history_of(tmp_path, levels, clocks=None, counters=None, errors=None, missing=None, seed=1, dates=None):
    """One run per revision: levels[name] = [level per revision]; errors/missing: {name: {revision}}."""
    rng = np.random.default_rng(seed)
    folder = tmp_path / "runs"
    folder.mkdir(exist_ok=True)
    count = len(next(iter(levels.values())))
    paths = []
    for i in range(count):
        benches = {}
        for name, series in levels.items():
            if i in (missing or {}).get(name, ()):
                continue
            if i in (errors or {}).get(name, ()):
                benches[name] = {"error": "wrong result: max_rel_err 0.5"}
                continue
            spec = samples(series[i], rng, clock=(clocks or [1980.0] * count)[i])
            spec["counters"] = {"gld_sectors_per_request": 4.0, **(counters or {}).get(name, [{}] * count)[i]}
            benches[name] = spec
        date = (dates or [f"2026-01-{i + 1:02d}T00:00:00+00:00" for i in range(count)])[i]
        paths.append(
            write_run(folder / f"{i:02d}_r{i}.json", benches, context={"git_revision": f"r{i}{'a' * 11}", "date": date})
        )
    return paths


def history(tmp_path, *argv):
    out = tmp_path / "out"
    status = history_main([*map(str, argv), "--out", str(out), "--no-figures"])
    return status, json.loads((out / "history.json").read_text()), (out / "history.md").read_text()


def found(result, kind=None):
    """(family, first bad revision index, recovered?) of every regression."""
    return [
        (e["family"], e["first_index"], e["recovered"] is not None)
        for e in result["regressions"]
        if kind is None or e["kind"] == kind
    ]


def steps(result, name):
    return [(s["revision"], s["verdict"]) for s in result["series"][name + "/manual_time"]["steps"]]


# ----------------------------------------------------------------------------- the cases


def test_a_step_across_a_missing_revision_is_measured_from_the_last_good_run(tmp_path):
    """tuned is missing in r3 and 10% slower from r4: found at r4, against r2, r3 named."""
    paths = history_of(tmp_path, {TUNED: [1, 1, 1, 1, 1.1, 1.1], WARP: [1] * 6}, missing={TUNED: {3}})
    status, result, text = history(tmp_path, *paths)
    assert status == 1 and found(result) == [("tuned", 4, False)]
    entry = result["regressions"][0]
    assert entry["last_good"] == "r2aaaaaaaaaaa" and entry["gap"] == ["r3aaaaaaaaaaa missing"]
    assert entry["step"] == pytest.approx(0.10, abs=0.01)
    assert "(r3aaaaaaaaaaa missing between)" in text


def test_a_gap_of_a_failed_revision_then_slower_is_a_failure_and_a_slowdown(tmp_path):
    """The pairwise history called this 'recovered': it FAILED at r3 and came back 10% slower."""
    paths = history_of(tmp_path, {TUNED: [1, 1, 1, 1, 1.1, 1.1], WARP: [1] * 6}, errors={TUNED: {3}})
    status, result, text = history(tmp_path, *paths)
    assert status == 1 and sorted(found(result)) == [("tuned", 3, True), ("tuned", 4, False)]
    failed = next(e for e in result["regressions"] if e["kind"] == "failed")
    assert failed["recovered"] == "r4aaaaaaaaaaa" and "FAILED: wrong result" in failed["what"]
    slower = next(e for e in result["regressions"] if e["kind"] == "time")
    assert slower["last_good"] == "r2aaaaaaaaaaa" and slower["gap"] == ["r3aaaaaaaaaaa failed"]


def test_a_creep_is_caught_from_its_first_revision(tmp_path):
    """+2.5% per revision, +10.4% over four: with the pair rule's 3% floor and 1% drift no single
    step passes, yet the series does from the first revision beyond the floor (r4, +5.1%); with
    the history's defaults from the first step."""
    creep = [1, 1, 1, 1.025, 1.025**2, 1.025**3, 1.025**4]
    paths = history_of(tmp_path, {TUNED: creep, WARP: [1] * 7})
    status, result, _ = history(tmp_path, *paths, "--min-effect", "0.03", "--drift", "0.01")
    assert status == 1 and found(result) == [("tuned", 4, False)]
    assert 0.05 < result["regressions"][0]["change"] < 0.11  # the last segment's level: r4-r6
    status, result, _ = history(tmp_path, *paths)
    assert status == 1 and found(result) == [("tuned", 3, False)]
    assert result["regressions"][0]["change"] == pytest.approx(0.104, abs=0.015)


def test_injected_steps_of_2_5_and_10_percent_are_found_at_their_revisions_and_nowhere_else(tmp_path):
    """The real history's plan: a build twice, then +2% in tuned, +5% in warptile, +10% in naive_row,
    accumulating, then a revision that removes them."""
    levels = {
        TUNED: [1, 1, 1.02, 1.02, 1.02, 1],
        WARP: [1, 1, 1, 1.05, 1.05, 1],
        NAIVE: [1, 1, 1, 1, 1.1, 1],
        PADDED: [1] * 6,
    }
    paths = history_of(tmp_path, levels)
    status, result, _ = history(tmp_path, *paths)
    assert status == 0  # removed at the last revision: nothing open
    assert found(result) == [("tuned", 2, True), ("warptile", 3, True), ("naive_row", 4, True)]
    assert steps(result, TUNED) == [(2, "SLOWER"), (5, "FASTER")]
    assert steps(result, PADDED) == []


def test_long_segments_pool_their_drift(tmp_path):
    """A 1.8% step between four runs and four runs: each side's drift allowance shrinks with its
    runs (noise 0.4% x sqrt(1/4 + 1/4)), so the 1.5% floor decides and the step is found."""
    paths = history_of(tmp_path, {TUNED: [1] * 4 + [1.018] * 4, WARP: [1] * 8})
    status, result, _ = history(tmp_path, *paths)
    assert status == 1 and found(result) == [("tuned", 4, False)]


def test_same_build_reruns_give_no_change_point(tmp_path):
    """Eight runs of one build with 0.3% drift per run: no step anywhere (the false-positive check)."""
    paths = history_of(tmp_path, {TUNED: [1] * 8, WARP: [1] * 8, NAIVE: [1] * 8}, seed=5)
    status, result, text = history(tmp_path, *paths)
    assert status == 0 and result["regressions"] == []
    assert all(not s["steps"] for s in result["series"].values())
    assert "## Open regressions (0)" in text


def test_a_fix_that_raises_a_count_while_much_faster_is_changed_not_a_regression(tmp_path):
    """The committed history's case: 16-67% faster, an exact count up: 'changed'."""
    counts = [{"smem_ld_requests": 4.2e7}] * 2 + [{"smem_ld_requests": 6.7e7}] * 2
    paths = history_of(tmp_path, {PADDED: [2, 2, 1, 1], WARP: [1] * 4}, counters={PADDED: counts})
    status, result, text = history(tmp_path, *paths)
    assert status == 0 and result["regressions"] == []
    event = result["series"][PADDED + "/manual_time"]["counter_events"][0]
    assert event["counter"] == "smem_ld_requests" and not event["regression"] and event["time"] == "FASTER"
    assert "## Counts that changed without a regression" in text


def test_a_guarded_counter_worse_is_a_regression_whatever_the_time(tmp_path):
    counts = [{"smem_ld_wavefronts_per_request": 1.0}] * 2 + [{"smem_ld_wavefronts_per_request": 4.0}] * 2
    paths = history_of(tmp_path, {PADDED: [1, 1, 0.8, 0.8], WARP: [1] * 4}, counters={PADDED: counts})
    status, result, _ = history(tmp_path, *paths)
    assert status == 1 and found(result, "counter") == [("shared_col_padded", 2, False)]


def test_a_benchmark_new_and_failing_is_a_failure(tmp_path):
    paths = history_of(tmp_path, {TUNED: [1, 1, 1], WARP: [1, 1, 1]}, missing={TUNED: {0, 1}}, errors={TUNED: {2}})
    status, result, _ = history(tmp_path, *paths)
    assert status == 1 and found(result) == [("tuned", 2, False)]


def test_a_lower_clock_alone_is_no_step(tmp_path):
    """r2 and r3 ran 4% slower in time at a 4% lower clock: the same in cycles."""
    paths = history_of(tmp_path, {TUNED: [1] * 5, WARP: [1] * 5}, clocks=[1980.0, 1980.0, 1900.0, 1900.0, 1980.0])
    status, result, text = history(tmp_path, *paths)
    assert status == 0 and all(not s["steps"] for s in result["series"].values())
    assert "in kcycles" in text


def test_runs_are_ordered_by_dates_not_file_names(tmp_path):
    """The slow run's file sorts first, its date last: the regression is the latest revision."""
    dates = ["2026-01-03T00:00:00+00:00", "2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00"]
    paths = history_of(tmp_path, {TUNED: [1.2, 1, 1], WARP: [1, 1, 1]}, dates=dates)
    status, result, text = history(tmp_path, tmp_path / "runs")
    assert [r["label"] for r in result["runs"]] == ["r1aaaaaaaaaaa", "r2aaaaaaaaaaa", "r0aaaaaaaaaaa"]
    assert status == 1 and found(result) == [("tuned", 2, False)]
    assert "ordered by run date (context date; the runs carry no git_commit_date)" in text
    _, given, text = history(tmp_path, *paths, "--order-by", "args")
    assert given["runs"][0]["label"] == "r0aaaaaaaaaaa" and "ordered in the order given" in text


def test_commit_dates_come_first_where_every_run_has_one(tmp_path):
    paths = history_of(tmp_path, {TUNED: [1, 1, 1], WARP: [1, 1, 1]})
    for path, commit in zip(paths, ["2026-02-03", "2026-02-01", "2026-02-02"]):
        data = json.loads(path.read_text())
        data["context"]["git_commit_date"] = commit
        path.write_text(json.dumps(data))
    _, result, text = history(tmp_path, *paths)
    assert [r["label"] for r in result["runs"]] == ["r1aaaaaaaaaaa", "r2aaaaaaaaaaa", "r0aaaaaaaaaaa"]
    assert "by commit date (context git_commit_date), then run date" in text


def test_open_regressions_name_the_ncu_command_of_the_bad_revision(tmp_path):
    paths = history_of(tmp_path, {TUNED: [1, 1, 1.1], WARP: [1, 1, 1]})
    _, result, text = history(tmp_path, *paths)
    assert result["regressions"][0]["ncu"] == (
        f"git checkout r2aaaaaaaaaaa && cmake --build build && build/bench/gemm-bench --ncu-command={TUNED}"
    )
    assert f"`{result['regressions'][0]['ncu']}`" in text


def test_figures_are_written_per_family(tmp_path):
    paths = history_of(tmp_path, {TUNED: [1, 1, 1.1], WARP: [1, 1, 1]}, errors={WARP: {1}})
    out = tmp_path / "out"
    assert history_main([*map(str, paths), "--out", str(out)]) == 1
    text = (out / "history.md").read_text()
    for family in ("tuned", "warptile"):
        assert (out / f"history_{family}.png").stat().st_size > 1000 and f"![{family}](history_{family}.png)" in text


# ----------------------------------------------------------------------------- committed runs


def test_real_runs_without_clocks_are_compared_in_time_and_say_so(tmp_path):
    folder = DATA.parents[2] / "reports" / "h200" / "regression"
    status, result, text = history(tmp_path, folder / "track_baseline.json", folder / "track_rerun.json", "--counters=")
    assert status == 0 and result["regressions"] == [] and result["statistics"] == ["ms"]
    assert "in ms" in text


def test_the_committed_h100_history_finds_the_unpadded_layout_and_calls_the_fix_no_regression(tmp_path):
    """Three H100 runs: 4d3e, 50cbe with the unpadded layout put back, 50cbe. By run date the
    unpadded build ran last: its three FP32 shared_col_padded slowdowns are the open regressions,
    each with the guarded wavefronts per request among its worse counts, and nothing else is."""
    folder = DATA.parents[2] / "reports" / "h100-80gb-hbm3" / "regression" / "history"
    status, result, _ = history(tmp_path, folder)
    assert result["runs"][-1]["label"] == "50cbe9466b08+unpadded"
    assert [(e["benchmark"].split("/")[3], e["kind"]) for e in result["regressions"]] == [
        ("tile:16", "time"),
        ("tile:32", "time"),
        ("tile:8", "time"),
    ] and status == 1
    assert {e["first_revision"] for e in result["regressions"]} == {"50cbe9466b08+unpadded"}
    assert all("smem_ld_wavefronts_per_request" in e["counter_regressions"] for e in result["regressions"])


# ----------------------------------------------------------------------------- bad input


def bad(capsys, *argv):
    assert run_cli(history_main, [str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_bad_inputs_are_one_line_exit_2(tmp_path, capsys):
    paths = history_of(tmp_path, {TUNED: [1, 1, 1], WARP: [1, 1, 1]})
    out = ["--out", tmp_path / "out"]
    assert "at least two tracking runs" in bad(capsys, paths[0], *out)
    assert "context has no 'build_number'" in bad(capsys, *paths, "--order-by", "build_number", *out)
    assert "not in the metric catalogue" in bad(capsys, *paths, "--counters", "bank_conflictz", *out)
    (tmp_path / "empty").mkdir()
    assert "no *.json or *.json.gz tracking runs" in bad(capsys, tmp_path / "empty", *out)
    (tmp_path / "runs" / "notes.json").write_text("{}")
    assert "notes.json: not a Google Benchmark results file" in bad(capsys, tmp_path / "runs", *out)
    (tmp_path / "runs" / "notes.json").unlink()
    (tmp_path / "file").write_text("")
    assert "cannot write" in bad(capsys, *paths, "--out", tmp_path / "file")


def test_context_mismatch_names_both_files(tmp_path, capsys):
    paths = history_of(tmp_path, {TUNED: [1, 1, 1], WARP: [1, 1, 1]})
    data = json.loads(paths[2].read_text())
    data["context"]["gpu_name"] = "NVIDIA H100 80GB HBM3"
    paths[2].write_text(json.dumps(data))
    err = bad(capsys, *paths, "--out", tmp_path / "out")
    assert "01_r1.json and " in err and "02_r2.json: the runs were not made in the same context" in err


def test_revision_label_keeps_what_follows_the_hash():
    from gemm_study.regression.history import revision_label

    assert revision_label("50cbe9466b08aa11") == "50cbe9466b08"
    assert revision_label("50cbe9466b08+unpadded") == "50cbe9466b08+unpadded"
    assert revision_label("c933aeef88c0aaaa-dirty") == "c933aeef88c0-dirty"
    assert revision_label("v1.2") == "v1.2"


def test_a_failure_over_the_last_two_revisions_is_one_open_regression(tmp_path):
    """Failing at r3 and r4 (the latest): one failure, first bad r3, still open, exit 1."""
    paths = history_of(tmp_path, {TUNED: [1] * 5, WARP: [1] * 5}, errors={TUNED: {3, 4}})
    status, result, _ = history(tmp_path, *paths)
    assert status == 1 and found(result) == [("tuned", 3, False)]
    assert result["regressions"][0]["kind"] == "failed" and result["regressions"][0]["open"]


def test_a_failure_over_two_revisions_then_passing_is_recovered(tmp_path):
    """Failing at r2 and r3, passing again at r4 at its old level: recovered at r4, exit 0."""
    paths = history_of(tmp_path, {TUNED: [1] * 5, WARP: [1] * 5}, errors={TUNED: {2, 3}})
    status, result, _ = history(tmp_path, *paths)
    assert status == 0 and found(result) == [("tuned", 2, True)]
    assert result["regressions"][0]["recovered"] == "r4aaaaaaaaaaa"


def test_the_committed_history_is_what_its_stated_command_gives(tmp_path, monkeypatch):
    """reports/.../history.md names its command; run again from the checkout (written elsewhere),
    it gives the same page and exit status 0: every regression recovered."""
    checkout = Path(__file__).resolve().parents[2]
    committed = (checkout / "reports/h100-80gb-hbm3/regression/history/history.md").read_text()
    stated = re.search(r"^Command: `gemm-history (.*)`$", committed, re.MULTILINE)
    argv = stated.group(1).split()
    argv[argv.index("--out") + 1] = str(tmp_path)
    monkeypatch.chdir(checkout)
    assert history_main(argv) == 0
    regenerated = (tmp_path / "history.md").read_text()
    assert regenerated.replace(regenerated.splitlines()[2], stated.group(0)) == committed


def test_without_otava_the_history_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    """The history needs Otava, the study does not: gemm-history names the package in one line."""
    monkeypatch.setitem(sys.modules, "otava", None)  # import otava now fails
    paths = history_of(tmp_path, {TUNED: [1, 1, 1], WARP: [1, 1, 1]})
    assert run_cli(history_main, [*map(str, paths), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs apache-otava" in err and "pip install --no-deps" in err


def test_a_long_revision_label_is_cut_on_the_axis_and_numbered_like_the_table():
    from gemm_study.regression.history import TICK_CHARS, tick_label

    assert tick_label(0, "e55dd11") == "#0 e55dd11"
    long = tick_label(4, "e55dd11+slow-warptile+slow-blocktile_2d+slow-blocktile_1d")
    assert len(long) == TICK_CHARS and long.startswith("#4 e55dd11+slow") and long.endswith("\u2026")


def test_a_series_takes_the_sms_counted_cycles_only_where_every_run_counted_them():
    """A history never mixes the two clocks: the counted cycles where every run of the benchmark
    has them on every repetition, NVML's cycles where one run lacks them."""
    from gemm_study.data.results import Bench
    from gemm_study.regression.history import points_of

    def bench(counted):
        return Bench("shared", times=[1.0, 1.0], cycles=[1980.0, 1980.0], counted_cycles=counted)

    both = [("r1", {"x": bench([1600.0, 1600.0])}), ("r2", {"x": bench([1500.0, 1500.0])})]
    assert [p.values for p in points_of(both, "x", "kcycles")] == [[1600.0, 1600.0], [1500.0, 1500.0]]
    one = [("r1", {"x": bench([1600.0, 1600.0])}), ("r2", {"x": bench([])})]
    assert [p.values for p in points_of(one, "x", "kcycles")] == [[1980.0, 1980.0], [1980.0, 1980.0]]
