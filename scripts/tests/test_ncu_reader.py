"""Nsight Compute's own report reader (ncu_report) against the CSV parser, on the committed H100
reports. The reader tests run where ncu_report loads (pip install ncu-report, or an Nsight
Compute installation) and are skipped elsewhere with the reason."""

import gzip
import math
import sys
from pathlib import Path

import pytest

from gemm_study.data.errors import InputError
from gemm_study.ncu import report_reader as ncu_report_reader
from gemm_study.ncu import session as ncu

NCU_DIR = Path(__file__).resolve().parents[2] / "reports" / "h100-80gb-hbm3" / "ncu"
REPORTS = ["ncu_1024x1024x1024", "ncu_1024x1024x1024_cache"]
MODULE, WHY_NOT = ncu_report_reader.load_module()
needs_reader = pytest.mark.skipif(MODULE is None, reason=WHY_NOT)


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    """The committed reports are gzipped: a folder with them unpacked, CSV exports beside them."""
    folder = tmp_path_factory.mktemp("ncu")
    for stem in REPORTS:
        with gzip.open(NCU_DIR / f"{stem}.ncu-rep.gz", "rb") as packed:
            (folder / f"{stem}.ncu-rep").write_bytes(packed.read())
        (folder / f"{stem}.csv").write_text((NCU_DIR / f"{stem}.csv").read_text())
    return folder


def _is_count(name):
    """Counters the CSV prints whole; ratios, percentages and averages it rounds to 2 decimals."""
    return name.endswith((".sum", ".min", ".max")) and "pct" not in name


@needs_reader
@pytest.mark.parametrize("stem", REPORTS)
def test_the_reader_gives_the_csv_export_values_at_full_precision(stem, unpacked):
    from_csv = ncu.parse_raw_csv((unpacked / f"{stem}.csv").read_text())
    from_reader = ncu_report_reader.read_report(unpacked / f"{stem}.ncu-rep", MODULE)
    assert len(from_reader) == len(from_csv) == 70
    compared = 0
    for csv_row, row in zip(from_csv, from_reader):
        assert row["benchmark"] == csv_row["benchmark"] and row["benchmark"].startswith("gemm/")
        for name, value in csv_row.items():
            if "__" not in name or name.startswith(("device__", "launch__", "nvlink__", "numa__")):
                continue
            if _is_count(name):
                assert row[name] == value, (row["benchmark"], name)
            else:  # the CSV's two decimals, rounded (half to even), in binary floating point
                assert abs(row[name] - value) <= 0.005 + 4 * math.ulp(value), (row["benchmark"], name)
            compared += 1
    assert compared >= 70 * 3


@needs_reader
def test_the_reader_names_the_kernel_in_full(unpacked):
    row = ncu_report_reader.read_report(unpacked / f"{REPORTS[1]}.ncu-rep", MODULE)[0]
    assert row["kernel"].startswith("void gemm::<unnamed>::naive_row_kernel<float>")
    assert row["benchmark"] == "gemm/fp32/naive_row/block:8x8/m:1024/n:1024/k:1024"
    # The cross-check sums the same values whichever reader gave them.
    summed = ncu.sum_by_benchmark([row])[row["benchmark"]]
    assert summed["dram__bytes_read.sum"] == row["dram__bytes_read.sum"] and summed["kernels"] == 1


@needs_reader
def test_a_file_that_is_no_report_is_bad_input(tmp_path):
    bad = tmp_path / "x.ncu-rep"
    bad.write_text("hello")
    with pytest.raises(InputError, match="no profiled kernel"):
        ncu_report_reader.read_report(bad, MODULE)
    with pytest.raises(InputError, match="does not exist"):
        ncu_report_reader.read_report(tmp_path / "missing.ncu-rep", MODULE)


@pytest.fixture
def without_installed_reader(monkeypatch):
    """ncu_report importable only from an extras/python folder; sys.modules as it was after."""
    real = ncu_report_reader.importlib.import_module

    def import_module(name):
        if name == "ncu_report" and not any("extras" in p for p in sys.path):
            raise ImportError("No module named 'ncu_report'")
        return real(name)

    monkeypatch.setattr(ncu_report_reader.importlib, "import_module", import_module)
    # An extras/python folder an earlier load put on the path (a machine with Nsight Compute) is
    # taken off, so that only the folder a test names can provide the module.
    monkeypatch.setattr(sys, "path", [p for p in sys.path if "extras" not in p])
    before = sys.modules.pop("ncu_report", None)
    yield
    sys.modules.pop("ncu_report", None)
    if before is not None:
        sys.modules["ncu_report"] = before


def test_without_the_reader_the_reason_says_how_to_get_it(monkeypatch, without_installed_reader):
    monkeypatch.setattr(ncu_report_reader, "INSTALL_GLOBS", ())
    monkeypatch.setattr(ncu_report_reader.shutil, "which", lambda name: None)
    module, why = ncu_report_reader.load_module()
    assert module is None and "pip install ncu-report" in why


def test_the_copy_an_nsight_compute_installation_ships_is_found_next_to_ncu(
    tmp_path, monkeypatch, without_installed_reader
):
    # An installation without network, as on the GPU machine: <install>/ncu and
    # <install>/extras/python/ncu_report.py.
    install = tmp_path / "nsight-compute-2025.3.1"
    (install / "extras" / "python").mkdir(parents=True)
    (install / "extras" / "python" / "ncu_report.py").write_text("SHIPPED = True\n")
    (install / "ncu").write_text("")
    monkeypatch.setattr(ncu_report_reader, "INSTALL_GLOBS", ())
    module, why = ncu_report_reader.load_module(str(install / "ncu"))
    assert why == "" and module.SHIPPED
    assert ncu_report_reader.extras_folders(str(install / "ncu")) == [install / "extras" / "python"]


def test_without_the_reader_values_come_from_the_csv_export(monkeypatch):
    monkeypatch.setattr(ncu_report_reader, "load_module", lambda ncu=None: (None, "not here"))
    text = (NCU_DIR / f"{REPORTS[1]}.csv").read_text()
    rows, reader = ncu.read_kernels(NCU_DIR / f"{REPORTS[1]}.ncu-rep", text)
    assert reader == "its CSV export (not here)" and len(rows) == 70


@needs_reader
def test_with_the_reader_values_come_from_the_report(unpacked):
    rows, reader = ncu.read_kernels(unpacked / f"{REPORTS[1]}.ncu-rep", "not a CSV")
    assert reader == "Nsight Compute's report reader (ncu_report)" and len(rows) == 70
