"""Console entry points of the installed package (gemm-report, gemm-compare, ...): each runs
the matching script of scripts/ (installed as gemm_study.tools) with the tools' exit-status rules."""
import importlib
import importlib.util
import sys
from pathlib import Path

from .errors import run_cli

# In the repository (and an editable install) the scripts sit next to the package.
SCRIPTS = Path(__file__).resolve().parents[1]


def load_tool(tool):
    """The script module of `tool`: scripts/<tool>.py beside the package, or, in a regular
    (non-editable) install, the copy installed as gemm_study.tools.<tool>."""
    path = SCRIPTS / f"{tool}.py"
    if path.is_file():
        spec = importlib.util.spec_from_file_location(f"gemm_study_tool_{tool}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(f"gemm_study.tools.{tool}")


def _run(tool):
    return run_cli(load_tool(tool).main, sys.argv[1:])


def report():
    return _run("report")


def compare():
    return _run("compare")


def history():
    return _run("history")


def ncu_session():
    return _run("ncu_session")


def ncu_crosscheck():
    return _run("ncu_crosscheck")


def cross_gpu():
    return _run("cross_gpu")


def summary_table():
    return _run("summary_table")


def reproducibility():
    return _run("reproducibility")
