"""The name grammar comes from bench/benchmark_names.inc, not from Python."""

import re

import pytest

from gemm_study.data import names
from gemm_study.data.errors import InputError
from gemm_study.data.results import parse_name
from gemm_study.ncu import session as ncu

SPEC_LINES = """// a comment line
GEMM_NAME(kernel_prefix, R"(mm)")
GEMM_NAME(end_to_end_prefix, R"(mm_e2e)")
GEMM_NAME(manual_time_suffix, R"(/manual_time)")
GEMM_NAME(benchmark_regex, R"(^(mm|mm_e2e)/(fp32|fp64)/(.+)/m:(\\d+)/n:(\\d+)/k:(\\d+)(/manual_time)?$)")
GEMM_NAME(variant_regex, R"(^[a-z0-9_]+(/[a-z0-9_]+:[0-9x]+)*$)")
GEMM_NAME(nvtx_from, R"(/:)")
GEMM_NAME(nvtx_to, R"(.-)")
"""


def test_the_repository_grammar_parses_kernel_and_end_to_end_names():
    parsed = names.parse_benchmark("gemm_e2e/fp64/naive_row/block:16x16/m:7/n:13/k:5/manual_time")
    assert parsed == {
        "end_to_end": True,
        "precision": "fp64",
        "variant": "naive_row/block:16x16",
        "m": 7,
        "n": 13,
        "k": 5,
    }
    assert names.parse_benchmark("BM_other/8") is None
    assert parse_name("gemm/fp32/shared/tile:16/m:512/n:512/k:512")["tile"] == 16


def test_the_grammar_is_read_from_the_file(tmp_path):
    spec_file = tmp_path / "benchmark_names.inc"
    spec_file.write_text(SPEC_LINES)
    spec = names.load_spec(spec_file)
    assert names.parse_benchmark("mm/fp32/x/m:1/n:2/k:3", spec)["variant"] == "x"
    assert names.parse_benchmark("gemm/fp32/x/m:1/n:2/k:3", spec) is None


def test_missing_keys_are_named(tmp_path):
    spec_file = tmp_path / "benchmark_names.inc"
    spec_file.write_text("\n".join(l for l in SPEC_LINES.splitlines() if "nvtx_to" not in l))
    with pytest.raises(InputError, match="no GEMM_NAME entry for nvtx_to"):
        names.load_spec(spec_file)


def test_nvtx_range_round_trip_uses_the_grammar():
    name = "gemm/fp64/shared_col_padded/tile:32/m:1023/n:517/k:2049"
    assert names.nvtx_range(name + "/manual_time") == "gemm.fp64.shared_col_padded.tile-32.m-1023.n-517.k-2049"
    assert names.benchmark_from_nvtx(names.nvtx_range(name)) == name
    assert ncu.range_from_benchmark(name) == names.nvtx_range(name)


def test_every_variant_of_the_recorded_run_matches_the_variant_grammar(recorded):
    import json

    spec = names.load_spec()
    for entry in json.loads(recorded.read_text())["benchmarks"]:
        parsed = names.parse_benchmark(entry["run_name"])
        assert spec.variant.match(parsed["variant"]), parsed["variant"]


def test_a_shape_is_parsed_once_and_written_back_the_same_way():
    from gemm_study.data.shape import Shape, shape_order

    shape = Shape.parse("3000x2000x1500")
    assert shape.dims == (3000, 2000, 1500) and str(shape) == "3000x2000x1500"
    assert sorted(["1024x1024x1024", "512x512x512"], key=shape_order) == ["512x512x512", "1024x1024x1024"]
    for bad in ("1024x1024", "0x4x4", "axbxc", None):
        with pytest.raises(InputError, match="expected MxNxK"):
            Shape.parse(bad)


def test_one_builder_makes_names_and_filters_that_the_grammar_reads_back():
    from gemm_study.data.shape import Shape

    name = names.benchmark_name("fp32", "shared/tile:16", Shape(512, 256, 128))
    assert name == "gemm/fp32/shared/tile:16/m:512/n:256/k:128"
    assert names.parse_benchmark(name)["variant"] == "shared/tile:16"
    assert names.benchmark_name("fp64", "cublas", "8x8x8", end_to_end=True) == "gemm_e2e/fp64/cublas/m:8/n:8/k:8"
    pattern = re.compile(names.benchmark_filter(("fp32", "fp64"), "shared/tile:16|cublas", "512x256x128"))
    assert pattern.match(name + "/manual_time") and pattern.match(name.replace("fp32", "fp64"))
    assert not pattern.match(name.replace("m:512", "m:5120"))
