"""The tuned rung's configuration picker: the fastest configuration per (precision, size), ties
within 1% to the larger block tile."""
import importlib.util
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "tune_ladder", Path(__file__).resolve().parents[1] / "tune_ladder.py")
tune = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(tune)


def params(bm, bn, bk=8, stages=2, mbar=0):
    return (bm, bn, bk, 32, 64, 8, 8, stages, 8, 2, mbar)


def test_the_fastest_wins_when_it_is_clearly_faster():
    configs = {params(64, 128): [45000.0], params(128, 128): [43000.0]}
    chosen, speed, second = tune.pick(configs)
    assert chosen == params(64, 128) and speed == 45000.0 and second == 43000.0


def test_a_tie_within_one_percent_goes_to_the_larger_block_tile():
    configs = {params(64, 128, 16, 4): [45123.0], params(128, 128, 16): [44843.0],
               params(128, 256): [40000.0]}
    chosen, speed, second = tune.pick(configs)
    assert chosen == params(128, 128, 16)
    assert speed == 44843.0 and second == 45123.0


def test_the_median_of_repetitions_is_the_speed():
    configs = {params(64, 128): [10.0, 50000.0, 11.0], params(128, 128): [40000.0, 40001.0, 39999.0]}
    assert tune.pick(configs)[0] == params(128, 128)


def test_render_names_the_configuration_per_precision_and_size():
    text = tune.render([("fp32", 4096, params(128, 128), 44843.0, 45123.0)], "test")
    assert "LADDER_TUNED(float, 4096, 128, 128, 8, 32, 64, 8, 8, 2, 8, 2, 0)" in text
    text = tune.render([("fp64", 4096, params(128, 128, 8, 4, mbar=1), 25000.0, 24000.0)], "test")
    assert "LADDER_TUNED(double, 4096, 128, 128, 8, 32, 64, 8, 8, 4, 8, 2, 1)" in text


def test_mbar_is_named_only_where_set_and_reads_as_0_elsewhere(tmp_path):
    import json
    base = dict(zip(tune.KEYS[:-1], params(128, 128)[:-1]))  # a barrier instance: no "mbar"
    benches = [{"name": "b", "gflops": 24000.0, "variant": {
                   "family": "tuned", "tags": ["tuning"], "precision": "fp64", "params": base,
                   "shape": {"m": 4096, "n": 4096, "k": 4096}}},
               {"name": "m", "gflops": 25000.0, "variant": {
                   "family": "tuned", "tags": ["tuning"], "precision": "fp64",
                   "params": {**base, "mbar": 1}, "shape": {"m": 4096, "n": 4096, "k": 4096}}}]
    speeds = tune.collect({"benchmarks": benches})
    assert set(speeds[("fp64", 4096)]) == {params(128, 128), params(128, 128, mbar=1)}
    assert tune.pick(speeds[("fp64", 4096)])[0] == params(128, 128, mbar=1)


def test_bad_inputs_and_an_unwritable_output_are_one_line_exit_2(tmp_path, capsys):
    cases = {"list.json": "[1, 2]", "entries.json": '{"benchmarks": [1, "x"]}',
             "garbage.json": "not json"}
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        assert tune.main([str(path), "--dry-run"]) == 2, name
    good = Path(__file__).resolve().parents[2] / "reports/h100-80gb-hbm3/tuning/tune_ladder.json"
    assert tune.main([str(good), "--out", str(tmp_path / "missing" / "x.inc")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "cannot write" in err


def _results(tmp_path, name, rows):
    """A gemm-bench-like JSON with one tuning benchmark per (precision, bm, gflops)."""
    import json
    benches = []
    for precision, bm, gflops in rows:
        p = dict(zip(tune.KEYS, params(bm, 128)))
        benches.append({"name": f"gemm/{precision}/tuned/bm:{bm}", "gflops": gflops,
                        "variant": {"family": "tuned", "tags": ["ladder", "tuning"], "precision": precision,
                                    "params": p, "shape": {"m": 4096, "n": 4096, "k": 4096}}})
    path = tmp_path / name
    path.write_text(json.dumps({"context": {"gpu_name": "G", "date": name}, "benchmarks": benches}))
    return path


def test_a_later_file_replaces_the_sizes_it_measured(tmp_path):
    full = _results(tmp_path, "full.json", [("fp32", 128, 45000.0), ("fp64", 128, 22000.0), ("fp64", 64, 21000.0)])
    fp64 = _results(tmp_path, "fp64.json", [("fp64", 64, 23000.0), ("fp64", 128, 22500.0)])
    out = tmp_path / "configs.inc"
    assert tune.main([str(full), str(fp64), "--out", str(out)]) == 0
    text = out.read_text()
    assert "LADDER_TUNED(float, 4096, 128," in text          # kept from the full sweep
    assert "LADDER_TUNED(double, 4096, 64," in text          # the re-sweep's winner
    assert "full.json" in text and "fp64.json" in text       # both named as the source
    assert tune.main([str(fp64), str(full), "--out", str(out)]) == 0
    assert "LADDER_TUNED(double, 4096, 128," in out.read_text()  # order decides
