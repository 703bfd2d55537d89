"""The tuned rung's configuration picker: the fastest configuration per (precision, size), ties
within 1% to the larger block tile, written as named fields."""

import json
import re
from pathlib import Path

from gemm_study.cli import tune_ladder as tune_cli
from gemm_study.tuning import ladder_configs as tune

ROOT = Path(__file__).resolve().parents[2]


def params(bm, bn, bk=8, stages=2, mbar=0):
    """A configuration's fields as gemm-bench records them (mbar only where set)."""
    p = {"bm": bm, "bn": bn, "bk": bk, "wm": 32, "wn": 64, "tm": 8, "tn": 8, "stages": stages, "group": 8, "minb": 2}
    if mbar:
        p["mbar"] = 1
    return p


def config(*args, **kwargs):
    return tune.Config.of(params(*args, **kwargs))


def test_the_fastest_wins_when_it_is_clearly_faster():
    configs = {config(64, 128): [45000.0], config(128, 128): [43000.0]}
    chosen, speed, second = tune.pick(configs)
    assert chosen == config(64, 128) and speed == 45000.0 and second == 43000.0


def test_a_tie_within_one_percent_goes_to_the_larger_block_tile():
    configs = {config(64, 128, 16, 4): [45123.0], config(128, 128, 16): [44843.0], config(128, 256): [40000.0]}
    chosen, speed, second = tune.pick(configs)
    assert chosen == config(128, 128, 16)
    assert speed == 44843.0 and second == 45123.0


def test_the_median_of_repetitions_is_the_speed():
    configs = {config(64, 128): [10.0, 50000.0, 11.0], config(128, 128): [40000.0, 40001.0, 39999.0]}
    assert tune.pick(configs)[0] == config(128, 128)


def test_render_writes_the_configuration_as_named_fields_in_the_recorded_order():
    text = tune.render([("fp32", 4096, config(128, 128), 44843.0, 45123.0)], "test")
    assert (
        "LADDER_TUNED(fp32, 4096, {.bm = 128, .bn = 128, .bk = 8, .wm = 32, .wn = 64, "
        ".tm = 8, .tn = 8, .stages = 2, .group = 8, .minb = 2})"
    ) in text
    text = tune.render([("fp64", 4096, config(128, 128, 8, 4, mbar=1), 25000.0, 24000.0)], "test")
    assert ".stages = 4, .group = 8, .minb = 2, .mbar = true})" in text


def test_the_fields_are_those_of_the_kernels_configuration_in_its_order():
    # Designated initializers must follow PipelinedConfig's declaration order.
    source = (ROOT / "kernels/ladder/pipelined_kernel.cuh").read_text()
    body = source[source.index("struct PipelinedConfig {") :]
    declared = re.findall(r"^\s+(?:int|bool) (\w+)(?: = \w+)?;", body[: body.index("};")], re.M)
    assert [k for k, _ in config(128, 128, mbar=1)] == declared


def test_the_committed_configuration_is_what_the_committed_sweep_gives(tmp_path):
    out = tmp_path / "tuned_configs.inc"
    sweep = ROOT / "reports/h100-80gb-hbm3/tuning/tune_ladder.json"
    assert tune_cli.main([str(sweep), "--out", str(out)]) == 0
    assert out.read_text() == (ROOT / "kernels/ladder/tuned_configs.inc").read_text()


def _bench(name, gflops, precision, p):
    return {
        "name": name,
        "gflops": gflops,
        "variant": {
            "family": "tuned",
            "tags": ["ladder", "tuning"],
            "precision": precision,
            "params": p,
            "shape": {"m": 4096, "n": 4096, "k": 4096},
        },
    }


def test_mbar_is_named_only_where_set_and_reads_as_unset_elsewhere():
    benches = [_bench("b", 24000.0, "fp64", params(128, 128)), _bench("m", 25000.0, "fp64", params(128, 128, mbar=1))]
    (speeds,) = tune.collect(benches)
    assert set(speeds[("fp64", 4096)]) == {config(128, 128), config(128, 128, mbar=1)}
    assert tune.pick(speeds[("fp64", 4096)])[0] == config(128, 128, mbar=1)


def test_bad_inputs_and_an_unwritable_output_are_one_line_exit_2(tmp_path, capsys):
    cases = {
        "list.json": "[1, 2]",
        "entries.json": '{"context": {}, "benchmarks": [1, "x"]}',
        "garbage.json": "not json",
        "no_bm.json": json.dumps({"context": {}, "benchmarks": [_bench("x", 1.0, "fp32", {"stages": 2})]}),
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        assert tune_cli.main([str(path), "--dry-run"]) == 2, name
    good = ROOT / "reports/h100-80gb-hbm3/tuning/tune_ladder.json"
    assert tune_cli.main([str(good), "--out", str(tmp_path / "missing" / "x.inc")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "cannot write" in err


def test_no_tuning_results_or_one_precision_missing_is_exit_2(tmp_path, capsys):
    empty = _results(tmp_path, "empty.json", [])
    assert tune_cli.main([str(empty), "--dry-run"]) == 2
    fp32 = _results(tmp_path, "fp32.json", [("fp32", 128, 45000.0)])
    assert tune_cli.main([str(fp32), "--dry-run"]) == 2
    assert "no results for fp64" in capsys.readouterr().err


def _results(tmp_path, name, rows):
    """A gemm-bench-like JSON with one tuning benchmark per (precision, bm, gflops)."""
    benches = [
        _bench(f"gemm/{precision}/tuned/bm:{bm}", gflops, precision, params(bm, 128)) for precision, bm, gflops in rows
    ]
    path = tmp_path / name
    path.write_text(json.dumps({"context": {"gpu_name": "G", "date": name}, "benchmarks": benches}))
    return path


def test_a_later_file_replaces_the_sizes_it_measured(tmp_path):
    full = _results(tmp_path, "full.json", [("fp32", 128, 45000.0), ("fp64", 128, 22000.0), ("fp64", 64, 21000.0)])
    fp64 = _results(tmp_path, "fp64.json", [("fp64", 64, 23000.0), ("fp64", 128, 22500.0)])
    out = tmp_path / "configs.inc"
    assert tune_cli.main([str(full), str(fp64), "--out", str(out)]) == 0
    text = out.read_text()
    assert "LADDER_TUNED(fp32, 4096, {.bm = 128," in text  # kept from the full sweep
    assert "LADDER_TUNED(fp64, 4096, {.bm = 64," in text  # the re-sweep's winner
    assert "full.json" in text and "fp64.json" in text  # both named as the source
    assert tune_cli.main([str(fp64), str(full), "--out", str(out)]) == 0
    assert "LADDER_TUNED(fp64, 4096, {.bm = 128," in out.read_text()  # order decides
