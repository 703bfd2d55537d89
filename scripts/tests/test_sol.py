"""The account's limiter against ncu's Speed-of-Light breakdown: metric names mapped to the
account's units, agreement per benchmark, exit status 1 on a disagreement."""

import pytest
import study_rows

from gemm_study.cli.sol_check import main as sol_main
from gemm_study.data.errors import run_cli
from gemm_study.ncu import sol

SHAPE = "m-1024.n-1024.k-1024"
COLUMNS = [
    "smsp__inst_executed_pipe_fma.sum.pct_of_peak_sustained_elapsed",
    "smsp__inst_executed.sum.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
]


def export(path, rows):
    """An ncu raw CSV export: header, units, one line per (NVTX range, values)."""
    lines = [
        '"ID","Kernel Name","NVTX Range",' + ",".join(f'"{c}"' for c in COLUMNS),
        '"","","",' + ",".join('"%"' for _ in COLUMNS),
    ]
    for i, (benchmark, values) in enumerate(rows):
        lines.append(f'"{i}","kernel","gemm:gemm.{benchmark}.{SHAPE}",' + ",".join(f'"{v}"' for v in values))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def results(tmp_path):
    untimed = study_rows.entry("fp32", "shared/tile:16", 5000, ("seed",))  # no counters: no account
    return study_rows.write(tmp_path / "results.json", study_rows.study([untimed]))


def test_the_limiters_agree_with_the_breakdown(tmp_path, results, capsys):
    csv = export(
        tmp_path / "sol.csv",
        [
            ("fp32.tuned.bm-128.bn-128", [70, 65, 0, 20, 10, 30, 75]),  # FMA busiest: the account's too
            ("fp32.wgmma_tma.bm-128.bn-128", [0, 20, 60, 50, 10, 80, 85]),  # tensor busiest; LSU input on top
            ("fp32.shared.tile-16", [10, 10, 0, 90, 5, 5, 90]),  # no account: not compared
        ],
    )
    out = tmp_path / "sol.md"
    assert sol_main([str(results), str(csv), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| fp32.tuned" not in text
    assert (
        "| gemm/fp32/tuned/bm:128/bn:128/m:1024/n:1024/k:1024 | FMA pipe (FP32) (80%) | FMA pipe (FP32) (70%) | "
        "smsp__inst_executed_pipe_fma.sum.pct_of_peak_sustained_elapsed (70%) | yes |"
    ) in text
    assert "| tensor pipe (60%) | l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed (80%) | yes |" in text
    assert "2 of 2 limiters agree with ncu's Speed-of-Light breakdown (1 benchmarks not compared)." in text


def test_a_disagreement_exits_1(tmp_path, results):
    csv = export(tmp_path / "sol.csv", [("fp32.tuned.bm-128.bn-128", [40, 45, 0, 90, 10, 30, 90])])
    assert sol_main([str(results), str(csv)]) == 1


def test_bad_input_is_one_line_and_exit_2(tmp_path, results, capsys):
    csv = export(tmp_path / "other.csv", [("fp32.naive_row.block-8x8", [1, 1, 1, 1, 1, 1, 1])])
    assert run_cli(sol_main, [str(results), str(csv)]) == 2
    assert "no benchmark of" in capsys.readouterr().err
    assert run_cli(sol_main, [str(results)]) == 2
    assert run_cli(sol_main, [str(results), str(tmp_path / "none.csv")]) == 2


def test_the_metrics_to_collect_name_every_unit(capsys):
    assert sol_main(["--print-metrics"]) == 0
    metrics = capsys.readouterr().out.strip().split(",")
    assert metrics[:2] == list(sol.BREAKDOWNS)
    assert [sol.unit_of(m) for m in metrics[2:]] == ["fma", "fp64", "tensor", "issue", "shared", "l1", "l2", "dram"]


@pytest.mark.parametrize(
    "metric,unit",
    [
        ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "fma"),
        ("sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active", "fp64"),
        ("sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor"),
        ("l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed", "shared"),
        ("dram__throughput.avg.pct_of_peak_sustained_elapsed", None),  # a roll-up
        ("fbpa__dram_sectors.avg.pct_of_peak_sustained_elapsed", "dram"),
        ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", None),
        ("lts__t_sectors.sum", None),  # a count, not a throughput
    ],
)
def test_metric_names_map_to_units(metric, unit):
    assert sol.unit_of(metric) == unit


def test_no_mapped_metric_is_no_comparison():
    from gemm_study.analysis import account

    row = dict(study_rows.counters(1000, "fma", 0.8), time_ms=2 * 1024**3 / 1e12 * 1e3, m=1024, n=1024, k=1024)
    check = sol.check(
        "b", row, account.account(row, {"gpu_sm_count": "132"}), {"x__y.pct_of_peak_sustained_elapsed": 5.0}
    )
    assert check.agree is None and "was the SpeedOfLight section collected" in check.reason


def test_ncus_shared_memory_throughput_agrees_with_the_l1_data_stage_that_covers_it():
    """Shared memory's wavefronts are the L1 data stage's: ncu's busiest shared-memory metric and
    the account's L1 limiter name the same stage, and so do an older row's shared-memory limiter
    and ncu's L1 data stage; another unit does not."""
    check = sol.Check("b", "l1", 0.9, "shared", 88.0, "l1tex__data_pipe_lsu_wavefronts_mem_shared", 88.0)
    assert check.agree is True
    assert sol.Check("b", "l1", 0.9, "issue", 60.0, "smsp__issue_active", 60.0).agree is False
    assert sol.Check("b", "shared", 0.9, "l1", 90.0, "l1tex__data_pipe_lsu_wavefronts", 90.0).agree is True
    assert sol.Check("b", "fma", 0.9, "", 0.0, "", 0.0).agree is False  # an empty unit matches nothing
