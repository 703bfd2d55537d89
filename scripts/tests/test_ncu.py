import pytest

from conftest import DATA
from gemm_study import ncu
from gemm_study.catalogue import load_catalogue
from gemm_study.errors import InputError


def test_range_names_round_trip():
    name = "gemm/fp64/shared_col_padded/tile:32/m:1023/n:517/k:2049"
    assert ncu.range_from_benchmark(name + "/manual_time") == "gemm.fp64.shared_col_padded.tile-32.m-1023.n-517.k-2049"
    assert ncu.benchmark_from_range(ncu.range_from_benchmark(name)) == name
    assert ncu.benchmark_from_range("gemm.fp32.naive_row.block-16x16.m-8.n-8.k-8") == \
        "gemm/fp32/naive_row/block:16x16/m:8/n:8/k:8"


def test_parse_a_real_raw_export():
    """An ncu export from the H200: one kernel, selected by its benchmark's NVTX range."""
    rows = ncu.parse_raw_csv((DATA / "ncu_raw_naive_col.csv").read_text())
    assert len(rows) == 1
    row = rows[0]
    assert row["benchmark"] == "gemm/fp32/naive_col/block:32x32/m:1024/n:1024/k:1024"
    assert "naive_col_kernel<float>" in row["kernel"]
    # 1024^3 FP32, 32x32 column mapping: 2 loads per k step per warp, 33 sectors per pair.
    requests = row["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    assert requests == 2 * 1024 * 1024 * 1024 / 32
    assert row["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] / requests == 16.5


def test_not_an_export():
    with pytest.raises(InputError):
        ncu.parse_raw_csv("hello\nworld\n")


def test_crosscheck_rules():
    cupti = {"gemm/fp32/x/m:1/n:1/k:1/manual_time": {"gld_sectors": 10.0, "achieved_occupancy": 50.0,
                                                     "dram_read_bytes": 100.0}}
    ours = {"gemm/fp32/x/m:1/n:1/k:1": {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 10.0,
                                        "sm__warps_active.avg.pct_of_peak_sustained_active": 51.5,
                                        "dram__bytes_read.sum": 90.0}}
    table = {r["metric"]: r for r in ncu.crosscheck(cupti, ours)}
    assert table["gld_sectors"]["agree"] is True
    assert table["achieved_occupancy"]["agree"] is False  # 1.5 points apart
    assert table["dram_read_bytes"]["agree"] is None      # shown, not required


def test_missing_ncu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(ncu.shutil, "which", lambda name: None)
    monkeypatch.setattr(ncu.glob, "glob", lambda pattern: [])
    with pytest.raises(InputError, match="ncu .* not found"):
        ncu.find_ncu()


def test_catalogue_is_parsed_with_directions():
    catalogue = load_catalogue()
    assert catalogue["gld_sectors"].cupti == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert catalogue["gld_sectors"].stability == "exact"
    assert catalogue["smem_ld_bank_conflicts"].better == "lower"
    assert catalogue["gflops"].better == "higher"
    assert catalogue["theoretical_occupancy"].kind == "launch"
    assert len(ncu.default_metrics()) == 15


@pytest.mark.parametrize("script", ["ncu_session", "ncu_crosscheck"])
@pytest.mark.parametrize("shape", ["1024x1024", "0x4x4", "axbxc"])
def test_bad_shape_is_bad_input(tmp_path, capsys, script, shape):
    import importlib

    from gemm_study.errors import run_cli
    module = importlib.import_module(script)
    extra = ["--variant", "shared/tile:16"] if script == "ncu_session" else []
    assert run_cli(module.main, [*extra, "--shape", shape, "--out", str(tmp_path)]) == 2
    assert "expected MxNxK" in capsys.readouterr().err
