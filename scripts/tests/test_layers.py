"""The package's folders are its layers, and a module imports only from its own layer or below:
data <- analysis <- tuning <- ncu <- report <- regression <- cli. A command line (cli/) imports no other
command line, only their shared parsers (cli/common.py). Nothing edits sys.path or loads a module
by its file path, but for the one place that must: Nsight Compute's own Python reader, which
lives in the Nsight Compute installation with its compiled extension beside it."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gemm_study"
LAYERS = ["data", "analysis", "tuning", "ncu", "report", "regression", "cli"]
RANK = {name: rank for rank, name in enumerate(LAYERS)}
# Nsight Compute ships ncu_report.py with its extension module in extras/python of each
# installation: that folder must be importable while ncu_report loads.
SYS_PATH_ALLOWED = {"ncu/report_reader.py"}


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE)


def layer_of(path):
    return path.relative_to(PACKAGE).parts[0]


def imported(path):
    """(line, dotted name) of every gemm_study module that `path` imports, relative ones resolved."""
    package = ["gemm_study", *path.relative_to(PACKAGE).parent.parts]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name.startswith("gemm_study"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            if base.startswith("gemm_study"):
                yield from ((node.lineno, f"{base}.{a.name}") for a in node.names)


def test_every_module_lives_in_a_layer():
    assert {layer_of(p) for p in modules()} <= set(LAYERS)
    assert [p.name for p in PACKAGE.glob("*.py")] == ["__init__.py"]


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for path in modules():
        for line, name in imported(path):
            parts = name.split(".")
            target = parts[1] if len(parts) > 1 else None
            if target not in RANK or RANK[target] > RANK[layer_of(path)]:
                upward.append(f"{path.relative_to(PACKAGE)}:{line} imports {name}")
    assert upward == []


def test_no_command_line_imports_another():
    crossing = []
    for path in (PACKAGE / "cli").glob("*.py"):
        for line, name in imported(path):
            if name.startswith("gemm_study.cli.") and not name.startswith("gemm_study.cli.common"):
                crossing.append(f"cli/{path.name}:{line} imports {name}")
    assert crossing == []


def test_nothing_edits_sys_path_or_loads_by_file_path():
    root = PACKAGE.parents[1]
    sources = [
        p
        for p in [
            *PACKAGE.rglob("*.py"),
            *(root / "scripts" / "tests").glob("*.py"),
            *(root / "tests" / "cpu").glob("*.py"),
        ]
        if p != Path(__file__).resolve()
    ]
    found = []
    for path in sources:
        text = path.read_text()
        for needle in ("sys.path.insert", "sys.path.append", "spec_from_file_location"):
            if (
                needle in text
                and str(path.relative_to(PACKAGE) if PACKAGE in path.parents else "") not in SYS_PATH_ALLOWED
            ):
                found.append(f"{path.relative_to(root)}: {needle}")
    assert found == []


def test_the_layer_check_finds_an_upward_import(tmp_path, monkeypatch):
    """The check itself: a data module importing the report layer is caught."""
    fake = tmp_path / "gemm_study"
    (fake / "data").mkdir(parents=True)
    (fake / "data" / "bad.py").write_text(
        "from gemm_study.report import ladder_report\nfrom ..report import roofline\n"
    )
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert [name for _, name in imported(fake / "data" / "bad.py")] == [
        "gemm_study.report.ladder_report",
        "gemm_study.report.roofline",
    ]
