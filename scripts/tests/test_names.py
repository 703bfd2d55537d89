"""The name grammar comes from bench/benchmark_names.inc, not from Python."""
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
    assert parsed == {"end_to_end": True, "precision": "fp64", "variant": "naive_row/block:16x16",
                      "m": 7, "n": 13, "k": 5}
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
