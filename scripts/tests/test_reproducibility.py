"""Two runs of one study: which differences make them "not reproducible" and which do not."""

import copy
import os
import stat
import subprocess
from pathlib import Path

import pytest
import study_rows

from gemm_study.cli.reproducibility import main as reproducibility_main
from gemm_study.data.errors import run_cli
from gemm_study.regression import reproducibility
from gemm_study.regression.compare import Settings

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
        if (
            key in study_rows.PEAKS
            or key
            in {
                "counters_available",
                "sm_clock_mhz",
                "l2_clock_hz",
                "dram_clock_hz",
                "dram_write_bytes",
                "sm_active_cycles_avg",
                "sm_active_cycles_max",
            }
            or key in {work for work, *_ in study_rows.UNITS.values()}
        ):
            del out[key]
    out["counters_available"] = 0.0
    return out


def runs(tmp_path, change=lambda name, entry: entry):
    first = study_rows.study()
    second = [change(e["name"], e) for e in first]
    return (
        study_rows.write(tmp_path / "first.json", first),
        study_rows.write(tmp_path / "second.json", [e for e in second if e is not None]),
    )


def headline_names(path):
    _, lines = reproducibility.headlines(path, path)
    return {h.variant for h in lines}


def test_one_run_twice_is_reproducible_and_every_benchmark_decides_at_no_floor(tmp_path):
    first, second = runs(tmp_path)
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    assert outcome["reproducible"]
    assert len(outcome["deciding"]) == len(outcome["rows"]) and not outcome["not_same"]
    assert {h.ladder for h in outcome["headlines"]} == {
        "FP32 on the CUDA cores",
        "FP64 on the CUDA cores",
        "TF32 on the tensor cores",
        "FP64 on the tensor cores",
    }
    assert all(h.change == 0 for h in outcome["headlines"])


def test_a_second_run_without_counters_is_compared_on_times(tmp_path):
    first, second = runs(tmp_path, lambda name, e: times_only(e))
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    assert outcome["reproducible"], [r["verdict"] for r in outcome["not_same"]]


def test_a_headline_figure_three_percent_slower_fails_though_its_benchmark_is_same(tmp_path):
    # 3% is inside compare.py's threshold for one repetition a side (max(3%, 3 x sqrt(2) x 1%)),
    # so only the headline check can catch it.
    fp32_best = next(
        h.variant for h in reproducibility.headlines(*runs(tmp_path))[1] if h.ladder == "FP32 on the CUDA cores"
    )
    first, second = runs(
        tmp_path,
        lambda name, e: (
            slower(e, 1.03) if e["variant"]["name"] == fp32_best and e["variant"]["precision"] == "fp32" else e
        ),
    )
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
        return {
            key: e[key] for key in ("name", "run_name", "run_type", "repetition_index", "repetitions", "variant")
        } | {"error_occurred": True, "error_message": "verification failed"}

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
    from gemm_study.data.errors import run_cli

    assert run_cli(reproducibility_main, [str(first), str(tmp_path / "absent.json")]) == 2


def repeated(entries, repetitions, factor=lambda name, i: 1.0):
    """Each entry as `repetitions` repetitions, repetition i `factor(name, i)` times as long."""
    out = []
    for e in entries:
        for i in range(repetitions):
            rep = slower(e, factor(e["name"], i))
            rep.update(repetition_index=i, repetitions=repetitions)
            out.append(rep)
    return out


# A launch of about 2.4 ms (the synthetic study's others take 0.04 to 0.5 ms): above the 1 ms floor.
SLOW = study_rows.entry("fp32", "naive_row/block:16x16", 900, ("seed", "tile_sweep"), threads_per_block=256)
SLOW_NAME = SLOW["name"]


def test_a_benchmark_missing_from_the_second_run_fails_at_the_default_floor(tmp_path):
    # Its launch takes about 0.04 ms: it would not decide by its time, but a benchmark the
    # second run lost decides at any length, as a failed one does.
    victim = "gemm/fp64/warptile/bm:128/bn:128/m:1024/n:1024/k:1024/manual_time"
    first, second = runs(tmp_path, lambda name, e: None if name == victim else e)
    outcome = reproducibility.check(first, second, TIMES_ONLY)
    assert [(r["name"], r["verdict"]) for r in outcome["not_same"]] == [(victim, "MISSING")]
    assert not outcome["reproducible"]


def test_the_floor_lets_a_launch_above_1_ms_decide_and_none_below(tmp_path):
    base = study_rows.study(extra=[SLOW])
    first = study_rows.write(tmp_path / "first.json", base)
    second = study_rows.write(
        tmp_path / "second.json", [slower(e, 1.10) if e["name"] == SLOW_NAME else e for e in base]
    )
    outcome = reproducibility.check(first, second, TIMES_ONLY)
    assert [r["name"] for r in outcome["deciding"]] == [SLOW_NAME] and not outcome["reproducible"]
    assert reproducibility.check(first, second, TIMES_ONLY, min_ms=3.0)["reproducible"]


@pytest.mark.parametrize("factor, holds", [(1.015, True), (0.985, True), (1.025, False), (0.975, False)])
def test_a_headline_figure_holds_within_2_percent_and_not_beyond(tmp_path, factor, holds):
    fp32_best = next(
        h.variant for h in reproducibility.headlines(*runs(tmp_path))[1] if h.ladder == "FP32 on the CUDA cores"
    )
    first, second = runs(
        tmp_path,
        lambda name, e: (
            slower(e, factor) if e["variant"]["name"] == fp32_best and e["variant"]["precision"] == "fp32" else e
        ),
    )
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    line = next(h for h in outcome["headlines"] if h.ladder == "FP32 on the CUDA cores")
    assert line.holds is holds and outcome["reproducible"] is holds
    assert line.cublas_change == pytest.approx(1 / factor - 1)


def test_the_headline_rung_is_looked_up_by_its_benchmark_not_as_the_second_runs_fastest(tmp_path):
    # Two summary configurations of the FP32 headline family, 1% apart, that swap places between
    # the runs: the README's figure (the first run's fastest configuration) did come back.
    base = study_rows.study()
    best = next(
        h.variant for h in reproducibility.headlines(*runs(tmp_path))[1] if h.ladder == "FP32 on the CUDA cores"
    )
    row = next(e for e in base if e["variant"]["name"] == best and e["variant"]["precision"] == "fp32")
    other = copy.deepcopy(row)
    other["variant"]["name"] = best.replace("bm:128/bn:128", "bm:64/bn:64")
    other["name"] = other["run_name"] = row["name"].replace("bm:128/bn:128", "bm:64/bn:64")
    first = study_rows.write(tmp_path / "first.json", base + [slower(other, 1.01)])
    second = study_rows.write(tmp_path / "second.json", base + [slower(other, 0.99)])
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    line = next(h for h in outcome["headlines"] if h.ladder == "FP32 on the CUDA cores")
    assert line.variant == best and line.change == 0 and outcome["reproducible"]


def test_without_cublas_in_either_run_gflops_alone_decide_and_the_page_says_so(tmp_path):
    kernels = [e for e in study_rows.study() if "cublas" not in e["name"]]
    first = study_rows.write(tmp_path / "first.json", kernels)
    second = study_rows.write(tmp_path / "second.json", kernels)
    outcome = reproducibility.check(first, second, TIMES_ONLY)
    assert outcome["reproducible"] and all(h.holds and not h.cublas_compared for h in outcome["headlines"])
    page = reproducibility.to_markdown(outcome, first, second)
    assert page.count("| no cuBLAS | no cuBLAS | not compared |") == 4 and "nan" not in page and "| % |" not in page
    # GFLOP/s still decide.
    second = study_rows.write(
        tmp_path / "second.json", [slower(e, 1.05) if "/fp64/mma_fp64" in e["name"] else e for e in kernels]
    )
    assert not reproducibility.check(first, second, TIMES_ONLY)["reproducible"]


def test_cublas_lost_in_the_second_run_fails_every_headline_and_the_page_says_why(tmp_path):
    first, second = runs(tmp_path, lambda name, e: None if "cublas" in name else e)
    first = study_rows.write(tmp_path / "with_cublas.json", study_rows.study())
    outcome = reproducibility.check(first, second, TIMES_ONLY)
    assert not any(h.holds for h in outcome["headlines"]) and not outcome["reproducible"]
    page = reproducibility.to_markdown(outcome, first, second)
    assert page.count("| no cuBLAS | - |") == 4 and page.count("| **no** |") == 4


def failed_entry(e, message="verification failed"):
    return {key: e[key] for key in ("name", "run_name", "run_type", "repetition_index", "repetitions", "variant")} | {
        "error_occurred": True,
        "error_message": message,
    }


def test_a_second_run_whose_every_benchmark_failed_is_not_reproducible_not_bad_input(tmp_path, capsys):
    first, second = runs(tmp_path, lambda name, e: failed_entry(e, "CUDA error | device lost\nat launch"))
    outcome = reproducibility.check(first, second, TIMES_ONLY)
    assert [r["verdict"] for r in outcome["not_same"]] == ["FAILED"] * len(outcome["rows"])
    assert all(h.gflops[1] is None and not h.holds for h in outcome["headlines"])
    assert run_cli(reproducibility_main, [str(first), str(second)]) == 1
    page = capsys.readouterr().out
    # The error stays inside its cell: one line, its '|' escaped.
    assert "| FAILED: CUDA error \\| device lost at launch | - |" in page


def test_repetitions_give_compare_its_rank_test(tmp_path):
    victim = "gemm/fp32/blocktile_1d/bm:128/bn:128/m:1024/n:1024/k:1024/manual_time"
    noise = (0.996, 1.004, 1.0, 0.998, 1.002)
    first = study_rows.write(tmp_path / "first.json", repeated(study_rows.study(), 5, lambda n, i: noise[i]))
    second = study_rows.write(
        tmp_path / "second.json",
        repeated(study_rows.study(), 5, lambda n, i: noise[4 - i] * (1.10 if n == victim else 1.0)),
    )
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    assert [(r["name"], r["verdict"]) for r in outcome["not_same"]] == [(victim, "SLOWER")]
    assert all(r["n_base"] == r["n_cand"] == 5 for r in outcome["rows"])
    assert all(h.holds for h in outcome["headlines"])


def test_counters_do_not_decide(tmp_path):
    # Every counter of the second run doubled, the times the same: counters are not compared.
    def doubled(name, e):
        out = copy.deepcopy(e)
        for work, *_ in study_rows.UNITS.values():
            if work in out:
                out[work] *= 2
        return out

    first, second = runs(tmp_path, doubled)
    assert reproducibility_main([str(first), str(second), "--min-ms", "0"]) == 0


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "-1", "abc", ""])
def test_a_min_ms_that_is_not_a_finite_time_is_one_line_exit_2(tmp_path, capsys, value):
    first, second = runs(tmp_path)
    assert run_cli(reproducibility_main, [str(first), str(second), f"--min-ms={value}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: --min-ms {value}: expected a finite time")


def test_min_ms_minus_zero_is_zero(tmp_path, capsys):
    first, second = runs(tmp_path)
    assert reproducibility_main([str(first), str(second), "--min-ms=-0"]) == 0
    captured = capsys.readouterr()
    assert "above 0 ms" in captured.out and "-0" not in captured.err


def executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize("gpus", [0, 2])
def test_the_wrapper_stops_with_one_line_when_a_run_left_no_single_results_file(tmp_path, gpus):
    """scripts/reproducibility.sh with the studies faked: the first leaves no results file (or
    two); the comparison must not run on an empty path."""
    root = tmp_path / "root"
    (root / "scripts").mkdir(parents=True)
    wrapper = Path(__file__).resolve().parents[1] / "reproducibility.sh"
    executable(root / "scripts" / "reproducibility.sh", wrapper.read_text())
    (root / "scripts" / "lib.sh").write_text((wrapper.parent / "lib.sh").read_text())
    executable(
        root / "scripts" / "run_study.sh",
        "#!/bin/sh\n" + "".join(f'mkdir -p "$1/gpu{i}" && echo {{}} > "$1/gpu{i}/results.json"\n' for i in range(gpus)),
    )
    ran = tmp_path / "compared"
    executable(root / "scripts" / "bootstrap", f"#!/bin/sh\necho {root / 'scripts' / 'python'}\n")
    executable(root / "scripts" / "gemm-reproducibility", f"#!/bin/sh\ntouch {ran}\n")
    fakes = tmp_path / "bin"
    fakes.mkdir()
    executable(fakes / "nvidia-smi", "#!/bin/sh\necho 'GPU 0: Fake GPU (UUID: GPU-0)'\n")
    done = subprocess.run(
        ["bash", str(root / "scripts" / "reproducibility.sh"), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=dict(os.environ, PATH=f"{fakes}:{os.environ['PATH']}"),
    )
    assert done.returncode == 2 and not ran.exists()
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: expected one "), done.stderr
    assert f"found {gpus}" in done.stderr


def _entry(**fields):
    base = {"name": "gemm/fp32/x/m:8/n:8/k:8/manual_time", "variant": {"backend": "cuda_kernel"}}
    return {**base, **fields}


def test_a_cause_is_named_only_where_the_files_record_one():
    quiet = _entry(sm_clock_mhz=1980.0, clock_throttled=0.0, samples_flagged=0.0)
    assert reproducibility.likely_cause(quiet, dict(quiet)).startswith("none recorded")
    assert reproducibility.likely_cause(quiet, None) == "missing from the second run"
    # 0.5% of clock is within the readings' step, 2% is named with both clocks.
    assert "MHz" not in reproducibility.likely_cause(quiet, {**quiet, "sm_clock_mhz": 1970.0})
    assert "1980 -> 1940 MHz" in reproducibility.likely_cause(quiet, {**quiet, "sm_clock_mhz": 1940.0})
    assert "power" not in reproducibility.likely_cause({**quiet, "power_w": 600.0}, {**quiet, "power_w": 610.0})
    assert "power 600 -> 690 W" in reproducibility.likely_cause(
        {**quiet, "power_w": 600.0}, {**quiet, "power_w": 690.0}
    )
    assert "slowdown during the second" in reproducibility.likely_cause(quiet, {**quiet, "clock_throttled": 1.0})
    assert "3 of the first run's samples" in reproducibility.likely_cause({**quiet, "samples_flagged": 3.0}, quiet)
    library = reproducibility.likely_cause({**quiet, "kernels": ["k256"]}, {**quiet, "kernels": ["k64"]})
    assert "other kernels: k256 -> k64" in library
    same_kernel = reproducibility.likely_cause({**quiet, "kernels": ["k256"]}, {**quiet, "kernels": ["k256"]})
    assert "other kernels" not in same_kernel
    host = _entry(variant={"backend": "cpu"})
    assert "host time" in reproducibility.likely_cause(host, dict(host))
    copies = _entry(
        name="gemm_e2e/fp32/x/m:8/n:8/k:8/manual_time", variant={"backend": "cuda_kernel", "end_to_end": True}
    )
    assert "pageable" in reproducibility.likely_cause(copies, dict(copies))
    pinned = {**copies, "label": "with H2D+D2H copies (pinned host memory), events, median of 5 samples"}
    assert "pinned host memory" in reproducibility.likely_cause(pinned, dict(pinned))


def test_the_page_gives_each_figure_that_did_not_come_back_its_cause(tmp_path):
    def change(name, e):
        if "/fp32/cublas/" in name:
            e = slower(e, 0.97)
            e["kernels"] = ["other_kernel"]
        return e

    first, second = runs(tmp_path, change)
    outcome = reproducibility.check(first, second, TIMES_ONLY, min_ms=0)
    moved = [h for h in outcome["headlines"] if not h.holds]
    assert moved and all("its cuBLAS moved" in h.cause for h in moved)
    page = reproducibility.to_markdown(outcome, first, second)
    assert "did not come back; the rung: " in page
