"""The auto dispatcher's table: per arithmetic and shape the fastest verified candidate, the
anchor it is measured against, and the rules for who may serve which arithmetic."""

import json

import pytest

from gemm_study.cli import tune_shapes as tune_cli
from gemm_study.tuning import shape_table as tune


def bench(name, ms, precision="fp32", compute=None, tags=("shapes",), shape=(1, 4096, 4096), error=False):
    family = name.split("/")[0]
    m, n, k = shape
    entry = {
        "name": f"gemm/{precision}/{name}/m:{m}/n:{n}/k:{k}/manual_time",
        "run_name": f"gemm/{precision}/{name}/m:{m}/n:{n}/k:{k}/manual_time",
        "run_type": "iteration",
        "repetition_index": 0,
        "median_ms": ms,
        "variant": {
            "name": name,
            "family": family,
            "precision": precision,
            "compute": compute or precision,
            "tags": list(tags),
            "params": {},
            "shape": {"m": m, "n": n, "k": k},
        },
    }
    if error:
        entry.update(error_occurred=True, error_message="wrong result")
    return entry


def test_the_fastest_candidate_wins_and_is_compared_with_the_faster_anchor():
    times, anchors = tune.collect(
        [
            bench("gemv/warps:4/ks:16", 0.030),
            bench("split_k/bm:64/ks:0", 0.040),
            bench("cublas", 0.027, tags=("reference",)),
            bench("cublaslt", 0.026, tags=("reference",)),
        ]
    )
    [(arith, shape, name, ms, second, anchor, anchor_ms)] = [w for w in tune.winners(times, anchors) if w[0] == "fp32"]
    assert (name, ms, second, anchor, anchor_ms) == ("gemv/warps:4/ks:16", 0.030, 0.040, "cublaslt", 0.026)


def test_a_device_split_wins_a_tie_within_two_percent():
    name, ms, _ = tune.pick({"gemv/ks:16": [0.0300], "gemv/ks:0": [0.0305], "gemv/ks:8": [0.04]})
    assert name == "gemv/ks:0" and ms == 0.0305
    name, _, _ = tune.pick({"gemv/ks:16": [0.0300], "gemv/ks:0": [0.0310]})
    assert name == "gemv/ks:16"


def test_fp32_kernels_serve_tf32_but_tf32_kernels_never_serve_fp32():
    assert tune.arithmetics_of({"precision": "fp32", "compute": "fp32", "tags": ["shapes"]}) == ["fp32", "tf32"]
    assert tune.arithmetics_of({"precision": "fp32", "compute": "tf32", "tags": ["tensor_core"]}) == ["tf32"]
    assert tune.arithmetics_of({"precision": "fp64", "compute": "fp64", "tags": ["ladder"]}) == ["fp64"]
    for level in ("reference", "seed", "cpu", "dispatch"):
        assert tune.arithmetics_of({"precision": "fp32", "compute": "fp32", "tags": [level]}) == []


def test_failed_benchmarks_and_the_dispatchers_never_win():
    times, anchors = tune.collect(
        [bench("gemv/ks:0", 0.001, error=True), bench("auto", 0.0001, tags=("dispatch",)), bench("split_k/ks:0", 0.05)]
    )
    assert {n for c in times.values() for n in c} == {"split_k/ks:0"}


def test_anchors_are_per_arithmetic_and_precision():
    _, anchors = tune.collect(
        [
            bench("cublas_tf32", 0.01, tags=("reference",)),
            bench("cublas", 0.02, precision="fp64", tags=("reference",)),
            bench("cublas", 0.03, tags=("reference",)),
        ]
    )
    assert dict(anchors[("tf32", (1, 4096, 4096))]) == {"cublas_tf32": [0.01]}
    assert dict(anchors[("fp64", (1, 4096, 4096))]) == {"cublas": [0.02]}
    assert dict(anchors[("fp32", (1, 4096, 4096))]) == {"cublas": [0.03]}


def test_render_writes_one_line_per_winner_with_its_rate_and_share_of_the_anchor():
    text = tune.render([("fp64", (128, 128, 65536), "split_k/bm:128/ks:0", 0.05, 0.06, "cublas", 0.068)], "test")
    assert 'GEMM_AUTO(fp64, 128, 128, 65536, "split_k/bm:128/ks:0")' in text
    assert "// fp64 128x128x65536: 42950 GFLOP/s, 136.0% of cublas (next best 35791)" in text


def write(tmp_path, entries, name="sweep.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"context": {"gpu_name": "GPU"}, "benchmarks": entries}))
    return path


def test_main_writes_the_table_and_a_later_file_replaces_a_shape(tmp_path):
    first = write(tmp_path, [bench("gemv/ks:0", 0.05), bench("split_k/ks:0", 0.06)], "a.json")
    second = write(tmp_path, [bench("split_k/ks:0", 0.04)], "b.json")
    out = tmp_path / "auto_table.inc"
    assert tune_cli.main([str(first), str(second), "--out", str(out)]) == 0
    text = out.read_text()
    assert 'GEMM_AUTO(fp32, 1, 4096, 4096, "split_k/ks:0")' in text
    assert "a.json, GPU; b.json, GPU" in text


@pytest.mark.parametrize("content", ["not json", json.dumps({"context": {}, "benchmarks": []})])
def test_bad_or_empty_input_is_a_one_line_error(tmp_path, capsys, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert tune_cli.main([str(path), "--out", str(tmp_path / "x.inc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tune_shapes:")


def test_dry_run_prints_and_writes_nothing(tmp_path, capsys):
    path = write(tmp_path, [bench("gemv/ks:0", 0.05)])
    out = tmp_path / "auto_table.inc"
    assert tune_cli.main([str(path), "--out", str(out), "--dry-run"]) == 0
    assert "GEMM_AUTO(fp32" in capsys.readouterr().out and not out.exists()


# --- held-out shapes and the dispatcher's report ---------------------------------------------


def test_the_heldout_list_is_read_and_never_enters_the_table(tmp_path):
    listed = tmp_path / "heldout.txt"
    listed.write_text("# comment\n7x4096x14336   # why\n\n1x2x3\n")
    assert tune.heldout_shapes(listed) == {(7, 4096, 14336), (1, 2, 3)}
    times, anchors = tune.collect([bench("gemv/ks:0", 0.03, shape=(7, 4096, 14336)), bench("gemv/ks:0", 0.03)])
    kept = [w[1] for w in tune.winners(times, anchors, {(7, 4096, 14336)})]
    assert (7, 4096, 14336) not in kept and (1, 4096, 4096) in kept


def test_the_times_hold_every_candidate_at_every_suite_shape_and_no_heldout_one():
    times, _ = tune.collect(
        [
            bench("gemv/ks:0", 0.03, shape=(7, 4096, 14336)),
            bench("gemv/ks:0", 0.031),
            bench("split_k/bm:32/slices:0", 0.0405),
            bench("split_k/bm:32/slices:0", 0.0395),
        ]
    )
    text = tune.render_times(times, "sweep.json", {(7, 4096, 14336)})
    lines = [line for line in text.splitlines() if line.startswith("GEMM_AUTO_TIME(")]
    # Both arithmetics an FP32 kernel serves; per shape the fastest first; the median of repeats.
    assert lines == [
        'GEMM_AUTO_TIME(fp32, 1, 4096, 4096, "gemv/ks:0", 0.031)',
        'GEMM_AUTO_TIME(fp32, 1, 4096, 4096, "split_k/bm:32/slices:0", 0.04)',
        'GEMM_AUTO_TIME(tf32, 1, 4096, 4096, "gemv/ks:0", 0.031)',
        'GEMM_AUTO_TIME(tf32, 1, 4096, 4096, "split_k/bm:32/slices:0", 0.04)',
    ]
    assert "source: sweep.json" in text


def test_the_committed_times_name_only_suite_shapes():
    from gemm_study.data.paths import CHECKOUT

    heldout = tune.heldout_shapes()
    text = (CHECKOUT / "kernels" / "dispatch" / "auto_times.inc").read_text()
    shapes = set()
    for line in text.splitlines():
        if line.startswith("GEMM_AUTO_TIME("):
            fields = [f.strip() for f in line[len("GEMM_AUTO_TIME(") :].split(",")]
            shapes.add(tuple(int(x) for x in fields[1:4]))
            assert float(fields[5].rstrip(")")) > 0
    assert len(shapes) >= 30 and not shapes & heldout


@pytest.mark.parametrize("text", ["4x4", "4x4x0", "axbxc"])
def test_a_bad_heldout_line_names_its_line(tmp_path, text):
    from gemm_study.data.errors import InputError

    listed = tmp_path / "heldout.txt"
    listed.write_text(f"1x1x1\n{text}\n")
    with pytest.raises(InputError, match=":2:"):
        tune.heldout_shapes(listed)


def test_the_committed_heldout_shapes_are_outside_the_suites():
    from gemm_study.data.paths import CHECKOUT

    suites = set()
    for line in (CHECKOUT / "bench" / "shape_suites.inc").read_text().splitlines():
        if line.startswith("GEMM_SHAPE("):
            fields = [f.strip() for f in line[len("GEMM_SHAPE(") :].split(",")[:4]]
            suites.add(tuple(int(x) for x in fields[1:4]))
    heldout = tune.heldout_shapes()
    assert len(heldout) >= 8 and len(suites) >= 30
    assert not heldout & suites
    assert any(m == 1 or n == 1 for m, n, _ in heldout) and any(k % 4 for _, _, k in heldout)


def auto_bench(ms, variant, rule, shape=(1, 4096, 4096), family="auto", compute="fp32", precision="fp32"):
    entry = bench(family, ms, precision=precision, compute=compute, tags=("dispatch",), shape=shape)
    entry["choice"] = {"family": variant.split("/")[0], "variant": variant, "rule": rule}
    entry["waves"], entry["last_wave_fill"] = 0.5, 0.5
    return entry


def test_the_report_compares_auto_with_the_fastest_candidate_and_the_anchor():
    from gemm_study.tuning import auto_report

    held = (7, 4096, 14336)
    benchmarks = [
        bench("gemv/ks:0", 0.030),
        bench("split_k/ks:0", 0.040),
        bench("cublas", 0.024, tags=("reference",)),
        auto_bench(0.040, "split_k/ks:0", "table"),
        bench("gemv/ks:0", 0.050, shape=held),
        bench("cublaslt", 0.050, tags=("reference",), shape=held),
        auto_bench(0.100, "tuned", "rule: any shape", shape=held),
    ]
    rows = auto_report.rows(benchmarks, {held})
    fp32 = {r.shape: r for r in rows if r.arithmetic == "fp32"}
    suite, out = fp32[(1, 4096, 4096)], fp32[held]
    assert (suite.heldout, suite.picked, suite.best) == (False, "split_k/ks:0", "gemv/ks:0")
    assert suite.pct_of_best == pytest.approx(75.0) and suite.pct_of_anchor == pytest.approx(60.0)
    assert out.heldout and out.pct_of_best == pytest.approx(50.0) and out.pct_of_anchor == pytest.approx(50.0)
    s = auto_report.summary([suite, out])
    assert (s.shapes, s.near_best, s.below_floor) == (2, 0, 1)
    assert s.geomean_anchor == pytest.approx((60.0 * 50.0) ** 0.5)
    assert s.holds("fp32") == (False, False, False)
    text = auto_report.markdown(rows)
    assert "held out: 1" in text and "suite: 1" in text and "split_k/ks:0 | table" in text


def test_within_five_percent_of_the_fastest_counts_as_near():
    from gemm_study.tuning import auto_report

    benchmarks = [
        bench("gemv/ks:0", 0.0300),
        bench("cublas", 0.0300, tags=("reference",)),
        auto_bench(0.0315, "gemv/ks:0", "table"),
    ]
    [row] = [r for r in auto_report.rows(benchmarks, set()) if r.arithmetic == "fp32"]
    assert auto_report.summary([row]).near_best == 1
    assert auto_report.summary([row]).holds("fp32") == (True, True, True)


def test_a_pick_is_also_judged_by_its_own_time_as_a_candidate():
    from gemm_study.tuning import auto_report

    # auto ran gemv at 0.0330 ms (9% behind the fastest, 0.0300) but gemv's own candidate run
    # took 0.0305 (within 5%): the choice was right, the two runs of one kernel differ.
    benchmarks = [
        bench("gemv/ks:0", 0.0305),
        bench("split_k/ks:0", 0.0300),
        bench("cublas", 0.0300, tags=("reference",)),
        auto_bench(0.0330, "gemv/ks:0", "table"),
    ]
    [row] = [r for r in auto_report.rows(benchmarks, set()) if r.arithmetic == "fp32"]
    assert row.picked_ms == pytest.approx(0.0305)
    s = auto_report.summary([row])
    assert (s.near_best, s.pick_near_best) == (0, 1)
    # A pick that is no candidate (not timed on its own) counts as not near.
    [other] = [
        r
        for r in auto_report.rows(benchmarks[:3] + [auto_bench(0.03, "tuned", "rule")], set())
        if r.arithmetic == "fp32"
    ]
    assert auto_report.summary([other]).pick_near_best == 0


def test_auto_report_without_dispatcher_entries_is_bad_input(tmp_path, capsys):
    from gemm_study.cli import auto_report as cli

    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({"context": {}, "benchmarks": [bench("gemv/ks:0", 0.03)]}))
    from gemm_study.data.errors import run_cli

    assert run_cli(cli.main, [str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no shape where auto" in err


def test_auto_report_writes_the_page_and_exits_1_when_a_target_fails(tmp_path, capsys):
    from gemm_study.cli import auto_report as cli

    path = tmp_path / "sweep.json"
    entries = [
        bench("gemv/ks:0", 0.030),
        bench("cublas", 0.024, tags=("reference",)),
        auto_bench(0.040, "tuned", "rule"),
    ]
    path.write_text(json.dumps({"context": {}, "benchmarks": entries}))
    assert cli.main([str(path), "--out", str(tmp_path / "auto.md")]) == 1
    page = (tmp_path / "auto.md").read_text()
    assert page.startswith("# `auto`") and "| tuned | rule |" in page


def test_runs_in_both_orders_give_every_time_as_the_median_over_them(tmp_path):
    from gemm_study.cli import auto_report as cli
    from gemm_study.tuning import auto_report

    # The listed run timed auto last, throttled (0.040); the reversed one first (0.030). Its
    # time is the median (mean) of the two, as the candidates' are: 0.035 against gemv's 0.031.
    listed = [
        bench("gemv/ks:0", 0.030),
        bench("cublas", 0.030, tags=("reference",)),
        auto_bench(0.040, "gemv/ks:0", "table"),
    ]
    reversed_ = [
        auto_bench(0.030, "gemv/ks:0", "table"),
        bench("cublas", 0.032, tags=("reference",)),
        bench("gemv/ks:0", 0.032),
    ]
    [row] = [r for r in auto_report.rows(listed + reversed_, set()) if r.arithmetic == "fp32"]
    assert row.auto_ms == pytest.approx(0.035) and row.best_ms == pytest.approx(0.031)
    assert row.anchor_ms == pytest.approx(0.031) and row.picked == "gemv/ks:0"
    paths = []
    for order, entries in (("listed", listed), ("reversed", reversed_)):
        paths.append(tmp_path / f"sweep_{order}.json")
        context = {"order": order} if order == "reversed" else {}  # a file from before --order
        paths[-1].write_text(json.dumps({"context": context, "benchmarks": entries}))
    cli.main([*map(str, paths), "--out", str(tmp_path / "auto.md")])
    assert "fp32: 2 runs (listed, reversed)" in (tmp_path / "auto.md").read_text()
