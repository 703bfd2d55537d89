#!/usr/bin/env python3
"""Checks that the README and the pages under docs/ cite only what exists in the repository:
every relative markdown link resolves to a file (and its #anchor to a heading of that file, by
GitHub's rule), and every `path` in backquotes that starts with a top-level folder of the
repository names a file or folder that exists (placeholders such as <gpu> or * are skipped).

Usage: python3 docs/check_links.py [FILE.md ...]    (default: README.md and docs/**/*.md)
Exit status: 0 all resolve, 1 something does not (one line each).
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*```")
# Backquoted text that starts like one of these is a path in the repository.
TOP_LEVEL = ("bench/", "docs/", "kernels/", "profiling/", "reports/", "scripts/", "tests/", ".ci/")
PLACEHOLDER = re.compile(r"[<>*{}|…]|\.\.\.")


def prose_lines(text):
    """The lines outside fenced code blocks."""
    inside = False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield line


def anchors(path):
    """GitHub's heading anchors of a markdown file: lower case, punctuation dropped, spaces to
    hyphens, repeats numbered."""
    seen = {}
    out = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        text = re.sub(r"[^\w\- ]", "", match.group(1).replace("`", "").lower())
        slug = text.replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def check_link(page, target):
    if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
        return None
    file_part, _, anchor = target.partition("#")
    path = (page.parent / file_part).resolve() if file_part else page
    if not path.exists():
        return f"link to {target}: no such file"
    if anchor and path.suffix == ".md" and anchor not in anchors(path):
        return f"link to {target}: no heading #{anchor} in {path.relative_to(ROOT)}"
    return None


def check_code_path(text):
    """A command's first word is checked too: `scripts/run_study.sh [--quick]`."""
    words = text.split()
    path = words[0].rstrip("/") if words else ""
    if not path.startswith(TOP_LEVEL) or PLACEHOLDER.search(path):
        return None
    return None if (ROOT / path).exists() else f"`{text}`: no such path in the repository"


def problems(page):
    for line in prose_lines(page.read_text(encoding="utf-8")):
        found = [check_link(page, t) for t in LINK.findall(line)]
        found += [check_code_path(t) for t in CODE.findall(line)]
        for problem in filter(None, found):
            yield f"{page.relative_to(ROOT)}: {problem}"


def main(argv):
    pages = [Path(a).resolve() for a in argv] or [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [p for page in pages for p in problems(page)]
    for line in found:
        print(line)
    print(f"{len(pages)} pages checked, {len(found)} broken reference(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
