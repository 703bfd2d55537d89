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
