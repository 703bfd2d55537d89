"""Every command, run on the committed results, gives the output recorded from the tools before
they became one package (data/golden: cases.json lists the commands; inputs.tar.gz holds the
results files as they were then, since reports/ changes whenever a study is re-run; each case's
folder holds its stdout, exit status, stderr on bad input, and the text files it wrote; a large
file by its SHA-256). The deliberate differences: a command names itself by its installed name
(gemm-compare), where the old scripts wrote their path (scripts/ + compare.py); and the
dashboard page (history_h100's dashboard.html), recorded again when its panels took one relative
range per kind, the page's width, whole revision labels and an index.

A deliberate change of a command's output is recorded again with GEMM_RECORD_GOLDENS=1 (the test
then writes what the commands give instead of comparing), and reviewed as a diff."""

import hashlib
import importlib
import json
import os
import re
import shutil
import tarfile

import pytest
from conftest import DATA, require

GOLDEN = DATA / "golden"
CASES = json.loads((GOLDEN / "cases.json").read_text())["cases"]
TEXT_SUFFIXES = {".md", ".json", ".csv", ".html", ".inc", ".tsv", ".txt"}
OLD_SCRIPT = re.compile(r"scripts/(\w+)\.py")
RECORD = os.environ.get("GEMM_RECORD_GOLDENS") == "1"
LARGE = 65536  # characters: a larger file is kept as its SHA-256


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The results files the goldens were recorded from, unpacked where {ROOT} points."""
    root = tmp_path_factory.mktemp("inputs")
    with tarfile.open(GOLDEN / "inputs.tar.gz") as archive:
        archive.extractall(root)
    return root


def renamed(text):
    """The recorded text with each old script path replaced by its command's name."""
    return OLD_SCRIPT.sub(lambda m: "gemm-" + m.group(1).replace("_", "-"), text)


def normalised(text, out, root):
    return text.replace(str(out), "{OUT}").replace(str(root), "{ROOT}")


def _rounded(value):
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def hashed_text(text, path):
    """What a large file's digest is taken of: JSON with its numbers to four significant digits
    (their last digits depend on the numpy and pandas that computed them), other text as it is."""
    if path.suffix != ".json":
        return text
    return json.dumps(_rounded(json.loads(text)), indent=1, sort_keys=True)


def record(expected, status, stdout, stderr, out, root):
    """The goldens of one case, written again from what the command gave."""
    shutil.rmtree(expected, ignore_errors=True)
    (expected / "files").mkdir(parents=True)
    (expected / "exit_status.txt").write_text(f"{status}\n")
    (expected / "stdout.txt").write_text(stdout)
    if status == 2:
        (expected / "stderr.txt").write_text(stderr)
    for path in sorted(p for p in out.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES):
        target = expected / "files" / path.relative_to(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = normalised(path.read_text(), out, root)
        if len(text) > LARGE:
            digest = hashlib.sha256(hashed_text(text, path).encode()).hexdigest()
            target.with_name(target.name + ".sha256").write_text(digest + "\n")
        else:
            target.write_text(text)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_command_gives_the_recorded_output(case, inputs, tmp_path, capsys):
    if case["tool"] == "history":
        require("otava", "apache-otava")
    out = tmp_path / "out"
    out.mkdir()
    args = [a.replace("{ROOT}", str(inputs)).replace("{OUT}", str(out)) for a in case["args"]]
    command = importlib.import_module(f"gemm_study.cli.{case['tool']}")
    status = command.run_cli(command.main, args)
    captured = capsys.readouterr()
    stdout, stderr = normalised(captured.out, out, inputs), normalised(captured.err, out, inputs)
    expected = GOLDEN / case["name"]
    if RECORD:
        record(expected, status, stdout, stderr, out, inputs)
        return
    assert status == int((expected / "exit_status.txt").read_text())
    assert stdout == renamed((expected / "stdout.txt").read_text())
    if (expected / "stderr.txt").is_file():
        assert stderr == renamed((expected / "stderr.txt").read_text())
    written = {p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES}
    recorded_files = expected / "files"
    recorded = {p.relative_to(recorded_files) for p in recorded_files.rglob("*") if p.is_file()}
    assert {p.with_name(p.name.removesuffix(".sha256")) for p in recorded} == written
    for path in sorted(written):
        text = normalised((out / path).read_text(), out, inputs)
        digest = recorded_files / path.with_name(path.name + ".sha256")
        if digest.is_file():
            assert hashlib.sha256(hashed_text(text, path).encode()).hexdigest() == digest.read_text().strip(), path
        else:
            assert text == renamed((recorded_files / path).read_text()), path
