"""Every command, run on the committed results, gives the output recorded from the tools before
they became one package (data/golden: cases.json lists the commands; each case's folder holds
its stdout, exit status, stderr on bad input, and the text files it wrote; a large file by its
SHA-256). The deliberate differences: a command names itself by its installed name
(gemm-compare), where the old scripts wrote their path (scripts/ + compare.py); and the
dashboard page (history_h100's dashboard.html), recorded again when its panels took one relative
range per kind, the page's width, whole revision labels and an index."""

import hashlib
import importlib
import json
import re

import pytest
from conftest import DATA, SCRIPTS, require

GOLDEN = DATA / "golden"
ROOT = SCRIPTS.parent
CASES = json.loads((GOLDEN / "cases.json").read_text())["cases"]
TEXT_SUFFIXES = {".md", ".json", ".csv", ".html", ".inc", ".tsv", ".txt"}
OLD_SCRIPT = re.compile(r"scripts/(\w+)\.py")


def renamed(text):
    """The recorded text with each old script path replaced by its command's name."""
    return OLD_SCRIPT.sub(lambda m: "gemm-" + m.group(1).replace("_", "-"), text)


def normalised(text, out):
    return text.replace(str(out), "{OUT}").replace(str(ROOT), "{ROOT}")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_command_gives_the_recorded_output(case, tmp_path, capsys):
    if case["tool"] == "history":
        require("otava", "apache-otava")
    out = tmp_path / "out"
    out.mkdir()
    args = [a.replace("{ROOT}", str(ROOT)).replace("{OUT}", str(out)) for a in case["args"]]
    command = importlib.import_module(f"gemm_study.cli.{case['tool']}")
    status = command.run_cli(command.main, args)
    captured = capsys.readouterr()
    expected = GOLDEN / case["name"]
    assert status == int((expected / "exit_status.txt").read_text())
    assert normalised(captured.out, out) == renamed((expected / "stdout.txt").read_text())
    if (expected / "stderr.txt").is_file():
        assert normalised(captured.err, out) == renamed((expected / "stderr.txt").read_text())
    written = {p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES}
    recorded_files = expected / "files"
    recorded = {p.relative_to(recorded_files) for p in recorded_files.rglob("*") if p.is_file()}
    assert {p.with_name(p.name.removesuffix(".sha256")) for p in recorded} == written
    for path in sorted(written):
        text = normalised((out / path).read_text(), out)
        digest = recorded_files / path.with_name(path.name + ".sha256")
        if digest.is_file():
            assert hashlib.sha256(text.encode()).hexdigest() == digest.read_text().strip(), path
        else:
            assert text == renamed((recorded_files / path).read_text()), path
