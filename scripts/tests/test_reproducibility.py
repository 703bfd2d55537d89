"""Two runs of one study: which differences make them "not reproducible" and which do not."""
import copy

import pytest

import study_rows
from gemm_study import reproducibility
from gemm_study.compare import Settings
from reproducibility import main as reproducibility_main

TIMES_ONLY = Settings(time_only=True)


def slower(entry, factor):
    """The entry as a run whose every launch took `factor` times as long."""
    out = copy.deepcopy(entry)
    out["median_ms"] *= factor
    out["real_time"] *= factor
    out["gflops"] /= factor
    out["samples"]["ms"] = [ms * factor for ms in out["samples"]["ms"]]
    return out


def times_only(entry):
    """The entry as a STUDY_COUNTERS=off run records it: no counter values."""
    out = copy.deepcopy(entry)
    for key in list(out):
        if key in study_rows.PEAKS or key in {"counters_available", "sm_clock_mhz", "l2_clock_hz", "dram_clock_hz",
                                              "dram_write_bytes", "sm_active_cycles_avg", "sm_active_cycles_max"} \
                or key in {work for work, *_ in study_rows.UNITS.values()}:
            del out[key]
    out["counters_available"] = 0.0
    return out


def runs(tmp_path, change=lambda name, entry: entry):
    first = study_rows.study()
    second = [change(e["name"], e) for e in first]
    return (study_rows.write(tmp_path / "first.json", first),
            study_rows.write(tmp_path / "second.json", [e for e in second if e is not None]))


def headline_names(path):
    _, lines = reproducibility.headlines(path, path)
    return {h.variant for h in lines}


def test_one_run_twice_is_reproducible_and_every_benchmark_decides_at_no_floor(tmp_path):
    first, second = runs(tmp_path)
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    assert outcome["reproducible"]
    assert len(outcome["deciding"]) == len(outcome["rows"]) and not outcome["not_same"]
    assert {h.ladder for h in outcome["headlines"]} == {"FP32 on the CUDA cores", "FP64 on the CUDA cores",
                                                       "TF32 on the tensor cores", "FP64 on the tensor cores"}
    assert all(h.change == 0 for h in outcome["headlines"])


def test_a_second_run_without_counters_is_compared_on_times(tmp_path):
    first, second = runs(tmp_path, lambda name, e: times_only(e))
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    assert outcome["reproducible"], [r["verdict"] for r in outcome["not_same"]]


def test_a_headline_figure_three_percent_slower_fails_though_its_benchmark_is_same(tmp_path):
    # 3% is inside compare.py's threshold for one repetition a side (max(3%, 3 x sqrt(2) x 1%)),
    # so only the headline check can catch it.
    fp32_best = next(h.variant for h in reproducibility.headlines(*runs(tmp_path))[1]
                     if h.ladder == "FP32 on the CUDA cores")
    first, second = runs(tmp_path, lambda name, e: slower(e, 1.03) if e["variant"]["name"] == fp32_best
                         and e["variant"]["precision"] == "fp32" else e)
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    assert not outcome["not_same"]
    moved = [h for h in outcome["headlines"] if not h.holds]
    assert [h.variant for h in moved] == [fp32_best] and moved[0].change == pytest.approx(1 / 1.03 - 1)
    assert not outcome["reproducible"]


def test_cublas_moving_moves_every_percentage_of_it(tmp_path):
    first, second = runs(tmp_path, lambda name, e: slower(e, 0.97) if "/fp32/cublas/" in name else e)
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    moved = {h.ladder for h in outcome["headlines"] if not h.holds}
    assert moved == {"FP32 on the CUDA cores"} and not outcome["reproducible"]


def test_a_slower_benchmark_decides_only_above_the_floor(tmp_path):
    victim = "gemm/fp32/blocktile_1d/bm:128/bn:128/m:1024/n:1024/k:1024/manual_time"
    first, second = runs(tmp_path, lambda name, e: slower(e, 1.10) if name == victim else e)
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    assert [r["name"] for r in outcome["not_same"]] == [victim] and not outcome["reproducible"]
    # Its launch takes about 0.13 ms: under a 1 ms floor it is listed, not deciding.
    outcome = reproducibility.check(first, second, TIMES_ONLY)
    assert victim not in {r["name"] for r in outcome["deciding"]}
    assert outcome["reproducible"]
    assert any(r["name"] == victim and r["verdict"] == "TOO_FEW" for r in outcome["rows"])  # 1 repetition a side


def test_a_benchmark_missing_or_failed_in_the_second_run_fails(tmp_path):
    victim = "gemm/fp64/warptile/bm:128/bn:128/m:1024/n:1024/k:1024/manual_time"
    first, second = runs(tmp_path, lambda name, e: None if name == victim else e)
    assert not reproducibility.check(first, second, TIMES_ONLY, min_ms=0)["reproducible"]

    def failed(name, e):
        if name != victim:
            return e
        return {key: e[key] for key in ("name", "run_name", "run_type", "repetition_index", "repetitions",
                                        "variant")} | {"error_occurred": True, "error_message": "verification failed"}
    first, second = runs(tmp_path, failed)
    outcome = reproducibility.check(first, second, TIMES_ONLY)  # failures decide at any floor
    assert [r["verdict"] for r in outcome["not_same"]] == ["FAILED"] and not outcome["reproducible"]


def test_the_command_line_exits_0_1_2_and_writes_the_page(tmp_path, capsys):
    first, second = runs(tmp_path)
    page = tmp_path / "out" / "reproducibility.md"
    assert reproducibility_main([str(first), str(second), "--min-ms", "0", "--out", str(page)]) == 0
    text = page.read_text()
    assert "**Reproducible**" in text and "| FP32 on the CUDA cores |" in text and "Written by `" in text
    assert "reproducible: " in capsys.readouterr().err
    slow_first, slow_second = runs(tmp_path, lambda name, e: slower(e, 1.5))
    assert reproducibility_main([str(slow_first), str(slow_second), "--min-ms", "0"]) == 1
    assert "**Not reproducible**" in capsys.readouterr().out
    from gemm_study.errors import run_cli
    assert run_cli(reproducibility_main, [str(first), str(tmp_path / "absent.json")]) == 2
    with pytest.raises(SystemExit):
        reproducibility_main([str(first), str(second), "--min-ms", "-1"])
