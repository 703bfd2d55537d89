"""compare.py: each rule of the verdict has a test that fails when the rule is removed."""

import json
import subprocess

import numpy as np
import pytest
from conftest import DATA, SCRIPTS, command

from gemm_study.cli.compare import main as compare_main
from gemm_study.data.errors import run_cli

REGRESSION = SCRIPTS.parent / "reports" / "h200" / "regression"
CONTRACT = DATA / "cmp_contract_run.json"
SHARED = "gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024"
NAIVE = "gemm/fp32/naive_row/block:16x16/m:1024/n:1024/k:1024"
CONTEXT = json.loads((DATA / "h200_512_partial.json").read_text())["context"]


def guarded(argv):
    """The command line as installed: its exit statuses, never a traceback."""
    return run_cli(compare_main, argv)


def jitter(center, rel=0.002, n=10, seed=0):
    rng = np.random.default_rng(seed)
    return list(center * (1 + rel * rng.uniform(-1, 1, n)))


def write_run(path, benches, context=None):
    """benches: name -> times list, or dict(times=, clocks=, counters=, error=, real_time=, extra=)."""
    rows = []
    for name, spec in benches.items():
        spec = spec if isinstance(spec, dict) else {"times": spec}
        times = spec.get("times") or [None] * spec.get("reps", 10)
        for rep, t in enumerate(times):
            row = {
                "name": name + "/manual_time",
                "run_name": name + "/manual_time",
                "run_type": "iteration",
                "repetitions": len(times),
                "repetition_index": rep,
                "threads": 1,
                "iterations": 10,
                "time_unit": "ms",
            }
            if spec.get("error") and (spec.get("error_reps") is None or rep in spec["error_reps"]):
                row.update(error_occurred=True, error_message=spec["error"], real_time=0, cpu_time=0)
            else:
                row.update(real_time=spec.get("real_time", t), cpu_time=t, median_ms=t, gflops=1.0 / t)
                if "clocks" in spec:
                    row["sm_clock_mhz"] = spec["clocks"][rep]
                row.update(spec.get("counters", {}))
                row.update(spec.get("extra", {}))
            rows.append(row)
    path.write_text(json.dumps({"context": dict(CONTEXT, **(context or {})), "benchmarks": rows}))
    return path


def run(tmp_path, base, cand, *extra):
    out = tmp_path / "cmp.json"
    status = compare_main([str(base), str(cand), "--json", str(out), *extra])
    return status, json.loads(out.read_text())


def pair(tmp_path, base, cand, *extra, context=None):
    return run(tmp_path, write_run(tmp_path / "a.json", base), write_run(tmp_path / "b.json", cand, context), *extra)


def row(result, family="shared"):
    return next(r for r in result["benchmarks"] if r["name"].split("/")[2] == family)


def bad(tmp_path, capsys, *argv):
    """Runs the command line as CI does; returns its one-line message (asserting exit 2)."""
    assert guarded([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


# --- time verdicts ------------------------------------------------------------------------


def test_identical_files_are_all_same(tmp_path, recorded):
    status, result = run(tmp_path, recorded, recorded)
    assert status == 0 and {r["verdict"] for r in result["benchmarks"]} == {"SAME"}


def test_ten_percent_slowdown_is_slower_and_fails(tmp_path):
    status, result = pair(
        tmp_path,
        {SHARED: jitter(1.0), NAIVE: jitter(1.0, seed=1)},
        {SHARED: jitter(1.10, seed=2), NAIVE: jitter(1.0, seed=3)},
    )
    assert status == 1 and row(result)["verdict"] == "SLOWER" and row(result, "naive_row")["verdict"] == "SAME"
    assert result["regressions"] == [SHARED + "/manual_time"]


def test_speedup_is_faster_and_never_fails(tmp_path):
    status, result = pair(tmp_path, {SHARED: jitter(1.0)}, {SHARED: jitter(0.8, seed=2)})
    assert status == 0 and row(result)["verdict"] == "FASTER"


def test_min_effect_rule(tmp_path):
    """Without drift and noise, only the minimum effect keeps a significant 2% change SAME."""
    base, cand = {SHARED: jitter(1.0, 0.0005)}, {SHARED: jitter(1.02, 0.0005, seed=2)}
    assert row(pair(tmp_path, base, cand, "--drift", "0")[1])["verdict"] == "SAME"
    assert row(pair(tmp_path, base, cand, "--drift", "0", "--min-effect", "0.01")[1])["verdict"] == "SLOWER"


def test_noise_rule(tmp_path):
    """A significant 5.7% change inside the baseline's own spread is not SLOWER."""
    base = {SHARED: [1.0] * 5 + [1.10] * 5}
    cand = {SHARED: [1.11] * 10}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["p_slower"] < 0.001 and row(result)["verdict"] == "SAME" and status == 0
    assert row(pair(tmp_path, base, cand, "--noise-factor", "0")[1])["verdict"] == "SLOWER"


def test_drift_allowance_rule(tmp_path):
    """3.6% with no within-run noise: beyond the 3% floor, inside 3 x sqrt(2) x 1% drift."""
    base, cand = {SHARED: jitter(1.0, 0.0005)}, {SHARED: jitter(1.036, 0.0005, seed=2)}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["verdict"] == "SAME" and row(result)["threshold"] == pytest.approx(0.0424, abs=5e-4)
    assert row(pair(tmp_path, base, cand, "--drift", "0")[1])["verdict"] == "SLOWER"


def test_p_value_rule(tmp_path):
    """Medians 10% apart, but the ranks overlap (p ~ 0.15): UNSURE, which only --strict fails."""
    base = {SHARED: [1.0] * 8 + [3.0] * 2}
    cand = {SHARED: [1.1] * 8 + [0.1] * 2}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["verdict"] == "UNSURE" and row(result)["p_slower"] > 0.05 and status == 0
    assert pair(tmp_path, base, cand, "--strict")[0] == 1


def test_too_few_repetitions_rule(tmp_path, capsys):
    """3 vs 3 repetitions cannot reach p < 0.05: a 2x slowdown is TOO_FEW, and the summary says so."""
    status, result = pair(tmp_path, {SHARED: [1.0, 1.001, 0.999]}, {SHARED: [2.0, 2.001, 1.999]})
    assert row(result)["verdict"] == "TOO_FEW" and row(result)["test_reachable"] is False and status == 0
    assert "Too few repetitions: for 1 benchmarks (3 vs 3 repetitions)" in capsys.readouterr().out
    assert pair(tmp_path, {SHARED: [1.0, 1.001, 0.999]}, {SHARED: [2.0, 2.001, 1.999]}, "--strict")[0] == 1
    four = pair(tmp_path, {SHARED: jitter(1.0, n=4)}, {SHARED: jitter(2.0, n=4)})
    assert four[0] == 1 and row(four[1])["verdict"] == "SLOWER"
    assert (
        row(pair(tmp_path, {SHARED: jitter(1.0, n=4)}, {SHARED: jitter(2.0, n=4)}, "--alpha", "0.01")[1])["verdict"]
        == "TOO_FEW"
    )


def test_same_verdict_needs_no_test(tmp_path):
    status, result = pair(tmp_path, {SHARED: [1.0, 1.001, 0.999]}, {SHARED: [1.0, 1.002, 0.998]})
    assert row(result)["verdict"] == "SAME" and status == 0


# --- cycles ---------------------------------------------------------------------------------


def test_cycles_cancel_a_lower_clock(tmp_path):
    """10% slower in time at a 10% lower clock: the same cycles, SAME (SLOWER when comparing time)."""
    base = {SHARED: {"times": jitter(1.0), "clocks": [1980.0] * 10}}
    cand = {SHARED: {"times": jitter(1.0 / 0.9, seed=2), "clocks": [1980.0 * 0.9] * 10}}
    status, result = pair(tmp_path, base, cand)
    r = row(result)
    assert (r["statistic"], r["verdict"], status) == ("kcycles", "SAME", 0)
    assert r["clock_change"] == pytest.approx(-0.1) and r["time_change"] == pytest.approx(0.111, abs=0.005)
    assert row(pair(tmp_path, base, cand, "--statistic", "time")[1])["verdict"] == "SLOWER"


def test_cycles_find_a_slowdown_hidden_by_a_higher_clock(tmp_path):
    base = {SHARED: {"times": jitter(1.0), "clocks": [1800.0] * 10}}
    cand = {SHARED: {"times": jitter(1.0, seed=2), "clocks": [1800.0 * 1.06] * 10}}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["verdict"] == "SLOWER" and status == 1


def test_the_sms_counted_clock_cancels_a_drop_nvml_does_not_show(tmp_path):
    """NVML reads 1,980 MHz on both sides; the candidate's SMs counted 10% fewer cycles per second
    and it took 1/0.9 the time: the same counted cycles, SAME. Cycles from NVML's clock would call
    it SLOWER, and do where one side did not count its clock (no mixing of the two clocks)."""

    def counted(mhz):
        return {"sm_clock_counted_mhz": mhz}

    base = {SHARED: {"times": jitter(1.0), "clocks": [1980.0] * 10, "extra": counted(1600.0)}}
    cand = {SHARED: {"times": jitter(1.0 / 0.9, seed=2), "clocks": [1980.0] * 10, "extra": counted(1440.0)}}
    status, result = pair(tmp_path, base, cand)
    r = row(result)
    assert (r["statistic"], r["clock"], r["verdict"], status) == ("kcycles", "counted", "SAME", 0)
    assert any("the SMs' own count" in n for n in result["notes"])
    uncounted = {SHARED: {"times": jitter(1.0 / 0.9, seed=2), "clocks": [1980.0] * 10}}
    status, result = pair(tmp_path, base, uncounted)
    r = row(result)
    assert (r["clock"], r["verdict"], status) == ("nvml", "SLOWER", 1)


@pytest.mark.parametrize("clock", [-1.0, 0.0, 1e6, "1600"])
def test_a_run_clock_count_that_is_not_a_possible_clock_is_refused(tmp_path, capsys, clock):
    path = write_run(tmp_path / "bad.json", {SHARED: {"times": jitter(1.0), "extra": {"sm_clock_counted_mhz": clock}}})
    assert "sm_clock_counted_mhz" in bad(tmp_path, capsys, path, path)


def test_a_count_on_too_few_samples_is_not_the_repetitions_clock():
    """One sample of four long enough for the timer (bench/timing.h's kMinCountedShare): no count,
    as gemm-bench gives none for that repetition; two of four: the median of theirs."""
    from gemm_study.data.results import repetition_counted_cycles

    samples = {"ms": [1.0] * 4, "sm_clock_mhz": [1980.0] * 4, "flagged": [False] * 4}
    row = {"time_ms": 1.0, "samples": dict(samples, sm_clock_counted_mhz=[1600.0, 0.0, 0.0, 0.0])}
    assert repetition_counted_cycles(row) is None
    assert repetition_counted_cycles(dict(row, sm_clock_counted_mhz=1600.0)) is None, "the samples decide"
    row["samples"]["sm_clock_counted_mhz"] = [1600.0, 1700.0, 0.0, 0.0]
    assert repetition_counted_cycles(row) == pytest.approx(1650.0)
    assert repetition_counted_cycles({"time_ms": 2.0, "sm_clock_counted_mhz": 1500.0}) == pytest.approx(3000.0)
    assert repetition_counted_cycles({"time_ms": 2.0, "sm_clock_counted_mhz": 1500.0, "end_to_end": True}) is None


@pytest.mark.parametrize("counted", [[1600.0], [1600.0, -1.0], [1600.0, float("inf")], "1600"])
def test_sample_clock_counts_that_are_not_one_number_per_sample_are_refused(tmp_path, capsys, counted):
    samples = {"ms": [1.0, 1.0], "sm_clock_mhz": [1980.0, 1980.0], "flagged": [0, 0]}
    spec = {SHARED: {"times": jitter(1.0), "extra": {"samples": dict(samples, sm_clock_counted_mhz=counted)}}}
    path = write_run(tmp_path / "bad.json", spec)
    assert "sm_clock_counted_mhz" in bad(tmp_path, capsys, path, path)


def test_end_to_end_compares_time_since_the_copies_ignore_the_sm_clock():
    """Copies run at the link's speed: cycles (time x SM clock) would move an end-to-end benchmark
    whenever the clock moved, so its repetitions have none and the comparison takes its time."""
    from gemm_study.data.results import repetition_cycles

    kernel = {"time_ms": 2.0, "sm_clock_mhz": 1980.0, "end_to_end": False}
    assert repetition_cycles(kernel) == pytest.approx(3960.0)
    assert repetition_cycles({**kernel, "end_to_end": True}) is None


def test_clock_on_one_side_only_compares_time_and_says_so(tmp_path, capsys):
    base = {SHARED: {"times": jitter(1.0), "clocks": [1980.0] * 10}}
    cand = {SHARED: jitter(1.0, seed=2)}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["statistic"] == "ms" and "no sm_clock_mhz recorded" in result["notes"][0]
    capsys.readouterr()
    bad(tmp_path, capsys, tmp_path / "a.json", tmp_path / "b.json", "--statistic", "cycles")


def test_verdict_reads_median_ms_not_real_time(tmp_path):
    status, result = pair(tmp_path, {SHARED: jitter(1.0)}, {SHARED: {"times": jitter(1.0, seed=2), "real_time": 5.0}})
    assert row(result)["verdict"] == "SAME" and row(result)["real_time_change"] > 3


def test_real_time_is_used_where_median_ms_is_absent(tmp_path):
    base = write_run(tmp_path / "a.json", {SHARED: jitter(1.0)})
    data = json.loads(base.read_text())
    for entry in data["benchmarks"]:
        del entry["median_ms"]
        entry["real_time"] *= 1.2e6  # in ns
        entry["time_unit"] = "ns"
    (tmp_path / "b.json").write_text(json.dumps(data))
    status, result = run(tmp_path, base, tmp_path / "b.json")
    assert row(result)["verdict"] == "SLOWER"


# --- failures, missing, counters ------------------------------------------------------------------


def test_failed_candidate_is_a_regression_with_its_message(tmp_path, capsys):
    status, result = pair(
        tmp_path,
        {SHARED: jitter(1.0), NAIVE: jitter(1.0)},
        {SHARED: {"error": "wrong result: max_rel_err 0.3"}, NAIVE: jitter(1.0)},
    )
    assert status == 1 and row(result)["verdict"] == "FAILED"
    assert "FAILED: " + SHARED + "/manual_time: wrong result: max_rel_err 0.3" in capsys.readouterr().out


def test_every_benchmark_failing_fails(tmp_path):
    status, result = pair(
        tmp_path,
        {SHARED: jitter(1.0), NAIVE: jitter(1.0)},
        {SHARED: {"error": "launch failed"}, NAIVE: {"error": "launch failed"}},
    )
    assert status == 1 and {r["verdict"] for r in result["benchmarks"]} == {"FAILED"}


def test_one_failed_repetition_fails(tmp_path):
    status, result = pair(
        tmp_path, {SHARED: jitter(1.0)}, {SHARED: {"times": jitter(1.0), "error": "CUDA error", "error_reps": [7]}}
    )
    assert status == 1 and row(result)["errored_repetitions"] == 1


def test_failed_baseline_is_reported_not_failed(tmp_path):
    status, result = pair(tmp_path, {SHARED: {"error": "launch failed"}}, {SHARED: jitter(1.0)})
    assert status == 0 and row(result)["verdict"] == "BASE_FAILED"


def test_missing_and_new_benchmarks_fail_only_with_strict(tmp_path):
    status, result = pair(tmp_path, {SHARED: jitter(1.0)}, {NAIVE: jitter(1.0)})
    assert {r["verdict"] for r in result["benchmarks"]} == {"MISSING", "NEW"} and status == 0
    assert pair(tmp_path, {SHARED: jitter(1.0)}, {NAIVE: jitter(1.0)}, "--strict")[0] == 1


def test_worse_exact_count_at_same_time_is_a_regression(tmp_path, capsys):
    base = {SHARED: {"times": jitter(1.0), "counters": {"smem_ld_wavefronts": 1000.0}}}
    cand = {SHARED: {"times": jitter(1.0, seed=2), "counters": {"smem_ld_wavefronts": 32000.0}}}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["verdict"] == "SAME" and status == 1
    assert row(result)["counters"]["smem_ld_wavefronts"]["verdict"] == "WORSE"
    assert "Exact counts that changed (benchmarks): smem_ld_wavefronts WORSE in 1" in capsys.readouterr().out


def test_better_exact_count_is_reported_with_its_direction(tmp_path, capsys):
    base = {SHARED: {"times": jitter(1.0), "counters": {"gld_sectors": 4000.0}}}
    cand = {SHARED: {"times": jitter(1.0, seed=2), "counters": {"gld_sectors": 1000.0}}}
    status, result = pair(tmp_path, base, cand)
    assert status == 0 and row(result)["counters"]["gld_sectors"]["verdict"] == "BETTER"
    assert "gld_sectors BETTER in 1" in capsys.readouterr().out


def test_noisy_counter_change_is_not_a_regression(tmp_path):
    base = {SHARED: {"times": jitter(1.0), "counters": {"dram_read_bytes": 1000.0}}}
    cand = {SHARED: {"times": jitter(1.0, seed=2), "counters": {"dram_read_bytes": 9000.0}}}
    status, result = pair(tmp_path, base, cand)
    assert status == 0 and row(result)["counters"]["dram_read_bytes"]["verdict"] == "WORSE"


def test_exact_count_tolerance(tmp_path):
    """0.05% of an exact count is replay residue, 1% is a change (--count-tolerance 0.1%)."""
    base = {SHARED: {"times": jitter(1.0), "counters": {"gld_sectors": 100000.0}}}
    tiny = {SHARED: {"times": jitter(1.0, seed=2), "counters": {"gld_sectors": 100050.0}}}
    real = {SHARED: {"times": jitter(1.0, seed=2), "counters": {"gld_sectors": 101000.0}}}
    assert pair(tmp_path, base, tiny)[1]["benchmarks"][0]["counters"] == {}
    assert pair(tmp_path, base, real)[1]["benchmarks"][0]["counters"]["gld_sectors"]["verdict"] == "WORSE"


def test_counter_on_one_side_is_missing_not_zero(tmp_path):
    status, result = pair(
        tmp_path, {SHARED: {"times": jitter(1.0), "counters": {"gld_sectors": 100.0}}}, {SHARED: jitter(1.0)}
    )
    assert row(result)["counters"]["gld_sectors"]["verdict"] == "MISSING"


def test_bookkeeping_and_clock_are_never_compared(tmp_path):
    base = {
        SHARED: {"times": jitter(1.0), "clocks": [1980.0] * 10, "extra": {"stage_timing_s": 1.0, "clock_throttled": 0}}
    }
    cand = {
        SHARED: {
            "times": jitter(1.0, seed=2),
            "clocks": [1980.0] * 10,
            "extra": {"stage_timing_s": 90.0, "clock_throttled": 1},
        }
    }
    status, result = pair(tmp_path, base, cand)
    assert status == 0 and row(result)["counters"] == {} and row(result)["throttled"] == ["candidate"]


def test_time_only_skips_counters(tmp_path):
    base = {SHARED: {"times": jitter(1.0), "counters": {"smem_ld_wavefronts": 1000.0}}}
    cand = {SHARED: {"times": jitter(1.0, seed=2), "counters": {"smem_ld_wavefronts": 32000.0}}}
    assert pair(tmp_path, base, cand, "--time-only")[0] == 0


# --- the new results format -----------------------------------------------------------------------


def test_contract_file_uses_variant_family_clocks_and_fails_on_its_error(tmp_path):
    status, result = run(tmp_path, CONTRACT, CONTRACT)
    verdicts = {r["family"]: r["verdict"] for r in result["benchmarks"]}
    assert verdicts == {"shared_col_padded": "SAME", "wmma": "SAME", "shared_register": "FAILED"}
    assert status == 1 and result["notes"] == []
    assert row(result, "shared_col_padded")["statistic"] == "kcycles"
    assert row(result, "shared_col_padded")["throttled"] == ["baseline", "candidate"]


def test_alias_compares_two_variants_of_one_run(tmp_path):
    padded = "gemm/fp32/shared_col_padded/tile:32/m:1024/n:1024/k:1024"
    unpadded = "gemm/fp32/shared_col/tile:32/m:1024/n:1024/k:1024"
    status, result = pair(
        tmp_path, {padded: jitter(1.0)}, {unpadded: jitter(3.0)}, "--alias", "shared_col=shared_col_padded"
    )
    assert status == 1 and [r["verdict"] for r in result["benchmarks"]] == ["SLOWER"]


@pytest.mark.parametrize(
    "alias, side", [("shared_coll=shared_col_padded", "shared_coll"), ("shared_col=shared_col_pad", "shared_col_pad")]
)
def test_alias_that_matches_nothing_is_bad_input(tmp_path, capsys, alias, side):
    base = write_run(tmp_path / "a.json", {"gemm/fp32/shared_col_padded/tile:32/m:1024/n:1024/k:1024": jitter(1.0)})
    cand = write_run(tmp_path / "b.json", {"gemm/fp32/shared_col/tile:32/m:1024/n:1024/k:1024": jitter(1.0)})
    assert f"no benchmark of family '{side}'" in bad(tmp_path, capsys, base, cand, "--alias", alias)


def test_alias_without_equals_is_bad_input(tmp_path, capsys):
    good = write_run(tmp_path / "a.json", {SHARED: jitter(1.0)})
    assert "expected CANDIDATE_FAMILY=BASELINE_FAMILY" in bad(tmp_path, capsys, good, good, "--alias", "shared")


def test_two_aliases_onto_one_family_are_bad_input(tmp_path, capsys):
    base = write_run(tmp_path / "a.json", {"gemm/fp32/shared_col_padded/tile:32/m:1024/n:1024/k:1024": jitter(1.0)})
    cand = write_run(
        tmp_path / "b.json",
        {
            "gemm/fp32/shared_col/tile:32/m:1024/n:1024/k:1024": jitter(1.0),
            "gemm/fp32/shared/tile:32/m:1024/n:1024/k:1024": jitter(1.0),
        },
    )
    err = bad(
        tmp_path, capsys, base, cand, "--alias", "shared_col=shared_col_padded", "--alias", "shared=shared_col_padded"
    )
    assert "both become gemm/fp32/shared_col_padded/tile:32" in err


# --- impossible inputs: exit 2, one line naming the file and the entry -----------------------------


def mutate(tmp_path, change):
    data = json.loads(write_run(tmp_path / "a.json", {SHARED: jitter(1.0), NAIVE: jitter(1.0)}).read_text())
    change(data)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data))
    return path


def set_entry(index, **fields):
    return lambda data: data["benchmarks"][index].update(fields)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            set_entry(3, median_ms=0),
            "entry 3 (gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024/manual_time): median_ms is 0",
        ),
        (set_entry(3, median_ms=-1.5), "entry 3 (gemm/fp32/shared/tile:16"),
        (
            set_entry(4, median_ms=float("nan")),
            "entry 4 (gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024/manual_time): median_ms is nan",
        ),
        (set_entry(4, median_ms=float("inf")), "median_ms is inf"),
        (set_entry(4, median_ms="fast"), "median_ms is 'fast'"),
        (set_entry(4, median_ms=True), "median_ms is True"),
        (
            set_entry(12, sm_clock_mhz=0),
            "entry 12 (gemm/fp32/naive_row/block:16x16/m:1024/n:1024/k:1024/manual_time): sm_clock_mhz is 0",
        ),
        (set_entry(12, clock_throttled="yes"), "entry 12 (gemm/fp32/naive_row/block:16x16"),
        (set_entry(2, repetition_index="x"), "entry 2 (gemm/fp32/shared"),
        (
            set_entry(2, variant="shared"),
            "entry 2 (gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024/manual_time): 'variant' must be",
        ),
        (
            lambda d: d["benchmarks"].append(dict(d["benchmarks"][5])),
            "entry 20 (gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024/manual_time): duplicate benchmark (repetition 5 is also entry 5)",
        ),
        (
            lambda d: d["benchmarks"][6].pop("median_ms"),
            "entry 6 (gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024/manual_time): no median_ms",
        ),
        (lambda d: [e.update(run_type="aggregate") for e in d["benchmarks"]], "only aggregate rows (20)"),
        (
            lambda d: [e.update(name="BM_memcpy", run_name="BM_memcpy") for e in d["benchmarks"]],
            "no benchmark of gemm-study (20 entries",
        ),
        (lambda d: d.update(benchmarks=[]), "no benchmark of gemm-study (0 entries"),
        (lambda d: d.update(benchmarks={}), "no 'benchmarks' list"),
        (lambda d: d.pop("context"), "no 'context' section"),
        (lambda d: d["benchmarks"].insert(0, 7), "benchmark entry 0 has no name"),
        (lambda d: d["benchmarks"][0].update(run_name=3), "benchmark entry 0: run_name is 3"),
    ],
)
def test_impossible_inputs_are_one_line_exit_2(tmp_path, capsys, change, message):
    base = write_run(tmp_path / "good.json", {SHARED: jitter(1.0), NAIVE: jitter(1.0)})
    err = bad(tmp_path, capsys, base, mutate(tmp_path, change))
    assert "b.json: " in err and message in err


def test_time_unit_checked_where_real_time_is_the_statistic(tmp_path, capsys):
    def no_median(data):
        for entry in data["benchmarks"]:
            del entry["median_ms"]
            entry["time_unit"] = "fortnights"

    err = bad(tmp_path, capsys, mutate(tmp_path, no_median), mutate(tmp_path, no_median))
    assert "entry 0 (gemm/fp32/shared/tile:16/m:1024/n:1024/k:1024/manual_time): time_unit 'fortnights'" in err


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"context": {}, "benchmarks": [', "not valid JSON (truncated?)"),
        (b"\xff\xfe\x00garbage", "cannot be read: UnicodeDecodeError"),
        (b"[" * 100000 + b"]" * 100000, "cannot be read: RecursionError"),
        (b"[1, 2]", "not a Google Benchmark results file"),
    ],
)
def test_unreadable_files_are_one_line_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "b.json"
    path.write_bytes(content)
    assert message in bad(tmp_path, capsys, write_run(tmp_path / "a.json", {SHARED: jitter(1.0)}), path)


def test_missing_file_and_directory(tmp_path, capsys):
    good = write_run(tmp_path / "a.json", {SHARED: jitter(1.0)})
    assert "nope.json: no such file" in bad(tmp_path, capsys, good, tmp_path / "nope.json")
    assert "a folder, not a results file" in bad(tmp_path, capsys, good, tmp_path)


@pytest.mark.parametrize("flag", ["--json", "--markdown"])
def test_unwritable_output_is_exit_2(tmp_path, capsys, flag):
    good = write_run(tmp_path / "a.json", {SHARED: jitter(1.0)})
    err = bad(tmp_path, capsys, good, good, flag, tmp_path / "no_such_dir" / "out")
    assert "no_such_dir/out: cannot write" in err
    assert "cannot write" in bad(tmp_path, capsys, good, good, flag, tmp_path)


@pytest.mark.parametrize(
    "flag",
    [
        ["--min-effect", "-0.1"],
        ["--alpha", "1.5"],
        ["--alpha", "0"],
        ["--count-tolerance", "x"],
        ["--drift", "nan"],
        ["--noise-factor", "-1"],
    ],
)
def test_bad_settings_are_bad_input(tmp_path, capsys, flag):
    good = write_run(tmp_path / "a.json", {SHARED: jitter(1.0)})
    assert "expected a fraction" in bad(tmp_path, capsys, good, good, *flag)


def test_context_mismatch_is_refused_unless_allowed(tmp_path, capsys):
    base = write_run(tmp_path / "a.json", {SHARED: jitter(1.0)})
    cand = write_run(tmp_path / "b.json", {SHARED: jitter(1.0)}, context={"gpu_name": "NVIDIA H100 80GB HBM3"})
    assert "not made in the same context" in bad(tmp_path, capsys, base, cand)
    assert guarded([str(base), str(cand), "--allow-context-mismatch"]) == 0


def test_hostile_mutations_never_trace_back(tmp_path, capsys):
    """Every field of a contract entry replaced by junk: exit 0, 1 or 2, never an exception."""
    data = json.loads(CONTRACT.read_text())
    junk = [None, "x", -1, 0, 1e308, float("nan"), [], {}, True, {"family": 3}, "gemm/fp32/x/m:1/n:1/k:1"]
    rng = np.random.default_rng(7)
    for trial in range(150):
        mutated = json.loads(json.dumps(data))
        entry = mutated["benchmarks"][int(rng.integers(len(mutated["benchmarks"])))]
        key = list(entry)[int(rng.integers(len(entry)))]
        entry[key] = junk[int(rng.integers(len(junk)))]
        path = tmp_path / "m.json"
        path.write_text(json.dumps(mutated))
        status = guarded([str(CONTRACT), str(path)])
        err = capsys.readouterr().err
        assert status in (0, 1, 2) and "unexpected" not in err, (trial, key, entry[key], err)


def test_command_line_prints_no_traceback(tmp_path):
    bad_file = mutate(tmp_path, set_entry(3, median_ms=-1))
    proc = subprocess.run([command("gemm-compare"), str(bad_file), str(bad_file)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


# --- the committed H200 runs (old format: no clocks, no variant) -----------------------------------

SAME_BUILD = ["track_baseline.json", "track_rerun.json", "track_counters_off.json"]


@pytest.mark.parametrize("base, cand", [(a, b) for a in SAME_BUILD for b in SAME_BUILD if a != b])
def test_runs_of_one_build_give_no_slower(tmp_path, base, cand):
    status, result = run(tmp_path, REGRESSION / base, REGRESSION / cand, "--time-only")
    assert status == 0 and not any(r["verdict"] == "SLOWER" for r in result["benchmarks"])
    assert len(result["benchmarks"]) == 50 and "times compared, not cycles" in result["notes"][0]


def test_same_build_pair_without_the_drift_allowance_is_not_clean(tmp_path):
    """The allowance matters on real data: with --drift 0 the counters-off run is SLOWER somewhere."""
    status, result = run(
        tmp_path,
        REGRESSION / "track_counters_off.json",
        REGRESSION / "track_baseline.json",
        "--time-only",
        "--drift",
        "0",
    )
    assert status == 1


def test_unpadded_layout_is_slower_with_more_wavefronts(tmp_path):
    status, result = run(
        tmp_path,
        REGRESSION / "track_baseline.json",
        REGRESSION / "track_rerun.json",
        "--alias",
        "shared_col=shared_col_padded",
    )
    assert status == 1 and [r["verdict"] for r in result["benchmarks"]] == ["SLOWER"] * 6
    assert all(r["counters"]["smem_ld_wavefronts"]["verdict"] == "WORSE" for r in result["benchmarks"])


# --- rules added with the history work --------------------------------------------------------------


def test_an_impossible_time_is_bad_input_not_an_infinite_change(tmp_path, capsys):
    """1e306 ms used to give SLOWER with change = inf and numpy overflow warnings."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        err = bad(
            tmp_path,
            capsys,
            write_run(tmp_path / "a.json", {SHARED: jitter(1.0)}),
            write_run(tmp_path / "b.json", {SHARED: {"times": jitter(1e306), "clocks": [1980.0] * 10}}),
        )
    assert "median_ms is 1.0005478467492859e+306" in err and "not a possible measurement" in err


def test_ten_against_two_repetitions_is_too_few(tmp_path):
    """The rule the docs state: at least 4 repetitions per side, whatever the rank test allows
    (10 vs 2 can reach p = 0.015, but 2 values give no spread)."""
    status, result = pair(tmp_path, {SHARED: jitter(1.0)}, {SHARED: jitter(2.0, n=2)})
    assert row(result)["verdict"] == "TOO_FEW" and status == 0


def test_a_median_against_a_mean_is_said(tmp_path):
    base = write_run(tmp_path / "a.json", {SHARED: jitter(1.0)})
    data = json.loads(base.read_text())
    for entry in data["benchmarks"]:
        del entry["median_ms"]
    (tmp_path / "b.json").write_text(json.dumps(data))
    _, result = run(tmp_path, base, tmp_path / "b.json")
    assert any("a median against a mean" in n for n in result["notes"])
    assert any("real_time (Google Benchmark's mean)" in n for n in result["notes"])


def test_a_clock_on_one_side_only_is_said(tmp_path):
    _, result = pair(tmp_path, {SHARED: {"times": jitter(1.0), "clocks": [1980.0] * 10}}, {SHARED: jitter(1.0)})
    assert "sm_clock_mhz recorded on one side only: every benchmark compared in time, not cycles" in result["notes"]


def test_new_and_failed_is_failed(tmp_path, capsys):
    status, result = pair(
        tmp_path, {SHARED: jitter(1.0)}, {SHARED: jitter(1.0), NAIVE: {"error": "launch failed: too many resources"}}
    )
    assert status == 1 and row(result, "naive_row")["verdict"] == "FAILED"
    assert (
        "naive_row/block:16x16/m:1024/n:1024/k:1024/manual_time: launch failed: too many resources"
        in capsys.readouterr().out
    )
    assert pair(tmp_path, {SHARED: jitter(1.0)}, {SHARED: jitter(1.0), NAIVE: jitter(1.0)})[0] == 0  # NEW alone passes


def test_a_worse_count_while_faster_is_changed_not_a_regression(tmp_path):
    base = {SHARED: {"times": jitter(1.0), "counters": {"smem_ld_wavefronts": 1000.0}}}
    cand = {SHARED: {"times": jitter(0.7, seed=2), "counters": {"smem_ld_wavefronts": 4000.0}}}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["verdict"] == "FASTER" and row(result)["counter_regressions"] == [] and status == 0
    assert row(result)["counters"]["smem_ld_wavefronts"]["verdict"] == "WORSE"


def test_a_guarded_counter_worse_is_a_regression_even_when_faster(tmp_path, capsys):
    """guards.tsv: the conflict-free rung stands for one wavefront per shared load."""
    name = "gemm/fp32/conflict_free/bm:128/m:1024/n:1024/k:1024"
    base = {name: {"times": jitter(1.0), "counters": {"smem_ld_wavefronts_per_request": 1.0}}}
    cand = {name: {"times": jitter(0.7, seed=2), "counters": {"smem_ld_wavefronts_per_request": 2.0}}}
    status, result = pair(tmp_path, base, cand)
    assert status == 1 and row(result, "conflict_free")["counter_regressions"] == ["smem_ld_wavefronts_per_request"]
    assert "smem_ld_wavefronts_per_request WORSE (1 -> 2) [regression]" in capsys.readouterr().out


def test_a_higher_is_better_count_that_falls_is_worse(tmp_path):
    base = {SHARED: {"times": jitter(1.0), "counters": {"ffma_per_smem_ld": 16.0}}}
    cand = {SHARED: {"times": jitter(1.0, seed=2), "counters": {"ffma_per_smem_ld": 8.0}}}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["counters"]["ffma_per_smem_ld"]["verdict"] == "WORSE" and status == 1


def sampled_run(path, scale, flagged=(), clock=1980.0, slowdown=()):
    """A run whose entries carry per-sample times and clocks (gemm-bench's samples object)."""
    data = json.loads(write_run(path, {SHARED: {"times": jitter(scale), "clocks": [clock] * 10}}).read_text())
    for entry in data["benchmarks"]:
        ms = jitter(entry["median_ms"], n=20, seed=entry["repetition_index"])
        clocks = [clock] * 20
        for i in flagged:
            ms[i], clocks[i] = ms[i] * 1.5, clock / 1.6  # a clock drop: slower in time, fewer cycles
        entry["samples"] = {
            "ms": ms,
            "sm_clock_mhz": clocks,
            "flagged": [int(i in flagged) for i in range(20)],
            "slowdown": list(slowdown),
        }
        entry["clock_throttled"] = int(bool(slowdown))
    path.write_text(json.dumps(data))
    return path


def test_cycles_come_from_each_sample_and_leave_out_flagged_ones(tmp_path):
    from gemm_study.data.results import load_run

    _, benches = load_run(sampled_run(tmp_path / "a.json", 1.0, flagged=range(8)))
    bench = benches[SHARED + "/manual_time"]
    assert bench.from_samples == 10
    assert np.median(bench.cycles) == pytest.approx(1980.0, rel=0.003)  # flagged samples left out
    status, result = run(tmp_path, tmp_path / "a.json", sampled_run(tmp_path / "b.json", 1.0))
    assert row(result)["verdict"] == "SAME" and status == 0


def test_throttling_is_a_count_with_its_reasons(tmp_path, capsys):
    run(
        tmp_path,
        sampled_run(tmp_path / "a.json", 1.0),
        sampled_run(tmp_path / "b.json", 1.0, slowdown=["sw_power_cap"]),
    )
    out = capsys.readouterr().out
    assert "Clock throttled: 1 of 1 benchmarks had slowed-clock samples (sw_power_cap)" in out


def test_samples_that_break_the_format_are_bad_input(tmp_path, capsys):
    path = sampled_run(tmp_path / "b.json", 1.0)
    data = json.loads(path.read_text())
    data["benchmarks"][3]["samples"]["sm_clock_mhz"] = [1980.0]
    path.write_text(json.dumps(data))
    err = bad(tmp_path, capsys, write_run(tmp_path / "a.json", {SHARED: jitter(1.0)}), path)
    assert "entry 3" in err and "samples: 20 times, 1 clocks" in err


def test_the_rank_test_is_one_sided(tmp_path):
    """4 vs 4 with one pair out of order: one-sided p = 2/70 = 0.029, SLOWER (a two-sided test
    would give 0.057, UNSURE)."""
    status, result = pair(tmp_path, {SHARED: [1.0, 1.001, 1.002, 1.05]}, {SHARED: [1.03, 1.10, 1.11, 1.12]})
    assert row(result)["verdict"] == "SLOWER" and row(result)["p_slower"] == pytest.approx(2 / 70)


def test_outliers_do_not_move_the_median(tmp_path):
    """Two slow repetitions of ten: the medians are equal, SAME (a mean would be 10% slower)."""
    status, result = pair(
        tmp_path, {SHARED: jitter(1.0, 0.0005)}, {SHARED: jitter(1.0, 0.0005, n=8, seed=2) + [1.5, 1.5]}
    )
    assert row(result)["verdict"] == "SAME" and status == 0


def test_cycles_use_each_repetitions_clock(tmp_path):
    """A 5% slowdown in cycles, its repetitions at clocks from 1,700 to 1,980 MHz: each repetition's
    clock makes its cycles agree, SLOWER; one clock for the run would leave a 16% spread."""
    clocks = list(np.linspace(1700.0, 1980.0, 10))
    base = {SHARED: {"times": jitter(1.0), "clocks": [1980.0] * 10}}
    cand = {SHARED: {"times": [1.05 * 1980.0 / c for c in clocks], "clocks": clocks}}
    status, result = pair(tmp_path, base, cand)
    assert row(result)["verdict"] == "SLOWER" and row(result)["change"] == pytest.approx(0.05, abs=0.005)


def test_a_spinning_variants_instruction_count_is_noisy_not_exact():
    """warp_inst of a kernel that polls mbarriers depends on timing: a 0.4% rise is within the
    noisy counters' tolerance there, and an exact-count change elsewhere."""
    from gemm_study.data.catalogue import load_catalogue
    from gemm_study.regression.compare import Settings, counter_changes

    catalogue, settings = load_catalogue(), Settings()
    base, cand = {"warp_inst": [8.132e5]}, {"warp_inst": [8.168e5]}
    assert counter_changes(base, cand, settings, catalogue)["warp_inst"]["verdict"] == "WORSE"
    assert "warp_inst" not in counter_changes(base, cand, settings, catalogue, spins=True)
    # A counter only the candidate has is new, not a change.
    assert counter_changes({}, {"l2_sectors": [5.0]}, settings, catalogue) == {}


def test_a_gzipped_run_is_read_as_it_is_and_a_folder_is_named(tmp_path, capsys):
    """Committed runs are gzipped: compare reads them without unpacking; a folder is not a run."""
    import gzip

    plain = REGRESSION / "track_baseline.json"
    packed = tmp_path / "track_baseline.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert guarded([str(plain), str(packed)]) == 0
    assert "Command: `gemm-compare track_baseline.json track_baseline.json.gz`" in capsys.readouterr().out
    assert guarded([str(tmp_path), str(plain)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a folder, not a results file" in err


def test_the_floor_is_three_percent(tmp_path):
    """Without drift and with little noise, 2.9% is SAME and 3.1% SLOWER: the floor is 3%."""
    base = {SHARED: jitter(1.0, 0.0005)}
    assert row(pair(tmp_path, base, {SHARED: jitter(1.029, 0.0005, seed=2)}, "--drift", "0")[1])["verdict"] == "SAME"
    assert row(pair(tmp_path, base, {SHARED: jitter(1.031, 0.0005, seed=2)}, "--drift", "0")[1])["verdict"] == "SLOWER"


def test_the_significance_is_five_percent(tmp_path):
    """A 10% step whose rank test gives p = 0.052 (one slow outlier in the baseline, two fast ones
    in the candidate, tight quartiles): UNSURE at the default alpha, SLOWER at --alpha 0.1."""
    base = {SHARED: [1.0 + 0.0001 * i for i in range(9)] + [1.3]}
    cand = {SHARED: [1.1 + 0.0001 * i for i in range(8)] + [0.9, 0.9001]}
    status, result = pair(tmp_path, base, cand, "--drift", "0")
    assert row(result)["p_slower"] == pytest.approx(0.052, abs=0.001)
    assert row(result)["verdict"] == "UNSURE" and status == 0
    assert row(pair(tmp_path, base, cand, "--drift", "0", "--alpha", "0.1")[1])["verdict"] == "SLOWER"
