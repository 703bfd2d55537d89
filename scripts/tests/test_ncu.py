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


def _crosscheck(cupti_values, ncu_values):
    cupti = {"gemm/fp32/x/m:1/n:1/k:1/manual_time": cupti_values}
    return {r["metric"]: r for r in ncu.crosscheck(cupti, {"gemm/fp32/x/m:1/n:1/k:1": ncu_values})}


def test_crosscheck_rules():
    table = _crosscheck({"gld_sectors": 10.0, "achieved_occupancy": 50.0, "smem_ld_bank_conflicts": 3.0},
                        {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 10.0,
                         "sm__warps_active.avg.pct_of_peak_sustained_active": 51.5,
                         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 9.0})
    assert table["gld_sectors"]["agree"] is True
    assert table["achieved_occupancy"]["agree"] is False  # 1.5 points apart
    assert table["smem_ld_bank_conflicts"]["agree"] is None  # noisy: shown, not required


@pytest.mark.parametrize("cupti,ncu_value,agree", [
    (100e6, 109e6, True),            # 9% apart
    (100e6, 112e6, False),           # 12% apart
    (0.0, 900e3, True),              # L2-resident: within the 1 MiB floor
    (0.0, 2 * 2**20, False),
])
def test_dram_bytes_must_agree_within_10_percent_or_1_mib(cupti, ncu_value, agree):
    table = _crosscheck({"dram_read_bytes": cupti, "dram_write_bytes": cupti},
                        {"dram__bytes_read.sum": ncu_value, "dram__bytes_write.sum": ncu_value})
    assert table["dram_read_bytes"]["agree"] is agree
    assert table["dram_write_bytes"]["agree"] is agree


H100_L2 = 50 * 2**20


@pytest.mark.parametrize("cupti,ncu_value,agree", [
    (5.5e6, 0.3e6, True),              # two warm residues
    (16 * 2**20, 0.3e6, False),        # cold (A and B from HBM) against warm
    (8.2 * 2**20, 0.3 * 2**20, True),  # 7.9 MiB apart: within a third of A+B+C (8 MiB)
    (8.4 * 2**20, 0.3 * 2**20, False),  # 8.1 MiB apart
])
def test_dram_bytes_at_an_l2_resident_size_may_differ_by_a_third_of_a_b_c(cupti, ncu_value, agree):
    # FP64 1024^3: A, B and C are 8 MiB each (24 MiB, within L2), so the tolerance is 8 MiB, half
    # the 16 MiB by which a cold launch (A and B from HBM) differs from a warm one.
    name = "gemm/fp64/x/m:1024/n:1024/k:1024"
    table = {r["metric"]: r for r in ncu.crosscheck(
        {name + "/manual_time": {"dram_read_bytes": cupti}}, {name: {"dram__bytes_read.sum": ncu_value}},
        l2_bytes=H100_L2)}
    assert table["dram_read_bytes"]["agree"] is agree
    assert "1/3 of A+B+C" in table["dram_read_bytes"]["rule"]


def test_the_compulsory_share_applies_only_where_a_b_c_fit_in_l2():
    # FP32 4096^3: A+B+C = 192 MiB, four times the L2; 10% or 1 MiB rule only.
    name = "gemm/fp32/x/m:4096/n:4096/k:4096"
    table = {r["metric"]: r for r in ncu.crosscheck(
        {name + "/manual_time": {"dram_read_bytes": 400e6}}, {name: {"dram__bytes_read.sum": 340e6}},
        l2_bytes=H100_L2)}
    assert table["dram_read_bytes"]["agree"] is False  # 15% apart; a third of A+B+C would allow it
    assert "1/3" not in table["dram_read_bytes"]["rule"]
    # Without the L2 size (an old results file) the share never applies.
    small = "gemm/fp64/x/m:1024/n:1024/k:1024"
    table = {r["metric"]: r for r in ncu.crosscheck(
        {small + "/manual_time": {"dram_read_bytes": 5.5e6}}, {small: {"dram__bytes_read.sum": 0.3e6}})}
    assert table["dram_read_bytes"]["agree"] is False


@pytest.mark.parametrize("ncu_value,agree", [(94.0, True), (90.5, True), (89.0, False)])
def test_l2_hit_rate_must_agree_within_5_points(ncu_value, agree):
    table = _crosscheck({"l2_hit_rate": 95.0}, {"lts__t_sector_hit_rate.pct": ncu_value})
    assert table["l2_hit_rate"]["agree"] is agree
    assert table["l2_hit_rate"]["rule"] == "within 5 points"


@pytest.mark.parametrize("state,control", [("warm", "none"), ("warm: inputs reused across launches", "none"),
                                           ("cold", "all"), ("cold: L2 flushed before every launch", "all")])
def test_cache_control_matches_the_l2_state(state, control):
    assert ncu.cache_control_for(state) == control


def test_unknown_l2_state_is_bad_input():
    with pytest.raises(InputError, match="expected 'warm' or 'cold'"):
        ncu.cache_control_for("lukewarm")


def test_listing_with_tags_gives_benchmark_names():
    listing = ("gemm/fp32/shared/tile:16/m:512/n:512/k:512\ttags=seed,tile_sweep,crosscheck\n"
               "gemm/fp64/cublas/m:512/n:512/k:512/manual_time\ttags=reference\n"
               "some header line\n")
    assert ncu.parse_listing(listing) == ["gemm/fp32/shared/tile:16/m:512/n:512/k:512",
                                          "gemm/fp64/cublas/m:512/n:512/k:512"]
    regex = ncu.exact_filter(ncu.parse_listing(listing))
    import re
    assert re.match(regex, "gemm/fp32/shared/tile:16/m:512/n:512/k:512/manual_time")
    assert not re.match(regex, "gemm/fp32/shared/tile:16/m:512/n:512/k:5120/manual_time")


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
    metrics = ncu.default_metrics()
    assert len(metrics) == len([m for m in catalogue.values() if m.kind == "metric"])
    assert "dram__bytes_read.sum" in metrics and "lts__t_sector_hit_rate.pct" in metrics
    assert catalogue["achieved_occupancy"].is_percent and not catalogue["gld_sectors"].is_percent


@pytest.mark.parametrize("script", ["ncu_session", "ncu_crosscheck"])
@pytest.mark.parametrize("shape", ["1024x1024", "0x4x4", "axbxc"])
def test_bad_shape_is_bad_input(tmp_path, capsys, script, shape):
    import importlib

    from gemm_study.errors import run_cli
    module = importlib.import_module(script)
    extra = ["--variant", "shared/tile:16"] if script == "ncu_session" else []
    assert run_cli(module.main, [*extra, "--shape", shape, "--out", str(tmp_path)]) == 2
    assert "expected MxNxK" in capsys.readouterr().err
