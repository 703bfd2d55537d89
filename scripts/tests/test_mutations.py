"""The mutation list in test_history.py's docstring, checked: each listed rule change, applied alone
to a copy of the tools, must make the tests it names fail, and those tests must pass on the copy
without it. A rule that can change without a test failing is a rule no test pins."""

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import test_history
from conftest import SCRIPTS

ROOT = SCRIPTS.parent
ENTRY = re.compile(
    r"^  - (?P<what>[^:\n]+): (?P<file>\S+): `(?P<old>.*?)` -> `(?P<new>.*?)` => "
    r"(?P<tests>\S+) -k (?P<select>\S+)$",
    re.MULTILINE | re.DOTALL,
)


def mutations():
    found = [m.groupdict() for m in ENTRY.finditer(test_history.__doc__)]
    listed = test_history.__doc__.count("\n  - ")
    assert found and len(found) == listed, f"{listed} entries listed, {len(found)} parsed"
    return found


def copy_of_the_tools(folder):
    """scripts/ copied (it is what gets mutated), the data files the tools read linked."""
    shutil.copytree(SCRIPTS, folder / "scripts", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("bench", "profiling", "kernels", "reports"):
        (folder / name).symlink_to(ROOT / name)
    return folder / "scripts"


def run_tests(scripts, tests, select):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "-k",
            select,
            *[str(scripts / "tests" / t) for t in tests],
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=scripts.parent,
        # PYTHONPATH: the copy's package, not the installed one
        env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(scripts)),
    )
    return proc.returncode, proc.stdout[-1500:]


def mutate_and_run(base, index, mutation):
    scripts = copy_of_the_tools(base / f"m{index}")
    target = scripts / mutation["file"]
    source = target.read_text()
    assert source.count(mutation["old"]) == 1, f"{mutation['what']}: `{mutation['old']}` is not once in {target}"
    target.write_text(source.replace(mutation["old"], mutation["new"]))
    return run_tests(scripts, [mutation["tests"]], mutation["select"])


def test_the_mutation_list_parses_and_names_existing_code():
    for mutation in mutations():
        assert (SCRIPTS / mutation["file"]).read_text().count(mutation["old"]) == 1, mutation["what"]
        assert (SCRIPTS / "tests" / mutation["tests"]).is_file(), mutation["tests"]


def test_every_listed_mutation_makes_its_tests_fail(tmp_path):
    listed = mutations()
    pristine = copy_of_the_tools(tmp_path / "pristine")
    selection = " or ".join(sorted({m["select"] for m in listed}))
    status, output = run_tests(pristine, sorted({m["tests"] for m in listed}), selection)
    assert status == 0, "the selected tests fail without any mutation:\n" + output
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda im: mutate_and_run(tmp_path, *im), enumerate(listed)))
    survived = [m["what"] for m, (status, _) in zip(listed, results) if status != 1]
    assert survived == [], f"mutations no test caught: {survived}"
