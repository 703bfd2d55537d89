"""Edits of whole results files that the shell scripts need (joining two runs, relabelling a
run's revision, reading one context field), so that no script embeds Python of its own."""

import json
from pathlib import Path

from gemm_study.data.errors import InputError


def _read(path):
    try:
        return json.loads(Path(path).read_text())
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None
    except ValueError as error:
        raise InputError(f"{path}: not valid JSON: {error}") from None


def context_field(path, field, default=None):
    """The context's `field` (a missing or empty one gives `default`; without a default, an error)."""
    data = _read(path)
    if not isinstance(data, dict) or not isinstance(data.get("context"), dict):
        raise InputError(f"{path}: not a gemm-bench results file (no context)")
    value = data["context"].get(field)
    if value in (None, ""):
        if default is None:
            raise InputError(f"{path}: no context field {field}")
        return default
    return value


def append_benchmarks(into, source):
    """The benchmarks of `source` appended to those of `into` (rewritten, indented by 2)."""
    results, extra = _read(into), _read(source)
    results["benchmarks"] += extra["benchmarks"]
    Path(into).write_text(json.dumps(results, indent=2))


def relabel(path, label):
    """The run labelled `label` (context git_revision); the build's own revision is kept as
    build_git_revision, so a history can tell revisions recorded from one build apart."""
    data = _read(path)
    data["context"]["build_git_revision"] = data["context"].get("git_revision", "unknown")
    data["context"]["git_revision"] = label
    Path(path).write_text(json.dumps(data, indent=1))


def gtest_counts(paths):
    """(passed, skipped, failed) over the tests of GoogleTest JSON reports (--gtest_output=json:
    FILE, or GTEST_OUTPUT=json:DIR/ for a run of several binaries): a test with failures failed,
    one whose result is SKIPPED was skipped, every other test that ran passed."""
    passed = skipped = failed = 0
    for path in paths:
        report = _read(path)
        suites = report.get("testsuites") if isinstance(report, dict) else None
        if not isinstance(suites, list):
            raise InputError(f"{path}: not a GoogleTest JSON report (no 'testsuites' list)")
        for suite in suites:
            for test in suite.get("testsuite", []):
                if test.get("status") != "RUN":
                    continue  # disabled or filtered out
                if test.get("failures"):
                    failed += 1
                elif test.get("result") == "SKIPPED":
                    skipped += 1
                else:
                    passed += 1
    return passed, skipped, failed
